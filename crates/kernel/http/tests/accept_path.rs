//! The accept path waits on readiness for *more* bytes: a connection holding part of the HTTP/2
//! preface, or dripping an HTTP/1.1 `POST`, costs no CPU while it waits, and one deadline from accept
//! covers the protocol decision and the whole first request head. Alone in its test binary: it measures
//! the process's CPU time, which another test running beside it would spend.

#[path = "integration/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use mcp_kernel_http::ServeOptions;
use support::edge::{cpu_time, hold_connections, median_latency};
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// How many connections hold a partial preface.
const HELD: usize = 1_000;

/// The first 16 of the preface's 24 bytes.
const PARTIAL_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n";

fn options() -> ServeOptions {
    ServeOptions::new().max_connections_per_peer(4 * HELD).first_bytes_timeout(Duration::from_secs(30))
}

async fn start_with(options: ServeOptions) -> Running {
    serve_with(builder().authorize(|_| Ok(())).build(), options).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_partial_prefaces_cost_no_cpu_while_they_wait() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let server = start_with(options()).await;
        let held = hold_connections(server.addr, HELD, PARTIAL_PREFACE).await;
        // Let every connection reach its wait, then measure a quiet window.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (cpu, wall) = (cpu_time(), Instant::now());
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (spent, window) = (cpu_time() - cpu, wall.elapsed());
        // A poll every few milliseconds per connection is over a core; waiting on readiness is ~0.
        assert!(spent < Duration::from_millis(200), "{spent:?} of CPU in {window:?} with {HELD} held");
        drop(held);
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legitimate_request_is_served_as_fast_while_a_thousand_partial_prefaces_wait() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let server = start_with(options()).await;
        let before = median_latency(server.addr, 50).await;
        let held = hold_connections(server.addr, HELD, PARTIAL_PREFACE).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let during = median_latency(server.addr, 50).await;
        drop(held);
        let bound = (before * 5).max(before + Duration::from_millis(5));
        assert!(during <= bound, "median {during:?} with {HELD} partial prefaces, {before:?} without");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dripped_post_is_held_to_one_deadline_from_accept() {
    bounded(async {
        let deadline = Duration::from_millis(1_500);
        let server = start_with(ServeOptions::new().first_bytes_timeout(deadline)).await;
        // The clock starts before `connect`: the server accepts after the handshake begins and may do
        // so before `connect` returns here, so a clock started after it could see the deadline early.
        let accepted = Instant::now();
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        // `P` could begin the HTTP/2 preface: the decision waits for the next byte, which comes late,
        // and the head after it trickles in, a byte every 100 ms, never finishing.
        stream.write_all(b"P").await.expect("write");
        tokio::time::sleep(Duration::from_millis(700)).await;
        let mut closed_at = None;
        for byte in
            b"OST /mcp HTTP/1.1\r\nhost: x\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        {
            if stream.write_all(&[*byte]).await.is_err()
                || closed_within(&mut stream, Duration::from_millis(100)).await
            {
                closed_at = Some(accepted.elapsed());
                break;
            }
        }
        let closed_at = closed_at.expect("the connection is closed before the head is complete");
        assert!(closed_at >= deadline, "{closed_at:?}");
        assert!(
            closed_at < deadline + Duration::from_millis(900),
            "the head got a deadline of its own: {closed_at:?}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preface_completed_slowly_is_served_over_http2() {
    bounded(async {
        let server = start_with(ServeOptions::new()).await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        // The preface a byte at a time: each read sees one new byte, and the decision still comes.
        for byte in b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" {
            stream.write_all(&[*byte]).await.expect("write");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The server's SETTINGS frame answers a real HTTP/2 connection: type 0x4 on stream 0.
        let mut head = [0u8; 9];
        tokio::time::timeout(EXCHANGE_TIMEOUT, tokio::io::AsyncReadExt::read_exact(&mut stream, &mut head))
            .await
            .expect("a frame in time")
            .expect("read a frame head");
        assert_eq!(head[3], 0x4, "a SETTINGS frame: {head:?}");
    })
    .await;
}
