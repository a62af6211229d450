//! The digests a store keeps in place of an owner: a task's owner ([`owner_digest`]) and the principal
//! a legacy session is bound to ([`principal_digest`]).
//!
//! Threat: **a store that leaks principals**. A store shared by many processes (or dumped for a
//! debugging session) must not hold what the host's owner key returned — an e-mail address, a subject,
//! a token's claims — so the record holds a SHA-256 digest of it, domain-separated so that it is no
//! other digest this package computes. The digest only needs to be equal for equal keys: it is compared,
//! never reversed.

use std::any::type_name;
use std::hash::{Hash, Hasher};

use sha2::{Digest, Sha256};

/// The hex SHA-256 digest naming the owner whose key is `key`.
pub(crate) fn owner_digest(key: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(b"mcp-kernel task owner\0");
    digest.update(key.as_bytes());
    digest.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The hex SHA-256 digest naming the principal a session is bound to: equal for equal principals of
/// one type (by `Hash`) on every instance of one build, and never the principal itself, so that a
/// store shared by many processes holds no identity. Domain-separated from every other digest this
/// package computes, and keyed by the principal's type name.
pub fn principal_digest<P: Hash + ?Sized>(principal: &P) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    hasher.0.update(b"mcp-kernel session owner\0");
    hasher.0.update(type_name::<P>().as_bytes());
    hasher.0.update(b"\0");
    principal.hash(&mut hasher);
    hasher.0.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Feeds what `Hash` writes into SHA-256 (a `Hasher` whose `finish` is never read).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_kept_as_a_digest_equal_only_for_equal_keys() {
        let alice = owner_digest("alice@example.com");
        assert_eq!(alice.len(), 64);
        assert!(!alice.contains("alice"));
        assert_eq!(alice, owner_digest("alice@example.com"));
        assert_ne!(alice, owner_digest("bob@example.com"));
    }

    #[test]
    fn a_principal_digest_is_equal_only_for_equal_principals_of_one_type() {
        let alice = principal_digest("alice");
        assert_eq!(alice.len(), 64);
        assert!(!alice.contains("alice"));
        assert_eq!(alice, principal_digest("alice"));
        assert_ne!(alice, principal_digest("bob"));
        assert_ne!(principal_digest(&String::from("alice")), alice, "the type is part of it");
        assert_ne!(principal_digest(&("ab", "c")), principal_digest(&("a", "bc")), "prefix-free");
        assert_ne!(principal_digest(&7_u64), owner_digest("7"), "domain-separated");
    }
}
