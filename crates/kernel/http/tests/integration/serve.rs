//! `mcp_kernel_http::serve`: graceful shutdown and the HTTP/1.1 header deadline.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::support::*;
use mcp_kernel_http::FIRST_BYTES_TIMEOUT;

/// Starts `serve` directly, returning the address, the shutdown sender and the serve task.
async fn start_raw()
-> (std::net::SocketAddr, oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = oneshot::channel::<()>();
    let service = builder().authorize(|_| Ok(())).build();
    let task = tokio::spawn(mcp_kernel_http::serve(listener, service, async move {
        let _ = rx.await;
    }));
    (addr, tx, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_an_in_flight_request_finish_then_stops() {
    bounded(async {
        let (addr, stop, task) = start_raw().await;
        for proto in BOTH {
            // Warm both protocols up so that the connections exist before shutdown.
            let reply = post_message(addr, proto, &request(0, "tools/list", json!({}))).await;
            assert_eq!(reply.status, 200);
        }
        let message = request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 500}}));
        let mut conn = connect(addr, Proto::H1).await;
        let in_flight =
            tokio::spawn(async move { conn.post(addr, headers_for(&message), bytes(&message)).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        let asked = Instant::now();
        let _ = stop.send(());
        let reply = in_flight.await.expect("the in-flight request");
        assert_eq!(reply.status, 200, "{reply:?}");
        let served = tokio::time::timeout(Duration::from_secs(5), task).await;
        assert!(served.is_ok(), "serve returns once the in-flight request is done");
        assert!(asked.elapsed() < Duration::from_secs(5));
        // The listener is gone.
        assert!(TcpStream::connect(addr).await.is_err(), "no new connection after shutdown");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_is_held_by_an_idle_http1_connection_only_until_its_peer_leaves() {
    bounded(async {
        let (addr, stop, task) = start_raw().await;
        let message = request(1, "tools/list", json!({}));
        let mut h1 = connect(addr, Proto::H1).await;
        let mut h2 = connect(addr, Proto::H2).await;
        assert_eq!(h1.post(addr, headers_for(&message), bytes(&message)).await.status, 200);
        assert_eq!(h2.post(addr, headers_for(&message), bytes(&message)).await.status, 200);
        // A third connection that never sent a byte.
        let _silent = TcpStream::connect(addr).await.expect("connect");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let _ = stop.send(());
        // The HTTP/2 connection gets GOAWAY and the silent one is closed; the idle HTTP/1.1 one is left
        // to its peer (closing it could race a request being written on it), so `serve` is draining.
        let mut task = task;
        let early = tokio::time::timeout(Duration::from_millis(700), &mut task).await;
        assert!(early.is_err(), "an idle HTTP/1.1 keep-alive connection holds the drain");
        // Its peer leaves: `serve` returns, long before the idle limit (15 s) or the grace (30 s).
        drop(h1);
        let served = tokio::time::timeout(Duration::from_secs(5), task).await;
        assert!(served.is_ok(), "serve returns once the last peer has left");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_a_first_head_dripped_forever_is_cut_at_the_first_bytes_deadline() {
    bounded(async {
        let server = start_default().await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let started = Instant::now();
        // A request line and then one header byte every 100 ms, never the blank line.
        stream.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\nx-slow: ").await.expect("write");
        let mut closed_at = None;
        for _ in 0..((FIRST_BYTES_TIMEOUT.as_millis() / 100) as usize + 30) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stream.write_all(b"a").await.is_err() {
                closed_at = Some(started.elapsed());
                break;
            }
            if closed_within(&mut stream, Duration::from_millis(1)).await {
                closed_at = Some(started.elapsed());
                break;
            }
        }
        let closed_at = closed_at.expect("the server closes a connection whose head never ends");
        assert!(closed_at >= FIRST_BYTES_TIMEOUT, "{closed_at:?}");
        assert!(closed_at <= FIRST_BYTES_TIMEOUT + Duration::from_secs(2), "{closed_at:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_never_show_their_protocol_are_closed_at_the_first_bytes_deadline() {
    bounded(async {
        let server = start_default().await;
        let started = Instant::now();
        // Nothing at all, and most of the HTTP/2 preface: neither may hold a connection forever.
        let mut silent = TcpStream::connect(server.addr).await.expect("connect");
        let mut partial = TcpStream::connect(server.addr).await.expect("connect");
        partial.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n").await.expect("write");
        let deadline = mcp_kernel_http::FIRST_BYTES_TIMEOUT + Duration::from_secs(3);
        for stream in [&mut silent, &mut partial] {
            assert!(closed_within(stream, deadline.saturating_sub(started.elapsed())).await, "not closed");
        }
        assert!(started.elapsed() >= mcp_kernel_http::FIRST_BYTES_TIMEOUT, "{:?}", started.elapsed());
    })
    .await;
}

/// Starts `serve_with` with `options`, returning the address and the shutdown sender (kept to keep it
/// serving).
async fn start_with(options: mcp_kernel_http::ServeOptions) -> (std::net::SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = oneshot::channel::<()>();
    let service = builder().authorize(|_| Ok(())).build();
    tokio::spawn(mcp_kernel_http::serve_with(
        listener,
        service,
        async move {
            let _ = rx.await;
        },
        options,
    ));
    (addr, tx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_a_later_head_dripped_is_cut_at_the_header_deadline_counted_from_the_last_request() {
    bounded(async {
        const HEAD: Duration = Duration::from_secs(2);
        const IDLE: Duration = Duration::from_secs(1);
        let options = mcp_kernel_http::ServeOptions::new().header_read_timeout(HEAD);
        let (addr, _stop) = start_with(options).await;
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        // The server's clock starts between these two instants: when the request ends there.
        let sent = Instant::now();
        stream.write_all(&raw_post_message(addr, &request(1, "tools/list", json!({})))).await.expect("write");
        assert_eq!(read_raw_response(&mut stream).await.status, 200);
        let answered = Instant::now();
        // A second idle, then the next head one byte every 100 ms, never its blank line.
        tokio::time::sleep(IDLE).await;
        stream.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\nx-slow: ").await.expect("write");
        let mut closed = None;
        for _ in 0..60 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stream.write_all(b"a").await.is_err()
                || closed_within(&mut stream, Duration::from_millis(1)).await
            {
                closed = Some(Instant::now());
                break;
            }
        }
        let closed = closed.expect("the server closes a connection whose next head never ends");
        let since_sent = closed - sent;
        assert!(since_sent >= HEAD, "not before the deadline: {since_sent:?}");
        // Timed from the first byte of the head, it would close `IDLE + HEAD` after the answer.
        let since_answered = closed - answered;
        assert!(
            since_answered < HEAD + IDLE - Duration::from_millis(300),
            "the idle time counted: {since_answered:?}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_an_idle_keep_alive_connection_is_closed_at_the_header_deadline_and_one_in_use_is_not() {
    bounded(async {
        const HEAD: Duration = Duration::from_secs(2);
        let options = mcp_kernel_http::ServeOptions::new().header_read_timeout(HEAD);
        let (addr, _stop) = start_with(options).await;
        // One connection used every 300 ms for one and a half deadlines: never cut.
        let mut busy = TcpStream::connect(addr).await.expect("connect");
        let mut idle = TcpStream::connect(addr).await.expect("connect");
        idle.write_all(&raw_post_message(addr, &request(1, "tools/list", json!({})))).await.expect("write");
        assert_eq!(read_raw_response(&mut idle).await.status, 200);
        for id in 0..10 {
            busy.write_all(&raw_post_message(addr, &request(id, "tools/list", json!({}))))
                .await
                .expect("write");
            assert_eq!(read_raw_response(&mut busy).await.status, 200, "request {id} on a connection in use");
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        // The idle one was closed, at its deadline (it is past it now).
        assert!(closed_within(&mut idle, Duration::from_millis(100)).await, "the idle connection is closed");
        // And an idle one is closed no sooner than its deadline.
        let mut fresh = TcpStream::connect(addr).await.expect("connect");
        fresh.write_all(&raw_post_message(addr, &request(1, "tools/list", json!({})))).await.expect("write");
        assert_eq!(read_raw_response(&mut fresh).await.status, 200);
        let early = HEAD - Duration::from_millis(400);
        assert!(!closed_within(&mut fresh, early).await, "open until shortly before its deadline");
        assert!(closed_within(&mut fresh, Duration::from_secs(2)).await, "closed by its deadline");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_connections_are_not_held_to_the_http1_header_deadline() {
    bounded(async {
        let options = mcp_kernel_http::ServeOptions::new().header_read_timeout(Duration::from_millis(500));
        let (addr, _stop) = start_with(options).await;
        let message = request(1, "tools/list", json!({}));
        let mut h2 = connect(addr, Proto::H2).await;
        assert_eq!(h2.post(addr, headers_for(&message), bytes(&message)).await.status, 200);
        // Four times the HTTP/1.1 head deadline idle; the connection still serves (its idle limit is 60 s).
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(h2.post(addr, headers_for(&message), bytes(&message)).await.status, 200);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_answers_a_slow_reader_takes_are_held_to_the_write_timeout_not_the_header_deadline() {
    bounded(async {
        // Answers of about 56 KiB each (one frame, so hyper lets go of each body before its bytes
        // leave), pipelined faster than a client with a small receive buffer reads them: the server's
        // writes wait on the client longer than the head deadline, and well within the write timeout.
        const CALLS: usize = 150;
        const STATUS: &[u8] = b"HTTP/1.1 200 OK";
        let options = mcp_kernel_http::ServeOptions::new()
            .header_read_timeout(Duration::from_secs(1))
            .write_timeout(Duration::from_secs(15));
        let (addr, _stop) = start_with(options).await;
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.set_recv_buffer_size(2048).expect("a small receive buffer");
        let stream = socket.connect(addr).await.expect("connect");
        let call =
            request(1, "tools/call", json!({"name": "echo", "arguments": {"message": "a".repeat(28_000)}}));
        let requests: Vec<u8> = raw_post_message(addr, &call).repeat(CALLS);
        let (mut reader, mut writer) = stream.into_split();
        let sending = tokio::spawn(async move {
            writer.write_all(&requests).await.expect("every request is read");
            writer
        });
        // Three seconds without reading (the head deadline is 1 s), then everything.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let mut answers = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let (mut answered, mut counted) = (0usize, 0usize);
        for _ in 0..1_000_000 {
            match tokio::time::timeout(Duration::from_secs(10), reader.read(&mut chunk)).await {
                Ok(Ok(0) | Err(_)) | Err(_) => break,
                Ok(Ok(n)) => answers.extend_from_slice(&chunk[..n]),
            }
            // Counted in what arrived since the last count (and a status line it may have cut).
            let from = counted.saturating_sub(STATUS.len());
            answered += count(&answers[from..], STATUS) - count(&answers[from..counted], STATUS);
            counted = answers.len();
            if answered == CALLS && answers.ends_with(b"}") {
                break;
            }
        }
        assert_eq!(answered, CALLS, "every answer arrives: the connection is not cut");
        let _writer = sending.await.expect("the requests were sent");
    })
    .await;
}

/// How many times `needle` occurs in `haystack`.
fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack.windows(needle.len()).filter(|window| *window == needle).count()
}
