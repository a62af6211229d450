//! The bounds and refusals of legacy sessions through a real listener: sessions per principal (no
//! principal starves another; per address on a host that names nobody, `session_quota.rs`) and in
//! all, GET streams per client, server-to-client requests waiting per session, the wait for an answer,
//! the size of an answer, and answers the server did not ask for (another session's request, a guessed
//! id, one answered already).

use std::time::Duration;

use http::header::RETRY_AFTER;
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacySessions;
use mcp_kernel_router::sessions::SessionLimits;

/// The bytes of every refused answer, whatever the reason.
const NOT_AWAITED: &str = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: no request of this session awaits this answer"}}"#;

fn limits(per_owner: usize, total: usize, pending: usize) -> SessionLimits {
    SessionLimits::new(per_owner, total, Duration::from_secs(600), pending)
}

fn ask(id: i64) -> Value {
    legacy(id, "tools/call", json!({"name": "ask", "arguments": {"message": "name?"}}))
}

/// The server-to-client request a POST stream carries first.
async fn asked(stream: &mut Listening) -> Value {
    stream.assert_stream();
    let message = tokio::time::timeout(Duration::from_secs(2), stream.next_message()).await.expect("in time");
    let message = message.expect("a request on the stream");
    assert_eq!(message["method"], "elicitation/create", "{message}");
    message
}

fn accept(id: &Value, padding: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "x".repeat(padding)}}})
}

/// The result `ask` answered its POST with (on its stream, after the request).
async fn outcome(stream: &mut Listening) -> Value {
    let rest = stream.rest().await;
    let last = rest.last().unwrap_or_else(|| panic!("a response: {rest:?}"));
    last["result"]["structuredContent"].clone()
}

#[tokio::test]
async fn one_principal_past_its_sessions_is_429_and_another_is_still_admitted() {
    bounded(async {
        let (server, _notifications) =
            start_sessions(LegacySessions::in_process().limits(limits(2, 100, 16))).await;
        for proto in BOTH {
            let first = SessionClient::initialized(server.addr, proto, "alice").await;
            let _second = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut third = SessionClient::new(server.addr, proto, "alice");
            let refused = third.initialize().await;
            refused.assert_error(429, -32600, &json!(1));
            assert!(refused.message().contains("Too many sessions for this client"), "{refused:?}");
            assert!(third.id.is_none(), "no session minted");
            let bob = SessionClient::initialized(server.addr, proto, "bob").await;
            assert_eq!(bob.post(&legacy(2, "ping", json!({}))).await.status, 200);
            assert_eq!(first.delete().await.status, 204);
            assert_eq!(third.initialize().await.status, 200, "alice's place came back");
            for client in [&_second, &bob, &third] {
                assert_eq!(client.delete().await.status, 204);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn past_the_stores_sessions_every_initialize_is_503_until_one_ends() {
    bounded(async {
        let (server, _notifications) =
            start_sessions(LegacySessions::in_process().limits(limits(2, 3, 16))).await;
        let alice = SessionClient::initialized(server.addr, Proto::H1, "alice").await;
        let _alice_too = SessionClient::initialized(server.addr, Proto::H2, "alice").await;
        let _bob = SessionClient::initialized(server.addr, Proto::H1, "bob").await;
        for proto in BOTH {
            let refused = SessionClient::new(server.addr, proto, "carol").initialize().await;
            refused.assert_error(503, -32603, &json!(1));
            assert_eq!(refused.headers[RETRY_AFTER], "5");
        }
        assert_eq!(alice.delete().await.status, 204);
        SessionClient::initialized(server.addr, Proto::H2, "carol").await;
    })
    .await;
}

#[tokio::test]
async fn get_streams_are_bounded_per_client_like_listen_streams() {
    bounded(async {
        let (server, _notifications) =
            start_sessions_with(LegacySessions::in_process(), |b| b.max_listens_per_client(1)).await;
        let alice = SessionClient::initialized(server.addr, Proto::H2, "alice").await;
        let alice_too = SessionClient::initialized(server.addr, Proto::H2, "alice").await;
        let bob = SessionClient::initialized(server.addr, Proto::H2, "bob").await;
        let held = alice.get().await;
        held.assert_stream();
        let mut refused = alice_too.get().await;
        refused.assert_busy().await;
        let bobs = bob.get().await;
        bobs.assert_stream();
        drop((held, bobs));
    })
    .await;
}

#[tokio::test]
async fn requests_waiting_on_one_session_are_bounded_and_another_session_keeps_its_own_room() {
    bounded(async {
        let (server, _notifications) =
            start_sessions(LegacySessions::in_process().limits(limits(16, 100, 2))).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut first = client.stream(&ask(1)).await;
            let mut second = client.stream(&ask(2)).await;
            let (one, two) = (asked(&mut first).await, asked(&mut second).await);
            let third = client.post(&ask(3)).await;
            assert_eq!(third.result()["structuredContent"], json!({"fault": "busy"}), "{third:?}");
            let other = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut elsewhere = other.stream(&ask(4)).await;
            let four = asked(&mut elsewhere).await;
            for (client, asked, stream) in
                [(&client, &one, &mut first), (&client, &two, &mut second), (&other, &four, &mut elsewhere)]
            {
                assert_eq!(client.post(&accept(&asked["id"], 1)).await.status, 202);
                assert_eq!(outcome(stream).await["answer"]["action"], "accept");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn an_unanswered_request_times_out_cancelled_and_a_late_answer_is_refused() {
    bounded(async {
        let sessions = LegacySessions::in_process().answer_wait(Duration::from_millis(300));
        let (server, _notifications) = start_sessions(sessions).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.stream(&ask(1)).await;
            let request = asked(&mut stream).await;
            let rest = stream.rest().await;
            assert_eq!(rest[0]["method"], "notifications/cancelled", "{rest:?}");
            assert_eq!(rest[0]["params"]["requestId"], request["id"]);
            assert_eq!(rest[1]["result"]["structuredContent"], json!({"fault": "timed out"}));
            let late = client.post(&accept(&request["id"], 1)).await;
            assert_eq!((late.status.as_u16(), &late.raw[..]), (400, NOT_AWAITED.as_bytes()));
        }
    })
    .await;
}

#[tokio::test]
async fn an_answer_past_the_bound_is_413_and_its_request_is_told_at_once() {
    bounded(async {
        let (server, _notifications) =
            start_sessions(LegacySessions::in_process().max_answer_bytes(2048)).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.stream(&ask(1)).await;
            let request = asked(&mut stream).await;
            let large = client.post(&accept(&request["id"], 4096)).await;
            large.assert_error(413, -32600, &Value::Null);
            assert_eq!(large.message(), "Answer exceeds 2048 bytes");
            assert_eq!(outcome(&mut stream).await, json!({"fault": "too large"}));
            let again = client.post(&accept(&request["id"], 1)).await;
            assert_eq!(again.raw, NOT_AWAITED, "the request is over");
            // Within the bound, an answer is taken.
            let mut stream = client.stream(&ask(2)).await;
            let request = asked(&mut stream).await;
            assert_eq!(client.post(&accept(&request["id"], 1500)).await.status, 202);
            assert_eq!(
                outcome(&mut stream).await["answer"]["content"]["name"].as_str().map(str::len),
                Some(1500)
            );
        }
    })
    .await;
}

#[tokio::test]
async fn an_answer_for_another_sessions_request_a_guessed_id_or_a_second_answer_is_refused_alike() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let asking = SessionClient::initialized(server.addr, proto, "alice").await;
            let other = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = asking.stream(&ask(1)).await;
            let request = asked(&mut stream).await;
            let id = request["id"].clone();
            let refusals = [
                other.post(&accept(&id, 1)).await,
                asking.post(&accept(&json!("0123456789abcdef0123456789abcdef"), 1)).await,
                asking.post(&accept(&json!(7), 1)).await,
            ];
            for refused in &refusals {
                assert_eq!(
                    (refused.status.as_u16(), &refused.raw[..]),
                    (400, NOT_AWAITED.as_bytes()),
                    "{refused:?}"
                );
            }
            let bob = SessionClient::new(server.addr, proto, "bob")
                .presenting(asking.id.as_deref().expect("an id"));
            assert_eq!(bob.post(&accept(&id, 1)).await.status, 404, "another principal: no such session");
            assert_eq!(asking.post(&accept(&id, 1)).await.status, 202, "its own session's answer");
            assert_eq!(outcome(&mut stream).await["answer"]["action"], "accept");
            let twice = asking.post(&accept(&id, 1)).await;
            assert_eq!((twice.status.as_u16(), &twice.raw[..]), (400, NOT_AWAITED.as_bytes()));
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "declined"}});
            assert_eq!(asking.post(&error).await.raw, NOT_AWAITED, "an error answer is an answer too");
        }
    })
    .await;
}
