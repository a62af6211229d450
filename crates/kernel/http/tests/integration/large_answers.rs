//! An answer too long to be worth a copy (an encoded result of 16 KiB or more) is sent from the buffer
//! the core encoded it into, between the envelope's bytes: over HTTP/1.1 and HTTP/2, on both the
//! `2026-07-28` and the stateless `2025-11-25` path, it reaches the client as the same bytes as before,
//! with a `content-length` that counts them all.

use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacyClients;

/// A message of `len` characters that the encoder must escape in places (quotes, backslashes, a control
/// character, non-ASCII).
fn long_message(len: usize) -> String {
    "a\"b\\c\u{1}é😀 ".chars().cycle().take(len).collect()
}

/// Asserts that `reply` is the echo of `message` as compact JSON, whole and counted.
fn assert_whole_echo(reply: &Reply, id: &Value, message: &str) {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.headers[CONTENT_TYPE], "application/json");
    assert_eq!(reply.id(), id);
    assert_eq!(reply.result()["structuredContent"]["message"], message);
    // The core writes compact JSON, members in their order: read back and written again, the same bytes.
    assert_eq!(reply.raw, serde_json::to_vec(&reply.body).unwrap(), "{:?}", reply.proto);
    if let Some(length) = reply.headers.get(CONTENT_LENGTH) {
        assert_eq!(length.to_str().unwrap(), reply.raw.len().to_string());
    } else {
        assert_eq!(reply.proto, Proto::H2, "HTTP/1.1 announces the length");
    }
}

#[tokio::test]
async fn a_large_answer_arrives_whole_with_its_length_on_both_paths() {
    bounded(async {
        let server = start(|b| b.legacy_clients(LegacyClients::Stateless)).await;
        for proto in BOTH {
            for len in [16 * 1024, 300 * 1024] {
                let message = long_message(len);
                let arguments = json!({"name": "echo", "arguments": {"message": message}});
                let modern = request(len, "tools/call", arguments.clone());
                let reply = post_message(server.addr, proto, &modern).await;
                assert_whole_echo(&reply, &json!(len), &message);
                assert!(reply.raw.len() > 2 * len, "the text twice, escaped: {}", reply.raw.len());

                let old = legacy("legacy", "tools/call", arguments);
                let reply = post(server.addr, proto, legacy_headers(), bytes(&old)).await;
                assert_whole_echo(&reply, &json!("legacy"), &message);
            }
        }
    })
    .await;
}
