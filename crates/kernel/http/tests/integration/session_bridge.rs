//! The core's bridge through a real listener: a tool that asks for input the `2026-07-28` way
//! (`input_required`) is answered by a `2025-11-25` client of a legacy session — the server's
//! `elicitation/create` on the call's SSE stream, the client's answer POSTed in the session, then the
//! tool's final result on the same stream — and the bridge's refusals where the client cannot answer.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacySessions;

fn greet(id: i64) -> Value {
    legacy(id, "tools/call", json!({"name": "greet", "arguments": {}}))
}

/// The next message of `stream`, within two seconds.
async fn next(stream: &mut Listening) -> Value {
    let message = tokio::time::timeout(Duration::from_secs(2), stream.next_message()).await;
    message.expect("a message in time").expect("the stream is open")
}

#[tokio::test]
async fn a_host_asking_the_2026_way_is_answered_by_a_session_client_through_the_bridge() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.stream(&greet(7)).await;
            stream.assert_stream();
            let asked = next(&mut stream).await;
            assert_eq!(asked["method"], "elicitation/create", "{asked}");
            assert_eq!(asked["params"]["message"], "What is your name?");
            assert!(asked["params"]["requestedSchema"]["properties"]["name"].is_object(), "{asked}");
            assert!(asked["id"].as_str().is_some_and(|id| id.len() == 32), "an unguessable id: {asked}");
            let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ann"}}});
            let delivered = client.post(&answer).await;
            assert_eq!((delivered.status.as_u16(), delivered.raw.len()), (202, 0), "{delivered:?}");
            let done = next(&mut stream).await;
            assert_eq!(done["id"], 7, "{done}");
            assert_eq!(done["result"]["content"][0]["text"], "Hello, Ann!", "{done}");
            assert!(done["result"].get("resultType").is_none(), "legacy-shaped: {done}");
            assert!(stream.rest().await.is_empty(), "the stream ends with the response");
        }
    })
    .await;
}

#[tokio::test]
async fn a_session_that_declared_no_elicitation_is_not_asked_and_gets_minus_32021() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let mut client = SessionClient::new(server.addr, proto, "alice");
            assert_eq!(client.initialize_with(initialize_declaring(json!({}))).await.status, 200);
            client.post(&greet(8)).await.assert_error(200, -32021, &json!(8));
        }
    })
    .await;
}

#[tokio::test]
async fn a_client_that_does_not_answer_in_time_gets_the_bridges_timed_out_fault() {
    bounded(async {
        let sessions = LegacySessions::in_process().answer_wait(Duration::from_millis(300));
        let (server, _notifications) = start_sessions(sessions).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.stream(&greet(9)).await;
            assert_eq!(next(&mut stream).await["method"], "elicitation/create");
            let rest = stream.rest().await;
            assert_eq!(rest[0]["method"], "notifications/cancelled", "{rest:?}");
            assert_eq!(rest[1]["error"]["code"], -32000, "{rest:?}");
            assert_eq!(rest[1]["error"]["data"], json!({"fault": "timedOut"}), "{rest:?}");
        }
    })
    .await;
}
