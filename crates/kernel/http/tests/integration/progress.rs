//! Progress over HTTP (MCP S-17, S-18, S-19, S-52): SSE for a request with a progress token, JSON
//! otherwise, and cancellation by closing the connection.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use http::HeaderValue;
use http::header::CONTENT_TYPE;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;
use mcp_kernel_http::{LegacyClients, McpHttp};
use mcp_kernel_router::notify::MAX_PROGRESS_TOKEN_BYTES;
use mcp_kernel_router::observe::{DispatchEvent, DispatchObserver, DispatchOutcome};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

/// The `hang*` and `wait*` tools whose futures were dropped, by name.
static DROPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Every (tool, outcome) the observer saw.
static OUTCOMES: Mutex<Vec<(String, DispatchOutcome)>> = Mutex::new(Vec::new());

struct Recorder;

impl DispatchObserver for Recorder {
    fn dispatched(&self, event: &DispatchEvent<'_>) {
        OUTCOMES.lock().unwrap().push((event.tool.to_owned(), event.outcome));
    }
}

/// Records its tool's name in [`DROPPED`] when the tool's future is dropped.
struct DropFlag(String);

impl Drop for DropFlag {
    fn drop(&mut self) {
        DROPPED.lock().unwrap().push(std::mem::take(&mut self.0));
    }
}

/// True once `tool`'s future was dropped.
fn dropped(tool: &str) -> bool {
    DROPPED.lock().unwrap().iter().any(|t| t == tool)
}

/// True once the observer saw `tool` cancelled.
fn cancelled(tool: &str) -> bool {
    OUTCOMES.lock().unwrap().iter().any(|(t, o)| t == tool && *o == DispatchOutcome::Cancelled)
}

/// The tools that never answer: `hang*` report once first, `wait*` report nothing.
const NEVER_ANSWER: [&str; 4] = ["hang", "hang_h2", "wait", "wait_json"];

/// The support module's [`reporting_dispatch`] (`count` reports progress, others answer `quiet`), and
/// the [`NEVER_ANSWER`] tools, each flagging its own drop so the tests can run side by side.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    if !NEVER_ANSWER.contains(&&*call.name) {
        return reporting_dispatch(call).await;
    }
    let _flag = DropFlag(call.name.to_string());
    if call.name.starts_with("hang") {
        call.context.progress().report(1.0, None, None);
    }
    std::future::pending::<()>().await;
    Ok(ToolOutput::text("never"))
}

fn progress_server() -> Server {
    let catalog = Listing {
        tools: ["count", "quiet"]
            .into_iter()
            .chain(NEVER_ANSWER)
            .map(|name| ToolSpec::new(name, Mode::ReadOnly))
            .collect(),
        ..Listing::default()
    };
    Server::builder(catalog).dispatch(dispatch).observe_dispatch(Recorder).build().expect("builds")
}

async fn start_progress() -> Running {
    let service = McpHttp::builder(progress_server())
        .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
        .legacy_clients(LegacyClients::Stateless)
        .authorize(|_| Ok(()))
        .build();
    serve(service).await
}

fn call(id: i64, tool: &str, token: Option<Value>) -> Value {
    let mut message = request(id, "tools/call", json!({"name": tool}));
    if let Some(token) = token {
        message["params"]["_meta"]["progressToken"] = token;
    }
    message
}

fn assert_progress_stream(reply: &Reply, token: &Value) {
    assert_eq!(reply.headers["x-accel-buffering"], "no");
    assert_eq!(reply.headers["cache-control"], "no-cache");
    let events = sse_events(reply);
    assert_eq!(events.len(), 4, "three notifications then the response: {events:?}");
    for (event, step) in events.iter().zip([0.0, 50.0, 100.0]) {
        assert_eq!(event["method"], "notifications/progress");
        assert_eq!(event["params"]["progressToken"], *token);
        assert_eq!(event["params"]["progress"], step);
        assert_eq!(event["params"]["total"], 100.0);
    }
    assert_eq!(events[3]["id"], 1);
    assert_eq!(events[3]["result"]["content"][0]["text"], "counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_token_streams_notifications_then_the_response_over_sse() {
    bounded(async {
        let server = start_progress().await;
        for proto in BOTH {
            for token in [json!("tok"), json!(7)] {
                let reply = post_message(server.addr, proto, &call(1, "count", Some(token.clone()))).await;
                assert_progress_stream(&reply, &token);
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_request_with_a_progress_token_streams_too() {
    bounded(async {
        let server = start_progress().await;
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "count", "_meta": {"progressToken": "legacy"}}});
        let mut headers = standard_headers("tools/call", Some("count"));
        headers.insert("mcp-protocol-version", HeaderValue::from_static(LEGACY));
        let reply = post(server.addr, Proto::H1, headers, bytes(&message)).await;
        assert_progress_stream(&reply, &json!("legacy"));
        let response = sse_events(&reply).pop().expect("the response");
        assert!(response["result"].get("ttlMs").is_none(), "legacy results carry no cache hints");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_progress_token_the_answer_is_json_as_before() {
    bounded(async {
        let server = start_progress().await;
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &call(1, "count", None)).await;
            assert_eq!(reply.status, 200);
            assert_eq!(reply.headers[CONTENT_TYPE], "application/json");
            assert_eq!(reply.result()["content"][0]["text"], "counted");
            // A token on a call that reports nothing: JSON, byte for byte the same answer.
            let plain = post_message(server.addr, proto, &call(2, "quiet", None)).await;
            let tokened = post_message(server.addr, proto, &call(2, "quiet", Some(json!("t")))).await;
            assert_eq!(tokened.headers[CONTENT_TYPE], "application/json");
            assert_eq!(plain.raw, tokened.raw);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_token_over_the_byte_bound_gets_json_and_no_notifications() {
    bounded(async {
        let server = start_progress().await;
        let longest = json!("t".repeat(MAX_PROGRESS_TOKEN_BYTES));
        let reply = post_message(server.addr, Proto::H1, &call(1, "count", Some(longest.clone()))).await;
        assert_progress_stream(&reply, &longest);
        let plain = post_message(server.addr, Proto::H1, &call(1, "count", None)).await;
        for proto in BOTH {
            let oversized = json!("t".repeat(MAX_PROGRESS_TOKEN_BYTES + 1));
            let reply = post_message(server.addr, proto, &call(1, "count", Some(oversized))).await;
            assert_eq!(reply.headers[CONTENT_TYPE], "application/json", "{reply:?}");
            assert_eq!(reply.raw, plain.raw, "answered as if no token had been sent");
        }
    })
    .await;
}

/// Waits (at most 5 s) until `flag` is set.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < Duration::from_secs(5), "{what} within 5 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Writes one raw HTTP/1.1 POST of `message`.
async fn raw_post(stream: &mut TcpStream, message: &Value) {
    let body = serde_json::to_vec(message).unwrap();
    let mut head = String::from("POST /mcp HTTP/1.1\r\nhost: localhost\r\n");
    for (name, value) in headers_for(message).iter() {
        head.push_str(&format!("{}: {}\r\n", name, value.to_str().unwrap()));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_connection_after_the_first_event_cancels_the_dispatch() {
    bounded(async {
        let server = start_progress().await;
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        raw_post(&mut stream, &call(1, "hang", Some(json!("h")))).await;
        let mut seen = Vec::new();
        let mut buffer = [0u8; 1024];
        while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
            let read = stream.read(&mut buffer).await.unwrap();
            assert!(read > 0, "the stream stays open until the first event");
            seen.extend_from_slice(&buffer[..read]);
        }
        assert!(String::from_utf8_lossy(&seen).contains("text/event-stream"));
        drop(stream);
        eventually("the tool's future is dropped", || dropped("hang")).await;
        eventually("the observer saw Cancelled", || cancelled("hang")).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_connection_before_anything_is_sent_cancels_the_dispatch_with_or_without_a_token() {
    bounded(async {
        let server = start_progress().await;
        // `wait` has a token but reports nothing, so the answer has not begun; `wait_json` has none.
        for (tool, token) in [("wait", Some(json!("w"))), ("wait_json", None)] {
            let mut stream = TcpStream::connect(server.addr).await.unwrap();
            raw_post(&mut stream, &call(2, tool, token)).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(!dropped(tool), "{tool} still runs while the client waits");
            drop(stream);
            eventually("the tool's future is dropped", || dropped(tool)).await;
            eventually("the observer saw Cancelled", || cancelled(tool)).await;
        }
    })
    .await;
}

/// Opens an HTTP/2 stream POSTing `message` to `/mcp`; returns its response body and its send half.
async fn h2_post(
    client: &mut h2::client::SendRequest<bytes::Bytes>,
    addr: std::net::SocketAddr,
    message: &Value,
) -> (h2::RecvStream, h2::SendStream<bytes::Bytes>) {
    let mut request = http::Request::post(format!("http://{addr}/mcp"));
    for (name, value) in headers_for(message).iter() {
        request = request.header(name, value);
    }
    let request = request.body(()).expect("a request");
    let (response, mut send) = client.send_request(request, false).expect("a stream");
    send.send_data(bytes(message), true).expect("the body");
    (response.await.expect("a response").into_body(), send)
}

/// The next DATA chunk of `body` (its flow-control capacity given back), or `None` at its end.
async fn h2_chunk(body: &mut h2::RecvStream) -> Option<bytes::Bytes> {
    let chunk = body.data().await?.expect("a chunk");
    let _ = body.flow_control().release_capacity(chunk.len());
    Some(chunk)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_stream_reset_cancels_its_dispatch_and_the_connection_keeps_serving() {
    bounded(async {
        let server = start_progress().await;
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        let (mut client, connection) = h2::client::handshake(tcp).await.expect("HTTP/2 handshake");
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let (mut body, mut send) =
            h2_post(&mut client, server.addr, &call(3, "hang_h2", Some(json!("h2")))).await;
        let mut seen = Vec::new();
        while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
            seen.extend_from_slice(&h2_chunk(&mut body).await.expect("the stream stays open"));
        }
        send.send_reset(h2::Reason::CANCEL);
        eventually("the tool's future is dropped", || dropped("hang_h2")).await;
        eventually("the observer saw Cancelled", || cancelled("hang_h2")).await;

        // Only that stream ended: the connection still answers.
        let mut client = client.ready().await.expect("the connection is still open");
        let (mut body, _send) = h2_post(&mut client, server.addr, &call(4, "quiet", None)).await;
        let mut answer = Vec::new();
        while let Some(chunk) = h2_chunk(&mut body).await {
            answer.extend_from_slice(&chunk);
        }
        let answer: Value = serde_json::from_slice(&answer).expect("a JSON answer");
        assert_eq!(answer["id"], 4, "{answer}");
        assert!(answer.get("result").is_some(), "{answer}");
    })
    .await;
}
