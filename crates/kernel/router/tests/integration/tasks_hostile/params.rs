//! Malformed task requests and answers: a clear -32602 with a fixed message, nothing echoed, nothing
//! stored, and every id the caller may not see answered with the same bytes.

use serde_json::{Value, json};

use super::{
    SECRET, assert_no_echo, call, cancel, get, named, request, send_as, server_with, settled, status,
    task_id, tasks, until, update,
};
use crate::support::code;

const METHODS: [&str; 3] = ["tasks/get", "tasks/update", "tasks/cancel"];

#[tokio::test]
async fn a_task_request_without_a_string_task_id_is_minus_32602_with_one_fixed_message() {
    let (server, _) = server_with(tasks(), None);
    let bad_ids = [
        None,
        Some(Value::Null),
        Some(json!(12345)),
        Some(json!(1e300)),
        Some(json!(true)),
        Some(json!([SECRET])),
        Some(json!({ SECRET: SECRET })),
    ];
    for method in METHODS {
        let mut messages = Vec::new();
        for id in &bad_ids {
            let mut params = json!({"inputResponses": {}});
            if let Some(id) = id {
                params["taskId"] = id.clone();
            }
            let answer = send_as(&server, Some("alice"), request(1, method, params)).await;
            assert_eq!(code(&answer), -32602, "{method} {id:?}: {answer}");
            assert_no_echo(&answer);
            messages.push(answer["error"]["message"].clone());
        }
        messages.dedup();
        assert_eq!(messages.len(), 1, "one message whatever was sent: {messages:?}");
    }
}

#[tokio::test]
async fn every_task_id_the_caller_may_not_see_is_answered_with_the_same_bytes() {
    let (server, _) = server_with(tasks(), None);
    let alices = task_id(&call(&server, Some("alice"), "slow", json!({})).await);
    let nobodys = task_id(&call(&server, None, "slow", json!({})).await);
    let huge = format!("{SECRET}{}", "x".repeat(1 << 20));
    // 128 bytes: the longest id looked up; one byte more is not a task at all.
    let exactly_the_bound = format!("{SECRET}{}x", "ü".repeat(58));
    assert_eq!(exactly_the_bound.len(), 128);
    let probes: Vec<(Option<&'static str>, String)> = vec![
        (Some("bob"), alices.clone()),
        (None, alices.clone()),
        (Some("alice"), nobodys.clone()),
        (Some("alice"), alices.to_uppercase()),
        (Some("alice"), format!("{alices} ")),
        (Some("alice"), String::new()),
        (Some("alice"), format!("{SECRET}\u{0}../../")),
        (Some("alice"), exactly_the_bound.clone()),
        (Some("alice"), format!("{exactly_the_bound}x")),
        (Some("alice"), huge),
    ];
    for method in METHODS {
        let params = |id: &str| json!({"taskId": id, "inputResponses": {"name": named("x")}});
        let unknown =
            send_as(&server, Some("alice"), request(9, method, params("0".repeat(32).as_str()))).await;
        assert_eq!(code(&unknown), -32602);
        for (user, id) in &probes {
            let answer = send_as(&server, *user, request(9, method, params(id))).await;
            assert_eq!(answer.to_string(), unknown.to_string(), "{method} as {user:?}");
        }
    }
    // None of the probes touched the tasks.
    assert_eq!(status(&get(&server, Some("alice"), &alices).await), "working");
    assert_eq!(status(&get(&server, None, &nobodys).await), "working");
}

#[tokio::test]
async fn malformed_answers_to_the_callers_own_task_are_refused_without_echo_and_change_nothing() {
    let (server, seen) = server_with(tasks(), None);
    let id = task_id(&call(&server, Some("alice"), "ask", json!({})).await);
    let waiting = until(&server, &id, "input_required").await;
    assert_eq!(status(&waiting), "input_required", "{waiting}");
    let not_objects = [Value::Null, json!([named("x")]), json!(SECRET), json!(7)];
    for responses in not_objects {
        let answer = update(&server, &id, responses).await;
        assert_eq!(code(&answer), -32602, "{answer}");
        assert_no_echo(&answer);
    }
    let missing = send_as(&server, Some("alice"), request(3, "tasks/update", json!({"taskId": id}))).await;
    assert_eq!(code(&missing), -32602);
    let mut deep = json!(SECRET);
    for _ in 0..100 {
        deep = json!({ "n": deep });
    }
    let wrong_shapes = [
        Value::Null,
        json!(SECRET),
        json!([]),
        json!({"action": SECRET}),
        json!({"action": "accept", "content": {"name": {SECRET: 1}}}),
        json!({"action": "accept", "content": {"name": [1, 2]}}),
        json!({"action": "accept", "content": deep}),
        json!({"role": "assistant", "content": {"type": "text", "text": SECRET}, "model": "m"}),
        json!({"roots": [{"uri": "file:///", "name": SECRET}]}),
    ];
    for shape in wrong_shapes {
        // A malformed answer spoils the whole update, the good one beside it included.
        let answer = update(&server, &id, json!({"name": shape, "other": named("y")})).await;
        assert_eq!(code(&answer), -32602, "{shape}: {answer}");
        assert_no_echo(&answer);
        let still = get(&server, Some("alice"), &id).await;
        assert_eq!(still["result"]["inputRequests"], waiting["result"]["inputRequests"], "nothing stored");
    }
    // Keys that were never issued, or look like the keys a later round would get, are ignored.
    let ignored = json!({"never-issued": 12345, "name.2": named(SECRET), "": null, SECRET: []});
    let answer = update(&server, &id, ignored).await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_no_echo(&answer);
    let still = get(&server, Some("alice"), &id).await;
    assert_eq!(still["result"]["inputRequests"], waiting["result"]["inputRequests"], "{still}");
    assert_eq!(seen.runs.load(std::sync::atomic::Ordering::SeqCst), 1, "the handler did not run again");
    // The good answer alone completes the task.
    update(&server, &id, json!({"name": named("Ada")})).await;
    let done = settled(&server, &id).await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "hello Ada");
}

#[tokio::test]
async fn an_answer_to_a_task_that_is_not_waiting_is_acknowledged_and_stores_nothing() {
    let (server, seen) = server_with(tasks(), None);
    let working = task_id(&call(&server, Some("alice"), "slow", json!({"ms": 400})).await);
    let answer = update(&server, &working, json!({"name": named("x")})).await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    let done = settled(&server, &working).await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "slept 400");
    let again = update(&server, &working, json!({"name": named("x")})).await;
    assert_eq!(again["result"], answer["result"]);
    assert_eq!(settled(&server, &working).await["result"], done["result"]);
    // A cancelled task waiting for input is not brought back by an answer.
    let asking = task_id(&call(&server, Some("alice"), "ask", json!({})).await);
    until(&server, &asking, "input_required").await;
    cancel(&server, &asking).await;
    update(&server, &asking, json!({"name": named("late")})).await;
    let cancelled = settled(&server, &asking).await;
    assert_eq!(status(&cancelled), "cancelled");
    assert!(
        cancelled["result"].get("result").is_none() && cancelled["result"].get("inputRequests").is_none()
    );
    assert_eq!(seen.runs.load(std::sync::atomic::Ordering::SeqCst), 1, "never run again");
}
