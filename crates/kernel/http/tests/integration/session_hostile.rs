//! Legacy sessions against a hostile client, through a real listener: fixation, ids in every wrong
//! shape, answers in every wrong shape, a session ended under a waiting request, a flood of GET
//! streams (MCP S-61, S-62), client capabilities and subscriptions too large to keep, and the version
//! header on DELETE (S-63).

use std::time::Duration;

use http::{HeaderValue, Method};
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacySessions;

/// The bytes of every answer to a session this server does not know as the caller's.
const UNKNOWN: &str = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found"}}"#;

fn ask(id: i64) -> Value {
    legacy(id, "tools/call", json!({"name": "ask", "arguments": {"message": "name?"}}))
}

/// The next message of `stream`, within two seconds.
async fn next(stream: &mut Listening) -> Value {
    let message = tokio::time::timeout(Duration::from_secs(2), stream.next_message()).await;
    message.expect("a message in time").expect("the stream is open")
}

/// The server-to-client request a POST stream carries first.
async fn asked(stream: &mut Listening) -> Value {
    stream.assert_stream();
    let message = next(stream).await;
    assert_eq!(message["method"], "elicitation/create", "{message}");
    message
}

fn accept(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "Ann"}}})
}

/// The result `ask` answered its POST with (the last message of its stream).
async fn outcome(stream: &mut Listening) -> Value {
    let rest = stream.rest().await;
    let last = rest.last().unwrap_or_else(|| panic!("a response: {rest:?}"));
    last["result"]["structuredContent"].clone()
}

#[tokio::test]
async fn initialize_never_adopts_a_client_chosen_session_id() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        let chosen = "0123456789abcdef0123456789abcdef";
        for proto in BOTH {
            let alice = SessionClient::initialized(server.addr, proto, "alice").await;
            let alices = alice.id.clone().expect("alice's session");
            for presented in [chosen, alices.as_str()] {
                let mut bob = SessionClient::new(server.addr, proto, "bob");
                let headers = with(
                    without(bob.headers(), "mcp-protocol-version"),
                    "mcp-session-id",
                    presented.as_bytes(),
                );
                let reply = post(server.addr, proto, headers, bytes(&legacy_initialize())).await;
                assert_eq!(reply.status, 200, "{reply:?}");
                let minted = reply.headers["mcp-session-id"].to_str().expect("visible ASCII").to_owned();
                assert_ne!(minted, presented, "a fresh id, never the one presented");
                bob.id = Some(minted);
                assert_eq!(bob.post(&legacy(2, "ping", json!({}))).await.status, 200);
                let fixed = bob.presenting(presented).post(&legacy(3, "ping", json!({}))).await;
                assert_eq!((fixed.status.as_u16(), &fixed.raw[..]), (404, UNKNOWN.as_bytes()));
            }
            assert_eq!(alice.post(&legacy(4, "ping", json!({}))).await.status, 200, "alice's is hers alone");
        }
    })
    .await;
}

#[tokio::test]
async fn an_empty_a_control_character_or_an_oversized_session_header_is_refused_without_a_fault() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        let alice = SessionClient::initialized(server.addr, Proto::H1, "alice").await;
        let id = alice.id.clone().expect("an id");
        let list = bytes(&legacy(2, "tools/list", json!({})));
        for shape in [String::new(), format!("{id}\tx"), "a".repeat(129)] {
            let headers = replace(alice.headers(), "mcp-session-id", shape.as_bytes());
            for proto in BOTH {
                let reply = post(server.addr, proto, headers.clone(), list.clone()).await;
                assert_eq!((reply.status.as_u16(), &reply.raw[..]), (404, UNKNOWN.as_bytes()), "{shape:?}");
            }
        }
        // A control character or a byte past ASCII, written raw (no client library sends them).
        for shape in [&b"\x01"[..], b"\x7f", b"\xc3\xa9t\xc3\xa9"] {
            let mut value = id.as_bytes().to_vec();
            value.extend_from_slice(shape);
            let mut stream = tokio::net::TcpStream::connect(server.addr).await.expect("connect");
            let length = list.len().to_string();
            let mut head = raw_head(
                "POST",
                server.addr,
                &[
                    ("content-type", "application/json"),
                    ("authorization", "Bearer alice"),
                    ("mcp-protocol-version", LEGACY),
                    ("content-length", &length),
                ],
            );
            head.truncate(head.len() - 2);
            head.extend_from_slice(b"mcp-session-id: ");
            head.extend_from_slice(&value);
            head.extend_from_slice(b"\r\n\r\n");
            head.extend_from_slice(&list);
            tokio::io::AsyncWriteExt::write_all(&mut stream, &head).await.expect("write");
            let reply = read_raw_response(&mut stream).await;
            assert!(reply.status == 404 || reply.status == 400, "{shape:?}: {reply:?}");
            if reply.status == 404 {
                assert_eq!(reply.body, UNKNOWN.as_bytes(), "{shape:?}");
            }
        }
        // A header past hyper's head bound is refused before anything reads it; the server goes on.
        let huge = "a".repeat(256 * 1024);
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.expect("connect");
        let head = raw_head("POST", server.addr, &[("mcp-session-id", &huge), ("content-length", "0")]);
        let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, &head).await;
        let refused = read_raw_response(&mut stream).await;
        assert!(refused.status == 431 || refused.status == 400, "{refused:?}");
        assert_eq!(alice.post(&legacy(3, "ping", json!({}))).await.status, 200);
    })
    .await;
}

#[tokio::test]
async fn an_answer_with_both_result_and_error_or_in_a_batch_is_refused_and_the_request_still_waits() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.stream(&ask(1)).await;
            let id = asked(&mut stream).await["id"].clone();
            let both =
                json!({"jsonrpc": "2.0", "id": id, "result": {}, "error": {"code": 1, "message": "x"}});
            let refused = client.post(&both).await;
            // Neither a request nor a response: the shape refusal every path gives (its id echoed,
            // as JSON-RPC has it), never delivered.
            refused.assert_error(400, -32600, &id);
            let batch = Value::Array(vec![accept(&id)]);
            let refused = post(server.addr, proto, client.headers(), bytes(&batch)).await;
            assert_eq!(refused.status, 400, "{refused:?}");
            assert_eq!(client.post(&accept(&id)).await.status, 202, "the request still waited");
            assert_eq!(outcome(&mut stream).await["answer"]["content"]["name"], "Ann");
        }
    })
    .await;
}

#[tokio::test]
async fn a_request_waiting_on_the_client_ends_when_its_session_is_deleted() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.stream(&ask(1)).await;
            let id = asked(&mut stream).await["id"].clone();
            assert_eq!(client.delete().await.status, 204);
            assert_eq!(outcome(&mut stream).await, json!({"fault": "closed"}), "not left to time out");
            let late = client.post(&accept(&id)).await;
            assert_eq!((late.status.as_u16(), &late.raw[..]), (404, UNKNOWN.as_bytes()));
        }
    })
    .await;
}

#[tokio::test]
async fn an_answer_past_the_body_cap_is_413_unread_and_the_session_lives_on() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let huge = json!({"jsonrpc": "2.0", "id": "x", "result": {"pad": "x".repeat(2 << 20)}});
            let refused = client.post(&huge).await;
            assert_eq!(refused.status, 413, "{refused:?}");
            assert_eq!(client.post(&legacy(2, "ping", json!({}))).await.status, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn a_flood_of_get_streams_for_one_session_leaves_exactly_one_carrying_its_messages() {
    bounded(async {
        let (server, notifications) = start_sessions(LegacySessions::in_process()).await;
        let client = SessionClient::initialized(server.addr, Proto::H2, "alice").await;
        let mut streams = Vec::new();
        for _ in 0..12 {
            let stream = client.get().await;
            stream.assert_stream();
            streams.push(stream);
        }
        let mut newest = streams.pop().expect("one");
        for older in &mut streams {
            let (messages, _) = older.messages_until_cut(Duration::from_secs(2)).await;
            assert!(messages.is_empty(), "replaced: {messages:?}");
        }
        notifications.notifier().tools_list_changed();
        assert_eq!(next(&mut newest).await["method"], "notifications/tools/list_changed");
        // The slots of the replaced streams came back: a GET of another session still opens.
        let other = SessionClient::initialized(server.addr, Proto::H2, "alice").await;
        other.get().await.assert_stream();
    })
    .await;
}

#[tokio::test]
async fn delete_with_an_unsupported_protocol_version_is_400_and_ends_nothing() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            for bad in [&b"2025-06-18"[..], b"1999-01-01", b"2026-07-28"] {
                let headers = replace(client.headers(), "mcp-protocol-version", bad);
                let refused = send(server.addr, proto, Method::DELETE, headers, bytes::Bytes::new()).await;
                refused.assert_error(400, -32022, &Value::Null);
            }
            assert_eq!(client.post(&legacy(2, "ping", json!({}))).await.status, 200, "still live");
            let mut headers = client.headers();
            headers.insert("mcp-protocol-version", HeaderValue::from_static(LEGACY));
            let ended = send(server.addr, proto, Method::DELETE, headers, bytes::Bytes::new()).await;
            assert_eq!(ended.status, 204);
        }
    })
    .await;
}

#[tokio::test]
async fn a_client_cannot_mark_its_own_answer_as_refused_for_size() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.stream(&ask(1)).await;
            let id = asked(&mut stream).await["id"].clone();
            let mut answer = accept(&id);
            answer["mcp-kernel/answerTooLarge"] = json!(true);
            assert_eq!(client.post(&answer).await.status, 202);
            assert_eq!(outcome(&mut stream).await["answer"]["action"], "accept", "the result, as sent");
        }
    })
    .await;
}

#[tokio::test]
async fn client_capabilities_past_the_bound_open_no_session() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let mut client = SessionClient::new(server.addr, proto, "alice");
            let padded = json!({"elicitation": {}, "experimental": {"pad": {"x": "x".repeat(512 * 1024)}}});
            let refused = client.initialize_with(initialize_declaring(padded)).await;
            assert_eq!(refused.status, 400, "{refused:?}");
            assert_eq!(refused.code(), -32602, "{refused:?}");
            assert!(refused.raw.len() < 512, "nothing of the request echoed: {refused:?}");
            assert!(client.id.is_none(), "no session minted");
            // A client's usual capabilities, with room to spare, still open one.
            let usual = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}});
            assert_eq!(client.initialize_with(initialize_declaring(usual)).await.status, 200);
            assert!(client.id.is_some());
        }
    })
    .await;
}

#[tokio::test]
async fn a_sessions_subscriptions_are_bounded_in_bytes_as_well_as_in_number() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        let client = SessionClient::initialized(server.addr, Proto::H2, "alice").await;
        // A template that takes any path admits uris up to the per-uri bound (4 KiB) each.
        let long = |n: usize| format!("test://files/{}{n:04}", "x".repeat(3_980));
        let mut refused = None;
        for n in 0..64 {
            let subscribe = legacy(n as i64, "resources/subscribe", json!({"uri": long(n)}));
            let reply = client.post(&subscribe).await;
            if reply.body.get("error").is_some() {
                refused = Some((n, reply));
                break;
            }
        }
        let (n, reply) = refused.expect("refused well before 1,024 uris of 4 KiB (4 MiB a session)");
        assert!(n <= 16, "64 KiB of uris at most: refused at {n}");
        reply.assert_error(200, -32602, &json!(n));
        let short = legacy(100, "resources/subscribe", json!({"uri": "test://a"}));
        assert_eq!(client.post(&short).await.result(), &json!({}), "a short one still fits");
        let unsubscribe = legacy(101, "resources/unsubscribe", json!({"uri": long(0)}));
        assert_eq!(client.post(&unsubscribe).await.result(), &json!({}));
        let again = legacy(102, "resources/subscribe", json!({"uri": long(n)}));
        assert_eq!(client.post(&again).await.result(), &json!({}), "room came back");
    })
    .await;
}
