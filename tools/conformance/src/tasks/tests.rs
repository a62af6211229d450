//! The fixtures as the suite's `tasks-*` scenarios call them, through the harness's whole server.

use std::sync::Arc;
use std::time::Duration;

use mcp_kernel::testing::TestClient;
use serde_json::{Value, json};

use crate::catalog;
use crate::live::Harness;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The harness, and a client that declares the extension and elicitation (`declares: true`) or
/// neither.
fn started(declares: bool) -> (Arc<Harness>, TestClient) {
    let sealer = catalog::request_state_sealer().expect("randomness for the key");
    let (harness, live) = Harness::start(sealer).expect("the catalog builds");
    let capabilities =
        if declares { json!({"elicitation": {}, "extensions": {TASKS: {}}}) } else { json!({}) };
    (harness, TestClient::new(live).client_capabilities(capabilities))
}

async fn call(client: &TestClient, name: &str, arguments: Value) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    client.request("tools/call", params).await.expect("tools/call is answered").result
}

async fn task_request(client: &TestClient, method: &str, params: Value) -> Value {
    client.request(method, params).await.unwrap_or_else(|e| panic!("{method}: {e:?}")).result
}

/// Polls `tasks/get` (every 50 ms, at most 10 s) until `done` holds for the task.
async fn until(client: &TestClient, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..200 {
        let task = task_request(client, "tasks/get", json!({"taskId": id})).await;
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} did not get there within 10 s");
}

/// An empty acknowledgment: `resultType: "complete"`, and no member of a task (`_meta` aside).
fn assert_ack(answer: &Value) {
    assert_eq!(answer["resultType"], "complete", "{answer}");
    for member in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(answer.get(member).is_none(), "{member} in {answer}");
    }
}

fn terminal(task: &Value) -> bool {
    matches!(task["status"].as_str(), Some("completed" | "failed" | "cancelled"))
}

fn created(answer: &Value) -> String {
    assert_eq!(answer["resultType"], "task", "{answer}");
    answer["taskId"].as_str().expect("a task id").to_owned()
}

#[tokio::test]
async fn every_fixture_the_tasks_scenarios_call_is_listed() {
    let (_harness, client) = started(true);
    let listed: Vec<String> =
        client.list_tools().await.expect("tools/list").into_iter().map(|t| t.name).collect();
    for name in super::TOOLS {
        assert!(listed.iter().any(|l| l == name), "{name} is not listed: {listed:?}");
    }
    assert_eq!(listed[0], "test_simple_text", "the suite calls tools[0]");
}

#[tokio::test]
async fn greet_answers_at_once_and_is_never_a_task() {
    let (_harness, client) = started(true);
    let hint = json!({"name": "greet", "arguments": {"name": "sep-2243"}, "task": {"ttl": 60000}});
    let answer = client.request("tools/call", hint).await.expect("answered").result;
    assert_eq!(answer["resultType"], "complete", "{answer}");
    assert_eq!(answer["content"][0]["text"], "Hello, sep-2243!");
    assert!(answer.get("taskId").is_none());
}

#[tokio::test]
async fn slow_compute_of_a_second_becomes_a_task_that_settles_cancelled_when_cancelled() {
    let (_harness, client) = started(true);
    let id = created(&call(&client, "slow_compute", json!({"seconds": 1, "label": "quick"})).await);
    let done = until(&client, &id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Computed quick in 1 s.");

    let id = created(&call(&client, "slow_compute", json!({"seconds": 60, "label": "long"})).await);
    let ack = task_request(&client, "tasks/cancel", json!({"taskId": id})).await;
    assert_ack(&ack);
    let done = until(&client, &id, terminal).await;
    assert_eq!(done["status"], "cancelled", "{done}");
}

#[tokio::test]
async fn slow_compute_of_zero_seconds_is_answered_without_a_task_and_so_is_a_client_without_the_extension() {
    let (_harness, client) = started(true);
    let answer = call(&client, "slow_compute", json!({"seconds": 0, "label": "instant"})).await;
    assert_eq!(answer["resultType"], "complete", "{answer}");
    let (_harness, plain) = started(false);
    let answer = call(&plain, "slow_compute", json!({"seconds": 0.2})).await;
    assert_eq!(answer["resultType"], "complete", "{answer}");
    assert_eq!(answer["content"][0]["text"], "Computed unnamed in 0.2 s.");
}

#[tokio::test]
async fn failing_job_is_refused_32021_without_the_extension_and_completes_with_is_error_as_a_task() {
    let (_harness, plain) = started(false);
    let refused = plain.request("tools/call", json!({"name": "failing_job", "arguments": {}})).await;
    let refused = refused.expect_err("a tool that runs only as a task");
    let error = refused.rpc().expect("a JSON-RPC error");
    assert_eq!(error.code, -32021);
    let data = serde_json::to_value(&error.data).expect("data");
    assert_eq!(data["requiredCapabilities"]["extensions"][TASKS], json!({}), "{data}");

    let (_harness, client) = started(true);
    let id = created(&call(&client, "failing_job", json!({})).await);
    let done = until(&client, &id, terminal).await;
    assert_eq!(done["status"], "completed", "a tool error is no protocol error: {done}");
    assert_eq!(done["result"]["isError"], true);
}

#[tokio::test]
async fn protocol_error_job_fails_its_task_with_32603_and_no_result() {
    let (_harness, client) = started(true);
    let id = created(&call(&client, "protocol_error_job", json!({})).await);
    let done = until(&client, &id, terminal).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["code"], -32603);
    assert!(done["error"]["message"].is_string());
    assert!(done.get("result").is_none());
}

#[tokio::test]
async fn confirm_delete_is_a_task_in_input_required_then_completes_on_tasks_update() {
    let (_harness, client) = started(true);
    let answer = call(&client, "confirm_delete", json!({"filename": "a.txt"})).await;
    let id = created(&answer);
    assert!(answer.get("inputRequests").is_none() && answer.get("requestState").is_none(), "{answer}");
    let asking = until(&client, &id, |t| t["status"] == "input_required" || terminal(t)).await;
    let requests = asking["inputRequests"].as_object().expect("input requests");
    assert_eq!(requests.len(), 1, "{asking}");
    let (key, request) = requests.iter().next().expect("one");
    assert_eq!(request["method"], "elicitation/create");
    let ignored = json!({"taskId": id, "inputResponses": {"unknown-key": {"ignored": true}}});
    assert_ack(&task_request(&client, "tasks/update", ignored).await);
    let answers =
        json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}});
    assert_ack(&task_request(&client, "tasks/update", answers).await);
    let done = until(&client, &id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt.");
}

#[tokio::test]
async fn multi_input_keeps_only_the_unanswered_key_after_a_partial_update() {
    let (_harness, client) = started(true);
    let id = created(&call(&client, "multi_input", json!({})).await);
    let asking =
        until(&client, &id, |t| terminal(t) || t["inputRequests"].as_object().is_some_and(|r| r.len() >= 2))
            .await;
    let keys: Vec<String> = asking["inputRequests"].as_object().expect("requests").keys().cloned().collect();
    assert_eq!(keys.len(), 2, "{asking}");
    let answer = json!({"action": "accept", "content": {"name": "partial-1", "confirm": true}});
    let first = json!({"taskId": id, "inputResponses": {keys[0].clone(): answer}});
    assert_ack(&task_request(&client, "tasks/update", first).await);
    let partial = task_request(&client, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(partial["status"], "input_required", "{partial}");
    let left: Vec<&String> = partial["inputRequests"].as_object().expect("requests").keys().collect();
    assert_eq!(left, [&keys[1]]);
    let second = json!({"taskId": id, "inputResponses": {keys[1].clone(): answer}});
    task_request(&client, "tasks/update", second).await;
    let done = until(&client, &id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Answered: name partial-1, go on true.");
}

#[tokio::test]
async fn test_tool_with_task_asks_synchronously_then_greets_the_gathered_name_from_a_task() {
    let (_harness, client) = started(true);
    let first = call(&client, "test_tool_with_task", json!({})).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none());
    let key = first["inputRequests"].as_object().and_then(|r| r.keys().next().cloned()).expect("a request");
    let retry = json!({"name": "test_tool_with_task", "arguments": {},
        "inputResponses": {key: {"action": "accept", "content": {"name": "Alice"}}},
        "requestState": first["requestState"]});
    let second = client.request("tools/call", retry).await.expect("the retry is answered").result;
    let id = created(&second);
    assert!(second.get("requestState").is_none() && second.get("inputRequests").is_none(), "{second}");
    let done = until(&client, &id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Alice"), "{text}");
}

#[tokio::test]
async fn a_task_created_before_a_trigger_rebuilds_the_server_is_answered_after_it() {
    let (_harness, client) = started(true);
    let id = created(&call(&client, "slow_compute", json!({"seconds": 60, "label": "kept"})).await);
    let trigger = call(&client, catalog::TOOL_TRIGGER, json!({})).await;
    assert_eq!(trigger["content"][0]["text"], "test_dynamic_tool is now listed.");
    let task = task_request(&client, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(task["status"], "working", "{task}");
    assert_ack(&task_request(&client, "tasks/cancel", json!({"taskId": id})).await);
    assert_eq!(until(&client, &id, terminal).await["status"], "cancelled");
}
