//! Who a request is charged to: its client.
//!
//! Threat: one party spending a bound that every party shares — the body budget, the connection
//! slots — so that everyone else is refused. A bound shared by all is only fair if each party has a
//! share of it, and a share is only a share if a party cannot cheaply appear to be many.
//!
//! A request's client is, in order:
//!
//! 1. **its principal**, when the host's `authorize` (or `authorize_async`) names one — what the hook
//!    admits with, unless it is `()`. Two requests with equal principals (by `Hash`) are one client,
//!    whatever addresses they come from, and two principals behind one address (a NAT, a proxy) are
//!    two clients. A hook that admits callers under names they choose themselves gives each name a
//!    share: such a host names no principal to the kernel (it returns `()`), or one it trusts.
//! 2. otherwise **its address prefix** ([`ClientNetwork`]): the peer address [`serve`](crate::serve)
//!    accepted the connection from, cut to [`AddressPrefixes`] — an IPv4 address whole (`/32`) and an
//!    IPv6 address to its `/64` by default, since one IPv6 host is routinely given a whole `/64` and
//!    could otherwise appear as 2⁶⁴ clients. An IPv4-mapped IPv6 address counts as the IPv4 address.
//!    A host that mounts [`McpService`](crate::McpService) in another server inserts a
//!    [`PeerAddr`] (or a [`ClientNetwork`]) into each request's extensions in a layer
//!    of its own; behind a proxy it trusts, that layer may take the address the proxy forwards.
//! 3. otherwise **nobody in particular**: every such request shares one client's share.
//!
//! Legacy sessions are counted per client the same way (`session/post.rs`): the principal's digest,
//! else a digest of the address prefix, else against the store's total alone.
//!
//! Connections are accepted before any request names a principal, and behind a proxy one connection
//! carries many principals: connection slots are shared by address prefix alone.

use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The peer's address, inserted into every request's extensions by [`serve`](crate::serve) (visible
/// to `authorize`), beside its client's [`ClientNetwork`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The default prefix of an IPv4 client: the whole address.
pub const DEFAULT_IPV4_PREFIX: u8 = 32;

/// The default prefix of an IPv6 client: the `/64` one host is routinely given.
pub const DEFAULT_IPV6_PREFIX: u8 = 64;

/// How many leading bits of a peer's address name its client (default `/32` for IPv4, `/64` for IPv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddressPrefixes {
    v4: u8,
    v6: u8,
}

impl Default for AddressPrefixes {
    fn default() -> Self {
        Self { v4: DEFAULT_IPV4_PREFIX, v6: DEFAULT_IPV6_PREFIX }
    }
}

impl AddressPrefixes {
    /// Clients named by the first `v4` bits of an IPv4 address (at most 32) and the first `v6` bits of
    /// an IPv6 one (at most 128); larger values are clamped. A shorter prefix groups more addresses
    /// into one client: `/24` makes a whole IPv4 subnet one client, `/0` the whole internet.
    pub fn new(v4: u8, v6: u8) -> Self {
        Self { v4: v4.min(32), v6: v6.min(128) }
    }

    /// The IPv4 prefix length.
    pub fn v4(&self) -> u8 {
        self.v4
    }

    /// The IPv6 prefix length.
    pub fn v6(&self) -> u8 {
        self.v6
    }

    /// The client network `ip` belongs to.
    pub fn network(&self, ip: IpAddr) -> ClientNetwork {
        match ip.to_canonical() {
            IpAddr::V4(v4) => {
                let kept_bits = u32::MAX.checked_shl(32 - u32::from(self.v4)).unwrap_or(0);
                let network = Ipv4Addr::from(u32::from(v4) & kept_bits);
                ClientNetwork { network: IpAddr::V4(network), prefix: self.v4 }
            }
            IpAddr::V6(v6) => {
                let kept_bits = u128::MAX.checked_shl(128 - u32::from(self.v6)).unwrap_or(0);
                let network = Ipv6Addr::from(u128::from(v6) & kept_bits);
                ClientNetwork { network: IpAddr::V6(network), prefix: self.v6 }
            }
        }
    }
}

/// A client named by its address: a network and its prefix length (`192.0.2.7/32`,
/// `2001:db8:1:2::/64`). [`serve`](crate::serve) inserts one into every request's extensions, beside
/// [`PeerAddr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientNetwork {
    network: IpAddr,
    prefix: u8,
}

impl ClientNetwork {
    /// The network's first address (the peer's address with the bits past the prefix cleared).
    pub fn network(&self) -> IpAddr {
        self.network
    }

    /// The prefix length.
    pub fn prefix(&self) -> u8 {
        self.prefix
    }
}

impl std::fmt::Display for ClientNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// The client one request is charged to (see the module docs for the order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Client {
    /// A principal `authorize` named, as a keyed digest of its type and value.
    Principal(u64),
    /// An address prefix.
    Network(ClientNetwork),
    /// Neither: every such request is one client.
    Unknown,
}

impl Client {
    /// The client of a request whose pre-read hook named `principal` (if any) and whose extensions are
    /// `extensions`.
    pub(crate) fn of(principal: Option<u64>, extensions: &http::Extensions) -> Self {
        if let Some(digest) = principal {
            return Client::Principal(digest);
        }
        if let Some(network) = extensions.get::<ClientNetwork>() {
            return Client::Network(*network);
        }
        match extensions.get::<PeerAddr>() {
            Some(peer) => Client::Network(AddressPrefixes::default().network(peer.0.ip())),
            None => Client::Unknown,
        }
    }
}

impl Client {
    /// The quota of a legacy session this client opens (`SessionRecord::quota`), beside its `owner`:
    /// none when there is an owner (the principal's digest, which the session is then counted under);
    /// else a digest of the address prefix, equal on every instance
    /// (`mcp_kernel_router::sessions::network_digest`); none for an unknown client either, whose
    /// sessions count against the store's total alone. It only counts: a session is bound to its
    /// owner, never to an address, so a client that changes networks keeps its session.
    pub(crate) fn session_quota(&self, owner: Option<&str>) -> Option<String> {
        if owner.is_some() {
            return None;
        }
        match self {
            Client::Network(network) => {
                Some(mcp_kernel_router::sessions::network_digest(&network.to_string()))
            }
            Client::Principal(_) | Client::Unknown => None,
        }
    }
}

/// Digests principals into client keys: keyed with a per-service random key, so a caller who can
/// choose its principal's value cannot aim two principals at one digest. With legacy sessions on, it
/// also names each principal's sessions ([`PrincipalDigest::owner`]), the same on every instance.
#[derive(Debug, Clone, Default)]
pub(crate) struct PrincipalDigest {
    keys: RandomState,
    /// Whether session owners are digested (only a service with legacy sessions pays for it).
    owners: Arc<AtomicBool>,
}

impl PrincipalDigest {
    /// Digests session owners from now on (set once, as the service is built with legacy sessions).
    pub(crate) fn name_owners(&self, on: bool) {
        self.owners.store(on, Ordering::Relaxed);
    }

    /// The owner a session of `principal` is bound to (`None` for `()`, or when sessions are off): a
    /// SHA-256 digest equal on every instance (`mcp_kernel_router::sessions::principal_digest`).
    pub(crate) fn owner<P: Hash + 'static>(&self, principal: &P) -> Option<String> {
        if !self.owners.load(Ordering::Relaxed) || std::any::TypeId::of::<P>() == std::any::TypeId::of::<()>()
        {
            return None;
        }
        Some(mcp_kernel_router::sessions::principal_digest(principal))
    }

    /// The digest of `principal`, or `None` for `()` (a hook that names nobody).
    pub(crate) fn of<P: Hash + 'static>(&self, principal: &P) -> Option<u64> {
        let kind = std::any::TypeId::of::<P>();
        if kind == std::any::TypeId::of::<()>() {
            return None;
        }
        let mut hasher = self.keys.build_hasher();
        kind.hash(&mut hasher);
        principal.hash(&mut hasher);
        Some(hasher.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn network(text: &str, prefixes: AddressPrefixes) -> String {
        prefixes.network(text.parse().expect("an address")).to_string()
    }

    #[test]
    fn an_ipv4_client_is_its_whole_address_and_an_ipv6_client_its_slash_64_by_default() {
        let prefixes = AddressPrefixes::default();
        assert_eq!(network("192.0.2.7", prefixes), "192.0.2.7/32");
        assert_eq!(network("2001:db8:1:2:aaaa:bbbb:cccc:dddd", prefixes), "2001:db8:1:2::/64");
        assert_eq!(
            prefixes.network("2001:db8:1:2::1".parse().unwrap()),
            prefixes.network("2001:db8:1:2:ffff::9".parse().unwrap()),
            "one /64 is one client"
        );
        assert_ne!(
            prefixes.network("2001:db8:1:2::1".parse().unwrap()),
            prefixes.network("2001:db8:1:3::1".parse().unwrap())
        );
    }

    #[test]
    fn an_ipv4_mapped_ipv6_address_is_the_ipv4_client() {
        let prefixes = AddressPrefixes::default();
        assert_eq!(network("::ffff:192.0.2.7", prefixes), "192.0.2.7/32");
    }

    #[test]
    fn prefixes_are_clamped_and_zero_makes_one_client_of_everyone() {
        let wide = AddressPrefixes::new(0, 0);
        assert_eq!(network("192.0.2.7", wide), "0.0.0.0/0");
        assert_eq!(network("2001:db8::1", wide), "::/0");
        let clamped = AddressPrefixes::new(99, 200);
        assert_eq!((clamped.v4(), clamped.v6()), (32, 128));
        assert_eq!(network("192.0.2.7", AddressPrefixes::new(24, 48)), "192.0.2.0/24");
        assert_eq!(network("2001:db8:1:2::1", AddressPrefixes::new(24, 48)), "2001:db8:1::/48");
    }

    #[test]
    fn a_session_of_no_owner_is_counted_under_its_address_prefix_else_the_total_alone() {
        let prefixes = AddressPrefixes::default();
        let here = Client::Network(prefixes.network([192, 0, 2, 7].into()));
        let there = Client::Network(prefixes.network([192, 0, 2, 8].into()));
        assert_eq!(here.session_quota(Some("owner")), None, "counted under its owner, from any address");
        assert_eq!(there.session_quota(Some("owner")), None);
        let by_address = here.session_quota(None).expect("an address");
        assert_eq!(by_address, mcp_kernel_router::sessions::network_digest("192.0.2.7/32"));
        assert_ne!(Some(by_address), there.session_quota(None), "another address, another client");
        let wide = AddressPrefixes::new(24, 64);
        assert_eq!(
            Client::Network(wide.network([192, 0, 2, 7].into())).session_quota(None),
            Client::Network(wide.network([192, 0, 2, 8].into())).session_quota(None),
            "one /24, one client"
        );
        assert_eq!(Client::Unknown.session_quota(None), None);
    }

    #[test]
    fn a_named_principal_comes_first_then_the_network_then_the_peer_address() {
        let digest = PrincipalDigest::default();
        assert_eq!(digest.of(&()), None, "a unit principal names nobody");
        let alice = digest.of(&"alice").expect("a name");
        assert_ne!(Some(alice), digest.of(&"bob"));
        assert_eq!(Some(alice), digest.of(&"alice"));
        assert_ne!(Some(alice), digest.of(&String::from("alice")), "the type is part of the key");

        let mut extensions = http::Extensions::new();
        assert_eq!(Client::of(None, &extensions), Client::Unknown);
        let peer: SocketAddr = "[2001:db8::5]:443".parse().unwrap();
        extensions.insert(PeerAddr(peer));
        let by_peer = Client::of(None, &extensions);
        assert_eq!(by_peer, Client::Network(AddressPrefixes::default().network(peer.ip())));
        let wide = AddressPrefixes::new(8, 16).network(peer.ip());
        extensions.insert(wide);
        assert_eq!(Client::of(None, &extensions), Client::Network(wide), "serve's network wins");
        assert_eq!(Client::of(Some(alice), &extensions), Client::Principal(alice));
    }
}
