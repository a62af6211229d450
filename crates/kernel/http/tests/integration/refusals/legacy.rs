//! Legacy traffic and ids (`docs/differences.md`): a headerless `2025-11-25` `initialize` on a server
//! that refuses legacy clients, ids that are neither strings nor integers, a headerless `initialize`
//! naming `2026-07-28`.

use http::HeaderMap;
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacyClients;

/// A server that serves `2026-07-28` only.
async fn start_modern_only() -> Running {
    start(|b| b.legacy_clients(LegacyClients::Refused)).await
}

#[tokio::test]
async fn a_legacy_initialize_without_headers_is_400_minus_32022_naming_2026_07_28() {
    bounded(async {
        let server = start_modern_only().await;
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
        let server = start_modern_only().await;
        let default = start_default().await;
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
                // Serving legacy clients (the default), it is a legacy opener: negotiated, not refused.
                let reply = post(default.addr, proto, headers.clone(), bytes(&message)).await;
                assert_eq!(reply.status, 200, "{reply:?}");
                assert_eq!(reply.result()["protocolVersion"], LEGACY, "{reply:?}");
            }
        }
    })
    .await;
}
