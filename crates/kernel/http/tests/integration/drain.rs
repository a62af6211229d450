//! `serve`'s drain, as a rolling deploy meets it: once shutdown begins, new connections are refused,
//! every request already read is answered (JSON, and SSE streams to their end), idle connections are
//! closed politely (HTTP/1.1 `connection: close` or a close, HTTP/2 `GOAWAY`), and what still runs at
//! the grace is cut. Every server here runs on 127.0.0.1, port 0, and each tool that waits waits on
//! its test.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use mcp_kernel_http::{AllowedOrigins, McpHttp, ServeOptions};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::support::*;

/// How long a client waits for the server to close a connection it should close.
const CLOSE: Duration = Duration::from_secs(5);

/// The tools' side of a test: one permit lets one waiting call go on; every start is reported; every
/// call dropped before its end is recorded.
struct Tools {
    gate: Arc<Semaphore>,
    started: mpsc::UnboundedReceiver<String>,
    dropped: Arc<Mutex<Vec<String>>>,
}

impl Tools {
    /// The next tool started.
    async fn started(&mut self) -> String {
        self.started.recv().await.expect("the server is alive")
    }

    /// Waits (at most 5 s) until `count` calls of `tool` have had their futures dropped.
    async fn dropped(&self, tool: &str, count: usize) {
        let seen = || {
            let dropped = self.dropped.lock().unwrap_or_else(PoisonError::into_inner);
            dropped.iter().filter(|t| *t == tool).count()
        };
        for _ in 0..250 {
            if seen() >= count {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("{} of {count} {tool} calls dropped within 5 s", seen());
    }
}

/// Records its tool's name when dropped before its end.
struct DropFlag(String, Arc<Mutex<Vec<String>>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.1.lock().unwrap_or_else(PoisonError::into_inner).push(std::mem::take(&mut self.0));
    }
}

/// A server with `quick` (answers at once), `wait` (answers once the gate lets it), `wait_progress`
/// (reports 1 of 2, waits for the gate, reports 2 of 2, answers) and `forever` (never answers).
fn drain_server() -> (Server, Tools) {
    let gate = Arc::new(Semaphore::new(0));
    let (report, started) = mpsc::unbounded_channel();
    let dropped = Arc::new(Mutex::new(Vec::new()));
    let tools = ["quick", "wait", "wait_progress", "forever"].map(|name| ToolSpec::new(name, Mode::ReadOnly));
    let (tool_gate, tool_dropped) = (Arc::clone(&gate), Arc::clone(&dropped));
    let server = Server::builder(Listing { tools: tools.to_vec(), ..Listing::default() })
        .dispatch(move |call: ToolCall| {
            let (gate, dropped, report) = (Arc::clone(&tool_gate), Arc::clone(&tool_dropped), report.clone());
            async move {
                let name = call.name.to_string();
                let _ = report.send(name.clone());
                let flag = DropFlag(name.clone(), dropped);
                match name.as_str() {
                    "wait" => gate.acquire().await.expect("the gate stays open").forget(),
                    "wait_progress" => {
                        call.context.progress().report(1.0, Some(2.0), Some("half"));
                        gate.acquire().await.expect("the gate stays open").forget();
                        call.context.progress().report(2.0, Some(2.0), Some("done"));
                    }
                    "forever" => std::future::pending::<()>().await,
                    _ => {}
                }
                std::mem::forget(flag);
                Ok::<_, ToolError>(ToolOutput::text(name))
            }
        })
        .build()
        .expect("the catalog builds");
    (server, Tools { gate, started, dropped })
}

/// `serve_with` running the drain server: its address, its tools, the shutdown trigger and the task.
struct Draining {
    addr: SocketAddr,
    tools: Tools,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Draining {
    async fn start(options: ServeOptions) -> Self {
        let (server, tools) = drain_server();
        let service = McpHttp::builder(server)
            .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
            .authorize(|_| Ok(()))
            .build();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("the bound address");
        let (stop, stopped) = oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        };
        let task = tokio::spawn(mcp_kernel_http::serve_with(listener, service, shutdown, options));
        Self { addr, tools, stop: Some(stop), task }
    }

    /// Begins the drain, and waits until `serve` has seen it: until a new connection is refused.
    async fn shut_down(&mut self) {
        let _ = self.stop.take().expect("shutdown begins once").send(());
        let refused = refused_within(self.addr).await;
        assert_eq!(refused.kind(), ErrorKind::ConnectionRefused, "{refused:?}");
    }

    /// Waits (at most 10 s) for `serve` to return, and checks that it returned `Ok`.
    async fn returned(&mut self) {
        let served = tokio::time::timeout(Duration::from_secs(10), &mut self.task).await;
        served.expect("serve returned").expect("serve does not panic").expect("serve returns Ok");
    }
}

/// Connects to `addr` every 20 ms until a connection fails (at most 250 times): the error. A connection
/// that succeeds meanwhile (it beat the accept loop to the signal) is closed without a byte sent.
async fn refused_within(addr: SocketAddr) -> std::io::Error {
    for _ in 0..250 {
        // A connect racing the listener's close may also be reset: only a refusal is conclusive.
        match TcpStream::connect(addr).await {
            Err(error) if error.kind() == ErrorKind::ConnectionRefused => return error,
            Err(_) | Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    panic!("no connection to {addr} was refused within 5 s");
}

/// A `tools/call` of `tool`.
fn call(id: i64, tool: &str) -> Value {
    request(id, "tools/call", json!({"name": tool}))
}

/// A `tools/call` of `tool` asking for progress, so that it is answered over SSE.
fn call_with_progress(id: i64, tool: &str) -> Value {
    let mut message = call(id, tool);
    message["params"]["_meta"]["progressToken"] = json!("drain");
    message
}

/// A raw connection to `addr` with `message` written on it.
async fn raw_send(addr: SocketAddr, message: &Value) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(&raw_post_message(addr, message)).await.expect("write the request");
    stream
}

/// Everything the server sends on `stream` until it closes it (at most 1 MiB, within [`CLOSE`]).
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = tokio::time::timeout(CLOSE, async {
        while all.len() < 1 << 20 {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
            }
        }
    });
    read.await.expect("the server closed the connection");
    all
}

/// The body of a chunked HTTP/1.1 response (`bytes` holds its head too), checking that it is whole:
/// every chunk as long as it says, then the last (empty) chunk.
fn dechunk(bytes: &[u8]) -> Vec<u8> {
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head") + 4;
    let mut rest = &bytes[head_end..];
    let mut body = Vec::new();
    for _ in 0..10_000 {
        let line_end = rest.windows(2).position(|w| w == b"\r\n").expect("a chunk size line");
        let size_text = std::str::from_utf8(&rest[..line_end]).expect("an ASCII chunk size");
        let size = usize::from_str_radix(size_text.trim(), 16).expect("a hexadecimal chunk size");
        rest = &rest[line_end + 2..];
        if size == 0 {
            return body;
        }
        assert!(rest.len() >= size + 2, "a chunk cut short");
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
    panic!("more than 10,000 chunks");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_in_flight_at_shutdown_is_answered_200_with_connection_close() {
    bounded(async {
        let mut server = Draining::start(ServeOptions::default()).await;
        let mut stream = raw_send(server.addr, &call(1, "quick")).await;
        let before = read_raw_response(&mut stream).await;
        assert_eq!(before.status, 200, "{before:?}");
        assert_ne!(before.header("connection"), Some("close"), "kept alive before shutdown: {before:?}");
        stream.write_all(&raw_post_message(server.addr, &call(2, "wait"))).await.expect("write");
        assert_eq!(server.tools.started().await, "quick");
        assert_eq!(server.tools.started().await, "wait");

        server.shut_down().await;
        assert!(!server.task.is_finished(), "serve waits for the request it read");
        server.tools.gate.add_permits(1);
        let last = read_raw_response(&mut stream).await;
        assert_eq!(last.status, 200, "{last:?}");
        assert_eq!(last.header("connection"), Some("close"), "the connection's last response says so");
        assert_eq!(last.json()["id"], 2);
        assert_eq!(last.json()["result"]["content"][0]["text"], "wait", "{last:?}");
        assert!(closed_within(&mut stream, CLOSE).await, "then the server closes the connection");
        server.returned().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_stream_in_flight_at_shutdown_runs_to_its_final_response() {
    bounded(async {
        // The stream's head went out before shutdown, without `connection: close`: after its final
        // event the connection is an idle keep-alive one, left to its peer or its idle deadline (short
        // here, so that the test reads the close).
        let options = ServeOptions::new().header_read_timeout(Duration::from_secs(1));
        let mut server = Draining::start(options).await;
        let mut stream = raw_send(server.addr, &call_with_progress(1, "wait_progress")).await;
        let mut seen = Vec::new();
        let mut chunk = [0u8; 4096];
        for _ in 0..1_000 {
            if String::from_utf8_lossy(&seen).contains("notifications/progress") {
                break;
            }
            let n = tokio::time::timeout(EXCHANGE_TIMEOUT, stream.read(&mut chunk)).await;
            let n = n.expect("the first event in time").expect("read");
            assert!(n > 0, "the stream stays open until its first event");
            seen.extend_from_slice(&chunk[..n]);
        }

        server.shut_down().await;
        server.tools.gate.add_permits(1);
        seen.extend(read_until_closed(&mut stream).await);
        let text = String::from_utf8_lossy(&seen).into_owned();
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.contains("text/event-stream"), "{text}");
        let body = String::from_utf8(dechunk(&seen)).expect("UTF-8 events");
        let events: Vec<Value> = body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).expect("one JSON message per data line"))
            .collect();
        assert_eq!(events.len(), 3, "both notifications, then the response: {events:?}");
        assert_eq!(events[0]["params"]["progress"], 1.0);
        assert_eq!(events[1]["params"]["progress"], 2.0, "reported after shutdown began, still sent");
        assert_eq!(events[2]["id"], 1);
        assert_eq!(events[2]["result"]["content"][0]["text"], "wait_progress");
        server.returned().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_at_shutdown_serves_its_next_request_as_its_last() {
    bounded(async {
        let mut server = Draining::start(ServeOptions::default()).await;
        let mut idle = raw_send(server.addr, &call(1, "quick")).await;
        let answered = read_raw_response(&mut idle).await;
        assert_eq!(answered.status, 200);
        assert_ne!(answered.header("connection"), Some("close"), "kept alive: {answered:?}");
        assert_eq!(server.tools.started().await, "quick");

        server.shut_down().await;
        // Closing it now would race a request its peer may be sending (the keep-alive race): the
        // request the peer sends next is answered, as the connection's last.
        idle.write_all(&raw_post_message(server.addr, &call(2, "quick"))).await.expect("the request is sent");
        let last = read_raw_response(&mut idle).await;
        assert_eq!((last.status, last.header("connection")), (200, Some("close")), "{last:?}");
        assert!(closed_within(&mut idle, CLOSE).await, "then the server closes the connection");
        server.returned().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_at_shutdown_is_closed_by_its_deadline_not_at_once() {
    bounded(async {
        // The idle deadline (a keep-alive connection's wait for its next head) short, the grace long.
        let options = ServeOptions::new()
            .header_read_timeout(Duration::from_secs(3))
            .shutdown_grace(Duration::from_secs(20));
        let mut server = Draining::start(options).await;
        let mut idle = raw_send(server.addr, &call(1, "quick")).await;
        assert_eq!(read_raw_response(&mut idle).await.status, 200);
        assert_eq!(server.tools.started().await, "quick");

        server.shut_down().await;
        // Still open a moment after the drain began (a closed socket reads end of file at once) ...
        let mut byte = [0u8; 1];
        let early = tokio::time::timeout(Duration::from_millis(150), idle.read(&mut byte)).await;
        assert!(early.is_err(), "not closed at once: {early:?}");
        // ... and closed by its deadline, long before the grace; then `serve` returns.
        assert!(closed_within(&mut idle, CLOSE).await, "the idle connection reads end of file");
        server.returned().await;
    })
    .await;
}

/// Opens an HTTP/2 stream POSTing `message`; its response.
fn h2_post(
    client: &mut h2::client::SendRequest<Bytes>,
    addr: SocketAddr,
    message: &Value,
) -> h2::client::ResponseFuture {
    let request = h2_request(addr, headers_for(message));
    let (response, mut body) = client.send_request(request, false).expect("a stream");
    body.send_data(bytes(message), true).expect("the body");
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_connection_gets_goaway_and_its_in_flight_stream_completes() {
    bounded(async {
        let mut server = Draining::start(ServeOptions::default()).await;
        let tcp = TcpStream::connect(server.addr).await.expect("connect");
        let (client, connection) = h2::client::handshake(tcp).await.expect("HTTP/2 handshake");
        let connection = tokio::spawn(connection);
        let mut client = client.ready().await.expect("ready");
        let in_flight = h2_post(&mut client, server.addr, &call(1, "wait"));
        assert_eq!(server.tools.started().await, "wait");

        server.shut_down().await;
        // Streams the server received before its `GOAWAY` are served; once the client has it, none
        // may be opened. A stream the client opened while the `GOAWAY` was on its way is above the
        // frame's last stream id: the server never processes it, and the client learns of the
        // `GOAWAY` from that stream's error instead (RFC 9113 §6.8).
        let mut goaway = None;
        for n in 2..200 {
            let request = h2_request(server.addr, headers_for(&call(n, "quick")));
            let opened =
                client.clone().ready().await.and_then(|mut ready| ready.send_request(request, false));
            let answered = match opened {
                Ok((response, mut body)) => {
                    let sent = body.send_data(bytes(&call(n, "quick")), true);
                    let answered = tokio::time::timeout(EXCHANGE_TIMEOUT, response).await;
                    let answered = answered.expect("the stream answered or refused in time");
                    if answered.is_ok() {
                        sent.expect("the body of a stream that was served");
                    }
                    answered
                }
                Err(error) => Err(error),
            };
            match answered {
                Ok(response) => {
                    assert_eq!(response.status(), 200, "a stream received before the GOAWAY is served")
                }
                Err(error) => {
                    goaway = Some(error);
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let goaway = goaway.expect("the server's GOAWAY within 200 attempts");
        assert!(goaway.is_go_away() && goaway.is_remote(), "{goaway:?}");
        assert_eq!(goaway.reason(), Some(h2::Reason::NO_ERROR), "a graceful GOAWAY: {goaway:?}");

        server.tools.gate.add_permits(1);
        let (status, _, body) = h2_read(in_flight).await;
        assert_eq!(status, 200);
        let answer: Value = serde_json::from_slice(&body).expect("a JSON answer");
        assert_eq!(answer["id"], 1);
        assert_eq!(answer["result"]["content"][0]["text"], "wait", "{answer}");
        let closed = tokio::time::timeout(CLOSE, connection).await;
        let ended = closed.expect("the server closed the connection").expect("the connection task");
        ended.expect("a graceful end: GOAWAY, then the connection closed");
        server.returned().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_opened_after_shutdown_began_is_refused() {
    bounded(async {
        let mut server = Draining::start(ServeOptions::default()).await;
        let mut busy = raw_send(server.addr, &call(1, "wait")).await;
        assert_eq!(server.tools.started().await, "wait");

        // `shut_down` itself waits for the first refusal; the ones after it are refused as well.
        server.shut_down().await;
        for _ in 0..3 {
            let refused = TcpStream::connect(server.addr).await.expect_err("the listener is closed");
            assert_eq!(refused.kind(), ErrorKind::ConnectionRefused, "{refused:?}");
        }
        assert!(!server.task.is_finished(), "refused while serve is still draining");

        server.tools.gate.add_permits(1);
        assert_eq!(read_raw_response(&mut busy).await.status, 200);
        server.returned().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_never_ends_is_cut_at_the_grace_and_serve_returns() {
    bounded(async {
        // 300 ms, well under the 10 s `returned` waits: serve can only return in time at the grace.
        let options = ServeOptions::new().shutdown_grace(Duration::from_millis(300));
        let mut server = Draining::start(options).await;
        let mut h1 = raw_send(server.addr, &call(1, "forever")).await;
        assert_eq!(server.tools.started().await, "forever");
        let mut h2 = h2_connect(server.addr).await.ready().await.expect("ready");
        let response = h2_post(&mut h2, server.addr, &call(2, "forever"));
        assert_eq!(server.tools.started().await, "forever");

        server.shut_down().await;
        server.returned().await;
        assert!(read_until_closed(&mut h1).await.is_empty(), "cut: no response at all");
        let cut = tokio::time::timeout(CLOSE, response).await.expect("the stream ends");
        assert!(cut.is_err(), "the HTTP/2 stream is cut, not answered: {cut:?}");
        // Both calls' futures are dropped (cancelled), over HTTP/1.1 and over HTTP/2.
        server.tools.dropped("forever", 2).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_accepted_before_shutdown_has_its_first_request_served() {
    bounded(async {
        let mut server = Draining::start(ServeOptions::default()).await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        // Let the accept loop take it: it then waits for the connection's first bytes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        server.shut_down().await;
        stream.write_all(&raw_post_message(server.addr, &call(1, "quick"))).await.expect("write");
        let answered = read_raw_response(&mut stream).await;
        assert_eq!(answered.status, 200, "{answered:?}");
        assert_eq!(answered.header("connection"), Some("close"), "{answered:?}");
        assert_eq!(answered.json()["id"], 1);
        assert!(closed_within(&mut stream, CLOSE).await);
        server.returned().await;
    })
    .await;
}
