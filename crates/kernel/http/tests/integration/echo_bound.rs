//! The one echo bound over HTTP (`protocol.md` "Errors", `mcp_kernel_wire::error::shorten`): a value the
//! caller sent is repeated in an error (`data.uri`, `data.name`, `data.requested`) with at most 128
//! characters and a final `…`, over HTTP/1.1 and HTTP/2, however long the value that reached the router.
//!
//! `Mcp-Name` must mirror the body's `name`/`uri`, so each value also travels in a header: the sizes
//! below stay under the server's header limits (a 64 KiB HTTP/1.1 read buffer, hyper's 16 KiB HTTP/2
//! header list) so that the request reaches the router instead of being refused at the door.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;
use http::header::CONTENT_TYPE;
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacyClients;
use mcp_kernel_router::wire::error::{MAX_ECHO_CHARS, SHORTENED_MARK, shorten};

/// The longest caller value sent over `proto`: within its header limit, far beyond the echo bound.
fn long_len(proto: Proto) -> usize {
    match proto {
        Proto::H1 => 48 * 1024,
        Proto::H2 => 12 * 1024,
    }
}

/// The largest answer an echoing refusal may have, in bytes.
const SMALL: usize = 2048;

/// Asserts that `echoed` is `sent` shortened by the one rule: 128 characters, then the mark.
fn assert_shortened(echoed: &Value, sent: &str) {
    let echoed = echoed.as_str().unwrap_or_else(|| panic!("a string echo, got {echoed}"));
    assert_eq!(echoed.chars().count(), MAX_ECHO_CHARS + 1, "{echoed}");
    assert!(echoed.ends_with(SHORTENED_MARK), "{echoed}");
    let kept: String = sent.chars().take(MAX_ECHO_CHARS).collect();
    assert_eq!(echoed.strip_suffix(SHORTENED_MARK), Some(kept.as_str()), "a prefix cut on a char boundary");
    assert_eq!(echoed, shorten(sent), "the one rule");
}

/// Asserts a small JSON-RPC error answer with `status`, `code` and `id`.
fn assert_small_error(reply: &Reply, status: u16, code: i64, id: i64) {
    reply.assert_error(status, code, &json!(id));
    assert!(reply.raw.len() < SMALL, "an answer of {} bytes", reply.raw.len());
}

#[tokio::test]
async fn a_not_found_uri_is_echoed_within_the_bound_over_http() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let uri = format!("test://nowhere/{}", "u".repeat(long_len(proto)));
            let message = request(1, "resources/read", json!({"uri": uri}));
            let reply = post_message(server.addr, proto, &message).await;
            assert_small_error(&reply, 200, -32602, 1);
            assert_eq!(reply.body["error"]["data"].as_object().map(|data| data.len()), Some(1));
            assert_shortened(&reply.body["error"]["data"]["uri"], &uri);

            // Four-byte characters: `Mcp-Name` carries them base64-encoded (S-22); the cut keeps whole
            // characters.
            let uri = format!("test://nowhere/{}", "\u{1F600}".repeat(long_len(proto) / 8));
            let message = request(2, "resources/read", json!({"uri": uri}));
            let name = format!("=?base64?{}?=", STANDARD.encode(&uri));
            let headers = standard_headers("resources/read", Some(&name));
            let reply = post(server.addr, proto, headers, bytes(&message)).await;
            assert_small_error(&reply, 200, -32602, 2);
            assert_shortened(&reply.body["error"]["data"]["uri"], &uri);
        }
    })
    .await;
}

#[tokio::test]
async fn an_unknown_prompt_name_is_echoed_within_the_bound_over_http() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let name = format!("forecast{}", "p".repeat(long_len(proto)));
            let message = request(3, "prompts/get", json!({"name": name}));
            let reply = post_message(server.addr, proto, &message).await;
            assert_small_error(&reply, 200, -32602, 3);
            assert_eq!(reply.body["error"]["data"].as_object().map(|data| data.len()), Some(1));
            assert_shortened(&reply.body["error"]["data"]["name"], &name);
        }
    })
    .await;
}

#[tokio::test]
async fn an_unsupported_requested_version_is_echoed_within_the_bound_over_http() {
    bounded(async {
        // Refusing legacy clients: a header-less `initialize` is then refused rather than negotiated.
        let server = start(|b| b.legacy_clients(LegacyClients::Refused)).await;
        for proto in BOTH {
            // A header-less `initialize` (a 2025-11-25 opener): `requested` comes from the body alone.
            let version = format!("2099-{}", "9".repeat(60 * 1024));
            let message = json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
            }});
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
            headers.insert("accept", http::HeaderValue::from_static("application/json, text/event-stream"));
            let reply = post(server.addr, proto, headers, bytes(&message)).await;
            assert_small_error(&reply, 400, -32022, 4);
            assert_eq!(reply.body["error"]["data"]["supported"], json!([MODERN]));
            assert_shortened(&reply.body["error"]["data"]["requested"], &version);

            // A request whose header and `_meta` agree on a revision that is not served.
            let version = format!("2099-{}", "9".repeat(long_len(proto)));
            let mut message = request(5, "tools/list", json!({}));
            message["params"]["_meta"][META_VERSION] = json!(version);
            let headers = replace(headers_for(&message), "mcp-protocol-version", version.as_bytes());
            let reply = post(server.addr, proto, headers, bytes(&message)).await;
            assert_small_error(&reply, 400, -32022, 5);
            assert_shortened(&reply.body["error"]["data"]["requested"], &version);
        }
    })
    .await;
}

#[tokio::test]
async fn a_value_within_the_bound_is_echoed_whole_over_http() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let prefix = "test://nowhere/";
            let uri = format!("{prefix}{}", "u".repeat(MAX_ECHO_CHARS - prefix.len()));
            let reply =
                post_message(server.addr, proto, &request(6, "resources/read", json!({"uri": uri}))).await;
            assert_small_error(&reply, 200, -32602, 6);
            assert_eq!(reply.body["error"]["data"]["uri"], uri.as_str());
        }
    })
    .await;
}
