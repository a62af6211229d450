//! The verifier of [CC-13]: checks held bytes of schema 1, 2 or 3 against a digest, without re-encoding.
//!
//! [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use crate::digest::{Algorithm, digest, to_hex};

/// What a verified record declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    /// The record's `schema_version` (1, 2 or 3).
    pub schema_version: u8,
    /// The digest used: SHA-256 below schema 3, the named one at 3.
    pub algorithm: Algorithm,
}

/// Why held bytes do not verify ([CC-13]).
///
/// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum VerifyError {
    /// The bytes are not a JSON object.
    NotAnObject,
    /// There is no `schema_version` member.
    MissingSchemaVersion,
    /// The `schema_version` is not 1, 2 or 3.
    UnsupportedSchemaVersion(serde_json::Value),
    /// A schema-3 record has no `algorithm` member.
    MissingAlgorithm,
    /// A schema-1 or schema-2 record has an `algorithm` member.
    UnexpectedAlgorithm,
    /// The `algorithm` member names no known digest.
    UnknownAlgorithm(serde_json::Value),
    /// The digest of the bytes is not the expected one.
    DigestMismatch {
        /// The lowercase hex computed over the bytes.
        actual: String,
    },
    /// An edge sign is outside the record's vocabulary; the record is malformed even if its hash matches.
    MalformedSign {
        /// Index of the edge in `edges`.
        edge: usize,
        /// The sign found.
        sign: serde_json::Value,
    },
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::NotAnObject => f.write_str("record is not a JSON object"),
            VerifyError::MissingSchemaVersion => f.write_str("record has no schema_version"),
            VerifyError::UnsupportedSchemaVersion(v) => write!(f, "unsupported schema_version {v}"),
            VerifyError::MissingAlgorithm => f.write_str("schema 3 record without algorithm"),
            VerifyError::UnexpectedAlgorithm => f.write_str("schema 1/2 record with an algorithm member"),
            VerifyError::UnknownAlgorithm(v) => write!(f, "unknown algorithm {v}"),
            VerifyError::DigestMismatch { actual } => write!(f, "digest mismatch (computed {actual})"),
            VerifyError::MalformedSign { edge, sign } => write!(f, "edge {edge} has sign {sign}"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// The sign vocabulary of a schema version ([CC-13]): v1 keeps `unknown` and never narrows it.
///
/// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn sign_vocabulary(schema_version: u8) -> &'static [&'static str] {
    match schema_version {
        1 => &["allow", "deny", "hold", "unknown"],
        _ => &["allow", "deny", "hold", "ungoverned", "unset"],
    }
}

/// Reads `schema_version` and the digest the held bytes use, without hashing.
pub fn record_algorithm(bytes: &[u8]) -> Result<Verified, VerifyError> {
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|_| VerifyError::NotAnObject)?;
    let obj = json.as_object().ok_or(VerifyError::NotAnObject)?;
    let version = obj.get("schema_version").ok_or(VerifyError::MissingSchemaVersion)?;
    let schema_version = match version.as_u64() {
        Some(v @ 1..=3) => v as u8,
        _ => return Err(VerifyError::UnsupportedSchemaVersion(version.clone())),
    };
    let algorithm = match (schema_version, obj.get("algorithm")) {
        (3, None) => return Err(VerifyError::MissingAlgorithm),
        (3, Some(name)) => name
            .as_str()
            .and_then(|n| Algorithm::from_name(n).ok())
            .ok_or_else(|| VerifyError::UnknownAlgorithm(name.clone()))?,
        (_, Some(_)) => return Err(VerifyError::UnexpectedAlgorithm),
        (_, None) => Algorithm::Sha256,
    };
    let vocabulary = sign_vocabulary(schema_version);
    if let Some(edges) = obj.get("edges").and_then(|e| e.as_array()) {
        for (i, edge) in edges.iter().enumerate() {
            if let Some(sign) = edge.get("sign")
                && !sign.as_str().is_some_and(|s| vocabulary.contains(&s))
            {
                return Err(VerifyError::MalformedSign { edge: i, sign: sign.clone() });
            }
        }
    }
    Ok(Verified { schema_version, algorithm })
}

/// Verifies held bytes against `expected_hex` (lowercase): schema below 3 uses SHA-256 over the bytes as
/// held, schema 3 the named digest; nothing is inserted or re-encoded.
pub fn verify(bytes: &[u8], expected_hex: &str) -> Result<Verified, VerifyError> {
    let verified = record_algorithm(bytes)?;
    let actual = to_hex(&digest(verified.algorithm, bytes));
    if actual != expected_hex {
        return Err(VerifyError::DigestMismatch { actual });
    }
    Ok(verified)
}
