//! The tasks extension's status notifications and bounds under a store that takes time to answer (as a
//! store shared by many instances does): what a listener is told must match what `tasks/get` answers.

use crate::support::Tokio;
use crate::support::{MODERN, send};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_kernel_router::tasks::{
    Edit, InProcessTaskStore, LimitReached, StoreResult, TaskLimits, TaskMode, TaskRecord, TaskStore,
    TaskWatch, Tasks,
};
use mcp_kernel_router::{
    BoxFuture, InputRequired, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The in-process store, slowed once on demand: an armed `read` opens `gate` then takes 300 ms to
/// answer (with what it read first); an armed `update` wakes watchers as it writes (a store that
/// learns of writes itself) and takes 300 ms to answer.
#[derive(Clone, Default)]
struct Slow {
    inner: InProcessTaskStore,
    read_armed: Arc<AtomicBool>,
    update_armed: Arc<AtomicBool>,
    gate: Arc<AtomicBool>,
}

impl TaskStore for Slow {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        self.inner.create(record, limits)
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            let read = self.inner.read(id).await;
            if self.read_armed.swap(false, Ordering::SeqCst) {
                self.gate.store(true, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            read
        })
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            let updated = self.inner.update(id, edit).await;
            if self.update_armed.swap(false, Ordering::SeqCst) {
                self.inner.wake(id);
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            updated
        })
    }

    fn watch(&self, id: &str) -> TaskWatch {
        self.inner.watch(id)
    }

    fn wake(&self, id: &str) {
        self.inner.wake(id);
    }
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn server(store: &Slow, configure: impl FnOnce(Tasks) -> Tasks) -> Server {
    let gate = Arc::clone(&store.gate);
    let dispatch = move |call: ToolCall| {
        let gate = Arc::clone(&gate);
        async move { tool(call, gate).await }
    };
    let spec = |name: &str| ToolSpec::new(name, Mode::ReadOnly).task_mode(TaskMode::Optional);
    let listing =
        Listing { tools: vec![spec("gated"), spec("asks_twice"), spec("quick")], ..Listing::default() };
    let tasks = configure(Tasks::with_store(store.clone(), Tokio).threshold(Duration::from_millis(50)));
    Server::builder(listing)
        .dispatch(dispatch)
        .notifications(mcp_kernel_router::notify::Notifications::in_process())
        .tasks(tasks)
        .build()
        .expect("a server")
}

/// `gated` finishes once the gate opens (at most 5 s), `asks_twice` asks a name after a pause, then at
/// once again, `quick` finishes after a pause.
async fn tool(call: ToolCall, gate: Arc<AtomicBool>) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "gated" => {
            for _ in 0..1000 {
                if gate.load(Ordering::SeqCst) {
                    return Ok(ToolOutput::text("done"));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(ToolOutput::text("gate never opened"))
        }
        "asks_twice" => {
            let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let round = call.context.retry_input().and_then(|i| i.state.clone()).map_or(0, |s| s[0]);
            if round == 0 {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if round < 2 {
                let ask = InputRequired::new().elicit("name", "Your name?", form).with_state(vec![round + 1]);
                return Ok(ToolOutput::input_required(ask));
            }
            Ok(ToolOutput::text("asked twice"))
        }
        _ => {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(ToolOutput::text("done"))
        }
    }
}

fn task_id(created: &Value) -> String {
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().expect("a taskId").to_owned()
}

async fn status(server: &Server, id: &str) -> Value {
    send(server, request(2, "tasks/get", json!({"taskId": id}))).await["result"]["status"].clone()
}

async fn open_listen(server: &Server, id: &str) -> mcp_kernel_router::transport::Listen {
    let message = request(9, "subscriptions/listen", json!({"notifications": {"taskIds": [id]}}));
    let envelope = mcp_kernel_router::wire::Envelope::from_value(message).expect("an envelope");
    let inbound = mcp_kernel_router::transport::Inbound::new();
    server
        .open_listen(envelope, inbound)
        .await
        .map_err(|h| h.response.map(|r| r.to_value()))
        .expect("a listen")
}

/// Every notification the listen yields until it is quiet for 500 ms (at most 20).
async fn told(listen: &mut mcp_kernel_router::transport::Listen) -> Vec<Value> {
    let mut told = Vec::new();
    for _ in 0..20 {
        match tokio::time::timeout(Duration::from_millis(500), listen.next()).await {
            Ok(Some(message)) => told.push(message),
            _ => break,
        }
    }
    told
}

/// SEP-2663: the acknowledgment lists "the task IDs it has agreed to send task status notifications
/// for"; a task acknowledged must be told its end, even one that ends while the listen opens.
#[tokio::test]
async fn a_task_acknowledged_on_a_listen_is_told_its_end_even_when_it_ends_as_the_listen_opens() {
    let store = Slow::default();
    let server = server(&store, |tasks| tasks);
    let id = task_id(&send(&server, request(1, "tools/call", json!({"name": "gated"}))).await);
    store.read_armed.store(true, Ordering::SeqCst);
    let mut listen = open_listen(&server, &id).await;
    assert_eq!(status(&server, &id).await, "completed");
    let acknowledged = listen.acknowledgment()["params"]["notifications"]["taskIds"].clone();
    if acknowledged == json!([id]) {
        let told = told(&mut listen).await;
        let last = told.last().map(|n| n["params"]["status"].clone());
        assert_eq!(last, Some(json!("completed")), "acknowledged, then never told it completed: {told:?}");
    }
}

/// SEP-2663: "Each notification carries a complete DetailedTask for the current status, identical to
/// what tasks/get would have returned at that moment": the last one told is the task as it is.
#[tokio::test]
async fn the_last_status_notification_is_the_task_as_tasks_get_answers_it() {
    let store = Slow::default();
    let server = server(&store, |tasks| tasks);
    let id = task_id(&send(&server, request(1, "tools/call", json!({"name": "asks_twice"}))).await);
    let mut listen = open_listen(&server, &id).await;
    for _ in 0..200 {
        if status(&server, &id).await == "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    store.update_armed.store(true, Ordering::SeqCst);
    let answer =
        json!({"taskId": id, "inputResponses": {"name": {"action": "accept", "content": {"name": "x"}}}});
    let ack = send(&server, request(3, "tasks/update", answer)).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let told = told(&mut listen).await;
    let now = status(&server, &id).await;
    assert_eq!(now, "input_required", "asked again");
    let last = told.last().map(|n| n["params"]["status"].clone());
    assert_eq!(last, Some(now), "the listener's last word is stale: {told:#?}");
}

/// Issue 33 bounds "live tasks per principal": with tasks that never expire (`ttlMs: null`), a caller
/// whose tasks all finished is not locked out for good.
#[tokio::test]
async fn a_finished_task_frees_its_callers_place_when_tasks_never_expire() {
    let store = Slow::default();
    let server = server(&store, |tasks| tasks.ttl(None).max_tasks_per_owner(1));
    let id = task_id(&send(&server, request(1, "tools/call", json!({"name": "quick"}))).await);
    for _ in 0..200 {
        if status(&server, &id).await == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(status(&server, &id).await, "completed");
    let again = send(&server, request(4, "tools/call", json!({"name": "quick"}))).await;
    assert_ne!(again["error"]["code"], json!(-32000), "a caller with no live task refused for good: {again}");
}
