//! Step 8: the bounded decode, after the body was read — an empty, non-JSON, batch, too deeply nested
//! or duplicate-key body is 400 (-32700 or -32600), the id unknown (null), the connection kept.

use std::time::Duration;

use bytes::Bytes;
use serde_json::json;

use super::{NULL, list};
use crate::support::*;

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
