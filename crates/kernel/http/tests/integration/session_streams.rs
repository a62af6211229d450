//! The streams of a legacy session through a real listener, over HTTP/1.1 and HTTP/2: the GET stream
//! (list changes, updates of subscribed uris only, keep-alives, one per session, ended with its
//! session), `logging/setLevel` scoped to its session, and concurrent POST streams each carrying its
//! own server-to-client request and answer.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::{AllowedOrigins, Authorize, LegacySessions};
use mcp_kernel_router::notify::Notifications;

/// The session fixture's builder, as a test tweaks it.
type Builder = mcp_kernel_http::Builder<AllowedOrigins, Authorize>;

/// The next message of `stream` (comments skipped), which must come within a second or two.
async fn next(stream: &mut Listening) -> Value {
    tokio::time::timeout(Duration::from_secs(2), stream.next_message())
        .await
        .expect("a message in time")
        .expect("the stream is open")
}

/// Whether `stream` carries no message for 100 ms (keep-alive comments aside).
async fn quiet(stream: &mut Listening) -> bool {
    tokio::time::timeout(Duration::from_millis(100), stream.next_message()).await.is_err()
}

fn updated(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
}

#[tokio::test]
async fn the_get_stream_carries_list_changes_and_updates_of_subscribed_uris_only() {
    bounded(async {
        let (server, notifications) = start_sessions(LegacySessions::in_process()).await;
        let notifier = notifications.notifier();
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.get().await;
            stream.assert_stream();
            let subscribe = legacy(2, "resources/subscribe", json!({"uri": "test://a"}));
            assert_eq!(client.post(&subscribe).await.result(), &json!({}));
            let hidden = legacy(3, "resources/subscribe", json!({"uri": "test://nowhere"}));
            client.post(&hidden).await.assert_error(200, -32002, &json!(3));
            notifier.resource_updated("test://b");
            notifier.resource_updated("test://a");
            notifier.tools_list_changed();
            assert_eq!(next(&mut stream).await, updated("test://a"), "only the subscribed uri");
            assert_eq!(
                next(&mut stream).await,
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            );
            notifier.to_caller("bob").prompts_list_changed();
            assert!(quiet(&mut stream).await, "bob's change is not alice's");
            let unsubscribe = legacy(4, "resources/unsubscribe", json!({"uri": "test://a"}));
            assert_eq!(client.post(&unsubscribe).await.result(), &json!({}));
            notifier.resource_updated("test://a");
            assert!(quiet(&mut stream).await, "an unsubscribe stops the updates");
            notifier.to_caller("alice").resources_list_changed();
            assert_eq!(next(&mut stream).await["method"], "notifications/resources/list_changed");
        }
    })
    .await;
}

#[tokio::test]
async fn the_get_stream_writes_keep_alives_and_ends_when_its_session_is_deleted() {
    bounded(async {
        let keep_alive = Duration::from_millis(100);
        let (server, _notifications) =
            start_sessions_with(LegacySessions::in_process(), |b| b.listen_keep_alive(keep_alive)).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut stream = client.get().await;
            stream.assert_stream();
            let event = stream.next_event_within(Duration::from_secs(2)).await;
            assert_eq!(event, Some(Event::Comment("keep-alive".into())));
            assert_eq!(client.delete().await.status, 204);
            let (messages, _) = stream.messages_until_cut(Duration::from_secs(2)).await;
            assert!(messages.is_empty(), "the stream ends with its session: {messages:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_newer_get_stream_of_a_session_replaces_the_older_so_no_message_goes_on_two() {
    bounded(async {
        let (server, notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let mut older = client.get().await;
            older.assert_stream();
            let mut newer = client.get().await;
            newer.assert_stream();
            let (messages, _) = older.messages_until_cut(Duration::from_secs(2)).await;
            assert!(messages.is_empty(), "the older stream ended: {messages:?}");
            notifications.notifier().tools_list_changed();
            assert_eq!(next(&mut newer).await["method"], "notifications/tools/list_changed");
        }
    })
    .await;
}

#[tokio::test]
async fn a_newer_get_stream_on_another_instance_silences_the_older_so_a_change_is_delivered_once() {
    bounded(async {
        // Two instances sharing one store and one hub, as two processes share Redis.
        let (sessions, notifications) = (LegacySessions::in_process(), Notifications::in_process());
        let a = start_instance(sessions.clone(), &notifications, |b| b).await;
        let b = start_instance(sessions, &notifications, |b| b).await;
        for proto in BOTH {
            let on_a = SessionClient::initialized(a.addr, proto, "alice").await;
            let mut older = on_a.get().await;
            older.assert_stream();
            let mut newer = on_a.at(b.addr).get().await;
            newer.assert_stream();
            notifications.notifier().tools_list_changed();
            assert_eq!(next(&mut newer).await["method"], "notifications/tools/list_changed");
            let (messages, _) = older.messages_until_cut(Duration::from_secs(2)).await;
            assert!(messages.is_empty(), "the older stream delivered nothing, and ended: {messages:?}");
            assert!(quiet(&mut newer).await, "delivered once");
            // And back: a GET on the first instance again takes the session's stream over.
            let mut newest = on_a.get().await;
            newest.assert_stream();
            notifications.notifier().prompts_list_changed();
            assert_eq!(next(&mut newest).await["method"], "notifications/prompts/list_changed");
            let (messages, _) = newer.messages_until_cut(Duration::from_secs(2)).await;
            assert!(messages.is_empty(), "{messages:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_get_stream_superseded_on_another_instance_ends_by_itself_at_its_next_check() {
    bounded(async {
        let (sessions, notifications) = (LegacySessions::in_process(), Notifications::in_process());
        let keep_alive = |b: Builder| b.listen_keep_alive(Duration::from_millis(100));
        let a = start_instance(sessions.clone(), &notifications, keep_alive).await;
        let b = start_instance(sessions, &notifications, keep_alive).await;
        for proto in BOTH {
            let on_a = SessionClient::initialized(a.addr, proto, "alice").await;
            let mut older = on_a.get().await;
            older.assert_stream();
            let mut newer = on_a.at(b.addr).get().await;
            newer.assert_stream();
            let (messages, _) = older.messages_until_cut(Duration::from_secs(2)).await;
            assert!(messages.is_empty(), "no change needed: the older ended at a keep-alive: {messages:?}");
            let event = newer.next_event_within(Duration::from_secs(2)).await;
            assert_eq!(event, Some(Event::Comment("keep-alive".into())), "the newer stays open");
        }
    })
    .await;
}

#[tokio::test]
async fn set_level_is_scoped_to_its_session() {
    bounded(async {
        let (server, _notifications) = start_sessions(LegacySessions::in_process()).await;
        let speak = legacy(5, "tools/call", json!({"name": "speak", "arguments": {}}));
        let levels = |messages: Vec<Value>| -> Vec<String> {
            let (logs, rest): (Vec<_>, Vec<_>) =
                messages.into_iter().partition(|m| m["method"] == "notifications/message");
            assert_eq!(rest.len(), 1, "then the response: {rest:?}");
            assert_eq!(rest[0]["result"]["content"][0]["text"], "spoken");
            logs.iter().map(|m| m["params"]["level"].as_str().expect("a level").to_owned()).collect()
        };
        for proto in BOTH {
            let quiet = SessionClient::initialized(server.addr, proto, "alice").await;
            let loud = SessionClient::initialized(server.addr, proto, "alice").await;
            let set = legacy(4, "logging/setLevel", json!({"level": "warning"}));
            assert_eq!(quiet.post(&set).await.raw, r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
            let mut stream = quiet.stream(&speak).await;
            stream.assert_stream();
            assert_eq!(levels(stream.rest().await), ["warning", "error"], "the level the session set");
            let mut stream = loud.stream(&speak).await;
            assert_eq!(levels(stream.rest().await), ["debug", "info", "warning", "error"], "the other's own");
        }
    })
    .await;
}

/// Answers the server-to-client request `asked` (from a POST stream) in `client`'s session.
async fn answer(client: &SessionClient, asked: &Value, name: &str) -> Reply {
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let id = asked["id"].clone();
    assert!(id.as_str().is_some_and(|id| id.len() == 32), "an unguessable id: {asked}");
    let content = json!({"action": "accept", "content": {"name": name}});
    client.post(&json!({"jsonrpc": "2.0", "id": id, "result": content})).await
}

#[tokio::test]
async fn concurrent_post_streams_of_one_session_each_carry_their_own_request_and_answer() {
    bounded(async {
        let (server, notifications) = start_sessions(LegacySessions::in_process()).await;
        for proto in BOTH {
            let client = SessionClient::initialized(server.addr, proto, "alice").await;
            let ask = |id: i64, message: &str| {
                legacy(id, "tools/call", json!({"name": "ask", "arguments": {"message": message}}))
            };
            let mut first = client.stream(&ask(10, "first?")).await;
            let mut second = client.stream(&ask(11, "second?")).await;
            first.assert_stream();
            second.assert_stream();
            let asked_first = next(&mut first).await;
            let asked_second = next(&mut second).await;
            assert_eq!(asked_first["params"]["message"], "first?");
            assert_eq!(asked_second["params"]["message"], "second?");
            assert_ne!(asked_first["id"], asked_second["id"]);
            notifications.notifier().tools_list_changed();
            let delivered = answer(&client, &asked_second, "Bob").await;
            assert_eq!((delivered.status.as_u16(), delivered.raw.len()), (202, 0), "{delivered:?}");
            let done = next(&mut second).await;
            assert_eq!(done["id"], 11);
            assert_eq!(done["result"]["structuredContent"]["answer"]["content"], json!({"name": "Bob"}));
            assert_eq!(answer(&client, &asked_first, "Ann").await.status, 202);
            let done = next(&mut first).await;
            assert_eq!(done["result"]["structuredContent"]["answer"]["content"], json!({"name": "Ann"}));
            assert!(
                first.rest().await.is_empty() && second.rest().await.is_empty(),
                "no list change on a POST stream"
            );
        }
    })
    .await;
}
