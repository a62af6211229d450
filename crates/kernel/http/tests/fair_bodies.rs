//! Fair shares of the body budget, at the default arithmetic (a 64 MiB budget, a 1 MiB cap, an
//! eighth of the budget per client): request heads hold nothing, and one client — one address, or one
//! principal — cannot spend what every other client needs. Each attack runs from its own loopback
//! addresses (127.0.0.2 …) while a legitimate client probes from another (and, where the attack
//! authenticates, another principal from the attacker's own address): every probe must be answered
//! 200. The probes' p50 and p99 are printed (`--nocapture`); `docs/performance.md` quotes them.
//!
//! In a test binary of its own: it holds about a thousand connections and 64 MiB of bodies.

#[path = "integration/support/mod.rs"]
mod support;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use http::HeaderValue;
use http::request::Parts;
use mcp_kernel_http::{DEFAULT_BODY_BYTES_IN_FLIGHT, MAX_BODY_BYTES, Refused, ServeOptions};
use serde_json::json;
use support::edge::{connect_from, loopback, status_kib};
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// How long one whole attack test may take.
const ATTACK_TIMEOUT: Duration = Duration::from_secs(120);

/// The legitimate client's address.
const LEGITIMATE: u8 = 20;

/// How many probes a legitimate client sends while an attack runs.
const PROBES: usize = 40;

/// A principal named by the `x-caller` header (a test's stand-in for a verified token).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Caller(String);

fn caller(parts: &Parts) -> Result<Caller, Refused> {
    match parts.headers.get("x-caller").and_then(|value| value.to_str().ok()) {
        Some(name) => Ok(Caller(name.to_owned())),
        None => Err(Refused::unauthenticated("no caller")),
    }
}

/// An anonymous server (its hook names nobody), with every default bound.
async fn anonymous() -> Running {
    serve_with(builder().authorize(|_| Ok(())).build(), ServeOptions::new()).await
}

/// A server whose hook names each caller, with every default bound.
async fn authenticated() -> Running {
    serve_with(builder().authorize(caller).build(), ServeOptions::new()).await
}

/// `count` probes of `tools/list` from `source` (as `principal`, if given), each on a fresh
/// connection, alternating HTTP/1.1 and HTTP/2; every one must be answered 200. Prints p50 and p99.
async fn probe(label: &str, addr: SocketAddr, source: IpAddr, principal: Option<&str>, count: usize) {
    let message = request(1, "tools/list", json!({}));
    let mut times = Vec::with_capacity(count);
    for n in 0..count {
        let proto = if n % 2 == 0 { Proto::H1 } else { Proto::H2 };
        let mut headers = headers_for(&message);
        if let Some(name) = principal {
            headers.insert("x-caller", HeaderValue::from_str(name).expect("a header value"));
        }
        let started = Instant::now();
        let mut conn = connect_source(source, addr, proto).await;
        let reply = conn.post(addr, headers, bytes(&message)).await;
        times.push(started.elapsed());
        assert_eq!(reply.status, 200, "{label}: probe {n} over {proto:?} from {source}: {reply:?}");
    }
    times.sort();
    let p50 = times[times.len() / 2];
    let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
    eprintln!("{label}: {count} probes from {source}, all 200: p50 {p50:?}, p99 {p99:?}");
}

/// The head of a `tools/list` declaring `length` body bytes, as `principal` if given.
fn head(addr: SocketAddr, length: usize, principal: Option<&str>) -> Vec<u8> {
    let mut fields = raw_standard("tools/list");
    fields.push(("content-length", length.to_string()));
    if let Some(name) = principal {
        fields.push(("x-caller", name.to_owned()));
    }
    let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    raw_head("POST", addr, &fields)
}

/// `connections` HTTP/2 connections from `source`, each with `streams` request heads and no DATA:
/// half declare a 1 MiB body, half declare none. Everything is returned, to be held.
async fn h2_heads(
    addr: SocketAddr,
    source: IpAddr,
    connections: usize,
    streams: usize,
    principal: Option<&str>,
) -> Vec<impl Sized> {
    let message = request(1, "tools/list", json!({}));
    let mut held = Vec::with_capacity(connections);
    for _ in 0..connections {
        let mut sender = h2_connect_from(source, addr).await;
        let mut open = Vec::with_capacity(streams);
        for n in 0..streams {
            let mut headers = headers_for(&message);
            if n % 2 == 0 {
                headers.insert("content-length", HeaderValue::from(MAX_BODY_BYTES));
            }
            if let Some(name) = principal {
                headers.insert("x-caller", HeaderValue::from_str(name).expect("a header value"));
            }
            let (response, body) = sender.send_request(h2_request(addr, headers), false).expect("a stream");
            open.push((response, body));
        }
        held.push((sender, open));
    }
    held
}

/// `count` HTTP/1.1 connections from each of `sources`, each with a head declaring 1 MiB and no body.
async fn h1_heads(
    addr: SocketAddr,
    sources: &[IpAddr],
    count: usize,
    principal: Option<&str>,
) -> Vec<TcpStream> {
    let head = head(addr, MAX_BODY_BYTES, principal);
    let mut held = Vec::with_capacity(sources.len() * count);
    for n in 0..sources.len() * count {
        let mut stream = connect_from(sources[n % sources.len()], addr).await.expect("connect");
        stream.write_all(&head).await.expect("the head");
        held.push(stream);
    }
    held
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_heads_that_send_no_body_cannot_spend_the_default_budget() {
    tokio::time::timeout(ATTACK_TIMEOUT, async {
        assert_eq!(
            (DEFAULT_BODY_BYTES_IN_FLIGHT, MAX_BODY_BYTES),
            (64 << 20, 1 << 20),
            "the default arithmetic"
        );
        let server = anonymous().await;
        let addr = server.addr;
        probe("heads: before the attack", addr, loopback(LEGITIMATE), None, 10).await;
        let before = status_kib("VmRSS");
        // Twice over, to see whether memory kept after one burst grows with the next.
        let bursts = std::env::var("FAIR_SHARES_BURSTS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(2_u32)
            .clamp(1, 10);
        for burst in 1..=bursts {
            // 64 HTTP/2 connections × 16 streams from one address: 1,024 heads, each of which once held
            // 64 KiB — the whole budget — without a byte of body.
            let streams = h2_heads(addr, loopback(2), 64, 16, None).await;
            // And 1,032 HTTP/1.1 heads declaring 1 MiB, from three more addresses.
            let heads = h1_heads(addr, &[loopback(3), loopback(4), loopback(5)], 344, None).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let label = format!("heads, burst {burst}: 1,024 HTTP/2 + 1,032 HTTP/1.1 heads held");
            probe(&label, addr, loopback(LEGITIMATE), None, PROBES).await;
            // The attacker's own address is served too: heads hold nothing, even its own.
            probe("heads: from the attacker's address", addr, loopback(2), None, 4).await;
            let peak = status_kib("VmRSS");
            drop((streams, heads));
            tokio::time::sleep(Duration::from_secs(1)).await;
            let after = status_kib("VmRSS");
            eprintln!(
                "heads, burst {burst}: RSS {before} KiB before, {peak} KiB held, {after} KiB 1 s after"
            );
        }
    })
    .await
    .expect("the attack test finished in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heads_from_one_principal_cannot_spend_the_budget_of_another_on_the_same_address() {
    tokio::time::timeout(ATTACK_TIMEOUT, async {
        let server = authenticated().await;
        let addr = server.addr;
        let streams = h2_heads(addr, loopback(2), 64, 16, Some("bob")).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        probe("heads as bob: alice from bob's address", addr, loopback(2), Some("alice"), PROBES).await;
        probe("heads as bob: carol from another address", addr, loopback(LEGITIMATE), Some("carol"), 10)
            .await;
        drop(streams);
    })
    .await
    .expect("the attack test finished in time");
}

/// A connection whose body the server is still reading (both halves, held).
type Held = (tokio::net::tcp::OwnedReadHalf, tokio::net::tcp::OwnedWriteHalf);

/// Sends `count` HTTP/1.1 bodies of 1 MiB − 1 byte (of 1 MiB declared) from `source`, one after the
/// other; returns the connections the server is still reading and how many were refused 503.
async fn hold_bodies(
    addr: SocketAddr,
    source: IpAddr,
    count: usize,
    principal: Option<&str>,
) -> (Vec<Held>, usize) {
    let head = head(addr, MAX_BODY_BYTES, principal);
    let body = bytes::Bytes::from(vec![b' '; MAX_BODY_BYTES - 1]);
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..count {
        let mut stream = connect_from(source, addr).await.expect("connect");
        stream.write_all(&head).await.expect("the head");
        let (mut reader, mut writer) = stream.into_split();
        let body = body.clone();
        // The server stops reading a refused body: the write may fail, or stall until the refusal.
        let mut writing = tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(5), writer.write_all(&body)).await;
            writer
        });
        let sent_and_unanswered = async {
            let writer = (&mut writing).await.expect("the writer");
            tokio::time::sleep(Duration::from_millis(300)).await;
            writer
        };
        tokio::select! {
            reply = read_raw_response(&mut reader) => {
                assert_eq!(reply.status, 503, "a held body's only answer is a refusal: {reply:?}");
                assert_eq!(reply.header("retry-after"), Some("1"), "{reply:?}");
                refused += 1;
            }
            writer = sent_and_unanswered => held.push((reader, writer)),
        }
    }
    (held, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_holding_bodies_on_sixty_four_connections_holds_only_its_share() {
    tokio::time::timeout(ATTACK_TIMEOUT, async {
        let server = anonymous().await;
        let addr = server.addr;
        // 64 connections from one address, each holding 1,048,575 of 1,048,576 declared bytes: once
        // the whole default budget. Its share is an eighth of it: eight bodies.
        let (held, refused) = hold_bodies(addr, loopback(2), 64, None).await;
        assert_eq!(held.len(), DEFAULT_BODY_BYTES_IN_FLIGHT / 8 / MAX_BODY_BYTES, "eight bodies held");
        assert_eq!(refused, 56, "the other 56 refused 503");
        probe("held bodies: another address", addr, loopback(LEGITIMATE), None, PROBES).await;
        // A second client at its full share still leaves room for everyone else.
        let (second, _) = hold_bodies(addr, loopback(3), 64, None).await;
        assert_eq!(second.len(), 8, "another client has a share of its own");
        probe("held bodies, two clients: a third address", addr, loopback(LEGITIMATE), None, 10).await;
        drop((held, second));
    })
    .await
    .expect("the attack test finished in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_principal_holding_bodies_cannot_starve_another_on_the_same_address() {
    tokio::time::timeout(ATTACK_TIMEOUT, async {
        let server = authenticated().await;
        let addr = server.addr;
        let (held, refused) = hold_bodies(addr, loopback(2), 64, Some("bob")).await;
        assert_eq!((held.len(), refused), (8, 56), "bob holds his share, and no more");
        probe("held bodies as bob: alice from bob's address", addr, loopback(2), Some("alice"), PROBES).await;
        // Bob is one client from every address: a second address adds nothing to his share.
        let (more, _) = hold_bodies(addr, loopback(3), 4, Some("bob")).await;
        assert!(more.is_empty(), "bob from another address is still bob");
        drop(held);
    })
    .await
    .expect("the attack test finished in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_of_body_holds_a_byte_of_budget_so_eight_clients_of_one_byte_heads_starve_nobody() {
    tokio::time::timeout(ATTACK_TIMEOUT, async {
        let server = anonymous().await;
        let addr = server.addr;
        // Eight addresses (each a client at its share's limit, if a byte bought a declared mebibyte),
        // each with 64 heads declaring 1 MiB followed by one byte of body.
        let head = head(addr, MAX_BODY_BYTES, None);
        let mut held = Vec::new();
        for source in 2..10 {
            for _ in 0..64 {
                let mut stream = connect_from(loopback(source), addr).await.expect("connect");
                stream.write_all(&head).await.expect("the head");
                stream.write_all(b"{").await.expect("one byte of body");
                held.push(stream);
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        probe("one-byte bodies from eight addresses: a ninth", addr, loopback(LEGITIMATE), None, PROBES)
            .await;
        probe("one-byte bodies: from an attacking address", addr, loopback(2), None, 4).await;
        drop(held);
    })
    .await
    .expect("the attack test finished in time");
}
