//! The digest a task store keeps in place of a task's owner.
//!
//! Threat: **a store that leaks principals**. A store shared by many processes (or dumped for a
//! debugging session) must not hold what the host's owner key returned — an e-mail address, a subject,
//! a token's claims — so the record holds a SHA-256 digest of it, domain-separated so that it is no
//! other digest this package computes. The digest only needs to be equal for equal keys: it is compared,
//! never reversed.

use sha2::{Digest, Sha256};

/// The hex SHA-256 digest naming the owner whose key is `key`.
pub(crate) fn owner_digest(key: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(b"mcp-kernel task owner\0");
    digest.update(key.as_bytes());
    digest.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
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
}
