//! A flood of the costliest preflights leaves a legitimate client served: four connections, each from
//! an address of its own, send CORS preflights whose `access-control-request-headers` is the crafted
//! 60 KB list (63 distinct `mcp-param-*` names, then the last repeated) one after another, as fast as
//! they are answered, while a legitimate client probes `tools/list` from another address. Every probe
//! must be answered 200; the probes' p50 and p99 are printed (`--nocapture`), and `docs/performance.md`
//! quotes them beside the same probes with no flood.
//!
//! In a test binary of its own: it keeps both cores busy while it runs.

#[path = "integration/support/mod.rs"]
mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_kernel_http::ServeOptions;
use serde_json::json;
use support::edge::{connect_from, loopback};
use support::*;
use tokio::io::AsyncWriteExt;

/// How many probes the legitimate client sends, with and without the flood.
const PROBES: usize = 60;

/// The crafted list: 63 distinct names, then the last repeated up to `bytes`.
fn crafted_list(bytes: usize) -> String {
    let mut list: String = (0..63).map(|i| format!("mcp-param-p{i},")).collect();
    while list.len() < bytes {
        list.push_str("MCP-Param-P62,");
    }
    list
}

/// One connection's flood: preflights on one keep-alive HTTP/1.1 connection until `stop`; how many
/// were answered 204.
async fn flood(addr: SocketAddr, source: u8, stop: Arc<AtomicBool>, answered: Arc<AtomicUsize>) {
    let list = crafted_list(60_000);
    let head = raw_head(
        "OPTIONS",
        addr,
        &[
            ("origin", ALLOWED_ORIGIN),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", &list),
        ],
    );
    let mut stream = connect_from(loopback(source), addr).await.expect("connect");
    // Bounded in count as well as by `stop`: a minute of preflights at most.
    for _ in 0..100_000 {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        stream.write_all(&head).await.expect("a preflight");
        let reply = read_raw_response(&mut stream).await;
        assert_eq!(reply.status, 204, "{reply:?}");
        answered.fetch_add(1, Ordering::Relaxed);
    }
}

/// `PROBES` probes from 127.0.0.20 on one kept-alive connection per protocol, alternating; their p50
/// and p99.
async fn probes(addr: SocketAddr) -> (Duration, Duration) {
    let message = request(1, "tools/list", json!({}));
    let mut h1 = connect_source(loopback(20), addr, Proto::H1).await;
    let mut h2 = connect_source(loopback(20), addr, Proto::H2).await;
    let mut times = Vec::with_capacity(PROBES);
    for n in 0..PROBES {
        let conn = if n % 2 == 0 { &mut h1 } else { &mut h2 };
        let started = Instant::now();
        let reply = conn.post(addr, headers_for(&message), bytes(&message)).await;
        times.push(started.elapsed());
        assert_eq!(reply.status, 200, "probe {n}: {reply:?}");
    }
    times.sort();
    (times[times.len() / 2], times[(times.len() * 99 / 100).min(times.len() - 1)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legitimate_client_is_served_while_four_connections_flood_the_costliest_preflights() {
    tokio::time::timeout(Duration::from_secs(120), async {
        let server = serve_with(builder().authorize(|_| Ok(())).build(), ServeOptions::new()).await;
        let (quiet_p50, quiet_p99) = probes(server.addr).await;
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicUsize::new(0));
        let floods: Vec<_> = (2..6)
            .map(|source| tokio::spawn(flood(server.addr, source, Arc::clone(&stop), Arc::clone(&answered))))
            .collect();
        // The flood is under way before the probes start.
        for _ in 0..200 {
            if answered.load(Ordering::Relaxed) >= 40 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let flooded_at = Instant::now();
        let before = answered.load(Ordering::Relaxed);
        let (p50, p99) = probes(server.addr).await;
        let during = answered.load(Ordering::Relaxed) - before;
        let window = flooded_at.elapsed();
        stop.store(true, Ordering::Relaxed);
        for flood in floods {
            flood.await.expect("a flood connection");
        }
        eprintln!(
            "{PROBES} probes, all 200: p50 {quiet_p50:?}, p99 {quiet_p99:?} with no flood; p50 {p50:?}, p99 {p99:?} \
             while four connections sent {during} crafted preflights in {window:?}"
        );
        assert!(during > 0, "the preflights flowed while the probes ran");
    })
    .await
    .expect("the flood test finished in time");
}
