//! Change notifications through the core: `subscriptions/listen` (acknowledgment, tags, filter,
//! audience, completion), `LiveServer` announcements and legacy sessions.

use std::time::Duration;

use mcp_kernel_router::notify::{ChangeHub, InProcessHub, Notifications};
use mcp_kernel_router::transport::{Inbound, LegacySession, Listen, LiveServer};
use mcp_kernel_router::visibility::Listed;
use mcp_kernel_router::{Extensions, Server};
use mcp_kernel_wire::Envelope;
use serde_json::{Value, json};

use crate::support::{catalog, dispatch, get_prompt, legacy, modern, read_resource};

const TAG: &str = "io.modelcontextprotocol/subscriptionId";

fn notifying(notifications: Notifications) -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .notifications(notifications)
        .build()
        .expect("the fixture catalog builds")
}

fn listen_message(id: Value, filter: Value) -> Value {
    let mut message = modern(0, "subscriptions/listen", json!({ "notifications": filter }));
    message["id"] = id;
    message
}

async fn open_as(server: &Server, principal: Option<&str>, message: Value) -> Result<Listen, Value> {
    let mut extensions = Extensions::new();
    if let Some(principal) = principal {
        extensions.insert(principal.to_owned());
    }
    let envelope = Envelope::from_value(message).expect("an object");
    let inbound = Inbound::new().extensions(extensions);
    server
        .open_listen(envelope, inbound)
        .await
        .map_err(|handled| handled.response.expect("answered").to_value())
}

async fn open(server: &Server, filter: Value) -> Listen {
    open_as(server, None, listen_message(json!(7), filter)).await.expect("a listen opens")
}

/// The next notification of `listen`, within a second.
async fn next(listen: &mut Listen) -> Option<Value> {
    tokio::time::timeout(Duration::from_secs(1), listen.next())
        .await
        .expect("no notification within a second")
}

/// Whether `listen` yields nothing within 50 ms.
async fn stays_quiet(listen: &mut Listen) -> bool {
    tokio::time::timeout(Duration::from_millis(50), listen.next()).await.is_err()
}

#[tokio::test]
async fn the_acknowledgment_is_tagged_with_the_listen_id_keeping_its_json_type() {
    let server = notifying(Notifications::in_process());
    for id in [json!(7), json!("listen-1")] {
        let listen = open_as(&server, None, listen_message(id.clone(), json!({"toolsListChanged": true})))
            .await
            .unwrap();
        let ack = listen.acknowledgment();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(ack["params"]["_meta"][TAG], id);
        assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
        let completion = listen.completion().to_value();
        assert_eq!(completion["id"], id);
        assert_eq!(completion["result"]["_meta"][TAG], id);
        assert_eq!(completion["result"]["resultType"], "complete");
        assert!(completion["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    }
}

#[tokio::test]
async fn a_server_without_notifications_acknowledges_empty_and_completes_at_once() {
    let server = crate::support::server();
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["test://a"]});
    let mut listen = open(&server, filter).await;
    assert_eq!(listen.acknowledgment()["params"]["notifications"], json!({}));
    assert!(listen.completes_at_once());
    assert_eq!(next(&mut listen).await, None);
}

#[tokio::test]
async fn listen_is_never_method_not_found_through_handle_either() {
    let server = crate::support::server();
    let answer = crate::support::send(&server, listen_message(json!(3), json!({}))).await;
    assert_eq!(answer["result"]["_meta"][TAG], 3, "{answer}");
}

#[tokio::test]
async fn a_listen_id_longer_than_the_bound_is_invalid_params_without_echo() {
    let server = notifying(Notifications::in_process());
    let long = "x".repeat(mcp_kernel_router::notify::MAX_LISTEN_ID_BYTES + 1);
    let refused = open_as(&server, None, listen_message(json!(long), json!({}))).await.unwrap_err();
    assert_eq!(refused["error"]["code"], -32602);
    assert!(!refused["error"]["message"].as_str().unwrap().contains("xxx"));
    let at_bound = "x".repeat(mcp_kernel_router::notify::MAX_LISTEN_ID_BYTES);
    assert!(open_as(&server, None, listen_message(json!(at_bound), json!({}))).await.is_ok());
}

#[tokio::test]
async fn through_handle_a_listen_honours_nothing_since_no_stream_stays_open() {
    let server = notifying(Notifications::in_process());
    let answer =
        crate::support::send(&server, listen_message(json!(4), json!({"toolsListChanged": true}))).await;
    assert_eq!(answer["result"]["_meta"][TAG], 4, "{answer}");
    let sink_saw = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = sink_saw.clone();
    let sink: mcp_kernel_router::transport::NotificationSink =
        std::sync::Arc::new(move |message| seen.lock().unwrap().push(message));
    let envelope = Envelope::from_value(listen_message(json!(5), json!({"toolsListChanged": true}))).unwrap();
    server.handle_envelope(envelope, Inbound::new().notifications(sink)).await;
    let acks = sink_saw.lock().unwrap().clone();
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0]["params"]["notifications"], json!({}), "an acknowledgment promising nothing");
}

#[tokio::test]
async fn only_a_listen_that_asks_something_of_a_notifying_server_may_hold_a_stream() {
    let on = notifying(Notifications::in_process());
    let asks = Envelope::from_value(listen_message(json!(1), json!({"toolsListChanged": true}))).unwrap();
    let nothing = Envelope::from_value(listen_message(json!(1), json!({"toolsListChanged": false}))).unwrap();
    assert!(on.may_hold_listen(&asks));
    assert!(!on.may_hold_listen(&nothing));
    assert!(!crate::support::server().may_hold_listen(&asks));
}

#[tokio::test]
async fn a_legacy_subscription_to_an_overlong_uri_is_invalid_params() {
    let server = notifying(Notifications::in_process());
    let (session, _notes) = LegacySession::new();
    send_in(&server, &session, initialize()).await;
    let uri = format!("test://place/{}", "y".repeat(mcp_kernel_router::notify::MAX_SUBSCRIBED_URI_BYTES));
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": uri}});
    let refused = send_in(&server, &session, subscribe).await;
    assert_eq!(refused["error"]["code"], -32602);
    assert!(!refused.to_string().contains("yyyy"));
}

#[tokio::test]
async fn a_malformed_or_legacy_listen_gets_the_answer_any_request_gets() {
    let server = notifying(Notifications::in_process());
    let missing = open_as(&server, None, modern(1, "subscriptions/listen", json!({}))).await.unwrap_err();
    assert_eq!(missing["error"]["code"], -32602);
    let bad_flag = listen_message(json!(2), json!({"toolsListChanged": 1}));
    assert_eq!(open_as(&server, None, bad_flag).await.unwrap_err()["error"]["code"], -32602);
    let old = legacy(3, "subscriptions/listen", json!({"notifications": {}}));
    let expected = crate::support::send(&server, old.clone()).await;
    assert_eq!(open_as(&server, None, old).await.unwrap_err(), expected);
    assert_eq!(expected["error"]["code"], -32601);
}

#[tokio::test]
async fn only_the_kinds_asked_for_are_sent_each_tagged() {
    let server = notifying(Notifications::in_process());
    let notifier = server.notifier().expect("built with notifications");
    let mut tools = open(&server, json!({"toolsListChanged": true})).await;
    let mut prompts = open(&server, json!({"promptsListChanged": true})).await;
    notifier.tools_list_changed();
    notifier.prompts_list_changed();
    let told = next(&mut tools).await.unwrap();
    assert_eq!(
        told,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {TAG: 7}}})
    );
    assert!(stays_quiet(&mut tools).await, "a tools listener is not told of prompts");
    assert_eq!(next(&mut prompts).await.unwrap()["method"], "notifications/prompts/list_changed");
    assert!(stays_quiet(&mut prompts).await);
}

#[tokio::test]
async fn unknown_invisible_and_unlisted_uris_are_left_out_of_the_acknowledgment_identically() {
    let hides_b =
        |item: Listed<'_>, _: &mcp_kernel_router::RequestContext| item != Listed::Resource("test://b");
    let server = Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .visibility(hides_b)
        .notifications(Notifications::in_process())
        .build()
        .unwrap();
    let asked = json!({"resourceSubscriptions": ["test://a", "test://b", "test://nope", "test://place/x"]});
    let listen = open(&server, asked).await;
    let honoured = &listen.acknowledgment()["params"]["notifications"];
    assert_eq!(honoured, &json!({"resourceSubscriptions": ["test://a", "test://place/x"]}));
    let hidden = open(&server, json!({"resourceSubscriptions": ["test://b"]})).await;
    let unknown = open(&server, json!({"resourceSubscriptions": ["test://nope"]})).await;
    assert_eq!(hidden.acknowledgment().to_string(), unknown.acknowledgment().to_string());
    assert!(hidden.completes_at_once() && unknown.completes_at_once());
}

#[tokio::test]
async fn a_resource_update_reaches_only_listeners_of_that_uri() {
    let server = notifying(Notifications::in_process());
    let notifier = server.notifier().unwrap();
    let mut a = open(&server, json!({"resourceSubscriptions": ["test://a"]})).await;
    let mut c = open(&server, json!({"resourceSubscriptions": ["test://c"]})).await;
    notifier.resource_updated("test://a");
    let told = next(&mut a).await.unwrap();
    assert_eq!(told["method"], "notifications/resources/updated");
    assert_eq!(told["params"], json!({"_meta": {TAG: 7}, "uri": "test://a"}));
    assert!(stays_quiet(&mut c).await);
}

#[tokio::test]
async fn a_change_for_one_caller_reaches_only_that_callers_listeners() {
    let notifications =
        Notifications::in_process().caller_key(|context| context.principal::<String>().cloned());
    let server = notifying(notifications);
    let notifier = server.notifier().unwrap();
    let filter = json!({"resourcesListChanged": true});
    let mut alice = open_as(&server, Some("alice"), listen_message(json!(1), filter.clone())).await.unwrap();
    let mut bob = open_as(&server, Some("bob"), listen_message(json!(2), filter.clone())).await.unwrap();
    let mut nobody = open_as(&server, None, listen_message(json!(3), filter)).await.unwrap();
    notifier.to_caller("alice").resources_list_changed();
    assert_eq!(next(&mut alice).await.unwrap()["params"]["_meta"][TAG], 1);
    assert!(stays_quiet(&mut bob).await && stays_quiet(&mut nobody).await);
    notifier.resources_list_changed();
    assert!(next(&mut bob).await.is_some() && next(&mut nobody).await.is_some());
}

#[tokio::test]
async fn a_listener_too_far_behind_is_ended_not_skipped() {
    let server = notifying(Notifications::with_hub(InProcessHub::with_capacity(2)));
    let notifier = server.notifier().unwrap();
    let mut listen = open(&server, json!({"toolsListChanged": true})).await;
    for _ in 0..3 {
        notifier.tools_list_changed();
    }
    assert!(next(&mut listen).await.is_some() && next(&mut listen).await.is_some(), "what it holds");
    assert_eq!(next(&mut listen).await, None, "then the stream ends: write the completion");
}

#[tokio::test]
async fn a_live_server_swap_announces_exactly_the_lists_that_changed() {
    let hub: std::sync::Arc<dyn ChangeHub> = std::sync::Arc::new(InProcessHub::new());
    let build = |prompts: bool| {
        let mut listing = catalog();
        if !prompts {
            listing.prompts.pop();
        }
        Server::builder(listing)
            .dispatch(dispatch)
            .resource_reader(read_resource)
            .prompt_reader(get_prompt)
            .notifications(Notifications::with_shared_hub(hub.clone()))
            .build()
            .unwrap()
    };
    let live = LiveServer::new(build(true));
    let all = json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
    let mut listen = open(&live.current(), all).await;
    live.replace(build(true));
    assert!(stays_quiet(&mut listen).await, "an identical catalog announces nothing");
    live.replace(build(false));
    assert_eq!(next(&mut listen).await.unwrap()["method"], "notifications/prompts/list_changed");
    assert!(stays_quiet(&mut listen).await, "only prompts changed");
}

#[tokio::test]
async fn discover_advertises_changes_only_with_notifications() {
    let discover = modern(1, "server/discover", json!({}));
    let on = crate::support::send(&notifying(Notifications::in_process()), discover.clone()).await;
    let capabilities = &on["result"]["capabilities"];
    assert_eq!(capabilities["tools"]["listChanged"], true);
    assert_eq!(capabilities["prompts"]["listChanged"], true);
    assert_eq!(capabilities["resources"], json!({"listChanged": true, "subscribe": true}));
    let off = crate::support::send(&crate::support::server(), discover).await;
    assert_eq!(off["result"]["capabilities"]["tools"]["listChanged"], false);
    assert_eq!(off["result"]["capabilities"]["resources"]["subscribe"], false);
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

async fn send_in(server: &Server, session: &LegacySession, message: Value) -> Value {
    let envelope = Envelope::from_value(message).unwrap();
    let handled = server.handle_envelope(envelope, Inbound::new().session(session)).await;
    handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_legacy_session_is_told_from_initialized_on_of_list_changes_and_subscribed_uris_untagged() {
    let server = notifying(Notifications::in_process());
    let notifier = server.notifier().unwrap();
    let (session, mut notes) = LegacySession::new();
    let answer = send_in(&server, &session, initialize()).await;
    assert_eq!(
        answer["result"]["capabilities"]["resources"],
        json!({"listChanged": true, "subscribe": true})
    );
    notifier.prompts_list_changed();
    let early = tokio::time::timeout(Duration::from_millis(50), notes.next()).await;
    assert!(early.is_err(), "nothing is sent before notifications/initialized");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send_in(&server, &session, initialized).await, Value::Null);
    let held = tokio::time::timeout(Duration::from_secs(1), notes.next()).await.unwrap().unwrap();
    assert_eq!(held["method"], "notifications/prompts/list_changed", "held until initialized, not lost");
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "test://a"}});
    assert_eq!(send_in(&server, &session, subscribe).await["result"], json!({}));
    let unknown =
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "test://zz"}});
    assert_eq!(send_in(&server, &session, unknown).await["error"]["code"], -32002);
    notifier.resource_updated("test://c");
    notifier.resource_updated("test://a");
    notifier.tools_list_changed();
    let first = tokio::time::timeout(Duration::from_secs(1), notes.next()).await.unwrap().unwrap();
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://a"}})
    );
    let second = tokio::time::timeout(Duration::from_secs(1), notes.next()).await.unwrap().unwrap();
    assert_eq!(second, json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    let unsubscribe =
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/unsubscribe", "params": {"uri": "test://a"}});
    assert_eq!(send_in(&server, &session, unsubscribe).await["result"], json!({}));
    notifier.resource_updated("test://a");
    assert!(tokio::time::timeout(Duration::from_millis(50), notes.next()).await.is_err());
}

#[tokio::test]
async fn without_a_session_legacy_initialize_advertises_no_changes_and_subscribe_stays_refused() {
    let server = notifying(Notifications::in_process());
    let answer = crate::support::send(&server, initialize()).await;
    assert_eq!(answer["result"]["capabilities"]["tools"]["listChanged"], false);
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "test://a"}});
    assert_eq!(crate::support::send(&server, subscribe).await["error"]["code"], -32601);
    let modern_subscribe = modern(3, "resources/subscribe", json!({"uri": "test://a"}));
    let (session, _notes) = LegacySession::new();
    assert_eq!(send_in(&server, &session, modern_subscribe).await["error"]["code"], -32601);
}
