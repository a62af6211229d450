//! `export_notes` as a task, in process: the test client declares the tasks extension (and, or not,
//! elicitation) and drives the task with `tasks/get`, `tasks/update` and `tasks/cancel`.

use std::sync::Arc;
use std::time::Duration;

use mcp_kernel::Server;
use mcp_kernel::testing::TestClient;
use mcp_kernel::wire::ProtocolVersion;
use serde_json::{Value, json};

use crate::export::Pace;
use crate::host::{self, Caller};
use crate::store::Store;

/// What a client that takes tasks and answers forms declares.
fn tasks_and_forms() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// A fast pace: writing takes 200 ms, a call becomes a task after 50 ms.
fn fast() -> Pace {
    Pace { pause: Duration::from_millis(200), threshold: Duration::from_millis(50) }
}

fn notes(pace: Pace) -> Server {
    host::server(&Arc::new(Store::default()), pace).expect("the notes catalog builds")
}

fn client(server: &Server, who: &str, capabilities: Value) -> TestClient {
    TestClient::new(server.clone()).principal(Caller(who.to_owned())).client_capabilities(capabilities)
}

async fn add(client: &TestClient, title: &str, body: &str) {
    let added = client.call_tool("add_note", json!({"title": title, "body": body})).await.expect("answered");
    assert_eq!(added.result.is_error, Some(false), "{:?}", added.result);
}

/// Calls `export_notes` and returns its whole result.
async fn export(client: &TestClient) -> Value {
    let params = json!({"name": "export_notes", "arguments": {}});
    client.request("tools/call", params).await.expect("answered").result
}

/// The task a `CreateTaskResult` names.
fn task_id(created: &Value) -> String {
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().expect("a taskId").to_owned()
}

async fn get(client: &TestClient, id: &str) -> Value {
    client.request("tasks/get", json!({"taskId": id})).await.expect("answered").result
}

/// Polls until the task is `status` or terminal: at most 500 polls, 10 ms apart.
async fn until(client: &TestClient, id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let got = get(client, id).await;
        let now = got["status"].as_str().unwrap_or_default().to_owned();
        if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached {status}")
}

/// Answers the task's format question.
async fn answer(client: &TestClient, id: &str, response: Value) {
    let update = json!({"taskId": id, "inputResponses": {"format": response}});
    client.request("tasks/update", update).await.expect("answered");
}

#[tokio::test]
async fn an_export_of_no_notes_is_answered_at_once_without_a_task() {
    let server = notes(fast());
    let answered = export(&client(&server, "alice", tasks_and_forms())).await;
    assert_eq!(answered["resultType"], "complete", "{answered}");
    assert_eq!(answered["content"][0]["text"], "# Notes\n\nYou have no notes.\n");
}

#[tokio::test]
async fn the_format_is_asked_through_the_task_and_the_answer_picks_the_document() {
    let server = notes(fast());
    let alice = client(&server, "alice", tasks_and_forms());
    add(&alice, "Milk", "Buy milk").await;
    add(&alice, "Bread", "Rye").await;
    let id = task_id(&export(&alice).await);
    let asked = until(&alice, &id, "input_required").await;
    assert_eq!(asked["statusMessage"], "waiting for the export's format", "{asked}");
    let question = &asked["inputRequests"]["format"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert_eq!(
        question["params"]["requestedSchema"]["properties"]["format"]["enum"],
        json!(["markdown", "plain"])
    );
    answer(&alice, &id, json!({"action": "accept", "content": {"format": "plain"}})).await;
    let done = until(&alice, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["statusMessage"], "writing 2 notes");
    assert_eq!(done["result"]["content"][0]["text"], "Notes\n\nMilk\nBuy milk\n\nBread\nRye\n");
}

#[tokio::test]
async fn a_declined_format_completes_the_task_with_a_tool_error_and_writes_nothing() {
    let server = notes(fast());
    let alice = client(&server, "alice", tasks_and_forms());
    add(&alice, "Milk", "Buy milk").await;
    let id = task_id(&export(&alice).await);
    until(&alice, &id, "input_required").await;
    answer(&alice, &id, json!({"action": "decline"})).await;
    let done = until(&alice, &id, "completed").await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "export declined: nothing was written");
}

#[tokio::test]
async fn cancel_stops_an_export_being_written_and_the_task_stays_cancelled() {
    let server = notes(Pace { pause: Duration::from_secs(30), ..fast() });
    let alice = client(&server, "alice", tasks_and_forms());
    add(&alice, "Milk", "Buy milk").await;
    let id = task_id(&export(&alice).await);
    until(&alice, &id, "input_required").await;
    answer(&alice, &id, json!({"action": "accept", "content": {"format": "markdown"}})).await;
    // Working again as soon as the answer is recorded; writing once the handler runs with it.
    for _ in 0..500 {
        if get(&alice, &id).await["statusMessage"] == "writing 1 note" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let writing = get(&alice, &id).await;
    assert_eq!(
        (&writing["status"], &writing["statusMessage"]),
        (&json!("working"), &json!("writing 1 note"))
    );
    alice.request("tasks/cancel", json!({"taskId": id})).await.expect("acknowledged");
    assert_eq!(get(&alice, &id).await["status"], "cancelled");
    // The handler heard it and returned at once; its outcome is not stored over the cancellation.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let later = get(&alice, &id).await;
    assert_eq!(later["status"], "cancelled", "{later}");
    assert!(later.get("result").is_none(), "{later}");
}

#[tokio::test]
async fn a_client_without_forms_gets_markdown_from_a_task_begun_past_the_threshold() {
    let server = notes(fast());
    let alice = client(&server, "alice", json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    add(&alice, "Milk", "Buy milk").await;
    let tagged = json!({"title": "Rye", "body": "Bake", "tags": ["bread", "weekend"]});
    alice.call_tool("add_note", tagged).await.expect("answered");
    let created = export(&alice).await;
    let id = task_id(&created);
    assert_eq!(created["status"], "working", "{created}");
    assert_eq!(created["statusMessage"], "writing 2 notes");
    let done = until(&alice, &id, "completed").await;
    let markdown = "# Notes\n\n## Milk\n\nBuy milk\n\n## Rye\n\nBake\n\ntags: bread, weekend\n";
    assert_eq!(done["result"]["content"][0]["text"], markdown, "{done}");
}

#[tokio::test]
async fn a_client_that_does_not_take_tasks_is_answered_as_usual_once_written() {
    let server = notes(fast());
    let alice = client(&server, "alice", json!({"elicitation": {}}));
    add(&alice, "Milk", "Buy milk").await;
    let answered = export(&alice).await;
    assert_eq!(answered["resultType"], "complete", "{answered}");
    assert_eq!(answered["content"][0]["text"], "# Notes\n\n## Milk\n\nBuy milk\n");
    // A 2025-11-25 client never sees a task.
    let legacy = client(&server, "alice", json!({})).era(ProtocolVersion::V2025_11_25);
    let answered = export(&legacy).await;
    assert!(answered.get("taskId").is_none(), "{answered}");
    assert_eq!(answered["content"][0]["text"], "# Notes\n\n## Milk\n\nBuy milk\n", "{answered}");
}

#[tokio::test]
async fn another_callers_export_task_is_answered_as_an_unknown_one() {
    let server = notes(fast());
    let alice = client(&server, "alice", tasks_and_forms());
    let bob = client(&server, "bob", tasks_and_forms());
    add(&alice, "Milk", "Buy milk").await;
    let id = task_id(&export(&alice).await);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = |id: &str| json!({"taskId": id, "inputResponses": {}});
        let bobs = bob.request(method, params(&id)).await.expect_err("not bob's");
        let unknown =
            bob.request(method, params("0123456789abcdef0123456789abcdef")).await.expect_err("none");
        assert_eq!(bobs.rpc(), unknown.rpc(), "{method}");
        assert_eq!(bobs.rpc().map(|e| e.code), Some(-32602), "{method}");
    }
    assert_eq!(until(&alice, &id, "input_required").await["status"], "input_required", "bob changed nothing");
}
