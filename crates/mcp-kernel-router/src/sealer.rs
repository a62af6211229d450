//! Sealing `requestState`: the host's sealer, and [`HmacSealer`], the one this package ships.
//!
//! Threat: `requestState` travels through the client, which may read it, keep it, replay it or change
//! it (MCP S-50). A sealer makes any change detectable: what it opens is exactly what it sealed, or
//! nothing. What the sealed bytes are bound to (method, parameters, expiry) is the core's business
//! (`state.rs`); the sealer only protects bytes. The package holds no key: the host supplies it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Protects opaque bytes on their way through the client and back.
///
/// `open(&seal(p)) == Some(p)` must hold, and `open` must return `None` for every string it did not
/// produce (with the same key). A host that needs confidentiality too supplies an AEAD sealer here.
pub trait StateSealer: Send + Sync + 'static {
    /// Seals `payload` into a string that can travel as JSON.
    fn seal(&self, payload: &[u8]) -> String;
    /// The payload of a string this sealer produced; `None` for anything else.
    fn open(&self, sealed: &str) -> Option<Vec<u8>>;
}

/// The key given to [`HmacSealer::new`] is shorter than [`HmacSealer::MIN_KEY_LEN`] bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an HMAC-SHA-256 request-state key must be at least 32 bytes")]
pub struct KeyTooShort;

/// HMAC-SHA-256 over the payload: `base64url(payload) "." base64url(tag)`.
///
/// It protects integrity only: the client can read the payload. The key is the host's (random, at
/// least 32 bytes, shared by every instance that may receive a retry); it is never printed.
#[derive(Clone)]
pub struct HmacSealer {
    mac: Hmac<Sha256>,
}

/// The longest sealed string [`HmacSealer::open`] decodes; anything longer is refused unread.
const MAX_SEALED_LEN: usize = 64 * 1024;

impl HmacSealer {
    /// The shortest key accepted: 32 bytes, the output size of SHA-256.
    pub const MIN_KEY_LEN: usize = 32;

    /// A sealer keyed with `key` (at least 32 bytes).
    pub fn new(key: &[u8]) -> Result<Self, KeyTooShort> {
        if key.len() < Self::MIN_KEY_LEN {
            return Err(KeyTooShort);
        }
        let mac = Hmac::<Sha256>::new_from_slice(key).map_err(|_| KeyTooShort)?;
        Ok(Self { mac })
    }
}

impl std::fmt::Debug for HmacSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HmacSealer { .. }")
    }
}

impl StateSealer for HmacSealer {
    fn seal(&self, payload: &[u8]) -> String {
        let tag = self.mac.clone().chain_update(payload).finalize().into_bytes();
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(tag))
    }

    fn open(&self, sealed: &str) -> Option<Vec<u8>> {
        if sealed.len() > MAX_SEALED_LEN {
            return None;
        }
        let (payload, tag) = sealed.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // Constant-time comparison of the whole tag (a truncated tag is refused).
        self.mac.clone().chain_update(&payload).verify_slice(&tag).ok()?;
        Some(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer(byte: u8) -> HmacSealer {
        HmacSealer::new(&[byte; 32]).unwrap()
    }

    #[test]
    fn what_is_sealed_opens_and_nothing_else_does() {
        let s = sealer(7);
        let sealed = s.seal(b"payload");
        assert_eq!(s.open(&sealed).as_deref(), Some(&b"payload"[..]));
        assert_eq!(s.open(&format!("{sealed}-TAMPERED")), None);
        let mut flipped = sealed.clone().into_bytes();
        flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
        assert_eq!(s.open(&String::from_utf8(flipped).unwrap()), None);
        assert_eq!(sealer(8).open(&sealed), None);
        let (payload, tag) = sealed.split_once('.').unwrap();
        assert_eq!(s.open(&format!("{payload}.{}", &tag[..tag.len() - 2])), None);
        assert_eq!(s.open(payload), None);
        assert_eq!(s.open(""), None);
    }

    #[test]
    fn keys_shorter_than_32_bytes_are_refused() {
        assert_eq!(HmacSealer::new(&[1; 31]).unwrap_err(), KeyTooShort);
        assert!(HmacSealer::new(&[1; 64]).is_ok());
        assert_eq!(format!("{:?}", sealer(9)), "HmacSealer { .. }");
    }

    #[test]
    fn oversized_sealed_strings_are_refused_unread() {
        assert_eq!(sealer(1).open(&"A".repeat(MAX_SEALED_LEN + 1)), None);
    }
}
