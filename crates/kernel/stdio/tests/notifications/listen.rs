//! `subscriptions/listen` on stdio, through the real pipes of a spawned server.

use serde_json::{Value, json};

use crate::process::{Server, announce, call, cancel, listen, method, modern, tag};

const ACK: &str = "notifications/subscriptions/acknowledged";
const TOOLS_CHANGED: &str = "notifications/tools/list_changed";
const UPDATED: &str = "notifications/resources/updated";
const RESOURCES_CHANGED: &str = "notifications/resources/list_changed";

/// Reads `n` lines.
fn lines(server: &mut Server, n: usize) -> Vec<Value> {
    (0..n).map(|_| server.expect()).collect()
}

/// The notifications among `lines` tagged `id`, by method.
fn tagged<'a>(lines: &'a [Value], id: &Value) -> Vec<&'a str> {
    lines.iter().filter(|line| tag(line) == Some(id)).filter_map(|line| method(line)).collect()
}

/// Opens a listen and returns its acknowledgment, which must be the first line tagged with its id.
fn open(server: &mut Server, id: Value, filter: Value) -> Value {
    server.send(&listen(id.clone(), filter));
    let (ack, before) = server.until(|line| tag(line) == Some(&id));
    assert!(before.is_empty(), "nothing else was written meanwhile: {before:?}");
    assert_eq!(method(&ack), Some(ACK), "the first line of a listen is its acknowledgment: {ack}");
    ack
}

#[test]
fn a_listen_is_acknowledged_first_with_its_tag_and_the_honoured_filter() {
    let mut server = Server::start(&[]);
    let filter =
        json!({"toolsListChanged": true, "resourceSubscriptions": ["demo://config", "demo://unlisted"]});
    let ack = open(&mut server, json!("listen-1"), filter);
    assert_eq!(
        ack,
        json!({"jsonrpc": "2.0", "method": ACK, "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"},
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["demo://config"]}}})
    );
    // A numeric id tags as a number.
    let ack = open(&mut server, json!(7), json!({"toolsListChanged": true}));
    assert_eq!(tag(&ack), Some(&json!(7)));
    server.send(&announce(1, "tools", None));
    let got = lines(&mut server, 3);
    let tools_changed = |id: Value| {
        json!({"jsonrpc": "2.0", "method": TOOLS_CHANGED,
               "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}})
    };
    assert!(got.contains(&tools_changed(json!("listen-1"))), "{got:?}");
    assert!(got.contains(&tools_changed(json!(7))), "{got:?}");
    assert!(got.iter().any(|line| line["id"] == 1 && line.get("result").is_some()), "{got:?}");
}

#[test]
fn two_listens_interleave_their_tagged_notifications_with_other_answers() {
    let mut server = Server::start(&[]);
    open(&mut server, json!("a"), json!({"toolsListChanged": true}));
    open(&mut server, json!("b"), json!({"toolsListChanged": true, "resourcesListChanged": true}));
    server.send(&modern(1, "tools/list"));
    server.send(&announce(2, "tools", None));
    server.send(&announce(3, "resources", None));
    server.send(&modern(4, "tools/list"));
    let got = lines(&mut server, 7);
    let answered: Vec<i64> =
        got.iter().filter(|l| method(l).is_none()).filter_map(|l| l["id"].as_i64()).collect();
    assert_eq!(answered.len(), 4, "every request is answered among the notifications: {got:?}");
    assert!(got.iter().any(|l| l["id"] == 1 && l["result"]["tools"].is_array()), "{got:?}");
    assert_eq!(tagged(&got, &json!("a")), [TOOLS_CHANGED]);
    assert_eq!(tagged(&got, &json!("b")), [TOOLS_CHANGED, RESOURCES_CHANGED], "in announcement order");
    server.expect_quiet();
}

#[test]
fn a_listen_is_sent_only_the_kinds_and_uris_it_asked_for() {
    let mut server = Server::start(&[]);
    open(&mut server, json!("tools"), json!({"toolsListChanged": true}));
    let ack = open(&mut server, json!("config"), json!({"resourceSubscriptions": ["demo://config"]}));
    assert_eq!(ack["params"]["notifications"], json!({"resourceSubscriptions": ["demo://config"]}));
    // Nobody asked for prompts, another uri, or the resources list.
    server.send(&announce(1, "prompts", None));
    server.send(&announce(2, "updated", Some("demo://notes/x")));
    server.send(&announce(3, "resources", None));
    // Then one change for each: the feed keeps announcement order, so each listen's first line is it.
    server.send(&announce(4, "updated", Some("demo://config")));
    server.send(&announce(5, "tools", None));
    let got = lines(&mut server, 7);
    assert_eq!(tagged(&got, &json!("tools")), [TOOLS_CHANGED], "{got:?}");
    assert_eq!(tagged(&got, &json!("config")), [UPDATED], "{got:?}");
    let update = got.iter().find(|line| tag(line) == Some(&json!("config"))).expect("the update");
    assert_eq!(update["params"]["uri"], "demo://config");
    server.expect_quiet();
}

#[test]
fn a_cancelled_listen_gets_no_further_line_while_another_keeps_its_notifications() {
    let mut server = Server::start(&[]);
    open(&mut server, json!("gone"), json!({"toolsListChanged": true}));
    open(&mut server, json!("kept"), json!({"toolsListChanged": true}));
    server.send(&cancel(json!("gone")));
    server.send(&announce(1, "tools", None));
    server.send(&announce(2, "tools", None));
    let got = lines(&mut server, 4);
    assert_eq!(tagged(&got, &json!("kept")), [TOOLS_CHANGED, TOOLS_CHANGED], "{got:?}");
    assert_eq!(tagged(&got, &json!("gone")), Vec::<&str>::new(), "{got:?}");
    server.expect_quiet();
    // Not even a completion at the drain: a cancelled listen is over.
    server.close();
    let (rest, status) = server.rest_and_exit();
    assert!(status.success(), "{status}");
    assert_eq!(rest.iter().map(tag).collect::<Vec<_>>(), [Some(&json!("kept"))], "{rest:?}");
}

#[test]
fn listens_past_the_cap_are_refused_while_requests_are_still_answered() {
    // One request place only: were listens holding request places, nothing more would be read.
    let mut server = Server::start(&["--max-in-flight", "1"]);
    for n in 0..16 {
        open(&mut server, json!(format!("listen-{n}")), json!({"toolsListChanged": true}));
    }
    server.send(&listen(json!("one-too-many"), json!({"toolsListChanged": true})));
    let refused = server.expect();
    assert_eq!(
        refused,
        json!({"jsonrpc": "2.0", "id": "one-too-many", "error": {
            "code": -32000,
            "message": "Too many open subscriptions/listen streams on this connection",
            "data": {"maxListens": 16}}})
    );
    server.send(&modern(1, "tools/list"));
    let listed = server.expect();
    assert_eq!(listed["id"], 1, "a request is answered with every listen place taken: {listed}");
    assert!(listed["result"]["tools"].is_array());
    // A cancellation frees its place before the next line is read.
    server.send(&cancel(json!("listen-3")));
    open(&mut server, json!("in-its-place"), json!({"toolsListChanged": true}));
    server.send(&listen(json!("again-too-many"), json!({"toolsListChanged": true})));
    assert_eq!(server.expect()["error"]["code"], -32000);
}

#[test]
fn a_smaller_cap_is_honoured_at_its_own_arithmetic() {
    let mut server = Server::start(&["--max-listens", "2"]);
    open(&mut server, json!(1), json!({"toolsListChanged": true}));
    open(&mut server, json!(2), json!({"toolsListChanged": true}));
    server.send(&listen(json!(3), json!({"toolsListChanged": true})));
    let refused = server.expect();
    assert_eq!((&refused["id"], &refused["error"]["data"]), (&json!(3), &json!({"maxListens": 2})));
}

#[test]
fn a_listen_whose_id_is_already_open_is_refused() {
    let mut server = Server::start(&[]);
    open(&mut server, json!("same"), json!({"toolsListChanged": true}));
    server.send(&listen(json!("same"), json!({"resourcesListChanged": true})));
    let refused = server.expect();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], "same");
    // The open one is untouched.
    server.send(&announce(1, "tools", None));
    let got = lines(&mut server, 2);
    assert_eq!(tagged(&got, &json!("same")), [TOOLS_CHANGED], "{got:?}");
}

#[test]
fn a_listen_without_notifications_built_is_acknowledged_empty_and_completed_at_once() {
    let mut server = Server::start(&["--without-notifications"]);
    server.send(&listen(json!("l"), json!({"toolsListChanged": true})));
    let ack = server.expect();
    assert_eq!(
        ack,
        json!({"jsonrpc": "2.0", "method": ACK, "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "l"}, "notifications": {}}})
    );
    let completion = server.expect();
    assert_eq!(completion["id"], "l");
    assert_eq!(completion["result"]["resultType"], "complete");
    assert_eq!(tag(&completion), Some(&json!("l")), "the completion is tagged: {completion}");
    server.send(&announce(1, "tools", None));
    assert_eq!(server.expect()["id"], 1);
    server.expect_quiet();
}

#[test]
fn a_malformed_listen_gets_the_cores_answer_and_frees_its_place() {
    let mut server = Server::start(&["--max-listens", "1"]);
    let missing_filter = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                                "params": {"_meta": crate::process::meta()}});
    server.send(&missing_filter);
    let refused = server.expect();
    assert_eq!((&refused["id"], &refused["error"]["code"]), (&json!(1), &json!(-32602)), "{refused}");
    open(&mut server, json!(2), json!({"toolsListChanged": true}));
}

#[test]
fn a_swapped_live_server_tells_listeners_the_tools_list_changed() {
    let mut server = Server::start(&[]);
    open(&mut server, json!("l"), json!({"toolsListChanged": true, "resourcesListChanged": true}));
    server.send(&call(1, "swap", json!({})));
    let got = lines(&mut server, 2);
    assert_eq!(tagged(&got, &json!("l")), [TOOLS_CHANGED], "only the list that changed: {got:?}");
    server.send(&modern(2, "tools/list"));
    let listed = server.answer(&json!(2));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"added"), "{names:?}");
    server.expect_quiet();
}
