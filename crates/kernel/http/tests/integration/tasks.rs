//! The tasks extension over HTTP, through a real listener: what the transport adds to the core's
//! rules — `authorize` runs on task requests like on any other, `Mcp-Name` mirrors `params.taskId`,
//! `serve`'s drain fails a task that outlives its grace period — and the core's rules as a client over
//! HTTP meets them (the -32021 refusal, ownership, expiry, the per-owner bound, `notifications/tasks`
//! on a listen stream).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mcp_kernel_http::{AllowedOrigins, McpHttp, McpService, ServeOptions};
use mcp_kernel_router::BoxFuture;
use mcp_kernel_router::notify::Notifications;
use mcp_kernel_router::tasks::{
    Edit, InProcessTaskStore, LimitReached, StoreResult, TaskLimits, TaskRecord, TaskStore, TaskWatch, Tasks,
};

use crate::support::*;

/// The task catalog served with `tasks` (and notifications, when given), `authorize` naming the caller.
fn service(tasks: Tasks, notifications: Option<&Notifications>) -> McpService {
    McpHttp::builder(task_server(tasks, notifications))
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .authorize(caller)
        .build()
}

async fn start_tasks(tasks: Tasks) -> Running {
    serve(service(tasks, None)).await
}

/// POSTs `message` as `caller` (anonymous when `None`) with the headers it needs.
async fn send_as(running: &Running, caller: Option<&str>, message: &Value) -> Reply {
    post(running.addr, Proto::H1, headers_as(message, caller), bytes(message)).await
}

/// Calls `tool` with `arguments` as `caller`, declaring the extension.
async fn call_as(running: &Running, caller: &str, tool: &str, arguments: Value) -> Reply {
    let message = task_request(1, "tools/call", json!({"name": tool, "arguments": arguments}));
    send_as(running, Some(caller), &message).await
}

/// `tasks/get` of `id` as `caller`.
async fn get_as(running: &Running, caller: &str, id: &str) -> Reply {
    send_as(running, Some(caller), &task_request(2, "tasks/get", json!({"taskId": id}))).await
}

/// The id of the task a call was answered with.
fn task_id(created: &Reply) -> String {
    assert_eq!(created.status, 200, "{created:?}");
    assert_eq!(created.result()["resultType"], "task", "{created:?}");
    created.result()["taskId"].as_str().expect("a taskId").to_owned()
}

/// Polls `id` as `caller` until it is `status` (or terminal), at most 5 s.
async fn until_status(running: &Running, caller: &str, id: &str, status: &str) -> Reply {
    for _ in 0..250 {
        let got = get_as(running, caller, id).await;
        let now = got.body["result"]["status"].as_str().unwrap_or_default().to_owned();
        if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached {status}")
}

/// A 32-hex-digit id no task has.
const UNKNOWN: &str = "0123456789abcdef0123456789abcdef";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_tool_is_refused_minus_32021_to_a_client_without_the_extension() {
    bounded(async {
        let running = start_tasks(fixture_tasks()).await;
        let without = request(1, "tools/call", json!({"name": "required", "arguments": {"ms": 0}}));
        let refused = send_as(&running, Some("alice"), &without).await;
        refused.assert_error(400, -32021, &json!(1));
        assert_eq!(refused.body["error"]["data"]["requiredCapabilities"], json!({"extensions": {TASKS: {}}}));
        // Declared, the same call is always a task, even one that finishes at once.
        let id = task_id(&call_as(&running, "alice", "required", json!({"ms": 0})).await);
        let done = until_status(&running, "alice", &id, "completed").await;
        assert_eq!(done.result()["result"]["content"][0]["text"], "slept 0", "{done:?}");
        running.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_principals_task_is_answered_as_unknown_byte_for_byte() {
    bounded(async {
        let running = start_tasks(fixture_tasks()).await;
        let id = task_id(&call_as(&running, "alice", "slow", json!({})).await);
        assert_eq!(get_as(&running, "alice", &id).await.result()["status"], "working");
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let params = |id: &str| json!({"taskId": id, "inputResponses": {}});
            let bobs = send_as(&running, Some("bob"), &task_request(3, method, params(&id))).await;
            let unknown = send_as(&running, Some("bob"), &task_request(3, method, params(UNKNOWN))).await;
            assert_eq!(bobs.status, unknown.status, "{method}");
            assert_eq!(bobs.raw, unknown.raw, "{method}: the same bytes as an unknown task");
            assert_eq!(bobs.code(), -32602, "{bobs:?}");
        }
        // Bob's cancel did nothing.
        assert_eq!(get_as(&running, "alice", &id).await.result()["status"], "working");
        running.stop().await;
    })
    .await;
}

/// The in-process store, counting the reads the core asks of it; while `down`, a read fails as a
/// shared store's does when its engine is unreachable.
struct CountingStore {
    inner: InProcessTaskStore,
    reads: Arc<AtomicUsize>,
    down: Arc<std::sync::atomic::AtomicBool>,
}

impl TaskStore for CountingStore {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        self.inner.create(record, limits)
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            let unreachable = mcp_kernel_router::tasks::StoreError::Unavailable("connection refused".into());
            return Box::pin(std::future::ready(Err(unreachable)));
        }
        self.inner.read(id)
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        self.inner.update(id, edit)
    }

    fn watch(&self, id: &str) -> TaskWatch {
        self.inner.watch(id)
    }

    fn wake(&self, id: &str) {
        self.inner.wake(id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorize_refuses_a_task_request_before_any_task_lookup() {
    bounded(async {
        let reads = Arc::new(AtomicUsize::new(0));
        let store = CountingStore {
            inner: InProcessTaskStore::new(),
            reads: Arc::clone(&reads),
            down: Arc::default(),
        };
        let running = start_tasks(task_options(Tasks::with_store(store, Tokio))).await;
        let id = task_id(&call_as(&running, "alice", "slow", json!({})).await);
        let before = reads.load(Ordering::SeqCst);
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let message = task_request(4, method, json!({"taskId": id, "inputResponses": {}}));
            let refused = send_as(&running, None, &message).await;
            assert_eq!(refused.status, 401, "{method}: {refused:?}");
            assert!(refused.headers.contains_key("www-authenticate"), "{refused:?}");
        }
        assert_eq!(reads.load(Ordering::SeqCst), before, "no task was looked up for a refused caller");
        let admitted = get_as(&running, "alice", &id).await;
        assert_eq!(admitted.result()["taskId"], id.as_str());
        assert!(reads.load(Ordering::SeqCst) > before, "an admitted caller's request reads the store");
        running.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_past_its_ttl_is_failed_then_unknown_once_removed_after_retention() {
    bounded(async {
        let tasks =
            fixture_tasks().ttl(Some(Duration::from_millis(300))).retention(Duration::from_millis(300));
        let running = start_tasks(tasks).await;
        let id = task_id(&call_as(&running, "alice", "slow", json!({})).await);
        let failed = until_status(&running, "alice", &id, "failed").await;
        assert_eq!(failed.result()["status"], "failed", "{failed:?}");
        assert_eq!(failed.result()["ttlMs"], 300);
        assert!(failed.result()["statusMessage"].as_str().unwrap_or_default().contains("time to live"));
        // Past its time to live and its retention, the task is removed: answered as an unknown task.
        let unknown =
            send_as(&running, Some("alice"), &task_request(2, "tasks/get", json!({"taskId": UNKNOWN}))).await;
        let mut gone = None;
        for _ in 0..250 {
            let got = get_as(&running, "alice", &id).await;
            if got.body.get("error").is_some() {
                gone = Some(got);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let gone = gone.expect("the task is removed within 5 s");
        assert_eq!(gone.code(), -32602, "{gone:?}");
        assert_eq!(gone.raw, unknown.raw, "a removed task is an unknown task");
        running.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_past_its_task_bound_is_refused_naming_it_and_another_caller_is_not() {
    bounded(async {
        let running = start_tasks(fixture_tasks().max_tasks_per_owner(2)).await;
        // A tool that runs only as a task: past the bound it is refused (an optional one would be
        // answered as it is without tasks).
        let first = task_id(&call_as(&running, "alice", "required", json!({})).await);
        task_id(&call_as(&running, "alice", "required", json!({})).await);
        let refused = call_as(&running, "alice", "required", json!({})).await;
        assert_eq!(refused.code(), -32000, "{refused:?}");
        assert!(refused.message().contains("limit of 2 tasks"), "{refused:?}");
        // Bob has a share of his own, and nothing of Alice's was evicted.
        task_id(&call_as(&running, "bob", "required", json!({})).await);
        assert_eq!(get_as(&running, "alice", &first).await.result()["status"], "working");
        running.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drain_fails_a_task_that_outlives_the_grace_with_the_shutdown_reason() {
    bounded(async {
        let tasks = fixture_tasks();
        let grace = Duration::from_millis(500);
        let running =
            serve_with(service(tasks.clone(), None), ServeOptions::new().shutdown_grace(grace)).await;
        let stubborn = task_id(&call_as(&running, "alice", "stubborn", json!({})).await);
        let quick = task_id(&call_as(&running, "alice", "slow", json!({"ms": 200})).await);
        let asked = Instant::now();
        assert!(running.stop_within(Duration::from_secs(10)).await, "serve returned");
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "the grace bounds the drain: {:?}",
            asked.elapsed()
        );

        // Polled at once through a second server sharing the tasks: serve returned only once they ended.
        let second = start_tasks(tasks).await;
        let failed = get_as(&second, "alice", &stubborn).await;
        assert_eq!(failed.result()["status"], "failed", "never left working: {failed:?}");
        assert_eq!(failed.result()["error"]["message"], SHUTDOWN_REASON);
        assert_eq!(failed.result()["statusMessage"], SHUTDOWN_REASON);
        let done = get_as(&second, "alice", &quick).await;
        assert_eq!(done.result()["status"], "completed", "finished within the grace: {done:?}");
        assert_eq!(done.result()["result"]["content"][0]["text"], "slept 200");
        second.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_name_must_equal_the_task_id_of_every_task_method() {
    bounded(async {
        let running = start_tasks(fixture_tasks()).await;
        let id = task_id(&call_as(&running, "alice", "slow", json!({})).await);
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let message = task_request(5, method, json!({"taskId": id, "inputResponses": {}}));
            let headers = headers_as(&message, Some("alice"));
            let other = replace(headers.clone(), "mcp-name", UNKNOWN.as_bytes());
            let mismatched = post(running.addr, Proto::H1, other, bytes(&message)).await;
            mismatched.assert_error(400, -32020, &json!(5));
            assert_eq!(
                mismatched.message(),
                "Header mismatch: mcp-name header does not match the corresponding request body value"
            );
            // A missing header is refused as for tools/call.
            let missing = post(running.addr, Proto::H1, without(headers, "mcp-name"), bytes(&message)).await;
            missing.assert_error(400, -32020, &json!(5));
            assert_eq!(missing.message(), "Header mismatch: Missing mcp-name header; it is required");
        }
        // The matching header is served; the task was never touched by the refused cancel.
        assert_eq!(get_as(&running, "alice", &id).await.result()["status"], "working");
        running.stop().await;
    })
    .await;
}

/// The headers of a listen as `caller`.
fn listen_headers_as(caller: &str) -> http::HeaderMap {
    with(listen_headers(), "x-caller", caller.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_for_task_ids_is_acknowledged_with_the_callers_live_tasks_and_told_of_completion() {
    bounded(async {
        let notifications = Notifications::in_process();
        let running = serve(service(fixture_tasks(), Some(&notifications))).await;
        let live = task_id(&call_as(&running, "alice", "slow", json!({"ms": 700})).await);
        let finished = task_id(&call_as(&running, "alice", "required", json!({"ms": 0})).await);
        until_status(&running, "alice", &finished, "completed").await;
        let bobs = task_id(&call_as(&running, "bob", "slow", json!({})).await);

        let filter = json!({"taskIds": [live, bobs, finished, UNKNOWN]});
        let listen = task_request("l-1", "subscriptions/listen", json!({"notifications": filter}));
        let mut stream = open_listen(running.addr, Proto::H1, &listen, listen_headers_as("alice")).await;
        stream.assert_stream();
        let acknowledgment = stream.next_message().await.expect("the acknowledgment");
        assert_acknowledgment(&acknowledgment, &json!("l-1"), &json!({"taskIds": [live]}));

        let mut told = None;
        for _ in 0..20 {
            let message = stream.next_message().await.expect("a notification before the end");
            assert_eq!(message["method"], "notifications/tasks", "{message}");
            assert_eq!(tag(&message), &json!("l-1"), "{message}");
            assert_eq!(message["params"]["taskId"], live.as_str(), "only the acknowledged task: {message}");
            if message["params"]["status"] == "completed" {
                told = Some(message);
                break;
            }
        }
        let told = told.expect("the completion is told");
        // The detailed task, as tasks/get answers it.
        let mut got = get_as(&running, "alice", &live).await.result().clone();
        let mut params = told["params"].clone();
        for members in [&mut got, &mut params] {
            let members = members.as_object_mut().expect("an object");
            members.remove("_meta");
            members.remove("resultType");
        }
        assert_eq!(params, got);
        assert_eq!(params["result"]["content"][0]["text"], "slept 700");
        drop(stream);
        running.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_for_task_ids_without_the_extension_is_refused_minus_32021() {
    bounded(async {
        let notifications = Notifications::in_process();
        let running = serve(service(fixture_tasks(), Some(&notifications))).await;
        let id = task_id(&call_as(&running, "alice", "slow", json!({})).await);
        let listen = listen_request(6, json!({"taskIds": [id]}));
        let refused = post(running.addr, Proto::H1, listen_headers_as("alice"), bytes(&listen)).await;
        refused.assert_error(400, -32021, &json!(6));
        assert_eq!(refused.body["error"]["data"]["requiredCapabilities"], json!({"extensions": {TASKS: {}}}));
        running.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_task_store_is_answered_503_with_retry_after_never_500() {
    bounded(async {
        let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let store = CountingStore {
            inner: InProcessTaskStore::new(),
            reads: Arc::default(),
            down: Arc::clone(&down),
        };
        let notifications = Notifications::in_process();
        let tasks = task_options(Tasks::with_store(store, Tokio));
        let running = serve(service(tasks, Some(&notifications))).await;
        let id = task_id(&call_as(&running, "alice", "slow", json!({})).await);
        down.store(true, Ordering::SeqCst);
        let refused = get_as(&running, "alice", &id).await;
        refused.assert_error(503, -32603, &json!(2));
        assert_eq!(refused.headers.get("retry-after").map(|v| v.as_bytes()), Some(&b"1"[..]), "{refused:?}");
        assert_eq!(refused.body["error"]["data"], json!({"retryAfter": 1}));
        let listen = task_request(6, "subscriptions/listen", json!({"notifications": {"taskIds": [id]}}));
        let refused = post(running.addr, Proto::H1, listen_headers_as("alice"), bytes(&listen)).await;
        refused.assert_error(503, -32603, &json!(6));
        assert_eq!(refused.headers.get("retry-after").map(|v| v.as_bytes()), Some(&b"1"[..]), "{refused:?}");
        down.store(false, Ordering::SeqCst);
        assert_eq!(get_as(&running, "alice", &id).await.status, 200, "served again once reachable");
        running.stop().await;
    })
    .await;
}
