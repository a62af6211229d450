//! Store exhaustion and ownership: the bounds hold exactly under concurrent creation, one owner at its
//! bound does not starve another, finished tasks are swept and free their place, a panicking owner key
//! is a bare -32603, and a request without a principal never reaches an owned task (nor the reverse).

use std::time::Duration;

use mcp_kernel_router::tasks::{InProcessTaskStore, Tasks};
use serde_json::{Value, json};

use super::{SECRET, Tokio, call, configure, get, request, send_as, server_with, status, task_id, tasks};
use crate::support::code;

/// `count` calls of `slow` by `user` at once: the created task ids and the refusals.
async fn burst(
    server: &mcp_kernel_router::Server,
    user: &'static str,
    count: usize,
) -> (Vec<String>, Vec<Value>) {
    // A tool that runs only as a task: past a bound it is refused (an optional one would be answered
    // as it is without tasks).
    let calls = (0..count).map(|_| call(server, Some(user), "slow_required", json!({})));
    let answers = futures_util::future::join_all(calls).await;
    let (created, refused): (Vec<Value>, Vec<Value>) =
        answers.into_iter().partition(|answer| answer["result"]["resultType"] == "task");
    (created.iter().map(task_id).collect(), refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creations_stop_exactly_at_each_bound_and_another_owner_keeps_its_share() {
    let store = InProcessTaskStore::new();
    let tasks = configure(Tasks::with_store(store.clone(), Tokio)).max_tasks_per_owner(8).max_tasks(20);
    let (server, _) = server_with(tasks, None);
    let (alices, refused) = burst(&server, "alice", 40).await;
    assert_eq!(alices.len(), 8);
    assert_eq!(refused.len(), 32);
    for answer in &refused {
        assert_eq!(code(answer), -32000, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("limit of 8 tasks") && !message.contains("alice"), "{message}");
    }
    let (bobs, _) = burst(&server, "bob", 9).await;
    assert_eq!(bobs.len(), 8, "Alice at her bound does not starve Bob");
    let (carols, refused) = burst(&server, "carol", 6).await;
    assert_eq!(carols.len(), 4, "the store's bound");
    assert!(
        refused.iter().all(|answer| answer["error"]["message"].as_str().unwrap().contains("limit of 20"))
    );
    assert_eq!(store.len(), 20, "nothing more stored, nothing evicted");
    // Refused calls stored nothing and left every stored task as it was.
    for id in alices.iter().chain(&bobs).chain(&carols).take(3) {
        assert_eq!(status(&get(&server, Some("alice"), id).await), "working");
    }
}

#[tokio::test]
async fn finished_tasks_are_swept_after_their_retention_and_free_their_owners_place() {
    let store = InProcessTaskStore::new();
    let tasks = configure(Tasks::with_store(store.clone(), Tokio))
        .max_tasks_per_owner(3)
        .ttl(Some(Duration::from_millis(500)))
        .retention(Duration::from_millis(100));
    let (server, _) = server_with(tasks, None);
    let mut ids = Vec::new();
    for _ in 0..3 {
        // Running until their time to live ends them: the place is held the whole time.
        ids.push(task_id(&call(&server, Some("alice"), "slow", json!({})).await));
    }
    assert_eq!(code(&call(&server, Some("alice"), "slow_required", json!({})).await), -32000);
    tokio::time::sleep(Duration::from_millis(900)).await;
    let unknown = get(&server, Some("alice"), &"0".repeat(32)).await;
    for id in &ids {
        assert_eq!(get(&server, Some("alice"), id).await.to_string(), unknown.to_string(), "removed");
    }
    assert_eq!(store.len(), 0, "nothing kept past its retention");
    task_id(&call(&server, Some("alice"), "slow", json!({"ms": 10_000})).await);
    // Tasks nobody finished expire, fail, and go the same way.
    tokio::time::sleep(Duration::from_millis(900)).await;
    get(&server, Some("alice"), &"0".repeat(32)).await;
    assert_eq!(store.len(), 0);
    let drained = std::time::Instant::now();
    server.drain_tasks(Duration::from_secs(3)).await;
    assert!(drained.elapsed() < Duration::from_millis(500), "no run left behind");
}

#[tokio::test]
async fn a_panicking_owner_key_is_a_bare_minus_32603_and_others_are_served() {
    let store = InProcessTaskStore::new();
    let (server, _) = server_with(configure(Tasks::with_store(store.clone(), Tokio)), None);
    let alices = task_id(&call(&server, Some("alice"), "slow", json!({})).await);
    let created = call(&server, Some("mallory"), "slow", json!({})).await;
    assert_eq!(code(&created), -32603, "{created}");
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = json!({"taskId": alices, "inputResponses": {}});
        let answer = send_as(&server, Some("mallory"), request(5, method, params)).await;
        assert_eq!(code(&answer), -32603, "{method}: {answer}");
        assert!(!answer.to_string().contains("mallory"));
    }
    // Answered at once when it finishes within the threshold (no owner needed), refused otherwise.
    let quick = call(&server, Some("mallory"), "slow", json!({"ms": 0})).await;
    assert_eq!(quick["result"]["content"][0]["text"], "slept 0");
    assert_eq!(store.len(), 1, "only Alice's task");
    assert_eq!(status(&get(&server, Some("alice"), &alices).await), "working");
}

#[tokio::test]
async fn a_request_without_a_principal_never_reaches_an_owned_task_nor_an_owner_a_principal_less_one() {
    let (server, _) = server_with(tasks(), None);
    let alices = task_id(&call(&server, Some("alice"), "slow", json!({})).await);
    let nobodys = task_id(&call(&server, None, "slow", json!({})).await);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let probe = |id: &str| request(6, method, json!({"taskId": id, "inputResponses": {SECRET: 1}}));
        let unknown = send_as(&server, None, probe(&"f".repeat(32))).await;
        assert_eq!(code(&unknown), -32602);
        assert_eq!(send_as(&server, None, probe(&alices)).await.to_string(), unknown.to_string());
        assert_eq!(send_as(&server, Some("alice"), probe(&nobodys)).await.to_string(), unknown.to_string());
    }
    assert_eq!(status(&get(&server, Some("alice"), &alices).await), "working", "not cancelled");
    assert_eq!(status(&get(&server, None, &nobodys).await), "working", "not cancelled");
}
