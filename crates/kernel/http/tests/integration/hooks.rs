//! The host's hooks through a real listener (`protocol.md` D-6, D-9, D-24; DESIGN "The HTTP service").
//!
//! `authorize_body` receives the body exactly as received: a signature computed by the client over
//! its raw bytes verifies in the hook, even when the bytes carry whitespace, key order and escapes
//! that any re-encoding would change. A refusal's reason is logged, never returned.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::request::Parts;
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::{MAX_BODY_BYTES, PeerAddr, Refused};

/// The key the client and the hook share.
const KEY: &[u8] = b"test-signing-key";

/// The HMAC-SHA256 (hex) of `body` under `key`, as the client sends it in `x-signature`.
fn sign(key: &[u8], body: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(body);
    mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// An `authorize_body` hook verifying `x-signature` over the raw bytes and recording what it saw.
fn verifying(seen: &Arc<Mutex<Vec<Bytes>>>) -> impl Fn(&Parts, &Bytes) -> Result<(), Refused> + use<> {
    let seen = Arc::clone(seen);
    move |parts, body| {
        seen.lock().unwrap().push(body.clone());
        let sent = parts.headers.get("x-signature").and_then(|v| v.to_str().ok()).unwrap_or_default();
        if sent == sign(KEY, body) {
            Ok(())
        } else {
            Err(Refused::because("secret-signature-reason: bad signature"))
        }
    }
}

/// A `tools/call` body whose whitespace, key order and escapes a re-encoding would not keep.
fn unusual_body() -> Vec<u8> {
    format!(
        "{{ \"params\" : {{ \"arguments\" : {{\"message\":\"caf\\u00e9 \\/ \\t\"}} ,\n  \"name\":\"echo\", \"_meta\": {} }},\r\n\t\"method\"  :\"tools/call\" , \"id\" : 7 , \"jsonrpc\":\"2.0\" }}\n\n",
        meta()
    )
    .into_bytes()
}

fn echo_headers() -> http::HeaderMap {
    standard_headers("tools/call", Some("echo"))
}

#[tokio::test]
async fn authorize_body_receives_the_exact_bytes() {
    bounded(async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let server = start(|b| b.authorize_body(verifying(&seen))).await;
        let body = unusual_body();
        // A re-encoding of the same message is different bytes.
        let parsed: Value = serde_json::from_slice(&body).expect("JSON");
        assert_ne!(serde_json::to_vec(&parsed).unwrap(), body);
        for proto in BOTH {
            let headers = with(echo_headers(), "x-signature", sign(KEY, &body).as_bytes());
            let reply = post(server.addr, proto, headers, body.clone()).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.result()["structuredContent"], json!({"message": "café / \t"}));
            assert_eq!(seen.lock().unwrap().pop().as_deref(), Some(&body[..]), "the exact bytes");
        }
    })
    .await;
}

#[tokio::test]
async fn a_bad_signature_is_403_without_connection_close() {
    bounded(async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let server = start(|b| b.authorize_body(verifying(&seen))).await;
        let body = unusual_body();
        let parsed: Value = serde_json::from_slice(&body).expect("JSON");
        let reencoded = serde_json::to_vec(&parsed).expect("JSON");
        for proto in BOTH {
            let mut conn = connect(server.addr, proto).await;
            // The signature of the original bytes does not cover a re-encoding of them.
            let headers = with(echo_headers(), "x-signature", sign(KEY, &body).as_bytes());
            let reply = conn.post(server.addr, headers, reencoded.clone()).await;
            reply.assert_error(403, -32600, &Value::Null);
            reply.assert_kept();
            let headers = with(echo_headers(), "x-signature", b"0000000000000000");
            let reply = conn.post(server.addr, headers, body.clone()).await;
            reply.assert_error(403, -32600, &Value::Null);
            reply.assert_kept();
            // The connection is clean: the next request on it is served.
            let headers = with(echo_headers(), "x-signature", sign(KEY, &body).as_bytes());
            let reply = conn.post(server.addr, headers, body.clone()).await;
            assert_eq!(reply.status, 200, "{reply:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn authorize_body_panic_is_500_without_connection_close() {
    bounded(async {
        let server = start(|b| {
            b.authorize_body(|parts, _| {
                if parts.headers.contains_key("x-panic") {
                    panic!("authorize_body bug: secret-hook-detail");
                }
                Ok(())
            })
        })
        .await;
        let message = request(1, "tools/list", json!({}));
        for proto in BOTH {
            let mut conn = connect(server.addr, proto).await;
            let reply =
                conn.post(server.addr, with(headers_for(&message), "x-panic", b"1"), bytes(&message)).await;
            reply.assert_error(500, -32603, &Value::Null);
            assert_eq!(reply.message(), "Internal error");
            reply.assert_kept();
            let reply = conn.post(server.addr, headers_for(&message), bytes(&message)).await;
            assert_eq!(reply.status, 200, "{reply:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn authorize_body_runs_before_decoding() {
    bounded(async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let server = start(|b| b.authorize_body(verifying(&seen))).await;
        for proto in BOTH {
            // Not JSON, not signed: the hook refuses it before the decoder could.
            let reply = post(server.addr, proto, echo_headers(), "not json").await;
            reply.assert_error(403, -32600, &Value::Null);
            // Signed but not JSON: admitted by the hook, then refused by the decoder.
            let headers = with(echo_headers(), "x-signature", sign(KEY, b"not json").as_bytes());
            let reply = post(server.addr, proto, headers, "not json").await;
            reply.assert_error(400, -32700, &Value::Null);
            // An empty body reaches the hook as empty bytes.
            let headers = with(echo_headers(), "x-signature", sign(KEY, b"").as_bytes());
            let reply = post(server.addr, proto, headers, Bytes::new()).await;
            reply.assert_error(400, -32700, &Value::Null);
            assert_eq!(seen.lock().unwrap().last().map(Bytes::len), Some(0));
        }
    })
    .await;
}

#[tokio::test]
async fn authorize_body_is_not_called_for_refusals_before_the_read() {
    bounded(async {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let service = builder()
            .authorize(|parts| {
                if parts.headers.contains_key("x-deny") { Err(Refused::because("denied")) } else { Ok(()) }
            })
            .authorize_body(move |_, _| {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .build();
        let server = serve(service).await;
        let message = request(1, "tools/list", json!({}));
        for proto in BOTH {
            let reply =
                post(server.addr, proto, with(headers_for(&message), "x-deny", b"1"), bytes(&message)).await;
            assert_eq!(reply.status, 403);
            let reply = post(server.addr, proto, headers_for(&message), vec![b' '; MAX_BODY_BYTES + 1]).await;
            assert_eq!(reply.status, 413);
            let headers = with(headers_for(&message), "origin", b"http://evil.example");
            assert_eq!(post(server.addr, proto, headers, bytes(&message)).await.status, 403);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        for proto in BOTH {
            assert_eq!(post_message(server.addr, proto, &message).await.status, 200);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    })
    .await;
}

#[tokio::test]
async fn authorize_sees_the_peer_addr_in_extensions() {
    bounded(async {
        let peers: Arc<Mutex<Vec<Option<SocketAddr>>>> = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&peers);
        let service = builder()
            .authorize(move |parts| {
                recorded.lock().unwrap().push(parts.extensions.get::<PeerAddr>().map(|p| p.0));
                Ok(())
            })
            .build();
        let server = serve(service).await;
        let message = request(1, "tools/list", json!({}));
        for proto in BOTH {
            let (mut conn, local) = connect_local(server.addr, proto).await;
            for _ in 0..2 {
                let reply = conn.post(server.addr, headers_for(&message), bytes(&message)).await;
                assert_eq!(reply.status, 200);
                assert_eq!(peers.lock().unwrap().pop(), Some(Some(local)), "{proto:?}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_refusal_reason_is_logged_and_never_returned() {
    capture_logs();
    bounded(async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let service = builder()
            .authorize(|parts| {
                if parts.headers.contains_key("x-deny") {
                    Err(Refused::because("secret-authorize-reason: token expired"))
                } else {
                    Ok(())
                }
            })
            .authorize_body(verifying(&seen))
            .build();
        let server = serve(service).await;
        let body = unusual_body();
        for proto in BOTH {
            let headers =
                with(with(echo_headers(), "x-deny", b"1"), "x-signature", sign(KEY, &body).as_bytes());
            let denied = post(server.addr, proto, headers, body.clone()).await;
            denied.assert_error(403, -32600, &Value::Null);
            denied.assert_pre_body_close();
            let unsigned = post(server.addr, proto, echo_headers(), body.clone()).await;
            unsigned.assert_error(403, -32600, &Value::Null);
            unsigned.assert_kept();
            for reply in [&denied, &unsigned] {
                let text = String::from_utf8_lossy(&reply.raw).into_owned();
                assert!(!text.contains("secret") && !text.contains("expired"), "{text}");
                assert!(!text.contains("signature"), "{text}");
                assert_eq!(reply.message(), "Forbidden");
                assert!(reply.body["error"].get("data").is_none());
            }
        }
        let logs = logs();
        assert!(logs.contains("secret-authorize-reason: token expired"), "{logs}");
        assert!(logs.contains("secret-signature-reason: bad signature"), "{logs}");
    })
    .await;
}
