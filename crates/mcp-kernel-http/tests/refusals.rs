//! Every refusal of the pipeline (the table in `src/service.rs`), through a real listener.
//!
//! Each test pins the status, the JSON-RPC code, the id (null before the body is decoded, echoed
//! after) and the `connection: close` placement (`protocol.md` K-4): present on HTTP/1.1 for the
//! refusals issued before the body is read, never on HTTP/2, never once the body was read.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use mcp_kernel_http::{MAX_BODY_BYTES, Refused};
use support::*;

const NULL: Value = Value::Null;

/// Writes `head` (and nothing else) on a fresh HTTP/1.1 connection, reads the response, and reports
/// whether the server then closed the connection.
async fn raw_head_only(server: &Running, head: Vec<u8>) -> (RawResponse, bool) {
    let mut stream = TcpStream::connect(server.addr).await.expect("connect");
    stream.write_all(&head).await.expect("write the head");
    let response = read_raw_response(&mut stream).await;
    let closed = closed_within(&mut stream, Duration::from_secs(2)).await;
    (response, closed)
}

/// Opens an HTTP/2 stream with `headers`, never sends a DATA frame, and reads the response.
async fn h2_head_only(server: &Running, headers: HeaderMap) -> Reply {
    let sender = h2_connect(server.addr).await;
    let mut sender = sender.ready().await.expect("h2 ready");
    let (response, stream) = sender.send_request(h2_request(server.addr, headers), false).expect("send");
    let (status, headers, raw) = h2_read(response).await;
    drop(stream);
    let body = if raw.is_empty() { Value::Null } else { serde_json::from_slice(&raw).expect("JSON") };
    Reply { proto: Proto::H2, status, headers, raw, body }
}

/// Asserts a raw pre-body refusal: status, code, id null, `connection: close`, connection closed.
fn assert_raw_pre_body(response: &RawResponse, closed: bool, status: u16) {
    assert_eq!(response.status, status, "{response:?}");
    assert_eq!(response.json()["error"]["code"], -32600, "{response:?}");
    assert_eq!(response.json()["id"], Value::Null, "{response:?}");
    assert_eq!(response.header("connection"), Some("close"), "{response:?}");
    assert!(closed, "the server closes the connection after a pre-body refusal");
}

/// An `authorize` hook that refuses everyone and counts its calls.
fn refusing(calls: &Arc<AtomicUsize>) -> impl Fn(&http::request::Parts) -> Result<(), Refused> + use<> {
    let calls = Arc::clone(calls);
    move |_| {
        calls.fetch_add(1, Ordering::SeqCst);
        Err(Refused::because("secret-authorize-reason"))
    }
}

fn list() -> Value {
    request(1, "tools/list", json!({}))
}

// ---------------------------------------------------------------------------------------------------
// Step 1: Origin
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn foreign_origin_is_403_and_closes_http1() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "origin", b"http://evil.example");
            let reply = post(server.addr, proto, headers, bytes(&list())).await;
            reply.assert_error(403, -32600, &NULL);
            reply.assert_pre_body_close();
        }
    })
    .await;
}

#[tokio::test]
async fn origin_with_a_second_foreign_value_is_403() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for pair in [[ALLOWED_ORIGIN, "http://evil.example"], ["http://evil.example", ALLOWED_ORIGIN]] {
                let headers = with(headers_for(&list()), "origin", pair[0].as_bytes());
                let headers = with(headers, "origin", pair[1].as_bytes());
                let reply = post(server.addr, proto, headers, bytes(&list())).await;
                reply.assert_error(403, -32600, &NULL);
                reply.assert_pre_body_close();
            }
            // A near miss is foreign: exact comparison.
            let headers = with(headers_for(&list()), "origin", format!("{ALLOWED_ORIGIN}/").as_bytes());
            post(server.addr, proto, headers, bytes(&list())).await.assert_error(403, -32600, &NULL);
        }
    })
    .await;
}

#[tokio::test]
async fn non_utf8_origin_is_403() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "origin", b"http://\xffevil.example");
            let reply = post(server.addr, proto, headers, bytes(&list())).await;
            // Present and invalid: 403 (MCP S-14), like a foreign origin.
            reply.assert_error(403, -32600, &NULL);
            reply.assert_pre_body_close();
            assert!(!reply.raw.windows(4).any(|w| w == b"evil"), "the value is never echoed");
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Step 2: method
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn non_post_is_405_with_allow_post() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for method in [Method::GET, Method::DELETE, Method::PUT, Method::OPTIONS] {
                let reply =
                    send(server.addr, proto, method.clone(), headers_for(&list()), Bytes::new()).await;
                reply.assert_error(405, -32600, &NULL);
                assert_eq!(reply.headers["allow"], "POST", "{method}");
                reply.assert_pre_body_close();
            }
        }
    })
    .await;
}

#[tokio::test]
async fn origin_is_checked_before_method() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "origin", b"http://evil.example");
            let reply = send(server.addr, proto, Method::GET, headers, Bytes::new()).await;
            reply.assert_error(403, -32600, &NULL);
            assert!(reply.headers.get("allow").is_none());
        }
    })
    .await;
}

#[tokio::test]
async fn method_is_checked_before_length() {
    bounded(async {
        let server = start_default().await;
        let head = raw_head("GET", server.addr, &[("transfer-encoding", "chunked")]);
        let (response, closed) = raw_head_only(&server, head).await;
        assert_raw_pre_body(&response, closed, 405);
        assert_eq!(response.header("allow"), Some("POST"));
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Step 3: transfer-encoding
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn transfer_encoding_is_411_before_any_body_byte_is_read() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let service = builder()
            .authorize(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .build();
        let server = serve(service).await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("transfer-encoding", "chunked".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        // The head only: not one chunk of the body is ever sent, and the answer still comes.
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 411);
        assert_eq!(calls.load(Ordering::SeqCst), 0, "length is checked before authorize");
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Step 4: authorize
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn authorize_refusal_is_403_before_any_body_byte_is_read() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = serve(builder().authorize(refusing(&calls)).build()).await;
        // HTTP/1.1: a Content-Length is declared and the body is never sent.
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "100".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 403);
        assert!(!String::from_utf8_lossy(&response.body).contains("secret-authorize-reason"));
        // HTTP/2: HEADERS without END_STREAM and never a DATA frame.
        let headers = with(headers_for(&list()), "content-length", b"100");
        let reply = h2_head_only(&server, headers).await;
        reply.assert_error(403, -32600, &NULL);
        reply.assert_pre_body_close();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    })
    .await;
}

#[tokio::test]
async fn authorize_refusal_with_expect_continue_sends_no_100() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = serve(builder().authorize(refusing(&calls)).build()).await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "100".into()));
        fields.push(("expect", "100-continue".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        // The first response read is the final 403: no `100 Continue` invited the body.
        assert_raw_pre_body(&response, closed, 403);
    })
    .await;
}

#[tokio::test]
async fn authorize_is_checked_before_the_declared_length() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let server = serve(builder().authorize(refusing(&calls)).build()).await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", (32 * 1024 * 1024).to_string()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 403);
    })
    .await;
}

#[tokio::test]
async fn authorize_panic_is_500_and_the_next_request_succeeds() {
    bounded(async {
        let service = builder()
            .authorize(|parts| {
                if parts.headers.contains_key("x-panic") {
                    panic!("authorize bug: secret-hook-detail");
                }
                Ok(())
            })
            .build();
        let server = serve(service).await;
        for proto in BOTH {
            let headers = with(headers_for(&list()), "x-panic", b"1");
            let reply = post(server.addr, proto, headers, bytes(&list())).await;
            reply.assert_error(500, -32603, &NULL);
            assert_eq!(reply.message(), "Internal error");
            reply.assert_pre_body_close();
            let reply = post(server.addr, proto, headers_for(&list()), bytes(&list())).await;
            assert_eq!(reply.status, 200, "the server keeps serving: {reply:?}");
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Steps 5 and 6: the cap and the bounded read
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn declared_length_over_the_cap_is_413_without_reading() {
    bounded(async {
        let server = start_default().await;
        let declared = (32 * 1024 * 1024).to_string();
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", declared.clone()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 413);
        // One byte over the cap is over the cap.
        let over = (MAX_BODY_BYTES + 1).to_string();
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", over));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 413);
        // HTTP/2: declared in `content-length`, no DATA frame sent.
        let headers = with(headers_for(&list()), "content-length", declared.as_bytes());
        let reply = h2_head_only(&server, headers).await;
        reply.assert_error(413, -32600, &NULL);
        reply.assert_pre_body_close();
    })
    .await;
}

#[tokio::test]
async fn streamed_body_over_the_cap_is_413_on_http2() {
    bounded(async {
        let server = start_default().await;
        let sender = h2_connect(server.addr).await;
        let mut sender = sender.ready().await.expect("h2 ready");
        let (response, mut stream) =
            sender.send_request(h2_request(server.addr, headers_for(&list())), false).expect("send");
        // 1 MiB + 1 byte, no content-length, in 16 KiB DATA frames (buffered by h2 as the window opens).
        let mut left = MAX_BODY_BYTES + 1;
        while left > 0 {
            let n = left.min(16 * 1024);
            stream.send_data(Bytes::from(vec![b' '; n]), false).expect("queue a DATA frame");
            left -= n;
        }
        let (status, headers, raw) = h2_read(response).await;
        drop(stream);
        let body: Value = serde_json::from_slice(&raw).expect("JSON");
        assert_eq!(status, 413);
        assert_eq!((body["error"]["code"].clone(), body["id"].clone()), (json!(-32600), NULL));
        assert!(headers.get("connection").is_none());
    })
    .await;
}

/// A valid `tools/list` padded with trailing whitespace to exactly `size` bytes.
fn padded_list(size: usize) -> Vec<u8> {
    let mut body = serde_json::to_vec(&list()).expect("JSON");
    body.resize(size, b' ');
    body
}

#[tokio::test]
async fn a_body_of_exactly_the_cap_is_admitted() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post(server.addr, proto, headers_for(&list()), padded_list(MAX_BODY_BYTES)).await;
            assert_eq!(reply.status, 200, "{proto:?}");
            let reply = post(server.addr, proto, headers_for(&list()), padded_list(MAX_BODY_BYTES + 1)).await;
            reply.assert_error(413, -32600, &NULL);
            reply.assert_pre_body_close();
        }
        // Streamed over HTTP/2 with no content-length: exactly the cap, then one byte more.
        for (size, status) in [(MAX_BODY_BYTES, 200), (MAX_BODY_BYTES + 1, 413)] {
            let sender = h2_connect(server.addr).await;
            let mut sender = sender.ready().await.expect("h2 ready");
            let (response, mut stream) =
                sender.send_request(h2_request(server.addr, headers_for(&list())), false).expect("send");
            let body = padded_list(size);
            for chunk in body.chunks(16 * 1024) {
                stream.send_data(Bytes::copy_from_slice(chunk), false).expect("queue");
            }
            stream.send_data(Bytes::new(), true).expect("end the stream");
            let (got, _, _) = h2_read(response).await;
            assert_eq!(got, status, "{size} bytes streamed");
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Step 8: the bounded decode (after the body was read: the connection is kept, the id unknown)
// ---------------------------------------------------------------------------------------------------

async fn post_raw_body(server: &Running, proto: Proto, body: impl Into<Bytes>) -> Reply {
    post(server.addr, proto, headers_for(&list()), body).await
}

#[tokio::test]
async fn empty_body_is_400_minus_32700() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post_raw_body(&server, proto, Bytes::new()).await;
            reply.assert_error(400, -32700, &NULL);
            reply.assert_kept();
            let reply = post_raw_body(&server, proto, " \r\n\t ").await;
            reply.assert_error(400, -32700, &NULL);
        }
    })
    .await;
}

#[tokio::test]
async fn non_json_body_is_400_minus_32700() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for body in [&b"not json"[..], b"{\"jsonrpc\":\"2.0\",", b"{} {}", b"\xff\xfe{}"] {
                let reply = post_raw_body(&server, proto, body.to_vec()).await;
                reply.assert_error(400, -32700, &NULL);
                reply.assert_kept();
                assert!(reply.body["error"].get("data").is_none(), "parse errors carry no data");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn batch_is_400_minus_32600() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let batch = json!([list(), request(2, "tools/list", json!({}))]);
            let reply = post_raw_body(&server, proto, bytes(&batch)).await;
            reply.assert_error(400, -32600, &NULL);
            reply.assert_kept();
            for scalar in ["\"a string\"", "42", "null", "true"] {
                post_raw_body(&server, proto, scalar).await.assert_error(400, -32600, &NULL);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn nesting_100000_deep_is_400_minus_32600() {
    bounded(async {
        let server = start_default().await;
        let depth = 100_000;
        let mut body = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"#);
        body.push_str(&"[".repeat(depth));
        body.push_str(&"]".repeat(depth));
        body.push_str("}}");
        for proto in BOTH {
            let started = std::time::Instant::now();
            let reply = post_raw_body(&server, proto, body.clone()).await;
            reply.assert_error(400, -32600, &NULL);
            reply.assert_kept();
            assert!(started.elapsed() < Duration::from_secs(5), "refused cheaply");
        }
        // 64 levels are admitted (the top-level object is level 1).
        let mut ok = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"#);
        let inner = 64 - 2;
        ok.push_str(&"[".repeat(inner));
        ok.push_str(&"]".repeat(inner));
        ok.push_str(&format!(r#","_meta":{}}}}}"#, meta()));
        let reply = post_raw_body(&server, Proto::H1, ok).await;
        assert_eq!(reply.status, 200, "{reply:?}");
    })
    .await;
}

#[tokio::test]
async fn duplicate_key_is_400_minus_32600() {
    bounded(async {
        let server = start_default().await;
        let top = r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{}}"#;
        let nested = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"a","\u006dessage":"b"}},"_meta":{}}}}}"#,
            meta()
        );
        for proto in BOTH {
            for body in [top.to_owned(), nested.clone()] {
                let reply = post_raw_body(&server, proto, body).await;
                reply.assert_error(400, -32600, &NULL);
                reply.assert_kept();
            }
        }
    })
    .await;
}

#[tokio::test]
async fn post_body_refusals_keep_the_http1_connection() {
    bounded(async {
        let server = start_default().await;
        let mut conn = connect(server.addr, Proto::H1).await;
        let refused = [
            conn.post(server.addr, headers_for(&list()), "not json").await,
            conn.post(server.addr, without(headers_for(&list()), "mcp-method"), bytes(&list())).await,
            conn.post(server.addr, headers_for(&list()), r#"{"a":1,"a":2}"#).await,
        ];
        for reply in &refused {
            assert_eq!(reply.status, 400, "{reply:?}");
            reply.assert_kept();
        }
        let reply = conn.post(server.addr, headers_for(&list()), bytes(&list())).await;
        assert_eq!(reply.status, 200, "the same connection serves on: {reply:?}");
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Step 9: the header rules (400, id echoed, connection kept)
// ---------------------------------------------------------------------------------------------------

/// POSTs `message` with `headers` over both protocols and asserts a post-body 400 with `code`.
async fn assert_header_refusal(
    server: &Running,
    headers: &HeaderMap,
    message: &Value,
    code: i64,
) -> Vec<Reply> {
    let mut replies = Vec::new();
    for proto in BOTH {
        let reply = post(server.addr, proto, headers.clone(), bytes(message)).await;
        reply.assert_error(400, code, &message.get("id").cloned().unwrap_or(Value::Null));
        reply.assert_kept();
        replies.push(reply);
    }
    replies
}

/// POSTs over both protocols and asserts 200.
async fn assert_admitted(server: &Running, headers: &HeaderMap, message: &Value) -> Vec<Reply> {
    let mut replies = Vec::new();
    for proto in BOTH {
        let reply = post(server.addr, proto, headers.clone(), bytes(message)).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        replies.push(reply);
    }
    replies
}

#[tokio::test]
async fn protocol_version_header_missing_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let message = request(41, "tools/list", json!({}));
        let headers = without(headers_for(&message), "mcp-protocol-version");
        for reply in assert_header_refusal(&server, &headers, &message, -32020).await {
            assert!(reply.message().to_ascii_lowercase().contains("mcp-protocol-version"), "{reply:?}");
        }
        // Notifications need it too.
        let message = notification("notifications/cancelled");
        let headers = without(headers_for(&message), "mcp-protocol-version");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn protocol_version_header_differing_from_the_body_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let message = request(42, "tools/list", json!({}));
        let headers = replace(headers_for(&message), "mcp-protocol-version", LEGACY.as_bytes());
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // The header is never base64-decoded.
        let headers = replace(headers_for(&message), "mcp-protocol-version", b"=?base64?MjAyNi0wNy0yOA==?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn unsupported_header_version_is_400_minus_32022_naming_2026_07_28() {
    bounded(async {
        let server = start_default().await;
        let mut message = request(43, "tools/list", json!({}));
        message["params"]["_meta"][META_VERSION] = json!(LEGACY);
        let headers = replace(headers_for(&message), "mcp-protocol-version", LEGACY.as_bytes());
        for reply in assert_header_refusal(&server, &headers, &message, -32022).await {
            assert_eq!(reply.body["error"]["data"]["supported"], json!([MODERN]), "{reply:?}");
            assert_eq!(reply.body["error"]["data"]["requested"], LEGACY);
        }
        // A notification declares no version in its body: the header alone decides.
        let message = notification("notifications/cancelled");
        let headers = replace(headers_for(&message), "mcp-protocol-version", b"2024-11-05");
        for reply in assert_header_refusal(&server, &headers, &message, -32022).await {
            assert_eq!(reply.body["error"]["data"]["supported"], json!([MODERN]));
            assert_eq!(reply.body["error"]["data"]["requested"], "2024-11-05");
        }
    })
    .await;
}

#[tokio::test]
async fn top_level_meta_is_400_minus_32602() {
    bounded(async {
        let server = start_default().await;
        let mut message = request(44, "tools/list", json!({}));
        message["_meta"] = meta();
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        let mut message = notification("notifications/cancelled");
        message["_meta"] = meta();
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
    })
    .await;
}

#[tokio::test]
async fn missing_meta_fields_are_400_minus_32602() {
    bounded(async {
        let server = start_default().await;
        // No `_meta` at all (a headerless era probe does not exist over HTTP).
        let message = json!({"jsonrpc": "2.0", "id": 45, "method": "server/discover", "params": {}});
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        let message = json!({"jsonrpc": "2.0", "id": 46, "method": "tools/list"});
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        // No protocol version.
        let mut message = request(47, "tools/list", json!({}));
        message["params"]["_meta"].as_object_mut().unwrap().remove(META_VERSION);
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        // No client capabilities.
        let mut message = request(48, "tools/list", json!({}));
        message["params"]["_meta"].as_object_mut().unwrap().remove(META_CAPABILITIES);
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        // `_meta` that is not an object.
        let mut message = request(49, "tools/list", json!({}));
        message["params"]["_meta"] = json!("2026-07-28");
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_method_missing_or_mismatched_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let message = request(50, "tools/list", json!({}));
        let headers = without(headers_for(&message), "mcp-method");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let headers = replace(headers_for(&message), "mcp-method", b"prompts/list");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // Case-sensitive, and never base64-decoded.
        let headers = replace(headers_for(&message), "mcp-method", b"Tools/List");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let headers = replace(headers_for(&message), "mcp-method", b"=?base64?dG9vbHMvbGlzdA==?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // On a notification it is optional, but a value that is sent must match.
        let message = notification("notifications/cancelled");
        let headers = replace(headers_for(&message), "mcp-method", b"notifications/progress");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_name_missing_or_mismatched_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let messages = [
            request(51, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}})),
            request(52, "prompts/get", json!({"name": "alpha"})),
            request(53, "resources/read", json!({"uri": "test://a"})),
        ];
        for message in &messages {
            let headers = without(headers_for(message), "mcp-name");
            assert_header_refusal(&server, &headers, message, -32020).await;
            let headers = replace(headers_for(message), "mcp-name", b"get_weather");
            assert_header_refusal(&server, &headers, message, -32020).await;
        }
        // Methods that name nothing need no Mcp-Name.
        let message = request(54, "tools/list", json!({}));
        assert_admitted(&server, &headers_for(&message), &message).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_name_base64_is_decoded_only_when_canonical() {
    bounded(async {
        let server = start_default().await;
        let message =
            request(55, "tools/call", json!({"name": "get_weather", "arguments": {"place": "Oslo"}}));
        // Canonical "get_weather".
        let headers = replace(headers_for(&message), "mcp-name", b"=?base64?Z2V0X3dlYXRoZXI=?=");
        assert_admitted(&server, &headers, &message).await;
        // Non-zero trailing bits decode to the same bytes leniently: not canonical, compared raw.
        let headers = replace(headers_for(&message), "mcp-name", b"=?base64?Z2V0X3dlYXRoZXJ=?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // Missing padding, uppercase markers: compared raw.
        let headers = replace(headers_for(&message), "mcp-name", b"=?base64?Z2V0X3dlYXRoZXI?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let headers = replace(headers_for(&message), "mcp-name", b"=?BASE64?Z2V0X3dlYXRoZXI=?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

/// A `tools/call` of `search` with `arguments` and the standard headers plus `params`.
fn search(arguments: Value, params: &[(&str, &[u8])]) -> (HeaderMap, Value) {
    let message = request(60, "tools/call", json!({"name": "search", "arguments": arguments}));
    let mut headers = headers_for(&message);
    for (name, value) in params {
        headers = with(headers, name, value);
    }
    (headers, message)
}

#[tokio::test]
async fn mcp_param_headers_mirroring_the_body_are_admitted() {
    bounded(async {
        let server = start_default().await;
        let arguments = json!({"region": "eu", "limit": 42, "exact": true, "filter": {"owner": "ann"}});
        let (headers, message) = search(
            arguments.clone(),
            &[
                ("mcp-param-region", b"eu"),
                ("Mcp-Param-Limit", b"42"),
                ("mcp-param-exact", b"true"),
                ("mcp-param-owner", b"ann"),
            ],
        );
        for reply in assert_admitted(&server, &headers, &message).await {
            assert_eq!(reply.result()["structuredContent"], arguments);
        }
        // A string with a leading space is sent base64-encoded; an integer may carry ".0".
        let (headers, message) = search(
            json!({"region": " eu", "limit": 42}),
            &[("mcp-param-region", b"=?base64?IGV1?="), ("mcp-param-limit", b"42.0")],
        );
        assert_admitted(&server, &headers, &message).await;
        // Absent or null with no header: nothing to mirror.
        let (headers, message) = search(json!({"region": null, "filter": {}}), &[]);
        assert_admitted(&server, &headers, &message).await;
        // Headers the schema does not annotate are ignored, whatever they hold.
        let (headers, message) =
            search(json!({"note": "x"}), &[("mcp-param-note", b"nope"), ("mcp-param-other", b"\xff")]);
        assert_admitted(&server, &headers, &message).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_param_string_mismatch_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let (headers, message) = search(json!({"region": "eu"}), &[("mcp-param-region", b"us-secret-value")]);
        for reply in assert_header_refusal(&server, &headers, &message, -32020).await {
            assert!(!String::from_utf8_lossy(&reply.raw).contains("us-secret-value"), "never echoed");
        }
        let (headers, message) = search(json!({"region": "Eu"}), &[("mcp-param-region", b"eu")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_param_integer_mismatch_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        // (" 42" cannot be tested over HTTP: surrounding whitespace is not part of a field value.)
        for header in [&b"042"[..], b"+42", b"4.2e1", b"0x2a", b"42.5", b"43", b"42.", b"-42"] {
            let (headers, message) = search(json!({"limit": 42}), &[("mcp-param-limit", header)]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
    })
    .await;
}

#[tokio::test]
async fn mcp_param_boolean_mismatch_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        for (header, body) in [(&b"True"[..], true), (b"1", true), (b"false", true), (b"true", false)] {
            let (headers, message) = search(json!({"exact": body}), &[("mcp-param-exact", header)]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
    })
    .await;
}

#[tokio::test]
async fn mcp_param_nested_is_followed_through_properties() {
    bounded(async {
        let server = start_default().await;
        let (headers, message) = search(json!({"filter": {"owner": "ann"}}), &[("mcp-param-owner", b"bob")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let (headers, message) = search(json!({"filter": {"owner": "ann"}}), &[]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // A top-level "owner" is not the annotated path.
        let (headers, message) =
            search(json!({"filter": {}, "owner": "ann"}), &[("mcp-param-owner", b"ann")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_param_absent_or_unmirrored_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        // A header with no body value (absent or null).
        for arguments in [json!({}), json!({"limit": null})] {
            let (headers, message) = search(arguments, &[("mcp-param-limit", b"5")]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
        // A body value with no header.
        for arguments in [json!({"limit": 0}), json!({"exact": false}), json!({"region": ""})] {
            let (headers, message) = search(arguments, &[]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
        // A recognized header whose value is not UTF-8.
        let (headers, message) = search(json!({"region": "eu"}), &[("mcp-param-region", b"\xffeu")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn a_repeated_header_with_one_bad_value_is_refused() {
    bounded(async {
        let server = start_default().await;
        let message = request(61, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}}));
        let cases: [(&str, &[u8]); 4] = [
            ("mcp-protocol-version", LEGACY.as_bytes()),
            ("mcp-method", b"tools/list"),
            ("mcp-name", b"get_weather"),
            ("mcp-name", b"\xff"),
        ];
        for (name, bad) in cases {
            // The bad value after the good one, then before it.
            let after = with(headers_for(&message), name, bad);
            let replies = assert_header_refusal(&server, &after, &message, -32020).await;
            let good = headers_for(&message).get(name).expect("a standard header").clone();
            let before = with(with(without(headers_for(&message), name), name, bad), name, good.as_bytes());
            assert_header_refusal(&server, &before, &message, replies[0].code()).await;
        }
        let (headers, message) =
            search(json!({"region": "eu"}), &[("mcp-param-region", b"eu"), ("mcp-param-region", b"us")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn header_checks_run_in_order() {
    bounded(async {
        let server = start_default().await;
        // Top-level `_meta` before the version header.
        let mut message = request(62, "tools/list", json!({}));
        message["_meta"] = meta();
        let headers = without(headers_for(&message), "mcp-protocol-version");
        assert_header_refusal(&server, &headers, &message, -32602).await;
        // The version header before `_meta` fields.
        let mut message = request(63, "tools/list", json!({}));
        message["params"]["_meta"].as_object_mut().unwrap().remove(META_CAPABILITIES);
        let headers = without(headers_for(&message), "mcp-protocol-version");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // `_meta` fields before Mcp-Method.
        let headers = without(headers_for(&message), "mcp-method");
        assert_header_refusal(&server, &headers, &message, -32602).await;
        // Mcp-Method before Mcp-Name before Mcp-Param.
        let (headers, message) = search(json!({"region": "eu"}), &[("mcp-param-region", b"us")]);
        let both = replace(replace(headers.clone(), "mcp-method", b"tools/list"), "mcp-name", b"x");
        for reply in assert_header_refusal(&server, &both, &message, -32020).await {
            assert!(reply.message().contains("mcp-method"), "{reply:?}");
        }
        let name_and_param = replace(headers, "mcp-name", b"x");
        for reply in assert_header_refusal(&server, &name_and_param, &message, -32020).await {
            assert!(reply.message().contains("mcp-name"), "{reply:?}");
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Steps 10 and 11: removed methods and the core
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn removed_methods_are_404_minus_32601_with_an_id_and_202_without() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for method in ["initialize", "ping", "notifications/initialized", "shutdown", "exit"] {
                let params = json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
                let message = request(70, method, params);
                let reply = post_message(server.addr, proto, &message).await;
                reply.assert_error(404, -32601, &json!(70));
                reply.assert_kept();
                // No id: 202 and an empty body. A null id is no id at all: an invalid request.
                let message = notification(method);
                let reply = post_message(server.addr, proto, &message).await;
                assert_eq!((reply.status.as_u16(), reply.raw.len()), (202, 0), "{method}: {reply:?}");
                let mut message = request(0, method, json!({}));
                message["id"] = Value::Null;
                post_message(server.addr, proto, &message).await.assert_error(400, -32600, &NULL);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn unknown_method_is_404_minus_32601() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for method in ["tools/destroy", "completion/complete", "resources/subscribe"] {
                let message = request(71, method, json!({}));
                let reply = post_message(server.addr, proto, &message).await;
                reply.assert_error(404, -32601, &json!(71));
                reply.assert_kept();
            }
        }
    })
    .await;
}

#[tokio::test]
async fn unknown_tool_is_200_minus_32602() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(72, "tools/call", json!({"name": "nope", "arguments": {}}));
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(200, -32602, &json!(72));
            reply.assert_kept();
        }
    })
    .await;
}

#[tokio::test]
async fn a_message_that_is_not_a_json_rpc_request_or_notification_is_400_minus_32600() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let mut message = request(73, "tools/list", json!({}));
            message["jsonrpc"] = json!("1.0");
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(400, -32600, &json!(73));
            // A POSTed response is refused too: clients MUST NOT POST responses.
            let response = json!({"jsonrpc": "2.0", "id": 5, "result": {}});
            let reply = post(server.addr, proto, headers_for(&list()), bytes(&response)).await;
            reply.assert_error(400, -32600, &json!(5));
            // An id that is neither a string nor an integer: refused, and not repeated.
            let mut odd = request(1, "ping", json!({}));
            odd["id"] = json!(null);
            post_message(server.addr, proto, &odd).await.assert_error(400, -32600, &NULL);
        }
    })
    .await;
}

#[tokio::test]
async fn host_panic_in_dispatch_is_500_minus_32603_with_the_id() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(74, "tools/call", json!({"name": "panics", "arguments": {}}));
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(500, -32603, &json!(74));
            assert_eq!(reply.message(), "Internal error");
            assert!(reply.body["error"].get("data").is_none());
            assert!(!String::from_utf8_lossy(&reply.raw).contains("secret-panic-detail"));
            reply.assert_kept();
            // The server keeps serving.
            let reply = post_message(server.addr, proto, &list()).await;
            assert_eq!(reply.status, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn host_panic_in_a_reader_is_500_minus_32603_with_the_id() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let messages = [
                request(76, "resources/read", json!({"uri": "test://panics"})),
                request(77, "prompts/get", json!({"name": "panics"})),
            ];
            for message in &messages {
                let reply = post_message(server.addr, proto, message).await;
                reply.assert_error(500, -32603, &message["id"]);
                assert_eq!(reply.body["error"], json!({"code": -32603, "message": "Internal error"}));
                assert!(!String::from_utf8_lossy(&reply.raw).contains("secret"));
                reply.assert_kept();
            }
        }
    })
    .await;
}

#[tokio::test]
async fn missing_client_capability_is_400_minus_32021() {
    bounded(async {
        let server = start_default().await;
        let message = request(78, "tools/call", json!({"name": "elicit", "arguments": {}}));
        assert_header_refusal(&server, &headers_for(&message), &message, -32021).await;
    })
    .await;
}

#[tokio::test]
async fn a_lowered_cap_is_enforced_and_a_higher_one_clamped() {
    bounded(async {
        let small = start(|b| b.max_body_bytes(1000)).await;
        let clamped = start(|b| b.max_body_bytes(usize::MAX)).await;
        for proto in BOTH {
            assert_eq!(post(small.addr, proto, headers_for(&list()), padded_list(1000)).await.status, 200);
            let reply = post(small.addr, proto, headers_for(&list()), padded_list(1001)).await;
            reply.assert_error(413, -32600, &NULL);
            reply.assert_pre_body_close();
            let reply =
                post(clamped.addr, proto, headers_for(&list()), padded_list(MAX_BODY_BYTES + 1)).await;
            reply.assert_error(413, -32600, &NULL);
        }
        // Streamed over HTTP/2 without content-length.
        let sender = h2_connect(small.addr).await;
        let mut sender = sender.ready().await.expect("h2 ready");
        let (response, mut stream) =
            sender.send_request(h2_request(small.addr, headers_for(&list())), false).expect("send");
        for chunk in padded_list(1001).chunks(100) {
            stream.send_data(Bytes::copy_from_slice(chunk), false).expect("queue");
        }
        stream.send_data(Bytes::new(), true).expect("end");
        assert_eq!(h2_read(response).await.0, 413);
    })
    .await;
}

#[tokio::test]
async fn malformed_x_mcp_header_is_500_naming_the_tool_in_the_log_only() {
    capture_logs();
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(75, "tools/call", json!({"name": "bad_header", "arguments": {"n": 1.5}}));
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(500, -32603, &json!(75));
            assert_eq!(reply.body["error"], json!({"code": -32603, "message": "Internal error"}));
            let text = String::from_utf8_lossy(&reply.raw).into_owned();
            assert!(!text.contains("bad_header") && !text.contains("number"), "{text}");
            reply.assert_kept();
        }
        let logs = logs();
        let line = logs.lines().find(|l| l.contains("bad_header")).unwrap_or_else(|| panic!("{logs}"));
        assert!(line.contains("ERROR"), "{line}");
        // The tool is still listed, and other tools are unaffected.
        let reply = post_message(server.addr, Proto::H1, &list()).await;
        assert_eq!(reply.status, 200);
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Framing edge cases (HTTP/1.1, raw bytes)
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_body_cut_short_is_400_minus_32700_and_closes() {
    bounded(async {
        let server = start_default().await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "100".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        stream.write_all(&raw_head("POST", server.addr, &fields)).await.expect("head");
        stream.write_all(b"{\"jsonrpc\":").await.expect("part of the body");
        // The client stops sending (half-close): the body can never complete.
        stream.shutdown().await.expect("half-close");
        let response = read_raw_response(&mut stream).await;
        let closed = closed_within(&mut stream, Duration::from_secs(2)).await;
        assert_eq!(response.status, 400, "{response:?}");
        assert_eq!(response.json()["error"]["code"], -32700, "{response:?}");
        assert_eq!(response.json()["id"], Value::Null);
        assert_eq!(response.header("connection"), Some("close"));
        assert!(closed);
    })
    .await;
}

#[tokio::test]
async fn content_length_with_transfer_encoding_is_411() {
    bounded(async {
        // The smuggling shape (CL.TE): refused before the read, whichever length a proxy believed.
        let server = start_default().await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", "5".into()));
        fields.push(("transfer-encoding", "chunked".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 411);
    })
    .await;
}

#[tokio::test]
async fn declared_length_over_the_cap_with_expect_continue_is_413_without_100() {
    bounded(async {
        let server = start_default().await;
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", (32 * 1024 * 1024).to_string()));
        fields.push(("expect", "100-continue".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (response, closed) = raw_head_only(&server, raw_head("POST", server.addr, &fields)).await;
        assert_raw_pre_body(&response, closed, 413);
    })
    .await;
}

// ---------------------------------------------------------------------------------------------------
// Legacy traffic and ids (docs/differences.md)
// ---------------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_legacy_initialize_without_headers_is_400_minus_32022_naming_2026_07_28() {
    bounded(async {
        let server = start_default().await;
        // What a 2025-11-25 client sends first: no MCP header at all, no `_meta`.
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
        }});
        let mut headers = HeaderMap::new();
        headers.insert("content-type", http::HeaderValue::from_static("application/json"));
        for proto in BOTH {
            let reply = post(server.addr, proto, headers.clone(), bytes(&message)).await;
            reply.assert_error(400, -32022, &json!(1));
            assert_eq!(reply.body["error"]["data"]["supported"], json!([MODERN]), "{reply:?}");
            assert_eq!(reply.body["error"]["data"]["requested"], LEGACY);
            reply.assert_kept();
        }
    })
    .await;
}

#[tokio::test]
async fn an_id_that_is_not_a_string_or_an_integer_is_never_echoed() {
    bounded(async {
        let server = start_default().await;
        for id in [json!(1.5), json!({"big": "x".repeat(1000)}), json!(true), json!([1])] {
            // A header refusal (no Mcp-Method) and a removed method (`ping`).
            let mut refused = request(0, "tools/list", json!({}));
            refused["id"] = id.clone();
            let mut ping = request(0, "ping", json!({}));
            ping["id"] = id.clone();
            for proto in BOTH {
                let replies = [
                    post(server.addr, proto, without(headers_for(&refused), "mcp-method"), bytes(&refused))
                        .await,
                    post_message(server.addr, proto, &ping).await,
                ];
                for reply in replies {
                    let echoed = reply.body.get("id");
                    assert!(
                        echoed.is_none_or(|id| id.is_string() || id.is_i64() || id.is_u64()),
                        "id {id} echoed: {} {}",
                        reply.status,
                        String::from_utf8_lossy(&reply.raw)
                    );
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_headerless_initialize_naming_2026_07_28_is_not_told_it_is_unsupported() {
    bounded(async {
        let server = start_default().await;
        let mut headers = HeaderMap::new();
        headers.insert("content-type", http::HeaderValue::from_static("application/json"));
        for requested in [json!(MODERN), Value::Null] {
            let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
            }});
            if !requested.is_null() {
                message["params"]["protocolVersion"] = requested.clone();
            }
            for proto in BOTH {
                let reply = post(server.addr, proto, headers.clone(), bytes(&message)).await;
                assert_eq!(reply.status, 400, "{reply:?}");
                // The header is what is missing; the refusal still names the served revision (S-7).
                assert_eq!(reply.code(), -32020, "{reply:?}");
                assert_eq!(reply.body["error"]["data"]["supported"], json!([MODERN]), "{reply:?}");
                if reply.code() == -32022 {
                    let data = &reply.body["error"]["data"];
                    let supported = data["supported"].as_array().expect("supported");
                    assert!(
                        !supported.contains(&data["requested"]),
                        "told {MODERN} is unsupported: {reply:?}"
                    );
                    assert_ne!(data["requested"], "", "an invented empty `requested`: {reply:?}");
                }
            }
        }
    })
    .await;
}
