//! No session id, ever: an `Mcp-Session-Id` request header changes nothing in an answer, on the legacy
//! endpoint (`LegacyClients::Stateless`, `2025-11-25`) and on an SSE-streamed answer, over HTTP/1.1 and
//! HTTP/2, and no response carries one. (`happy_path.rs` pins the same for plain `2026-07-28` JSON.)

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacyClients;

/// Session ids a client might send: one it made up, a UUID a stateful server once issued, and one
/// that is not even UTF-8.
const SESSION_IDS: [&[u8]; 3] = [b"3f1b6c8e-session", b"0190c5b2-7e4a-7c3d-9f1e-2b6a8d4c1e90", b"\xffbad"];

/// What the answer must look like, besides being the same with and without a session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `application/json` with this status.
    Json(u16),
    /// 202 with an empty body.
    Accepted,
    /// A 200 `text/event-stream` of this many events (the notifications, then the response).
    Sse(usize),
}

/// Which of the two servers an exchange goes to.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// The fixture catalog, serving `2025-11-25` clients too.
    Fixture,
    /// The host whose `count` tool reports progress, serving `2025-11-25` clients too.
    Reporting,
}

/// One exchange: the request and the shape of its answer.
struct Exchange {
    what: &'static str,
    target: Target,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
    shape: Shape,
}

fn post_exchange(
    what: &'static str,
    target: Target,
    headers: HeaderMap,
    body: &Value,
    shape: Shape,
) -> Exchange {
    Exchange { what, target, method: Method::POST, headers, body: bytes(body), shape }
}

fn exchanges() -> Vec<Exchange> {
    use Target::{Fixture, Reporting};
    let initialize = legacy(
        1,
        "initialize",
        json!({
            "protocolVersion": LEGACY,
            "capabilities": {"sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "legacy-client", "version": "1.0.0"}
        }),
    );
    let echo = legacy(4, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
    let modern_list = request(5, "tools/list", json!({}));
    let mut modern_count = request(6, "tools/call", json!({"name": "count"}));
    modern_count["params"]["_meta"]["progressToken"] = json!("tok");
    let legacy_count = legacy(7, "tools/call", json!({"name": "count", "_meta": {"progressToken": 7}}));
    let mut quiet = request(8, "tools/call", json!({"name": "quiet"}));
    quiet["params"]["_meta"]["progressToken"] = json!("t");
    let mut stream_headers = HeaderMap::new();
    stream_headers.insert("accept", HeaderValue::from_static("text/event-stream"));
    stream_headers.insert("mcp-protocol-version", HeaderValue::from_static(LEGACY));
    vec![
        // The legacy endpoint.
        post_exchange(
            "initialize without a version header",
            Fixture,
            without(legacy_headers(), "mcp-protocol-version"),
            &initialize,
            Shape::Json(200),
        ),
        post_exchange(
            "initialize naming 2025-11-25",
            Fixture,
            legacy_headers(),
            &initialize,
            Shape::Json(200),
        ),
        post_exchange(
            "notifications/initialized",
            Fixture,
            legacy_headers(),
            &notification("notifications/initialized"),
            Shape::Accepted,
        ),
        post_exchange("ping", Fixture, legacy_headers(), &legacy(2, "ping", json!({})), Shape::Json(200)),
        post_exchange(
            "tools/list at 2025-11-25",
            Fixture,
            legacy_headers(),
            &legacy(3, "tools/list", json!({})),
            Shape::Json(200),
        ),
        post_exchange("tools/call at 2025-11-25", Fixture, legacy_headers(), &echo, Shape::Json(200)),
        Exchange {
            what: "GET",
            target: Fixture,
            method: Method::GET,
            headers: stream_headers.clone(),
            body: Bytes::new(),
            shape: Shape::Json(405),
        },
        Exchange {
            what: "DELETE",
            target: Fixture,
            method: Method::DELETE,
            headers: stream_headers,
            body: Bytes::new(),
            shape: Shape::Json(405),
        },
        // 2026-07-28 on the same endpoint, with the opt-in.
        post_exchange(
            "tools/list at 2026-07-28",
            Fixture,
            headers_for(&modern_list),
            &modern_list,
            Shape::Json(200),
        ),
        // Streamed answers: three progress notifications, then the response.
        post_exchange(
            "SSE at 2026-07-28",
            Reporting,
            headers_for(&modern_count),
            &modern_count,
            Shape::Sse(4),
        ),
        post_exchange("SSE at 2025-11-25", Reporting, legacy_headers(), &legacy_count, Shape::Sse(4)),
        // A token on a call that reports nothing stays JSON.
        post_exchange("a token, no report", Reporting, headers_for(&quiet), &quiet, Shape::Json(200)),
    ]
}

/// What must not depend on the session id.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    status: u16,
    /// Every header field but `date`, sorted.
    headers: Vec<(String, Vec<u8>)>,
    /// The body bytes, or the `data:` lines of an event stream.
    body: Vec<String>,
}

/// Asserts `reply` has `shape` and carries no session header, and returns what must not depend on the
/// session id.
fn observed(reply: &Reply, shape: Shape, what: &str) -> Observed {
    for name in reply.headers.keys() {
        assert!(!name.as_str().contains("session"), "{what}: a session header in {reply:?}");
    }
    let mut headers: Vec<(String, Vec<u8>)> = reply
        .headers
        .iter()
        .filter(|(name, _)| *name != http::header::DATE)
        .map(|(name, value)| (name.as_str().to_owned(), value.as_bytes().to_vec()))
        .collect();
    headers.sort();
    let content_type = reply.headers.get(CONTENT_TYPE).map(|v| v.to_str().expect("ASCII").to_owned());
    let body = match shape {
        Shape::Json(status) => {
            assert_eq!(reply.status.as_u16(), status, "{what}: {reply:?}");
            assert_eq!(content_type.as_deref(), Some("application/json"), "{what}: {reply:?}");
            assert_eq!(reply.body["jsonrpc"], "2.0", "{what}: {reply:?}");
            vec![String::from_utf8(reply.raw.to_vec()).expect("a UTF-8 body")]
        }
        Shape::Accepted => {
            assert_eq!(reply.status.as_u16(), 202, "{what}: {reply:?}");
            assert!(reply.raw.is_empty(), "{what}: {reply:?}");
            Vec::new()
        }
        Shape::Sse(events) => {
            let data = sse_data(reply);
            assert_eq!(data.len(), events, "{what}: {reply:?}");
            let parsed = sse_events(reply);
            let (response, notifications) = parsed.split_last().expect("at least the response");
            assert!(
                notifications.iter().all(|n| n["method"] == "notifications/progress"),
                "{what}: {parsed:?}"
            );
            assert_eq!(response["result"]["content"][0]["text"], "counted", "{what}: {parsed:?}");
            data
        }
    };
    Observed { status: reply.status.as_u16(), headers, body }
}

#[tokio::test]
async fn answers_identically_with_or_without_a_session_id() {
    bounded(async {
        let fixture = start(|b| b.legacy_clients(LegacyClients::Stateless)).await;
        let reporting = start_reporting(LegacyClients::Stateless).await;
        let exchanges = exchanges();
        for proto in BOTH {
            for exchange in &exchanges {
                let addr = match exchange.target {
                    Target::Fixture => fixture.addr,
                    Target::Reporting => reporting.addr,
                };
                let what = format!("{} over {proto:?}", exchange.what);
                let exchange_with = |headers: HeaderMap| {
                    send(addr, proto, exchange.method.clone(), headers, exchange.body.clone())
                };
                let plain = observed(&exchange_with(exchange.headers.clone()).await, exchange.shape, &what);
                for session in SESSION_IDS {
                    let headers = with(exchange.headers.clone(), "mcp-session-id", session);
                    let answer = observed(&exchange_with(headers).await, exchange.shape, &what);
                    assert_eq!(answer, plain, "{what}: the same answer with session id {session:?}");
                }
            }
        }
        fixture.stop().await;
        reporting.stop().await;
    })
    .await;
}
