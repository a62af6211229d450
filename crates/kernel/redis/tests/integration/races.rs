//! Hostile races: many writers of one task from two instances, and creates racing at the bounds.

use std::time::{Duration, Instant};

use mcp_kernel_router::tasks::{TaskMode, TaskStatus, TaskStore, Tasks, Transition, now_ms};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

use crate::support::{LIMITS, Tokio, config, instance, server, task};

/// `chatty` sets `n` status messages as fast as it can, then answers after 100 ms.
async fn chatty(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let n = call.arguments.get("n").and_then(Value::as_u64).unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(60)).await;
    if let Some(task) = call.context.task() {
        for i in 0..n {
            task.set_status_message(format!("item {i} of {n}"));
        }
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(ToolOutput::text("done"))
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_burst_of_status_messages_never_costs_a_task_its_result() {
    let redis = server();
    let a = instance(config(&redis)).await;
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}});
    let listing = Listing {
        tools: vec![
            ToolSpec::new("chatty", Mode::ReadOnly).task_mode(TaskMode::Optional).input_schema(schema),
        ],
        ..Listing::default()
    };
    let tasks = Tasks::with_store(a.task_store(), Tokio).threshold(Duration::from_millis(20));
    let server = Server::builder(listing).dispatch(chatty).tasks(tasks).build().expect("a server");
    let call = request(1, "tools/call", json!({"name": "chatty", "arguments": {"n": 1000}}));
    let created = server.handle(call).await.response.map(|r| r.to_value()).unwrap_or(Value::Null);
    let id = created["result"]["taskId"].as_str().expect("a task").to_owned();
    let store = a.task_store();
    let deadline = Instant::now() + Duration::from_secs(3);
    let record = loop {
        let record = store.read(&id).await.unwrap().unwrap();
        if record.status.is_terminal() || Instant::now() > deadline {
            break record;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(record.status, TaskStatus::Completed, "{record:?}");
    assert_eq!(record.result.unwrap()["content"][0]["text"], "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (cargo xtask edge redis)"]
async fn a_completion_racing_a_thousand_writers_on_two_instances_is_stored_and_none_is_lost() {
    let redis = server();
    let a = instance(config(&redis)).await.task_store();
    let b = instance(config(&redis)).await.task_store();
    let _running = a.watch_running("t");
    a.create(task("t", None, None), LIMITS).await.unwrap().unwrap();
    let started = Instant::now();
    let mut handles = Vec::new();
    for n in 0..1_000 {
        let store = if n % 2 == 0 { a.clone() } else { b.clone() };
        handles.push(tokio::spawn(async move {
            store.transition("t", Transition::Message(format!("m{n}")), now_ms()).await
        }));
    }
    let completed = a.transition("t", Transition::Completed(json!({"content": []})), now_ms()).await;
    assert_eq!(completed.map(|r| r.map(|r| r.status)), Ok(Some(TaskStatus::Completed)));
    let mut applied = 0;
    for handle in handles {
        if handle.await.unwrap().expect("no writer exhausted its compare-and-swap").is_some() {
            applied += 1;
        }
    }
    let stored = b.read("t").await.unwrap().unwrap();
    assert_eq!(stored.status, TaskStatus::Completed);
    assert_eq!(stored.revision, applied + 1, "each write applied once, the completion last");
    eprintln!("{applied} messages before the completion; {:?}", started.elapsed());
}
