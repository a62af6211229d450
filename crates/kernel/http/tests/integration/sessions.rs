//! Legacy sessions (`LegacyClients::Sessions`, MCP S-61, S-62) through a real listener, over HTTP/1.1
//! and HTTP/2: the lifecycle (minted at `initialize`, required after it, ended by DELETE or idleness),
//! the binding to the principal, and the steps GET and DELETE pass.

use std::time::Duration;

use http::header::{ALLOW, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::{LegacyClients, LegacySessions};
use mcp_kernel_router::sessions::SessionLimits;

/// The bytes of every answer to a session this server does not know as the caller's.
const UNKNOWN: &str = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found"}}"#;

/// Asserts the one answer to an unknown session: 404, JSON, these bytes (no id echoed).
fn assert_unknown(reply: &Reply) {
    assert_eq!(reply.status, 404, "{reply:?}");
    assert_eq!(reply.headers[CONTENT_TYPE], "application/json", "{reply:?}");
    assert_eq!(reply.raw, UNKNOWN, "{reply:?}");
    assert!(reply.headers.get("mcp-session-id").is_none(), "{reply:?}");
}

#[tokio::test]
async fn initialize_mints_a_visible_ascii_session_id_and_advertises_what_a_session_honours() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        let mut seen = std::collections::HashSet::new();
        for proto in BOTH {
            for _ in 0..3 {
                let mut client = SessionClient::new(server.addr, proto, "alice");
                let reply = client.initialize().await;
                let id = client.id.clone().expect("a session id");
                assert!(id.len() >= 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
                assert!(seen.insert(id), "never twice");
                let result = reply.result();
                assert_eq!(result["protocolVersion"], LEGACY);
                assert_eq!(
                    result["capabilities"]["resources"],
                    json!({"listChanged": true, "subscribe": true})
                );
                assert_eq!(result["capabilities"]["tools"], json!({"listChanged": true}));
                assert_eq!(result["capabilities"]["logging"], json!({}));
                assert!(result.get("ttlMs").is_none(), "legacy-shaped: {result}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_session_request_is_served_and_one_without_the_id_is_400() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let initialized = client.post(&notification("notifications/initialized")).await;
            assert_eq!((initialized.status.as_u16(), initialized.raw.len()), (202, 0), "{initialized:?}");
            let call = legacy(2, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
            let reply = client.post(&call).await;
            assert_eq!(reply.result()["structuredContent"], json!({"message": "hi"}));
            // The session knows the revision: a header-less request of the session is legacy too.
            let headerless = without(client.headers(), "mcp-protocol-version");
            let listed =
                post(server.addr, proto, headerless, bytes(&legacy(3, "tools/list", json!({})))).await;
            assert_eq!(listed.status, 200, "{listed:?}");
            assert!(listed.result()["tools"].is_array());
            let anonymous = SessionClient { id: None, ..client.clone() };
            for message in [
                call,
                notification("notifications/initialized"),
                json!({"jsonrpc": "2.0", "id": "x", "result": {}}),
            ] {
                let reply = anonymous.post(&message).await;
                assert_eq!(reply.status, 400, "{message}: {reply:?}");
                assert_eq!(reply.body["error"]["message"], "Bad Request: Mcp-Session-Id header is required");
                assert_eq!(reply.id(), &Value::Null, "no id echoed");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn an_unknown_a_malformed_and_another_principals_session_id_get_the_same_404_bytes() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let alice = SessionClient::initialized(server.addr, proto, "alice").await;
            let id = alice.id.clone().expect("alice's session");
            let bob = SessionClient::new(server.addr, proto, "bob");
            let list = legacy(2, "tools/list", json!({}));
            let guessed = bob.presenting("0123456789abcdef0123456789abcdef").post(&list).await;
            assert_unknown(&guessed);
            let hijacked = bob.presenting(&id).post(&list).await;
            assert_unknown(&hijacked);
            assert_eq!(hijacked.raw, guessed.raw, "byte for byte");
            assert_unknown(&bob.presenting(&id).delete().await);
            let mut stream = bob.presenting(&id).get().await;
            assert_eq!(stream.status, 404);
            assert_eq!(stream.json().await, serde_json::from_str::<Value>(UNKNOWN).unwrap());
            for malformed in [&b"has space"[..], b"\xff\xfe", &[b'a'; 300]] {
                let headers = with(without(alice.headers(), "mcp-session-id"), "mcp-session-id", malformed);
                assert_unknown(&post(server.addr, proto, headers, bytes(&list)).await);
            }
            let twice = with(alice.headers(), "mcp-session-id", id.as_bytes());
            assert_unknown(&post(server.addr, proto, twice, bytes(&list)).await);
            // Alice's own session was not touched by any of it.
            assert_eq!(alice.post(&list).await.status, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn delete_ends_the_session_and_every_later_request_is_404() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let ended = client.delete().await;
            assert_eq!((ended.status.as_u16(), ended.raw.len()), (204, 0), "{ended:?}");
            assert_unknown(&client.post(&legacy(2, "tools/list", json!({}))).await);
            assert_unknown(&client.post(&notification("notifications/initialized")).await);
            assert_unknown(&client.delete().await);
            let again = SessionClient::initialized(server.addr, proto, "alice").await;
            assert_ne!(again.id, client.id, "a new session after initializing again");
        }
    })
    .await;
}

#[tokio::test]
async fn an_idle_session_expires_and_each_request_pushes_its_expiry() {
    bounded(async {
        let idle = Duration::from_millis(1_000);
        let limits = SessionLimits::new(16, 100, idle, 16);
        let (server, _notifications) = start_sessions(LegacySessions::in_process().limits(limits)).await;
        let client = SessionClient::initialized(server.addr, Proto::H1, "alice").await;
        let ping = legacy(2, "ping", json!({}));
        // 1.6 s of use in all, past one idle period: each request pushed the expiry.
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(400)).await;
            assert_eq!(client.post(&ping).await.status, 200, "used within its idle time: kept");
        }
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_unknown(&client.post(&ping).await);
    })
    .await;
}

#[tokio::test]
async fn another_principals_requests_do_not_keep_a_session_alive() {
    bounded(async {
        let idle = Duration::from_millis(1_000);
        let limits = SessionLimits::new(16, 100, idle, 16);
        let (server, _notifications) = start_sessions(LegacySessions::in_process().limits(limits)).await;
        let alice = SessionClient::initialized(server.addr, Proto::H1, "alice").await;
        let id = alice.id.clone().expect("alice's session");
        let bob = SessionClient::new(server.addr, Proto::H1, "bob").presenting(&id);
        let ping = legacy(2, "ping", json!({}));
        // 1.6 s of bob's requests, past one idle period, the last about 0.2 s before alice's: none of
        // them is use of alice's session, so it expires one idle period after its initialize.
        for _ in 0..8 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert_unknown(&bob.post(&ping).await);
            let mut get = bob.get().await;
            assert_eq!(get.status, 404, "a GET of another principal is refused too");
            let _ = get.json().await;
        }
        assert_unknown(&alice.post(&ping).await);
    })
    .await;
}

#[tokio::test]
async fn get_and_delete_pass_the_same_admission_and_authorize_as_a_post() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let unsigned = without(client.headers(), "authorization");
            for method in [Method::GET, Method::DELETE] {
                let mut headers = unsigned.clone();
                headers.insert("accept", HeaderValue::from_static("text/event-stream"));
                let refused = send(server.addr, proto, method.clone(), headers, bytes::Bytes::new()).await;
                assert_eq!(refused.status, 401, "{method}: {refused:?}");
                let mut foreign = client.headers();
                foreign.insert("origin", HeaderValue::from_static("http://evil.example"));
                let refused = send(server.addr, proto, method.clone(), foreign, bytes::Bytes::new()).await;
                assert_eq!(refused.status, 403, "{method}: {refused:?}");
            }
            assert_eq!(client.post(&legacy(2, "ping", json!({}))).await.status, 200, "nothing was ended");
            for method in [Method::HEAD, Method::PUT, Method::PATCH] {
                let reply =
                    send(server.addr, proto, method.clone(), client.headers(), bytes::Bytes::new()).await;
                assert_eq!(reply.status, 405, "{method}");
                assert_eq!(reply.headers[ALLOW], "GET, POST, DELETE", "{method}");
            }
            let mut json_only = client.headers();
            json_only.insert("accept", HeaderValue::from_static("application/json"));
            let refused = send(server.addr, proto, Method::GET, json_only, bytes::Bytes::new()).await;
            assert_eq!(refused.status, 406, "{refused:?}");
            let bodied = with(client.headers(), "content-length", b"2");
            let refused =
                send(server.addr, proto, Method::DELETE, bodied, bytes::Bytes::from_static(b"{}")).await;
            assert_eq!(refused.status, 400, "{refused:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_server_without_notifications_answers_a_sessions_get_405_and_advertises_no_changes() {
    bounded(async {
        let service = builder().authorize(bearer).legacy_clients(LegacyClients::Sessions).build();
        let server = serve(service).await;
        for proto in BOTH {
            let mut client = SessionClient::new(server.addr, proto, "alice");
            let reply = client.initialize().await;
            assert_eq!(
                reply.result()["capabilities"]["resources"],
                json!({"listChanged": false, "subscribe": false})
            );
            assert!(client.id.is_some(), "the in-process store by default");
            let mut stream = client.get().await;
            assert_eq!(stream.status, 405);
            assert_eq!(stream.header("allow"), Some("POST, DELETE"));
            let _ = stream.json().await;
            let subscribe = legacy(2, "resources/subscribe", json!({"uri": "test://a"}));
            client.post(&subscribe).await.assert_error(200, -32601, &json!(2));
        }
    })
    .await;
}

#[tokio::test]
async fn a_modern_request_ignores_a_session_id_on_a_service_with_sessions() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        let list = request(1, "tools/list", json!({}));
        for proto in BOTH {
            let mut headers = headers_for(&list);
            headers.insert("authorization", HeaderValue::from_static("Bearer alice"));
            let plain = post(server.addr, proto, headers.clone(), bytes(&list)).await;
            headers.insert("mcp-session-id", HeaderValue::from_static("0123456789abcdef0123456789abcdef"));
            let with_session = post(server.addr, proto, headers, bytes(&list)).await;
            assert_eq!((with_session.status, &with_session.raw), (plain.status, &plain.raw));
            assert!(with_session.headers.get("mcp-session-id").is_none());
            let empty = HeaderMap::new();
            assert_eq!(send(server.addr, proto, Method::GET, empty, bytes::Bytes::new()).await.status, 401);
        }
    })
    .await;
}

#[tokio::test]
async fn a_listed_origin_may_use_sessions_from_a_page_and_read_the_session_id() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let mut preflight = HeaderMap::new();
            preflight.insert("origin", HeaderValue::from_static(ALLOWED_ORIGIN));
            preflight.insert("access-control-request-method", HeaderValue::from_static("DELETE"));
            preflight.insert("access-control-request-headers", HeaderValue::from_static("mcp-session-id"));
            let granted = send(server.addr, proto, Method::OPTIONS, preflight, bytes::Bytes::new()).await;
            assert_eq!(granted.status, 204);
            assert_eq!(granted.headers["access-control-allow-methods"], "GET, POST, DELETE");
            let headers = granted.headers["access-control-allow-headers"].to_str().unwrap();
            assert!(headers.contains("mcp-session-id"), "{headers}");
            let mut client = SessionClient::new(server.addr, proto, "alice");
            let mut headers = without(without(client.headers(), "mcp-protocol-version"), "mcp-session-id");
            headers.insert("origin", HeaderValue::from_static(ALLOWED_ORIGIN));
            let reply = post(server.addr, proto, headers, bytes(&legacy_initialize())).await;
            let exposed = reply.headers["access-control-expose-headers"].to_str().unwrap();
            assert!(exposed.contains("mcp-session-id"), "{exposed}");
            client.id = reply.headers.get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(client.delete().await.status, 204);
        }
    })
    .await;
}
