//! Every refusal of the pipeline (the table in `src/service.rs`), through a real listener.
//!
//! Each test pins the status, the JSON-RPC code, the id (null before the body is decoded, echoed
//! after) and the `connection: close` placement (`protocol.md` K-4): present on HTTP/1.1 for the
//! refusals issued before the body is read, never on HTTP/2, never once the body was read.
//!
//! One module per step of the pipeline, named after it: `origin` (step 1), `method` (2),
//! `transfer_encoding` (3), `authorize` (4), `body_cap` (5 and 6), `decode` (8), `headers` (9),
//! `dispatch` (10 and 11), then `framing` (edge cases over raw HTTP/1.1 bytes) and `legacy` (legacy
//! traffic and ids). This file holds the helpers more than one of them uses.

mod authorize;
mod body_cap;
mod decode;
mod dispatch;
mod framing;
mod headers;
mod legacy;
mod method;
mod origin;
mod transfer_encoding;

use std::time::Duration;

use http::HeaderMap;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::support::*;

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

fn list() -> Value {
    request(1, "tools/list", json!({}))
}

/// A valid `tools/list` padded with trailing whitespace to exactly `size` bytes.
fn padded_list(size: usize) -> Vec<u8> {
    let mut body = serde_json::to_vec(&list()).expect("JSON");
    body.resize(size, b' ');
    body
}

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
