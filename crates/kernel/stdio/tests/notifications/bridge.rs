//! The bridge over stdio, through the `asking` example as a real process: a `2025-11-25` client that
//! declared elicitation is asked by the server over the same pipes (ids the transport mints), answers,
//! and gets the tool's final answer; a client that never answers is given up at the bound; answers
//! the server did not ask for are ignored, never answered; one connection's questions are its own.

use serde_json::{Value, json};

use crate::process::{Server, cancel, method};

/// A legacy request (no `_meta`).
fn bare(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: i64, tool: &str) -> Value {
    bare(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

/// Starts `asking` with `args` and initializes a legacy session declaring `capabilities`.
fn start(args: &[&str], capabilities: Value) -> Server {
    let mut server = Server::start_example("asking", args);
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                        "clientInfo": {"name": "legacy", "version": "1"}});
    server.send(&bare(100, "initialize", params));
    server.answer(&json!(100));
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server
}

/// The next line, which must be the server's `elicitation/create` request: its id and params.
fn question(server: &mut Server) -> (Value, Value) {
    let line = server.expect();
    assert_eq!(method(&line), Some("elicitation/create"), "{line}");
    let id = line["id"].clone();
    let text = id.as_str().unwrap_or_else(|| panic!("a string id: {line}"));
    assert!(text.starts_with("mcp-kernel-"), "{line}");
    (id, line["params"].clone())
}

fn answer(id: &Value, content: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": content}})
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {response}"))
}

#[test]
fn a_legacy_client_answers_an_elicitation_over_the_pipes_and_gets_the_tools_answer() {
    let mut server = start(&[], json!({"elicitation": {}}));
    server.send(&call(1, "greet"));
    let (id, params) = question(&mut server);
    assert_eq!(
        params,
        json!({"mode": "form", "message": "What is your name?", "requestedSchema":
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}})
    );
    server.send(&answer(&id, json!({"name": "Ada"})));
    let response = server.answer(&json!(1));
    assert_eq!(text(&response), "Hello, Ada!", "{response}");
    server.expect_quiet();
    assert!(
        server.seen.iter().all(|line| line["error"].is_null()),
        "the answer was never answered: {:?}",
        server.seen
    );
}

#[test]
fn two_rounds_ask_twice_with_fresh_ids_and_the_state_carried() {
    let mut server = start(&[], json!({"elicitation": {"form": {}}}));
    server.send(&call(1, "two_step"));
    let (first, _) = question(&mut server);
    server.send(&answer(&first, json!({"name": "Ada"})));
    let (second, params) = question(&mut server);
    assert_ne!(first, second);
    assert_eq!(params["message"], "Favourite colour?");
    server.send(&answer(&second, json!({"colour": "blue"})));
    assert_eq!(text(&server.answer(&json!(1))), "Ada likes blue");
}

#[test]
fn a_modern_request_to_the_same_tool_is_answered_input_required_and_nothing_is_sent() {
    let mut server = start(&[], json!({"elicitation": {}}));
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    server.send(&bare(1, "tools/call", json!({"name": "greet", "_meta": meta})));
    let response = server.expect();
    assert_eq!(response["id"], 1, "no question comes first: {response}");
    assert_eq!(response["result"]["resultType"], "input_required");
    assert_eq!(response["result"]["inputRequests"]["name"]["method"], "elicitation/create");
}

#[test]
fn a_client_that_declared_no_elicitation_is_never_asked() {
    let mut server = start(&[], json!({"roots": {}}));
    server.send(&call(1, "greet"));
    let response = server.expect();
    assert_eq!(response["error"]["code"], -32021, "{response}");
    assert_eq!(response["error"]["data"]["requiredCapabilities"], json!({"elicitation": {"form": {}}}));
}

#[test]
fn a_client_that_never_answers_is_given_up_at_the_bound_and_told_so() {
    let mut server = start(&["--client-wait-ms", "300"], json!({"elicitation": {}}));
    server.send(&call(1, "greet"));
    let (id, _) = question(&mut server);
    let (cancelled, _) = server.until(|line| method(line) == Some("notifications/cancelled"));
    assert_eq!(cancelled["params"]["requestId"], id);
    assert_eq!(cancelled["params"]["reason"], "the server stopped waiting for the answer");
    let response = server.answer(&json!(1));
    assert_eq!(response["error"]["code"], -32000, "{response}");
    assert_eq!(response["error"]["data"], json!({"fault": "timedOut"}));
    // A late answer reaches nothing and is not answered.
    server.send(&answer(&id, json!({"name": "Ada"})));
    server.expect_quiet();
}

#[test]
fn answers_the_server_did_not_ask_for_are_dropped_unanswered() {
    let mut server = start(&[], json!({"elicitation": {}}));
    server.send(&json!({"jsonrpc": "2.0", "id": "mcp-kernel-0000000000000000-1", "result": {}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 7, "result": {"action": "accept"}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -32601, "message": "no"}}));
    server.expect_quiet();
    server.send(&bare(2, "ping", json!({})));
    assert_eq!(server.expect(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}), "the session goes on");
}

#[test]
fn cancelling_the_request_cancels_the_servers_question() {
    let mut server = start(&[], json!({"elicitation": {}}));
    server.send(&call(1, "greet"));
    let (id, _) = question(&mut server);
    server.send(&cancel(json!(1)));
    let cancelled = server.expect();
    assert_eq!(method(&cancelled), Some("notifications/cancelled"), "{cancelled}");
    assert_eq!(cancelled["params"]["requestId"], id);
    server.expect_quiet();
    assert!(server.seen.iter().all(|line| line["id"] != 1), "a cancelled request is never answered");
}

#[test]
fn past_the_bound_of_waiting_questions_a_request_is_answered_busy() {
    let mut server = start(&["--max-client-requests", "1"], json!({"elicitation": {}}));
    server.send(&call(1, "greet"));
    let (id, _) = question(&mut server);
    server.send(&call(2, "greet"));
    let busy = server.answer(&json!(2));
    assert_eq!(busy["error"]["data"], json!({"fault": "busy"}), "{busy}");
    server.send(&answer(&id, json!({"name": "Ada"})));
    assert_eq!(text(&server.answer(&json!(1))), "Hello, Ada!");
}

#[test]
fn the_end_of_input_answers_a_waiting_request_at_once_and_the_process_exits() {
    let mut server = start(&[], json!({"elicitation": {}}));
    server.send(&call(1, "greet"));
    question(&mut server);
    server.close();
    let (rest, status) = server.rest_and_exit();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 1);
    assert_eq!(rest[0]["error"]["data"], json!({"fault": "closed"}));
    assert!(status.success(), "{status}");
}

#[test]
fn one_connections_questions_are_its_own() {
    let mut first = start(&[], json!({"elicitation": {}}));
    let mut second = start(&[], json!({"elicitation": {}}));
    first.send(&call(1, "greet"));
    let (first_id, _) = question(&mut first);
    second.send(&call(1, "greet"));
    let (second_id, _) = question(&mut second);
    assert_ne!(first_id, second_id, "each connection mints its own ids");
    // The first connection's id means nothing on the second.
    second.send(&answer(&first_id, json!({"name": "Mallory"})));
    second.expect_quiet();
    second.send(&answer(&second_id, json!({"name": "Bo"})));
    assert_eq!(text(&second.answer(&json!(1))), "Hello, Bo!");
    first.send(&answer(&first_id, json!({"name": "Ada"})));
    assert_eq!(text(&first.answer(&json!(1))), "Hello, Ada!");
}

#[test]
fn an_answer_is_read_while_every_in_flight_place_waits_on_the_client() {
    // One place, taken by a request waiting for the client; the client sends another request before
    // its answer. The answer must still be read (not held behind the second request until the bound).
    let mut server =
        start(&["--max-in-flight", "1", "--client-wait-ms", "120000"], json!({"elicitation": {}}));
    let started = std::time::Instant::now();
    server.send(&call(1, "greet"));
    let (id, _) = question(&mut server);
    server.send(&bare(2, "ping", json!({})));
    assert_eq!(server.answer(&json!(2))["result"], json!({}), "served on the place the waiting one lent");
    server.send(&answer(&id, json!({"name": "Ada"})));
    assert_eq!(text(&server.answer(&json!(1))), "Hello, Ada!");
    // Two tools waiting at once on one place, each answered in turn.
    server.send(&call(3, "greet"));
    let (first, _) = question(&mut server);
    server.send(&call(4, "greet"));
    let (second, _) = question(&mut server);
    server.send(&answer(&second, json!({"name": "Bo"})));
    assert_eq!(text(&server.answer(&json!(4))), "Hello, Bo!");
    server.send(&answer(&first, json!({"name": "Cy"})));
    assert_eq!(text(&server.answer(&json!(3))), "Hello, Cy!");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

#[test]
fn no_question_is_sent_before_the_client_sends_initialized() {
    let mut server = Server::start_example("asking", &[]);
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                        "clientInfo": {"name": "legacy", "version": "1"}});
    server.send(&bare(100, "initialize", params));
    server.answer(&json!(100));
    server.send(&call(1, "greet"));
    let response = server.expect();
    assert_eq!(response["id"], 1, "no elicitation/create before notifications/initialized: {response}");
    assert_eq!(response["error"]["code"], -32021, "{response}");
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.send(&call(2, "greet"));
    let (id, _) = question(&mut server);
    server.send(&answer(&id, json!({"name": "Ada"})));
    assert_eq!(text(&server.answer(&json!(2))), "Hello, Ada!");
}
