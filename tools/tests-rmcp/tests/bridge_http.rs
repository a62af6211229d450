//! The bridge over HTTP with a real client: one `cluster-host` (a child process on 127.0.0.1, legacy
//! sessions on, kept in process: `CLUSTER_LEGACY_SESSIONS=1`, no Redis) serves rmcp's client in its
//! `2025-11-25` lifecycle over Streamable HTTP with a session. Tools written once with
//! `input_required` (`confirm`: one round; `confirm_twice`: two rounds, the second asked with the state
//! the first carried) give the legacy client their final answers — the server asked it
//! `elicitation/create` on the call's stream and it POSTed its answers in its session. The same tool
//! called by a `2026-07-28` request answers `input_required` unchanged, and completes on the retry.
//! rmcp's legacy client subscribed to a resource hears its update on the session's GET stream.

#[path = "proxy/cluster.rs"]
#[allow(dead_code)]
mod cluster;
#[allow(dead_code)]
mod common;
#[path = "sessions/raw.rs"]
#[allow(dead_code)]
mod raw;
#[path = "sessions/user.rs"]
#[allow(dead_code)]
mod user;

use std::time::Duration;

use cluster::{Instance, key};
use raw::{Session, accept, tool_call};
use serde_json::{Value, json};
use user::{Heard, call, close, connect, subscribe, unsubscribe, until_listening};

/// How long a notification may take to arrive once its change is made.
const ARRIVES: Duration = Duration::from_secs(10);

/// How long a notification that must not come is waited for.
const QUIET: Duration = Duration::from_millis(500);

/// The resource `touch` updates.
const URI: &str = "cluster://instance";

/// One `cluster-host`, `solo`, serving legacy clients with sessions in process.
async fn solo() -> (Instance, String) {
    let env = [("CLUSTER_LEGACY_SESSIONS".to_owned(), "1".to_owned())];
    let instance = Instance::start_with("solo", &key(1), &env).await;
    let url = format!("http://{}/mcp", instance.addr);
    (instance, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcps_legacy_client_gets_the_final_answer_of_a_tool_asking_one_round_and_two_over_http() {
    let (_host, url) = solo().await;
    let (client, user) = connect(&url, "alice").await;

    let one = call(&client, "confirm", json!({"item": "lamp"})).await;
    assert_eq!(one, json!({"instance": "solo", "asked_by": "solo", "item": "lamp", "confirmed": true}));
    let two = call(&client, "confirm_twice", json!({"item": "desk"})).await;
    assert_eq!(
        two,
        json!({"instance": "solo", "asked_by": ["solo", "solo"], "item": "desk", "confirmed": true})
    );
    assert_eq!(
        user.asked(),
        [
            "instance solo asks: confirm lamp?",
            "instance solo asks (1 of 2): confirm desk?",
            "instance solo asks (2 of 2): really desk?",
        ]
    );
    close(client).await;
}

/// On the wire, below rmcp: the question goes on the call's own stream with an id of 32 hex digits,
/// the answer POSTed in the session is accepted 202, and the tool's final answer, shaped for
/// `2025-11-25` (no `resultType`), ends the same stream; a second round asks again on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_question_and_the_final_answer_travel_on_the_calls_own_stream() {
    let (_host, url) = solo().await;
    let session = Session::initialize(&url, "alice").await;
    assert_eq!(session.id.len(), 32, "{}", session.id);

    let mut stream = session.open(&url, &tool_call(5, "confirm_twice", json!({"item": "desk"}))).await;
    let mut asked_ids = Vec::new();
    for (round, message) in ["(1 of 2): confirm desk?", "(2 of 2): really desk?"].iter().enumerate() {
        let asked = stream.next().await;
        assert_eq!(asked["method"], "elicitation/create", "round {round}: {asked}");
        assert_eq!(asked["params"]["message"], format!("instance solo asks {message}"), "{asked}");
        assert_eq!(asked["params"]["requestedSchema"]["properties"]["ok"]["type"], "boolean", "{asked}");
        let id = asked["id"].as_str().expect("a string id").to_owned();
        assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "unguessable: {id}");
        assert!(!asked_ids.contains(&id), "a fresh id each round");
        asked_ids.push(id);
        let delivered = session.post(&url, &accept(&asked, true)).await;
        assert_eq!((delivered.status, delivered.body.as_str()), (202, ""), "{delivered:?}");
    }
    let done = stream.next().await;
    assert_eq!(done["id"], 5, "{done}");
    assert!(done["result"].get("resultType").is_none(), "shaped for 2025-11-25: {done}");
    let content = &done["result"]["structuredContent"];
    assert_eq!(
        content,
        &json!({"instance": "solo", "asked_by": ["solo", "solo"], "item": "desk", "confirmed": true})
    );
    assert_eq!(stream.next_within(raw::DEADLINE).await, None, "the stream ends with the response");
    assert_eq!(session.delete(&url).await.status, 204);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_request_to_the_same_tool_gets_input_required_unchanged_over_http() {
    let (_host, url) = solo().await;
    let params = json!({"name": "confirm", "arguments": {"item": "lamp"}});
    let first = raw::modern(&url, "alice", 1, "tools/call", params.clone()).await;
    assert_eq!(first.status, 200, "{first:?}");
    assert_eq!(first.header("mcp-session-id"), None, "a modern request opens no session");
    let answer = first.json();
    assert_eq!(answer["id"], 1, "the answer itself, no question sent before it: {answer}");
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let asked = &result["inputRequests"]["confirm"];
    assert_eq!(asked["method"], "elicitation/create", "{answer}");
    assert_eq!(asked["params"]["message"], "instance solo asks: confirm lamp?", "{answer}");
    let state = result["requestState"].as_str().expect("a sealed state");

    let mut retry = params;
    retry["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    retry["requestState"] = json!(state);
    let second = raw::modern(&url, "alice", 2, "tools/call", retry).await;
    let done = second.json();
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    let content = &done["result"]["structuredContent"];
    assert_eq!(content, &json!({"instance": "solo", "asked_by": "solo", "item": "lamp", "confirmed": true}));
}

/// rmcp's legacy client subscribes to `cluster://instance`; a change made by another client's
/// `touch` reaches it as `notifications/resources/updated` on its GET stream, beside the list change;
/// unsubscribed, the next touch brings the list change alone; subscribed again, the update again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcps_legacy_client_hears_a_subscribed_resources_update_on_its_get_stream() {
    let (_host, url) = solo().await;
    let (listener, heard) = connect(&url, "alice").await;
    let (toucher, _) = connect(&url, "bob").await;
    until_listening(&toucher, &heard).await;
    let updated = Heard::Updated(URI.to_owned());
    let count = |heard: &[Heard], what: &Heard| heard.iter().filter(|h| *h == what).count();

    subscribe(&listener, URI).await;
    call(&toucher, "touch", json!({})).await;
    heard.until(ARRIVES, |h| count(h, &updated) == 1 && count(h, &Heard::ListChanged) == 1).await;

    unsubscribe(&listener, URI).await;
    call(&toucher, "touch", json!({})).await;
    heard.until(ARRIVES, |h| count(h, &Heard::ListChanged) == 2).await;
    let late = heard.heard_within(QUIET, |h| count(h, &updated) > 1).await;
    assert_eq!(late, None, "no update while unsubscribed");

    subscribe(&listener, URI).await;
    call(&toucher, "touch", json!({})).await;
    let all = heard.until(ARRIVES, |h| count(h, &updated) == 2 && count(h, &Heard::ListChanged) == 3).await;
    assert_eq!(all.len(), 5, "nothing else: {all:?}");
    close(toucher).await;
    close(listener).await;
}

/// The raw wire of the same: a session's GET stream carries the update of a subscribed uri, untagged
/// (no `_meta` naming a listen), after the list change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_get_stream_carries_the_update_of_a_subscribed_uri() {
    let (_host, url) = solo().await;
    let session = Session::initialize(&url, "alice").await;
    let mut stream = session.listen(&url).await;
    let subscribe = raw::request(2, "resources/subscribe", json!({"uri": URI}));
    assert_eq!(session.result(&url, &subscribe).await, json!({}));
    let touched = session.result(&url, &tool_call(3, "touch", json!({}))).await;
    assert_eq!(touched["structuredContent"]["instance"], "solo");
    let listed: Value = stream.next().await;
    assert_eq!(listed["method"], "notifications/resources/list_changed", "{listed}");
    let updated = stream.next().await;
    assert_eq!(updated["method"], "notifications/resources/updated", "{updated}");
    assert_eq!(updated["params"]["uri"], URI, "{updated}");
    for message in [&listed, &updated] {
        assert!(
            message.get("id").is_none() && message["params"].get("_meta").is_none(),
            "untagged: {message}"
        );
    }
}
