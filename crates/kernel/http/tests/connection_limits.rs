//! Bounded by default, tunable by the host: HTTP/2 streams per connection, connections in total and
//! per peer address, and the bytes of request bodies in flight across the service.
//!
//! In a test binary of its own: it holds many connections open, which would crowd the timing of
//! the tests in `integration/`.

#[path = "integration/support/mod.rs"]
mod support;

use std::time::Duration;

use mcp_kernel_http::{DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS, ServeOptions};
use serde_json::json;
use support::edge::{connect_from, dripped_head, hold_connections, loopback};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start_with(options: ServeOptions) -> Running {
    serve_with(builder().authorize(|_| Ok(())).build(), options).await
}

/// The server's first SETTINGS frame, as (identifier, value) pairs.
async fn server_settings(stream: &mut TcpStream) -> Vec<(u16, u32)> {
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .expect("write");
    let mut head = [0u8; 9];
    tokio::time::timeout(EXCHANGE_TIMEOUT, stream.read_exact(&mut head))
        .await
        .expect("in time")
        .expect("head");
    assert_eq!(head[3], 0x4, "the server speaks first with SETTINGS: {head:?}");
    let length = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let mut payload = vec![0u8; length];
    stream.read_exact(&mut payload).await.expect("payload");
    payload
        .chunks_exact(6)
        .map(|s| (u16::from_be_bytes([s[0], s[1]]), u32::from_be_bytes([s[2], s[3], s[4], s[5]])))
        .collect()
}

/// `SETTINGS_MAX_CONCURRENT_STREAMS` (RFC 9113 §6.5.2).
const MAX_CONCURRENT_STREAMS: u16 = 0x3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_advertises_sixteen_concurrent_streams_by_default_and_the_hosts_choice_otherwise() {
    bounded(async {
        let server = start_default().await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let settings = server_settings(&mut stream).await;
        assert!(
            settings.contains(&(MAX_CONCURRENT_STREAMS, DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS)),
            "{settings:?}"
        );
        assert_eq!(DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS, 16);
        let server = start_with(ServeOptions::new().http2_max_concurrent_streams(3)).await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        assert!(server_settings(&mut stream).await.contains(&(MAX_CONCURRENT_STREAMS, 3)));
    })
    .await;
}

/// `SETTINGS_INITIAL_WINDOW_SIZE` (RFC 9113 §6.5.2).
const INITIAL_WINDOW_SIZE: u16 = 0x4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_lets_a_client_send_no_more_than_the_protocols_initial_window_before_it_is_read() {
    bounded(async {
        let server = start_default().await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let settings = server_settings(&mut stream).await;
        // Absent means the protocol's 65,535; hyper on its own advertises 1 MiB per stream.
        let window = settings.iter().find(|(id, _)| *id == INITIAL_WINDOW_SIZE).map_or(65_535, |(_, v)| *v);
        assert_eq!(window, mcp_kernel_http::HTTP2_RECEIVE_WINDOW, "{settings:?}");
        // Nor is the connection's window opened past it: no WINDOW_UPDATE on stream 0 follows.
        let mut head = [0u8; 9];
        let next = tokio::time::timeout(Duration::from_millis(300), stream.read_exact(&mut head)).await;
        if let Ok(Ok(_)) = next {
            let stream_id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
            assert!(!(head[3] == 0x8 && stream_id == 0), "a connection-level WINDOW_UPDATE: {head:?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_past_the_limit_waits_until_one_closes() {
    bounded(async {
        let server = start_with(ServeOptions::new().http2_max_concurrent_streams(2)).await;
        let mut sender = h2_connect(server.addr).await;
        // One exchange first: by its end the client has the server's SETTINGS, and queues streams past
        // the limit itself (a stream opened before them is refused, REFUSED_STREAM, which is safe too).
        let warm = request(0, "tools/list", json!({}));
        let (response, mut body) =
            sender.send_request(h2_request(server.addr, headers_for(&warm)), false).expect("send");
        body.send_data(bytes(&warm), true).expect("data");
        assert_eq!(h2_read(response).await.0, 200);
        let slow = request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 600}}));
        let started = std::time::Instant::now();
        let mut calls = Vec::new();
        for _ in 0..3 {
            sender = sender.ready().await.expect("the client may queue a stream");
            let (response, mut body) =
                sender.send_request(h2_request(server.addr, headers_for(&slow)), false).expect("send");
            body.send_data(bytes(&slow), true).expect("data");
            calls.push(tokio::spawn(async move {
                let status = h2_read(response).await.0;
                (status, started.elapsed())
            }));
        }
        let mut done = Vec::new();
        for call in calls {
            let (status, at) = call.await.expect("joined");
            assert_eq!(status, 200);
            done.push(at);
        }
        done.sort();
        // Two run side by side; the third opens only when one of them closes.
        assert!(done[1] < Duration::from_millis(1_100), "{done:?}");
        assert!(done[2] >= Duration::from_millis(1_200), "the third stream ran beside the others: {done:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_over_its_share_is_closed_at_accept_and_others_are_served() {
    bounded(async {
        let server = start_with(ServeOptions::new().max_connections_per_peer(3)).await;
        let held = hold_connections(server.addr, 3, b"").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut fourth = TcpStream::connect(server.addr).await.expect("the kernel accepts the handshake");
        assert!(closed_within(&mut fourth, Duration::from_secs(2)).await, "the fourth is closed at accept");
        drop(held);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let reply = post_message(server.addr, Proto::H1, &request(1, "tools/list", json!({}))).await;
        assert_eq!(reply.status, 200, "slots come back when connections close");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_limit_a_new_connection_waits_for_a_free_slot() {
    bounded(async {
        // When every slot is held, a newcomer from a smaller client takes one from the biggest holder
        // (`serve/limits.rs`), whose connection is told to close; with two slots, one connection at
        // most may be on its way out at once. Both slots hold calls in flight from 127.0.0.2, and one
        // of them is told to close for 127.0.0.3: until that call ends, nothing more may be told, and
        // a new connection waits before accept.
        let server = start_with(ServeOptions::new().max_connections(2)).await;
        let slow = request(2, "tools/call", json!({"name": "slow", "arguments": {"ms": 1_500}}));
        let slow_body = serde_json::to_vec(&slow).expect("JSON");
        let mut fields = raw_standard("tools/call");
        fields.push(("mcp-name", "slow".to_owned()));
        fields.push(("content-length", slow_body.len().to_string()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut stream = connect_from(loopback(2), server.addr).await.expect("connect");
            stream.write_all(&raw_head("POST", server.addr, &fields)).await.expect("head");
            stream.write_all(&slow_body).await.expect("body");
            held.push(stream);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut third = connect_from(loopback(3), server.addr).await.expect("connect");
        let message = request(1, "tools/list", json!({}));
        let reply = post_on(&mut third, server.addr, &message).await;
        assert_eq!(reply.status, 200, "a smaller client takes a slot at once: {reply:?}");
        let waiting = tokio::spawn(async move { post_message(server.addr, Proto::H1, &message).await });
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(!waiting.is_finished(), "no new connection is served while two are held and one is leaving");
        // The told call ends, and its connection with it: the waiting connection is accepted.
        let reply = tokio::time::timeout(EXCHANGE_TIMEOUT, waiting).await.expect("in time").expect("joined");
        assert_eq!(reply.status, 200);
        drop((held, third));
    })
    .await;
}

/// One `POST` of `message` on a raw HTTP/1.1 connection, its response read whole.
async fn post_on(
    stream: &mut TcpStream,
    addr: std::net::SocketAddr,
    message: &serde_json::Value,
) -> RawResponse {
    let body = serde_json::to_vec(message).expect("JSON");
    let mut fields = raw_standard(message["method"].as_str().expect("a method"));
    fields.push(("content-length", body.len().to_string()));
    let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    stream.write_all(&raw_head("POST", addr, &fields)).await.expect("head");
    stream.write_all(&body).await.expect("body");
    read_raw_response(stream).await
}

/// Body bytes sent before the head of a near-cap body is left waiting.
const NEAR_CAP: usize = 1_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_the_budget_is_refused_503_with_retry_after_before_it_is_read() {
    bounded(async {
        // Every connection here comes from one address: its share is the whole budget, so this pins the
        // total alone (the share per client is pinned in `fair_bodies.rs`).
        let total = 2 * NEAR_CAP + 1_000;
        let service = builder()
            .authorize(|_| Ok(()))
            .max_body_bytes_in_flight(total)
            .max_body_bytes_per_client(total)
            .build();
        let server = serve_with(service, ServeOptions::new()).await;
        // Two near-cap bodies, all but their last kilobyte sent and held: the budget is nearly spent.
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut stream = TcpStream::connect(server.addr).await.expect("connect");
            stream.write_all(&support::edge::dripped_head(server.addr, NEAR_CAP)).await.expect("head");
            stream.write_all(&vec![b' '; NEAR_CAP - 1_000]).await.expect("most of the body");
            held.push(stream);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        // A third near-cap body's first bytes do not fit: 503 before any of it is read, and the
        // connection closes.
        let mut third = TcpStream::connect(server.addr).await.expect("connect");
        third.write_all(&dripped_head(server.addr, NEAR_CAP)).await.expect("head");
        let reply = read_raw_response(&mut third).await;
        assert_eq!(reply.status, 503, "{reply:?}");
        assert_eq!(reply.header("retry-after"), Some("1"), "{reply:?}");
        assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
        assert_eq!(reply.json()["error"]["code"], -32603);
        // A small request still fits beside them, over either protocol.
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &request(1, "tools/list", json!({}))).await;
            assert_eq!(reply.status, 200, "{reply:?}");
        }
        // An HTTP/2 body of undeclared length reserves the whole cap: it does not fit either.
        let mut sender = h2_connect(server.addr).await;
        let message = request(2, "tools/list", json!({}));
        let (response, mut body) =
            sender.send_request(h2_request(server.addr, headers_for(&message)), false).expect("send");
        // Refused before its body is read: the stream may be closed before the data goes out.
        let _ = body.send_data(bytes(&message), true);
        assert_eq!(h2_read(response).await.0, 503);
        // Given back when the held bodies go.
        drop(held);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (response, mut body) =
            sender.send_request(h2_request(server.addr, headers_for(&message)), false).expect("send");
        body.send_data(bytes(&message), true).expect("data");
        assert_eq!(h2_read(response).await.0, 200);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_calls_with_small_bodies_of_undeclared_length_hold_only_what_they_sent() {
    bounded(async {
        // Room for one body of the cap and a little more. A body of undeclared length reserves the cap
        // until it is read, then only what arrived, so calls run side by side and others still fit.
        let budget = mcp_kernel_http::MAX_BODY_BYTES + 64 * 1024;
        let service = builder().authorize(|_| Ok(())).max_body_bytes_in_flight(budget).build();
        let server = serve_with(service, ServeOptions::new()).await;
        let mut sender = h2_connect(server.addr).await;
        let slow = request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 1_500}}));
        let mut calls = Vec::new();
        for _ in 0..4 {
            let (response, mut body) =
                sender.send_request(h2_request(server.addr, headers_for(&slow)), false).expect("send");
            body.send_data(bytes(&slow), true).expect("data");
            calls.push(tokio::spawn(h2_read(response)));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let reply = post_message(server.addr, Proto::H1, &request(2, "tools/list", json!({}))).await;
        assert_eq!(reply.status, 200, "a small request beside four slow calls: {reply:?}");
        for call in calls {
            assert_eq!(call.await.expect("joined").0, 200, "no slow call was refused for the budget");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_outgrows_the_budget_is_refused_503_when_its_bytes_do_not_fit() {
    bounded(async {
        // One address, so its share is the whole budget: this pins the total alone.
        let service = builder()
            .authorize(|_| Ok(()))
            .max_body_bytes_in_flight(1_100_000)
            .max_body_bytes_per_client(1_100_000)
            .build();
        let server = serve_with(service, ServeOptions::new()).await;
        // One body holds 900 kB of the 1.1 MB budget.
        let mut holder = TcpStream::connect(server.addr).await.expect("connect");
        holder.write_all(&dripped_head(server.addr, NEAR_CAP)).await.expect("head");
        holder.write_all(&vec![b' '; 900_000]).await.expect("most of the body");
        tokio::time::sleep(Duration::from_millis(300)).await;
        // A second is admitted (its first 64 KiB fit) and refused once its bytes outgrow the room left.
        let mut second = TcpStream::connect(server.addr).await.expect("connect");
        second.write_all(&dripped_head(server.addr, NEAR_CAP)).await.expect("head");
        let body = vec![b' '; NEAR_CAP];
        let (mut reader, mut writer) = second.into_split();
        // The server stops reading at the refusal: the rest of the write may fail.
        let sending = tokio::spawn(async move { writer.write_all(&body).await });
        let reply = read_raw_response(&mut reader).await;
        assert_eq!(reply.status, 503, "{reply:?}");
        assert_eq!(reply.header("retry-after"), Some("1"), "{reply:?}");
        assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
        let _ = sending.await;
        drop(holder);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heads_that_send_no_body_cannot_spend_the_budget() {
    bounded(async {
        let service = builder().authorize(|_| Ok(())).max_body_bytes_in_flight(1_100_000).build();
        let server = serve_with(service, ServeOptions::new()).await;
        // Ten heads declaring near-cap bodies, and not a byte of them: a head alone holds nothing.
        let held =
            support::edge::hold_connections(server.addr, 10, &dripped_head(server.addr, NEAR_CAP)).await;
        let mut sender = h2_connect(server.addr).await;
        let mut streams = Vec::new();
        for _ in 0..5 {
            // HTTP/2 streams with a head and no data (and no length) hold no more than that either.
            let message = request(3, "tools/list", json!({}));
            let (response, body) =
                sender.send_request(h2_request(server.addr, headers_for(&message)), false).expect("send");
            streams.push((response, body));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let reply = post_message(server.addr, Proto::H1, &request(1, "tools/list", json!({}))).await;
        assert_eq!(reply.status, 200, "a small request beside 15 bodiless heads: {reply:?}");
        drop((held, streams));
    })
    .await;
}
