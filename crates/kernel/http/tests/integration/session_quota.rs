//! Legacy sessions counted per client on a host whose `authorize` names nobody (as the conformance
//! harness's): a client is its address prefix, as for the body budget, so one address holds at most
//! its 16 sessions of the 10,000 and never starves another client for the 30 minutes they idle; and a
//! session stays bound to its principal (here nobody) only, never to the address it was opened from.

use std::net::{IpAddr, SocketAddr};

use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use crate::support::edge::loopback;
use crate::support::*;
use mcp_kernel_http::{AddressPrefixes, AllowedOrigins, LegacySessions, McpHttp, ServeOptions};
use mcp_kernel_router::notify::Notifications;
use mcp_kernel_router::sessions::SessionLimits;

/// The session fixture behind an `authorize` that admits everyone and names nobody, its clients named
/// by `prefixes`, sessions at `limits`; its notifications.
async fn start_naming_nobody(prefixes: AddressPrefixes, limits: SessionLimits) -> (Running, Notifications) {
    let notifications = Notifications::in_process();
    let service = McpHttp::builder(session_server(&notifications))
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .authorize(|_| Ok(()))
        .legacy_sessions(LegacySessions::in_process().limits(limits))
        .build();
    (serve_with(service, ServeOptions::new().client_prefixes(prefixes)).await, notifications)
}

/// A `2025-11-25` client with no token, connecting from the loopback address `source`.
#[derive(Debug, Clone)]
struct Anonymous {
    addr: SocketAddr,
    source: IpAddr,
    proto: Proto,
    id: Option<String>,
}

impl Anonymous {
    fn new(addr: SocketAddr, source: IpAddr, proto: Proto) -> Self {
        Self { addr, source, proto, id: None }
    }

    /// The same session, presented from `source`.
    fn from(&self, source: IpAddr) -> Self {
        Self { source, ..self.clone() }
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = legacy_headers();
        if let Some(id) = &self.id {
            headers.insert("mcp-session-id", HeaderValue::from_str(id).expect("a header value"));
        }
        headers
    }

    async fn send(&self, method: Method, headers: HeaderMap, message: Option<&Value>) -> Reply {
        let body = message.map(bytes).unwrap_or_default();
        connect_source(self.source, self.addr, self.proto).await.send(self.addr, method, headers, body).await
    }

    /// `initialize` as the SDKs send it; keeps the session id it mints.
    async fn initialize(&mut self) -> Reply {
        let headers = without(self.headers(), "mcp-protocol-version");
        let reply =
            self.send(Method::POST, without(headers, "mcp-session-id"), Some(&legacy_initialize())).await;
        self.id = reply.headers.get("mcp-session-id").map(|id| id.to_str().expect("ASCII").to_owned());
        reply
    }

    /// A client from `source` with a session.
    async fn initialized(addr: SocketAddr, source: IpAddr, proto: Proto) -> Self {
        let mut client = Self::new(addr, source, proto);
        let reply = client.initialize().await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(client.id.is_some(), "a session id: {reply:?}");
        client
    }

    async fn ping(&self) -> Reply {
        self.send(Method::POST, self.headers(), Some(&legacy(2, "ping", json!({})))).await
    }

    async fn delete(&self) -> Reply {
        self.send(Method::DELETE, self.headers(), None).await
    }
}

/// Asserts the 429 of a client past its sessions, which mints no session.
fn assert_client_full(refused: &Reply, client: &Anonymous) {
    refused.assert_error(429, -32600, &json!(1));
    assert!(refused.message().contains("Too many sessions for this client"), "{refused:?}");
    assert!(client.id.is_none(), "no session minted");
}

#[tokio::test]
async fn sessions_of_a_host_naming_nobody_are_16_per_address_and_a_second_address_is_still_admitted() {
    bounded(async {
        let limits = SessionLimits::default();
        assert_eq!((limits.per_owner, limits.total), (16, 10_000), "the documented defaults");
        let (server, _notifications) = start_naming_nobody(AddressPrefixes::default(), limits).await;
        let (first, second) = (loopback(2), loopback(3));
        let mut held = Vec::new();
        for n in 0..16 {
            let proto = BOTH[n % 2];
            held.push(Anonymous::initialized(server.addr, first, proto).await);
        }
        for proto in BOTH {
            let mut past = Anonymous::new(server.addr, first, proto);
            let refused = past.initialize().await;
            assert_client_full(&refused, &past);
        }
        for proto in BOTH {
            let other = Anonymous::initialized(server.addr, second, proto).await;
            assert_eq!(other.ping().await.status, 200, "the second client is served");
            assert_eq!(other.delete().await.status, 204);
        }
        for client in &held {
            assert_eq!(client.ping().await.status, 200, "the first client's 16 live on");
        }
        assert_eq!(held[3].delete().await.status, 204, "the first client ends one");
        Anonymous::initialized(server.addr, first, Proto::H2).await;
        let mut again = Anonymous::new(server.addr, first, Proto::H1);
        let refused = again.initialize().await;
        assert_client_full(&refused, &again);
    })
    .await;
}

#[tokio::test]
async fn a_session_is_counted_against_its_address_but_bound_to_none_so_its_client_may_change_networks() {
    bounded(async {
        let limits = SessionLimits::new(1, 100, std::time::Duration::from_secs(600), 16);
        let (server, _notifications) = start_naming_nobody(AddressPrefixes::default(), limits).await;
        for proto in BOTH {
            let opened = Anonymous::initialized(server.addr, loopback(2), proto).await;
            let moved = opened.from(loopback(4));
            assert_eq!(moved.ping().await.status, 200, "served from another address");
            let mut newcomer = Anonymous::new(server.addr, loopback(4), proto);
            assert_eq!(newcomer.initialize().await.status, 200, "the session counts against .2, not .4");
            let mut refused = Anonymous::new(server.addr, loopback(2), proto);
            assert_client_full(&refused.initialize().await, &refused);
            assert_eq!(moved.delete().await.status, 204, "ended from the new address");
            assert_eq!(refused.initialize().await.status, 200, "and .2's place came back");
            for client in [&newcomer, &refused] {
                assert_eq!(client.delete().await.status, 204);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_wider_client_prefix_makes_neighbouring_addresses_one_client_for_sessions() {
    bounded(async {
        let limits = SessionLimits::new(2, 100, std::time::Duration::from_secs(600), 16);
        let (server, _notifications) = start_naming_nobody(AddressPrefixes::new(24, 64), limits).await;
        let _two = Anonymous::initialized(server.addr, loopback(2), Proto::H1).await;
        let _three = Anonymous::initialized(server.addr, loopback(3), Proto::H2).await;
        for proto in BOTH {
            let mut four = Anonymous::new(server.addr, loopback(4), proto);
            assert_client_full(&four.initialize().await, &four);
        }
        let elsewhere: IpAddr = [127, 0, 1, 2].into();
        let other = Anonymous::initialized(server.addr, elsewhere, Proto::H2).await;
        assert_eq!(other.ping().await.status, 200, "another /24, another client");
    })
    .await;
}
