//! `2025-11-25` sessions on stdio: the connection is the session; after `initialize`, list changes and
//! updates of subscribed uris are written untagged.

use serde_json::{Value, json};

use crate::process::{Server, announce, method, tag};

/// A legacy request (no `_meta`).
fn bare(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Initializes the session and returns the `initialize` result.
fn initialize(server: &mut Server) -> Value {
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "legacy", "version": "1"}});
    server.send(&bare(100, "initialize", params));
    let result = server.answer(&json!(100));
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    result
}

/// Reads `n` lines.
fn lines(server: &mut Server, n: usize) -> Vec<Value> {
    (0..n).map(|_| server.expect()).collect()
}

/// The notifications among `lines`, in order.
fn notifications(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|line| method(line).is_some()).collect()
}

#[test]
fn legacy_initialize_advertises_list_changed_and_subscribe_with_notifications_on() {
    let mut server = Server::start(&[]);
    let initialized = initialize(&mut server);
    assert_eq!(
        initialized["result"]["capabilities"],
        json!({"tools": {"listChanged": true}, "resources": {"listChanged": true, "subscribe": true},
               "prompts": {"listChanged": true}})
    );
}

#[test]
fn legacy_initialize_advertises_neither_without_notifications() {
    let mut server = Server::start(&["--without-notifications"]);
    let initialized = initialize(&mut server);
    assert_eq!(
        initialized["result"]["capabilities"],
        json!({"tools": {"listChanged": false}, "resources": {"listChanged": false, "subscribe": false},
               "prompts": {"listChanged": false}})
    );
    // And nothing is announced to the session.
    server.send(&announce(1, "tools", None));
    assert_eq!(server.expect()["id"], 1);
    server.expect_quiet();
}

#[test]
fn a_legacy_session_is_told_of_list_changes_untagged_only_after_initialize() {
    let mut server = Server::start(&[]);
    server.send(&announce(1, "tools", None));
    assert_eq!(server.expect()["id"], 1, "nothing is written for a session not yet initialized");
    initialize(&mut server);
    server.send(&announce(2, "tools", None));
    server.send(&announce(3, "prompts", None));
    server.send(&announce(4, "resources", None));
    let got = lines(&mut server, 6);
    let told = notifications(&got);
    assert_eq!(
        told,
        [
            &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            &json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}),
            &json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
        ],
        "every list change, untagged, in order: {got:?}"
    );
    server.expect_quiet();
    assert!(server.seen.iter().all(|line| tag(line).is_none()), "no line is tagged: {:?}", server.seen);
    let tools_changed =
        server.seen.iter().filter(|line| method(line) == Some("notifications/tools/list_changed"));
    assert_eq!(
        tools_changed.count(),
        1,
        "the change announced before initialize is never told: {:?}",
        server.seen
    );
}

#[test]
fn a_subscribed_uri_is_updated_untagged_and_unsubscribe_stops_it() {
    let mut server = Server::start(&[]);
    initialize(&mut server);
    server.send(&bare(1, "resources/subscribe", json!({"uri": "demo://config"})));
    assert_eq!(server.expect(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    // A uri a listed template matches may be subscribed to as well.
    server.send(&bare(2, "resources/subscribe", json!({"uri": "demo://notes/today"})));
    assert_eq!(server.expect(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    server.send(&announce(3, "updated", Some("demo://elsewhere")));
    server.send(&announce(4, "updated", Some("demo://config")));
    let got = lines(&mut server, 3);
    assert_eq!(
        notifications(&got),
        [&json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                 "params": {"uri": "demo://config"}})],
        "only the subscribed uri: {got:?}"
    );
    server.send(&bare(5, "resources/unsubscribe", json!({"uri": "demo://config"})));
    assert_eq!(server.expect(), json!({"jsonrpc": "2.0", "id": 5, "result": {}}));
    server.send(&announce(6, "updated", Some("demo://config")));
    server.send(&announce(7, "updated", Some("demo://notes/today")));
    let got = lines(&mut server, 3);
    assert_eq!(
        notifications(&got),
        [&json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                 "params": {"uri": "demo://notes/today"}})],
        "the unsubscribed uri is no longer told, the other still is: {got:?}"
    );
    server.expect_quiet();
}

#[test]
fn subscribing_to_an_unlisted_uri_is_refused_as_a_missing_resource() {
    let mut server = Server::start(&[]);
    initialize(&mut server);
    server.send(&bare(1, "resources/subscribe", json!({"uri": "demo://secret"})));
    let refused = server.expect();
    assert_eq!((&refused["id"], &refused["error"]["code"]), (&json!(1), &json!(-32002)), "{refused}");
    server.send(&announce(2, "updated", Some("demo://secret")));
    assert_eq!(server.expect()["id"], 2);
    server.expect_quiet();
}

#[test]
fn a_legacy_session_and_a_listen_on_one_connection_are_each_told_in_their_own_form() {
    let mut server = Server::start(&[]);
    initialize(&mut server);
    server.send(&crate::process::listen(json!("l"), json!({"toolsListChanged": true})));
    let (ack, _) = server.until(|line| tag(line) == Some(&json!("l")));
    assert_eq!(method(&ack), Some("notifications/subscriptions/acknowledged"));
    server.send(&announce(1, "tools", None));
    let got = lines(&mut server, 3);
    let told = notifications(&got);
    assert_eq!(told.len(), 2, "{got:?}");
    assert!(told.contains(&&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})));
    assert!(told.iter().any(|line| tag(line) == Some(&json!("l"))), "{got:?}");
}
