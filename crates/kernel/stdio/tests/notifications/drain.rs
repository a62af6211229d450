//! Draining a session with listens open: every open listen gets its completion result before the
//! output closes, whether the input ended, `shutdown` was asked, or the host's signal fired.

use serde_json::{Value, json};

use crate::process::{Server, call, listen, method, modern, tag};

/// Opens listens `ids` (tools) and waits for their acknowledgments.
fn open_all(server: &mut Server, ids: &[Value]) {
    for id in ids {
        server.send(&listen(id.clone(), json!({"toolsListChanged": true})));
        let (ack, _) = server.until(|line| tag(line) == Some(id));
        assert_eq!(method(&ack), Some("notifications/subscriptions/acknowledged"));
    }
}

/// Asserts that `lines` hold exactly one completion result for each of `ids`, tagged with it.
fn completed_each(lines: &[Value], ids: &[Value]) {
    for id in ids {
        let completions: Vec<&Value> = lines.iter().filter(|line| &line["id"] == id).collect();
        assert_eq!(completions.len(), 1, "one completion for {id}: {lines:?}");
        let completion = completions[0];
        assert_eq!(completion["result"]["resultType"], "complete", "{completion}");
        assert_eq!(tag(completion), Some(id), "the completion is tagged: {completion}");
        assert_eq!(completion["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "notifying");
    }
}

#[test]
fn every_open_listen_gets_its_completion_when_stdin_closes() {
    let mut server = Server::start(&[]);
    let ids = [json!("a"), json!(2), json!("c")];
    open_all(&mut server, &ids);
    server.close();
    let (rest, status) = server.rest_and_exit();
    assert!(status.success(), "the process exits 0: {status}");
    assert_eq!(rest.len(), 3, "the completions, then the output closes: {rest:?}");
    completed_each(&rest, &ids);
}

#[test]
fn every_open_listen_gets_its_completion_at_shutdown() {
    let mut server = Server::start(&[]);
    let ids = [json!("a"), json!("b")];
    open_all(&mut server, &ids);
    server.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}));
    let (rest, status) = server.rest_and_exit();
    assert!(status.success(), "{status}");
    assert_eq!(rest.len(), 3, "the shutdown answer and the completions: {rest:?}");
    assert!(rest.iter().any(|line| line["id"] == 9 && line["result"] == json!({})), "{rest:?}");
    completed_each(&rest, &ids);
}

#[test]
fn every_open_listen_gets_its_completion_when_the_shutdown_signal_fires() {
    // The grace is long: the completions must come from the drain, not from a cut.
    let mut server = Server::start(&["--grace-ms", "20000"]);
    let ids = [json!("a"), json!("b")];
    open_all(&mut server, &ids);
    // `stop` completes the host's signal; stdin stays open, so only the signal drains the session.
    server.send(&call(1, "stop", json!({})));
    let (rest, status) = server.rest_and_exit();
    assert!(status.success(), "{status}");
    assert!(rest.iter().any(|line| line["id"] == 1 && line.get("result").is_some()), "{rest:?}");
    assert_eq!(rest.len(), 3, "the stop answer and the completions: {rest:?}");
    completed_each(&rest, &ids);
}

#[test]
fn a_request_read_after_the_listens_is_answered_before_the_output_closes() {
    let mut server = Server::start(&[]);
    open_all(&mut server, &[json!("l")]);
    server.send(&modern(1, "tools/list"));
    server.close();
    let (rest, status) = server.rest_and_exit();
    assert!(status.success(), "{status}");
    let ids: Vec<&Value> = rest.iter().map(|line| &line["id"]).collect();
    assert_eq!(ids.len(), 2, "{rest:?}");
    assert!(ids.contains(&&json!(1)) && ids.contains(&&json!("l")), "{rest:?}");
}
