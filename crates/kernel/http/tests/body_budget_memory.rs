//! The body budget holds in memory: a thousand clients each holding a near-cap body cannot push the
//! process past the budget plus a stated per-connection overhead. Alone in its test binary, so that
//! no other test's allocations are counted.

#[path = "integration/support/mod.rs"]
mod support;

use std::time::Duration;

use mcp_kernel_http::ServeOptions;
use support::edge::{dripped_head, status_kib};
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// How many clients hold a body.
const CLIENTS: usize = 1_000;

/// Each declares this much and sends all but the last kilobyte of it.
const DECLARED: usize = 1_040_000;

/// The budget under test: 16 near-cap bodies at once.
const BUDGET: usize = 16 * 1_048_576;

/// The stated overhead per held connection, on top of the budget: hyper's read buffer (at most 64 KiB
/// while a body streams through it), the connection's task and socket state, and this test's own
/// client half.
const OVERHEAD_PER_CONNECTION: u64 = 96 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_near_cap_bodies_stay_within_the_budget_plus_the_stated_overhead() {
    tokio::time::timeout(Duration::from_secs(90), async {
        // The thousand clients connect from one address: its share is the whole budget here, so that
        // the budget, not the share, is what they fill.
        let service = builder()
            .authorize(|_| Ok(()))
            .max_body_bytes_in_flight(BUDGET)
            .max_body_bytes_per_client(BUDGET)
            .build();
        let options = ServeOptions::new().max_connections_per_peer(2 * CLIENTS);
        let server = serve_with(service, options).await;
        // The same static bytes are sent by every client: the test's own side allocates no bodies.
        static BODY: [u8; DECLARED] = [b' '; DECLARED];
        let before = status_kib("VmRSS");
        let mut held = Vec::with_capacity(CLIENTS);
        let mut peak = before;
        for n in 0..CLIENTS {
            let mut stream = TcpStream::connect(server.addr).await.expect("connect");
            stream.write_all(&dripped_head(server.addr, DECLARED)).await.expect("head");
            // A refused client's write fails once the server closes; one the budget admits is read.
            let sent = tokio::time::timeout(Duration::from_millis(500), stream.write_all(&BODY[..DECLARED - 1024])).await;
            let _ = sent;
            held.push(stream);
            if n % 50 == 0 {
                peak = peak.max(status_kib("VmRSS"));
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        peak = peak.max(status_kib("VmRSS"));
        let grown = peak.saturating_sub(before) * 1024;
        let allowed = BUDGET as u64 + CLIENTS as u64 * OVERHEAD_PER_CONNECTION;
        drop(held);
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        let after = status_kib("VmRSS");
        eprintln!(
            "RSS {before} KiB before, {peak} KiB at the peak (+{} MiB, allowed {} MiB), {after} KiB after the burst",
            grown >> 20,
            allowed >> 20
        );
        assert!(grown <= allowed, "grew {grown} bytes holding {CLIENTS} bodies; allowed {allowed}");
    })
    .await
    .expect("bounded");
}
