//! The digests a store keeps in place of an owner: a task's owner ([`owner_digest`]), the principal
//! a legacy session is bound to ([`principal_digest`]), and the address a legacy session of no
//! principal is counted against ([`network_digest`]).
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

/// The hex SHA-256 digest naming a client by its network (an address prefix as text, such as
/// `192.0.2.7/32`), for counting the legacy sessions of a client that no principal names
/// ([`SessionRecord::quota`](crate::sessions::SessionRecord::quota)): equal for equal text on every
/// instance, domain-separated from every other digest this package computes (so never a principal's),
/// and not the address itself, which a shared store then does not hold.
pub fn network_digest(network: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(b"mcp-kernel session client network\0");
    digest.update(network.as_bytes());
    digest.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
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

    #[test]
    fn a_network_digest_is_equal_for_equal_networks_and_never_a_principals_or_an_owners() {
        let network = network_digest("192.0.2.7/32");
        assert_eq!(network.len(), 64);
        assert_eq!(network, network_digest("192.0.2.7/32"));
        assert_ne!(network, network_digest("192.0.2.8/32"));
        assert_ne!(network, principal_digest("192.0.2.7/32"), "never a principal's");
        assert_ne!(network, owner_digest("192.0.2.7/32"), "never a task owner's");
    }
}
