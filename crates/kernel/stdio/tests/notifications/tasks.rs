//! The tasks extension over stdio, through the `notifying` example started with `--tasks` as a real
//! process: a call that becomes a task, polled with `tasks/get` over the pipe to its end; `tasks/cancel`;
//! and the end of input while a task that ignores its cancellation runs — the process exits within the
//! task grace, the task failed with the shutdown reason.

use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::process::Server;

/// `params._meta` of a `2026-07-28` request declaring the tasks extension.
fn task_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    })
}

/// A request declaring the extension.
fn task_request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = task_meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Calls `tool` and returns the id of the task it became.
fn create(server: &mut Server, id: i64, tool: &str, arguments: Value) -> String {
    server.send(&task_request(id, "tools/call", json!({"name": tool, "arguments": arguments})));
    let created = server.answer(&json!(id));
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(created["result"]["status"], "working", "{created}");
    created["result"]["taskId"].as_str().expect("a taskId").to_owned()
}

/// `tasks/get` of `task` under request `id`.
fn get(server: &mut Server, id: i64, task: &str) -> Value {
    server.send(&task_request(id, "tasks/get", json!({"taskId": task})));
    server.answer(&json!(id))
}

#[test]
fn a_task_is_created_and_polled_to_completion_with_tasks_get_over_the_pipe() {
    let mut server = Server::start(&["--tasks"]);
    let task = create(&mut server, 1, "slow", json!({"ms": 500}));
    let mut last = Value::Null;
    for poll in 0..250 {
        last = get(&mut server, 100 + poll, &task);
        assert_eq!(last["result"]["taskId"], task.as_str(), "{last}");
        if last["result"]["status"] != "working" {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(last["result"]["status"], "completed", "{last}");
    assert_eq!(last["result"]["resultType"], "complete", "{last}");
    assert_eq!(last["result"]["result"]["structuredContent"], json!({"slept": 500}), "{last}");
}

#[test]
fn tasks_cancel_ends_a_running_task_cancelled() {
    let mut server = Server::start(&["--tasks"]);
    let task = create(&mut server, 1, "slow", json!({}));
    server.send(&task_request(2, "tasks/cancel", json!({"taskId": task})));
    let acknowledged = server.answer(&json!(2));
    assert_eq!(acknowledged["result"]["resultType"], "complete", "{acknowledged}");
    assert!(acknowledged["result"].get("status").is_none(), "an empty acknowledgment: {acknowledged}");
    let got = get(&mut server, 3, &task);
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    assert!(got["result"].get("result").is_none(), "{got}");
}

#[test]
fn closing_stdin_while_a_stubborn_task_runs_exits_within_the_task_grace_and_fails_the_task() {
    let mut server = Server::start(&["--tasks", "--task-grace-ms", "300"]);
    let task = create(&mut server, 1, "stubborn", json!({}));
    let closed = Instant::now();
    server.close();
    let (rest, status) = server.rest_and_exit();
    let took = closed.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(rest.is_empty(), "nothing more to say: {rest:?}");
    // The handler sleeps a minute: only the grace ends the process this soon.
    assert!(took < Duration::from_secs(10), "exited {took:?} after the end of input");
    let expected = format!("notifying: task {task} failed: the server shut down before the task finished");
    let mut stderr = String::new();
    for _ in 0..250 {
        stderr = server.stderr();
        if stderr.contains(&expected) {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    assert!(stderr.contains(&expected), "stderr: {stderr}");
}

#[test]
fn without_tasks_the_task_tools_are_not_listed_and_the_task_methods_are_unknown() {
    let mut server = Server::start(&[]);
    server.send(&task_request(1, "tools/list", json!({})));
    let listed = server.answer(&json!(1));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(!names.contains(&"slow") && !names.contains(&"stubborn"), "{names:?}");
    let got = get(&mut server, 2, "0123456789abcdef0123456789abcdef");
    assert_eq!(got["error"]["code"], -32601, "{got}");
}
