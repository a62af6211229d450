//! The one digest site ([CC-12]): every hash in this crate goes through [`digest()`].
//!
//! [CC-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use sha2::Digest as _;

/// The digest an envelope names in its `"algorithm"` member ([CC-1], [CC-12]). The default is permanent.
///
/// [CC-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CC-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    /// SHA-256: 32 bytes, 64 hex digits; the default.
    #[default]
    Sha256,
    /// SHA-384: 48 bytes, 96 hex digits.
    Sha384,
    /// SHA-512: 64 bytes, 128 hex digits.
    Sha512,
}

/// A digest name that is not exactly `sha256`, `sha384` or `sha512`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAlgorithm(pub String);

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown digest algorithm {:?}", self.0)
    }
}

impl std::error::Error for UnknownAlgorithm {}

impl Algorithm {
    /// Every algorithm, default first.
    pub const ALL: [Algorithm; 3] = [Algorithm::Sha256, Algorithm::Sha384, Algorithm::Sha512];

    /// The name written in the envelope: lowercase, no hyphen.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha384 => "sha384",
            Algorithm::Sha512 => "sha512",
        }
    }

    /// Parses an exact name; any other spelling (`SHA256`, `sha-256`, …) is refused.
    pub fn from_name(name: &str) -> Result<Algorithm, UnknownAlgorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name).ok_or_else(|| UnknownAlgorithm(name.to_owned()))
    }

    /// The digest size in bytes.
    pub fn output_len(self) -> usize {
        match self {
            Algorithm::Sha256 => 32,
            Algorithm::Sha384 => 48,
            Algorithm::Sha512 => 64,
        }
    }
}

/// The single digest site: `algorithm` over exactly `bytes`.
pub fn digest(algorithm: Algorithm, bytes: &[u8]) -> Vec<u8> {
    match algorithm {
        Algorithm::Sha256 => sha2::Sha256::digest(bytes).to_vec(),
        Algorithm::Sha384 => sha2::Sha384::digest(bytes).to_vec(),
        Algorithm::Sha512 => sha2::Sha512::digest(bytes).to_vec(),
    }
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0x0f)] as char);
    }
    out
}
