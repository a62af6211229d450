//! The tasks extension through rmcp's own task API (`call_tool_once`, `get_task`, `update_task`,
//! `cancel_task`), and a listen naming tasks: rmcp's `Peer::listen` has no `taskIds` in its filter, so
//! that listen is sent as a custom `subscriptions/listen` request, whose acknowledgment and
//! `notifications/tasks` reach the client's handler (`Harness::acknowledged`, `Harness::statuses`) and
//! whose answer is the stream's completion result.
//!
//! [`Seen`] keeps every status any read or notification showed for each task, to check that none was
//! shown a status it never had.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ServiceError;
use rmcp::model::{
    CallToolResponse, CancelTaskParams, ClientRequest, CustomRequest, GetTaskParams, ServerResult,
    TaskStatus, UpdateTaskParams,
};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::client::{Client, Harness, call};
use crate::common::{step, to_json};

/// The pause between two `tasks/get` of a wait.
pub const POLL: Duration = Duration::from_millis(50);
/// The longest a wait for a task's status may take.
pub const REACHES: Duration = Duration::from_secs(20);

/// Calls `job {ms, ask}` and returns the id of the task it became.
pub async fn start_job(client: &Client, ms: u64, ask: bool) -> String {
    let called = client.call_tool_once(call("job", json!({"ms": ms, "ask": ask})));
    match step("tools/call job", called).await {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working, "{created:?}");
            created.task.task_id
        }
        other => panic!("job became no task: {other:?}"),
    }
}

/// `tasks/get`, as JSON (`taskId`, `status`, `statusMessage`, and `result` or `error`), or the
/// JSON-RPC error it was answered with.
pub async fn get(client: &Client, id: &str) -> Result<Value, ServiceError> {
    let got = tokio::time::timeout(crate::common::STEP, client.get_task(GetTaskParams::new(id)))
        .await
        .unwrap_or_else(|_| panic!("tasks/get {id} timed out"));
    got.map(|got| to_json(&got))
}

/// Polls `tasks/get` until `reached` says so (bounded by [`REACHES`]); every status read goes to
/// `seen`. Errors (an instance or Redis away for a moment) are polled through.
pub async fn until(
    client: &Client,
    id: &str,
    what: &str,
    seen: &Seen,
    reached: impl Fn(&Value) -> bool,
) -> Value {
    let started = Instant::now();
    let mut last = None;
    while started.elapsed() < REACHES {
        match get(client, id).await {
            Ok(task) => {
                seen.record(id, &task);
                if reached(&task) {
                    return task;
                }
                last = Some(Ok(task));
            }
            Err(error) => last = Some(Err(error)),
        }
        tokio::time::sleep(POLL).await;
    }
    panic!("task {id} is not {what} after {REACHES:?}; last read: {last:?}")
}

/// Polls until the task's status is `status`.
pub async fn until_status(client: &Client, id: &str, status: &str, seen: &Seen) -> Value {
    until(client, id, status, seen, |task| task["status"] == status).await
}

/// Answers the job's `go` question through `tasks/update`.
pub async fn answer(client: &Client, id: &str) {
    let answer = json!({"action": "accept", "content": {"ok": true}});
    let responses = BTreeMap::from([("go".to_owned(), answer)]);
    step("tasks/update", client.update_task(UpdateTaskParams::new(id, responses))).await;
}

/// `tasks/cancel`.
pub async fn cancel(client: &Client, id: &str) {
    step("tasks/cancel", client.cancel_task(CancelTaskParams::new(id))).await;
}

/// An open listen naming tasks: its answer (the completion result) once the stream ends.
pub struct TaskListen {
    /// The request in flight.
    pub answer: JoinHandle<Result<ServerResult, ServiceError>>,
}

/// Opens `subscriptions/listen` for the statuses of `ids` on `client`, and waits (bounded) for its
/// acknowledgment.
pub async fn listen_tasks(client: &Client, harness: &Harness, ids: &[&str]) -> TaskListen {
    let before = harness.acknowledged().len();
    let params = json!({"notifications": {"taskIds": ids}});
    let request = ClientRequest::CustomRequest(CustomRequest::new("subscriptions/listen", Some(params)));
    let peer = client.peer().clone();
    let answer = tokio::spawn(async move { peer.send_request(request).await });
    let started = Instant::now();
    while harness.acknowledged().len() == before {
        assert!(!answer.is_finished(), "the listen ended before its acknowledgment");
        assert!(
            started.elapsed() < crate::common::STEP,
            "no acknowledgment within {:?}",
            crate::common::STEP
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    TaskListen { answer }
}

/// Waits (bounded) until `harness` has heard task `id` in `status` (a notification is handed to the
/// client's handler apart from the listen's answer, so it may come a moment after the listen ended),
/// and returns the statuses it heard of the task, in order.
pub async fn heard(harness: &Harness, id: &str, status: &str) -> Vec<String> {
    let started = Instant::now();
    loop {
        let heard: Vec<String> = harness
            .statuses()
            .iter()
            .filter(|s| s["taskId"] == id)
            .map(|s| s["status"].as_str().unwrap_or_default().to_owned())
            .collect();
        if heard.iter().any(|s| s == status) || started.elapsed() > crate::common::STEP {
            return heard;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Every status each task was seen in, by reads and notifications, in the order seen.
#[derive(Clone, Default)]
pub struct Seen(Arc<Mutex<BTreeMap<String, Vec<String>>>>);

impl Seen {
    /// Records the status of `task` (a `tasks/get` answer or a notification's params).
    pub fn record(&self, id: &str, task: &Value) {
        let status = task["status"].as_str().unwrap_or("(none)").to_owned();
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let statuses = seen.entry(id.to_owned()).or_default();
        if statuses.last() != Some(&status) {
            statuses.push(status);
        }
    }

    /// Records every notification in `statuses` (`Harness::statuses`).
    pub fn record_notifications(&self, statuses: &[Value]) {
        for status in statuses {
            self.record(status["taskId"].as_str().unwrap_or_default(), status);
        }
    }

    /// The statuses seen of each task.
    pub fn all(&self) -> BTreeMap<String, Vec<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// Whether `statuses`, in the order seen, is a history a task that asks nothing can have: `working`,
/// then at most one terminal status, which is never left.
pub fn is_possible_history(statuses: &[String]) -> bool {
    let terminal = |s: &str| matches!(s, "completed" | "failed" | "cancelled");
    match statuses {
        [] => true,
        [first, rest @ ..] => {
            let mut last = first.as_str();
            if !(last == "working" || terminal(last)) {
                return false;
            }
            for next in rest {
                if terminal(last) || next == "input_required" || !(next == "working" || terminal(next)) {
                    return false;
                }
                last = next;
            }
            true
        }
    }
}
