//! Hostile timing: cancellation racing completion and answers, one key answered twice at once, answers
//! racing expiry, handlers that panic at each stage, never return, or panic when dropped, and a host
//! that asks forever. A terminal status is never overwritten; the server never panics.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mcp_kernel_router::tasks::MAX_INPUT_ROUNDS;
use serde_json::json;

use super::{
    assert_no_echo, call, cancel, get, named, server_with, settled, status, task_id, tasks, until, update,
};
use crate::support::code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_answered_twice_at_once_runs_the_next_round_once_with_one_answer() {
    for _ in 0..5 {
        let (server, seen) = server_with(tasks(), None);
        let id = task_id(&call(&server, Some("alice"), "ask", json!({})).await);
        until(&server, &id, "input_required").await;
        let (a, b) = tokio::join!(
            update(&server, &id, json!({"name": named("A")})),
            update(&server, &id, json!({"name": named("B")}))
        );
        assert_eq!(a["result"]["resultType"], "complete", "{a}");
        assert_eq!(b["result"]["resultType"], "complete", "{b}");
        let done = settled(&server, &id).await;
        let text = done["result"]["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert!(text == "hello A" || text == "hello B", "{done}");
        assert_eq!(seen.runs.load(Ordering::SeqCst), 2, "the first run and one retry");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_completion_leaves_one_terminal_status_and_never_the_cancelled_outcome() {
    let (server, _) = server_with(tasks(), None);
    let mut ids = Vec::new();
    for i in 0..16u64 {
        ids.push((i, task_id(&call(&server, Some("alice"), "slow", json!({"ms": 60 + i * 4})).await)));
    }
    let racers = ids.iter().map(|(i, id)| {
        let server = server.clone();
        let id = id.clone();
        let at = Duration::from_millis(i * 4);
        async move {
            tokio::time::sleep(at).await;
            cancel(&server, &id).await
        }
    });
    for ack in futures_util::future::join_all(racers).await {
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    }
    for (_, id) in &ids {
        let done = settled(&server, id).await;
        match status(&done).as_str() {
            "cancelled" => assert!(done["result"].get("result").is_none(), "{done}"),
            "completed" => {
                assert!(done["result"]["result"]["content"][0]["text"].as_str().unwrap().starts_with("slept"))
            }
            other => panic!("{other}: {done}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_an_answer_leaves_one_terminal_status_that_never_changes() {
    for _ in 0..5 {
        let (server, seen) = server_with(tasks(), None);
        let id = task_id(&call(&server, Some("alice"), "ask", json!({})).await);
        until(&server, &id, "input_required").await;
        let (answered, cancelled) =
            tokio::join!(update(&server, &id, json!({"name": named("Ada")})), cancel(&server, &id));
        assert_eq!(answered["result"]["resultType"], "complete");
        assert_eq!(cancelled["result"]["resultType"], "complete");
        let done = settled(&server, &id).await;
        match status(&done).as_str() {
            "cancelled" => assert!(done["result"].get("result").is_none(), "{done}"),
            "completed" => assert_eq!(done["result"]["result"]["content"][0]["text"], "hello Ada"),
            other => panic!("{other}: {done}"),
        }
        assert!(seen.runs.load(Ordering::SeqCst) <= 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_racing_expiry_never_turns_a_failed_task_into_another() {
    let ttl = Duration::from_millis(250);
    let (server, _) = server_with(tasks().ttl(Some(ttl)).retention(Duration::from_secs(5)), None);
    let mut racers = Vec::new();
    for i in 0..8u64 {
        let server = server.clone();
        racers.push(async move {
            let created = Instant::now();
            let id = task_id(&call(&server, Some("alice"), "ask", json!({})).await);
            until(&server, &id, "input_required").await;
            // Answered from just before the time to live to just after it.
            let at = Duration::from_millis(190 + i * 30);
            tokio::time::sleep(at.saturating_sub(created.elapsed())).await;
            let answer = update(&server, &id, json!({"name": named("Ada")})).await;
            assert!(answer.get("result").is_some(), "{answer}");
            id
        });
    }
    let ids = futures_util::future::join_all(racers).await;
    let mut failed = 0;
    for id in &ids {
        let done = settled(&server, id).await;
        match status(&done).as_str() {
            "failed" => {
                failed += 1;
                assert!(done["result"]["statusMessage"].as_str().unwrap().contains("time to live"));
                assert!(done["result"].get("result").is_none(), "{done}");
            }
            "completed" => assert_eq!(done["result"]["result"]["content"][0]["text"], "hello Ada"),
            other => panic!("{other}: {done}"),
        }
    }
    assert!(failed > 0, "an answer after the time to live cannot complete the task");
}

#[tokio::test]
async fn a_panic_at_any_stage_is_a_bare_internal_error_and_the_server_serves_on() {
    let (server, seen) = server_with(tasks(), None);
    // Before the threshold, an optional tool is answered as usual: no task.
    let answered = call(&server, Some("alice"), "panics_now", json!({})).await;
    assert_eq!(code(&answered), -32603, "{answered}");
    assert_no_echo(&answered);
    // A tool that runs only as a task fails it; so does a panic after the threshold or on a retry.
    let required = task_id(&call(&server, Some("alice"), "required_panics", json!({})).await);
    let late = task_id(&call(&server, Some("alice"), "panics_late", json!({})).await);
    let retried = task_id(&call(&server, Some("alice"), "panics_on_retry", json!({})).await);
    until(&server, &retried, "input_required").await;
    update(&server, &retried, json!({"name": named("x")})).await;
    for id in [required, late, retried] {
        let failed = settled(&server, &id).await;
        assert_eq!(status(&failed), "failed", "{failed}");
        assert_eq!(failed["result"]["error"]["code"], -32603);
        assert_no_echo(&failed);
    }
    assert_eq!(seen.runs.load(Ordering::SeqCst), 2);
    let greeted = call(&server, Some("alice"), "greet", json!({})).await;
    assert_eq!(greeted["result"]["content"][0]["text"], "hello");
}

#[tokio::test]
async fn a_handler_that_ignores_its_cancellation_is_dropped_after_the_grace() {
    let (server, seen) = server_with(tasks(), None);
    let id = task_id(&call(&server, Some("alice"), "stubborn", json!({})).await);
    cancel(&server, &id).await;
    assert_eq!(status(&get(&server, Some("alice"), &id).await), "cancelled", "at once");
    assert!(!seen.dropped.load(Ordering::SeqCst), "the grace first");
    let started = Instant::now();
    while !seen.dropped.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(seen.dropped.load(Ordering::SeqCst), "dropped after the grace");
    assert!(started.elapsed() < Duration::from_millis(1_500), "{:?}", started.elapsed());
    let drained = Instant::now();
    server.drain_tasks(Duration::from_secs(3)).await;
    assert!(drained.elapsed() < Duration::from_millis(500), "nothing left running");
    assert_eq!(status(&get(&server, Some("alice"), &id).await), "cancelled");
}

#[tokio::test]
async fn a_handler_whose_future_panics_when_dropped_leaves_nothing_running() {
    let (server, _) = server_with(tasks(), None);
    let id = task_id(&call(&server, Some("alice"), "drop_panics", json!({})).await);
    cancel(&server, &id).await;
    // The grace (200 ms) passes and the future is dropped: it panics there.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(status(&get(&server, Some("alice"), &id).await), "cancelled");
    let drained = Instant::now();
    server.drain_tasks(Duration::from_secs(3)).await;
    assert!(drained.elapsed() < Duration::from_millis(500), "the run still counts: {:?}", drained.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_asks_for_input_forever_fails_its_task_after_the_round_bound() {
    let (server, seen) = server_with(tasks(), None);
    let id = task_id(&call(&server, Some("alice"), "forever", json!({})).await);
    let failed = settled(&server, &id).await;
    assert_eq!(status(&failed), "failed", "{failed}");
    assert_eq!(failed["result"]["error"]["code"], -32603);
    assert_eq!(seen.runs.load(Ordering::SeqCst), MAX_INPUT_ROUNDS + 1);
    // A host that asks the client again and again: each round gets a key never issued before.
    let (server, _) = server_with(tasks(), None);
    let id = task_id(&call(&server, Some("alice"), "ask_always", json!({})).await);
    let mut keys = std::collections::BTreeSet::new();
    for _ in 0..20 {
        let waiting = until(&server, &id, "input_required").await;
        let key = waiting["result"]["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
        assert!(keys.insert(key.clone()), "{key} issued twice");
        update(&server, &id, json!({ key.clone(): named("x") })).await;
        for _ in 0..200 {
            let now = get(&server, Some("alice"), &id).await;
            if now["result"]["inputRequests"].get(&key).is_none() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    assert_eq!(keys.len(), 20);
    cancel(&server, &id).await;
    assert_eq!(status(&settled(&server, &id).await), "cancelled");
}
