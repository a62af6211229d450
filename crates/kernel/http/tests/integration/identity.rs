//! The caller's identity over HTTP: what `authorize`, `authorize_async` and `authorize_body` admit
//! with reaches the host's tool (`RequestContext::principal`) on every path — a JSON answer, an SSE
//! stream, the legacy path — and `authorize_async` keeps `authorize`'s guarantees: it runs before the
//! body is read, within the request's one deadline, and a panic in it is a 500.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderMap;
use http::request::Parts;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::support::*;
use mcp_kernel_http::{AllowedOrigins, Authorize, Builder, LegacyClients, McpHttp, NoAuthorize, Refused};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

/// The host's principal: who the `x-caller` header says is calling.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Caller(String);

/// A second principal type, which only `authorize_body` attaches.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Signed(usize);

/// `whoami` answers the principals it was handed; `whoami_progress` reports progress first (so that a
/// call with a progress token is answered as an SSE stream).
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    if &*call.name == "whoami_progress" {
        for step in [0.0, 100.0] {
            call.context.progress().report(step, Some(100.0), None);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let caller = call.context.principal::<Caller>().map(|caller| caller.0.clone());
    let signed = call.context.principal::<Signed>().map(|signed| signed.0);
    ToolOutput::json(&json!({"caller": caller, "signed": signed}))
}

fn server() -> Server {
    let catalog = Listing {
        tools: vec![
            ToolSpec::new("whoami", Mode::ReadOnly),
            ToolSpec::new("whoami_progress", Mode::ReadOnly),
        ],
        ..Listing::default()
    };
    Server::builder(catalog).dispatch(dispatch).build().expect("the identity catalog builds")
}

fn builder() -> Builder<AllowedOrigins, NoAuthorize> {
    McpHttp::builder(server()).allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
}

/// The caller `x-caller` names; refused without one.
fn caller(parts: &Parts) -> Result<Caller, Refused> {
    let named = parts.headers.get("x-caller").and_then(|value| value.to_str().ok());
    named.map(|name| Caller(name.to_owned())).ok_or_else(|| Refused::because("no x-caller"))
}

/// Serves the identity catalog with `authorize` naming the caller, legacy clients served too.
async fn start_identity(
    tweak: impl FnOnce(Builder<AllowedOrigins, Authorize>) -> Builder<AllowedOrigins, Authorize>,
) -> Running {
    serve(tweak(builder().legacy_clients(LegacyClients::Stateless).authorize(caller)).build()).await
}

fn whoami(id: i64, tool: &str, token: Option<&str>) -> Value {
    let mut message = request(id, "tools/call", json!({"name": tool, "arguments": {}}));
    if let Some(token) = token {
        message["params"]["_meta"]["progressToken"] = json!(token);
    }
    message
}

fn as_caller(headers: HeaderMap, name: &str) -> HeaderMap {
    with(headers, "x-caller", name.as_bytes())
}

/// The `structuredContent` of a JSON answer.
fn answered(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.result()["structuredContent"].clone()
}

/// The `structuredContent` of the response that ends an SSE answer (after its progress events).
fn streamed(reply: &Reply) -> Value {
    let events = sse_events(reply);
    assert!(events.len() >= 2, "progress, then the response: {events:?}");
    assert!(events[..events.len() - 1].iter().all(|e| e["method"] == "notifications/progress"), "{events:?}");
    events.last().expect("the response")["result"]["structuredContent"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_principal_authorize_returns_reaches_the_tool_on_a_json_answer() {
    bounded(async {
        let server = start_identity(|b| b).await;
        for proto in BOTH {
            let mut conn = connect(server.addr, proto).await;
            for name in ["alice", "bob"] {
                let message = whoami(1, "whoami", None);
                let reply =
                    conn.post(server.addr, as_caller(headers_for(&message), name), bytes(&message)).await;
                assert_eq!(reply.headers["content-type"], "application/json", "{reply:?}");
                assert_eq!(answered(&reply), json!({"caller": name, "signed": null}), "{proto:?}");
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_principal_authorize_returns_reaches_the_tool_on_an_sse_stream() {
    bounded(async {
        let server = start_identity(|b| b).await;
        for proto in BOTH {
            let message = whoami(1, "whoami_progress", Some("tok"));
            let reply =
                post(server.addr, proto, as_caller(headers_for(&message), "carol"), bytes(&message)).await;
            assert_eq!(streamed(&reply), json!({"caller": "carol", "signed": null}), "{proto:?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_principal_authorize_returns_reaches_the_tool_on_the_legacy_path() {
    bounded(async {
        let server = start_identity(|b| b).await;
        for proto in BOTH {
            let message = legacy(1, "tools/call", json!({"name": "whoami", "arguments": {}}));
            let reply = post(server.addr, proto, as_caller(legacy_headers(), "dave"), bytes(&message)).await;
            assert!(reply.result().get("ttlMs").is_none(), "a legacy-shaped result: {reply:?}");
            assert_eq!(answered(&reply), json!({"caller": "dave", "signed": null}), "{proto:?}");
            let message =
                legacy(2, "tools/call", json!({"name": "whoami_progress", "_meta": {"progressToken": 5}}));
            let reply = post(server.addr, proto, as_caller(legacy_headers(), "erin"), bytes(&message)).await;
            assert_eq!(streamed(&reply), json!({"caller": "erin", "signed": null}), "{proto:?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_principal_authorize_body_returns_reaches_the_tool_and_wins_over_authorize() {
    bounded(async {
        // Another type: merged beside `authorize`'s principal.
        let merged = start_identity(|b| b.authorize_body(|_, body: &Bytes| Ok(Signed(body.len())))).await;
        // The same type: `authorize_body`'s value wins.
        let replaced = start_identity(|b| {
            b.authorize_body(|parts: &Parts, _: &Bytes| Ok(Caller(format!("{}+body", caller(parts)?.0))))
        })
        .await;
        for proto in BOTH {
            let message = whoami(1, "whoami", None);
            let body = bytes(&message);
            let reply =
                post(merged.addr, proto, as_caller(headers_for(&message), "frank"), body.clone()).await;
            assert_eq!(answered(&reply), json!({"caller": "frank", "signed": body.len()}), "{proto:?}");
            let reply =
                post(replaced.addr, proto, as_caller(headers_for(&message), "frank"), body.clone()).await;
            assert_eq!(answered(&reply), json!({"caller": "frank+body", "signed": null}), "{proto:?}");
            let message = whoami(2, "whoami_progress", Some("tok"));
            let reply =
                post(merged.addr, proto, as_caller(headers_for(&message), "gina"), bytes(&message)).await;
            assert_eq!(
                streamed(&reply),
                json!({"caller": "gina", "signed": bytes(&message).len()}),
                "{proto:?}"
            );
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// authorize_async
// ---------------------------------------------------------------------------------------------------

/// An async hook: waits `x-wait-ms` (default a few ms: it really suspends), panics on `x-panic: call`
/// (before making its future) or `x-panic: poll` (while polled), then answers like [`caller`].
/// Counts its calls.
fn async_caller(
    calls: &Arc<AtomicUsize>,
) -> impl Fn(&Parts) -> std::pin::Pin<Box<dyn Future<Output = Result<Caller, Refused>> + Send>>
+ Send
+ Sync
+ 'static {
    let calls = Arc::clone(calls);
    move |parts: &Parts| {
        calls.fetch_add(1, Ordering::SeqCst);
        let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if header("x-panic").as_deref() == Some("call") {
            panic!("authorize_async bug: secret-call-detail");
        }
        let panics = header("x-panic").as_deref() == Some("poll");
        let wait = header("x-wait-ms").and_then(|ms| ms.parse().ok()).unwrap_or(5);
        let answer = caller(parts);
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(wait)).await;
            if panics {
                panic!("authorize_async bug: secret-poll-detail");
            }
            answer
        })
    }
}

async fn start_async(calls: &Arc<AtomicUsize>, read_timeout: Duration) -> Running {
    let service = builder()
        .legacy_clients(LegacyClients::Stateless)
        .authorize_async(async_caller(calls))
        .read_timeout(read_timeout)
        .build();
    serve(service).await
}

/// Writes a request head declaring a 100-byte body on a fresh HTTP/1.1 connection, never sends the
/// body, and reads the response: (response, time taken, whether the server then closed).
async fn head_only(addr: std::net::SocketAddr, extra: &[(&str, &str)]) -> (RawResponse, Duration, bool) {
    let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
    fields.push(("content-length", "100".into()));
    let mut fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    fields.extend_from_slice(extra);
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let started = Instant::now();
    stream.write_all(&raw_head("POST", addr, &fields)).await.expect("write the head");
    let response = read_raw_response(&mut stream).await;
    let took = started.elapsed();
    let closed = closed_within(&mut stream, Duration::from_secs(2)).await;
    (response, took, closed)
}

/// Opens an HTTP/2 stream with `headers` declaring a 100-byte body, never sends a DATA frame, and
/// reads the response.
async fn h2_head_only(
    addr: std::net::SocketAddr,
    headers: HeaderMap,
) -> (http::StatusCode, HeaderMap, Duration) {
    let sender = h2_connect(addr).await;
    let mut sender = sender.ready().await.expect("h2 ready");
    let started = Instant::now();
    let headers = with(headers, "content-length", b"100");
    let (response, stream) = sender.send_request(h2_request(addr, headers), false).expect("send");
    let (status, headers, _) = h2_read(response).await;
    drop(stream);
    (status, headers, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorize_async_admits_with_a_principal_that_reaches_the_tool() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = start_async(&calls, DEFAULT_TIMEOUT).await;
        for proto in BOTH {
            let message = whoami(1, "whoami", None);
            let headers = with(as_caller(headers_for(&message), "hana"), "x-wait-ms", b"30");
            let reply = post(server.addr, proto, headers, bytes(&message)).await;
            assert_eq!(answered(&reply), json!({"caller": "hana", "signed": null}), "{proto:?}");
            let message = whoami(2, "whoami_progress", Some("tok"));
            let reply =
                post(server.addr, proto, as_caller(headers_for(&message), "ivan"), bytes(&message)).await;
            assert_eq!(streamed(&reply), json!({"caller": "ivan", "signed": null}), "{proto:?}");
            let message = legacy(3, "tools/call", json!({"name": "whoami", "arguments": {}}));
            let reply = post(server.addr, proto, as_caller(legacy_headers(), "jude"), bytes(&message)).await;
            assert_eq!(answered(&reply), json!({"caller": "jude", "signed": null}), "{proto:?}");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 6);
    })
    .await;
}

/// The default read timeout, long enough that a prompt answer cannot have waited for the body.
const DEFAULT_TIMEOUT: Duration = mcp_kernel_http::DEFAULT_READ_TIMEOUT;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorize_async_refusal_is_403_before_any_body_byte_is_read() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = start_async(&calls, DEFAULT_TIMEOUT).await;
        // HTTP/1.1: a Content-Length is declared and the body never sent; no `x-caller`.
        let (response, took, closed) = head_only(server.addr, &[]).await;
        assert_eq!(response.status, 403, "{response:?}");
        assert_eq!(response.json()["error"]["code"], -32600, "{response:?}");
        assert_eq!(response.header("connection"), Some("close"), "{response:?}");
        assert!(closed, "the server closes the connection after a pre-body refusal");
        assert!(took < Duration::from_secs(5), "answered without waiting for the body: {took:?}");
        assert!(!String::from_utf8_lossy(&response.body).contains("x-caller"), "{response:?}");
        // HTTP/2: HEADERS without END_STREAM and never a DATA frame.
        let (status, headers, took) =
            h2_head_only(server.addr, headers_for(&whoami(1, "whoami", None))).await;
        assert_eq!(status, 403);
        assert!(headers.get("connection").is_none(), "never on HTTP/2: {headers:?}");
        assert!(took < Duration::from_secs(5), "answered without waiting for the body: {took:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorize_async_hook_slower_than_the_read_timeout_is_503_with_retry_after() {
    capture_logs();
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let timeout = Duration::from_millis(400);
        let server = start_async(&calls, timeout).await;
        let message = whoami(1, "whoami", None);
        for proto in BOTH {
            let headers = with(as_caller(headers_for(&message), "kim"), "x-wait-ms", b"60000");
            let started = Instant::now();
            let reply = post(server.addr, proto, headers, bytes(&message)).await;
            let took = started.elapsed();
            reply.assert_error(503, -32603, &Value::Null);
            assert_eq!(reply.headers["retry-after"], "1", "{reply:?}");
            reply.assert_pre_body_close();
            assert!(took >= timeout && took < Duration::from_secs(10), "{took:?}");
            // A hook done in time on the next request is served.
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.status, 403, "no x-caller: refused, not busy: {reply:?}");
            let reply =
                post(server.addr, proto, as_caller(headers_for(&message), "kim"), bytes(&message)).await;
            assert_eq!(answered(&reply), json!({"caller": "kim", "signed": null}));
        }
        let logs = logs();
        assert!(logs.contains("did not finish within the request's read timeout"), "{logs}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorize_async_time_counts_against_the_one_request_deadline() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        // The hook takes 1.5 s of a 2.5 s deadline; the body, withheld, then has what is left of it.
        let server = start_async(&calls, Duration::from_millis(2500)).await;
        let (response, took, _) = head_only(server.addr, &[("x-caller", "lee"), ("x-wait-ms", "1500")]).await;
        assert_eq!(response.status, 408, "{response:?}");
        // One deadline from arrival: about 2.5 s, not the 4 s that a fresh deadline for the body makes.
        assert!(took >= Duration::from_millis(2400), "{took:?}");
        assert!(took < Duration::from_millis(3700), "the hook's time was not counted: {took:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_authorize_async_hook_is_500_and_the_server_keeps_serving() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = start_async(&calls, DEFAULT_TIMEOUT).await;
        let message = whoami(1, "whoami", None);
        for proto in BOTH {
            for when in ["poll", "call"] {
                let headers = with(as_caller(headers_for(&message), "max"), "x-panic", when.as_bytes());
                let reply = post(server.addr, proto, headers, bytes(&message)).await;
                reply.assert_error(500, -32603, &Value::Null);
                assert_eq!(reply.message(), "Internal error");
                assert!(!String::from_utf8_lossy(&reply.raw).contains("secret"), "{reply:?}");
                reply.assert_pre_body_close();
                let reply =
                    post(server.addr, proto, as_caller(headers_for(&message), "max"), bytes(&message)).await;
                assert_eq!(answered(&reply), json!({"caller": "max", "signed": null}), "{proto:?} {when}");
            }
        }
    })
    .await;
}
