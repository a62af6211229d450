//! The tasks extension and the listens over a store and a hub shared by many instances when their
//! engine cannot be reached: what needs the store is refused with a retryable error (never a hang,
//! never a wrong status), what needs no store keeps being served, a listen never stays deaf, and a
//! task's outcome survives a short outage.

use crate::support::Tokio;
use crate::support::{MODERN, send};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_kernel_router::notify::{ChangeFeed, ChangeHub, HubUnavailable, InProcessHub, Notifications};
use mcp_kernel_router::tasks::{
    Edit, InProcessTaskStore, LimitReached, StoreError, StoreResult, TaskLimits, TaskMode, TaskRecord,
    TaskStore, TaskWatch, Tasks, Transition,
};
use mcp_kernel_router::{BoxFuture, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The in-process store behind a switch: while `down`, every operation fails `Unavailable` (as a
/// shared store whose engine is unreachable does); `fail_terminal` fails that many terminal
/// transitions first; `cut` ends every watch taken so far (a shared store that lost its connection).
#[derive(Clone)]
struct Switch {
    inner: InProcessTaskStore,
    down: Arc<AtomicBool>,
    fail_terminal: Arc<AtomicUsize>,
    cut: Arc<tokio::sync::watch::Sender<bool>>,
    watches: Arc<AtomicUsize>,
}

fn unreachable<T>() -> StoreResult<T> {
    Err(StoreError::Unavailable("connection refused".into()))
}

impl TaskStore for Switch {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        if self.down.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(unreachable()));
        }
        self.inner.create(record, limits)
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        if self.down.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(unreachable()));
        }
        self.inner.read(id)
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        if self.down.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(unreachable()));
        }
        self.inner.update(id, edit)
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        transition: Transition,
        now: u64,
    ) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        let failing = transition.is_terminal()
            && self
                .fail_terminal
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
        if failing || self.down.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(unreachable()));
        }
        self.inner.transition(id, transition, now)
    }

    fn watch(&self, id: &str) -> TaskWatch {
        self.watches.fetch_add(1, Ordering::SeqCst);
        let inner = self.inner.watch(id);
        let wakes = futures_util::stream::unfold(inner, |mut inner| async move {
            inner.woken().await.then_some(((), inner))
        });
        let mut cut = self.cut.subscribe();
        let cut = async move {
            let _ = cut.wait_for(|cut| *cut).await;
        };
        TaskWatch::new(wakes.take_until(Box::pin(cut)))
    }

    fn wake(&self, id: &str) {
        self.inner.wake(id);
    }
}

impl Switch {
    fn new() -> Self {
        Self {
            inner: InProcessTaskStore::new(),
            down: Arc::default(),
            fail_terminal: Arc::default(),
            cut: Arc::new(tokio::sync::watch::channel(false).0),
            watches: Arc::default(),
        }
    }

    fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// Ends every watch taken so far.
    fn cut_watches(&self) {
        self.cut.send_replace(true);
    }
}

/// The in-process hub behind the same switch: while `down`, a new subscriber is refused.
#[derive(Clone, Default)]
struct SwitchHub {
    inner: InProcessHub,
    down: Arc<AtomicBool>,
}

impl ChangeHub for SwitchHub {
    fn publish(&self, change: mcp_kernel_router::notify::Change) {
        self.inner.publish(change);
    }

    fn subscribe(&self) -> ChangeFeed {
        self.inner.subscribe()
    }

    fn try_subscribe(&self) -> Result<ChangeFeed, HubUnavailable> {
        if self.down.load(Ordering::SeqCst) {
            return Err(HubUnavailable("connection refused".into()));
        }
        Ok(self.inner.subscribe())
    }
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `plain` answers at once; `optional` and `required` sleep `ms` (default 300).
async fn tool(call: ToolCall) -> Result<ToolOutput, ToolError> {
    if &*call.name == "plain" {
        return Ok(ToolOutput::text("plain"));
    }
    let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(300);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(ToolOutput::text(format!("slept {ms}")))
}

fn server(store: &Switch, hub: &SwitchHub) -> Server {
    let schema = json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}});
    let spec = |name: &str, mode: TaskMode| {
        ToolSpec::new(name, Mode::ReadOnly).task_mode(mode).input_schema(schema.clone())
    };
    let listing = Listing {
        tools: vec![
            spec("plain", TaskMode::Never),
            spec("optional", TaskMode::Optional),
            spec("required", TaskMode::Required),
        ],
        ..Listing::default()
    };
    let tasks = Tasks::with_store(store.clone(), Tokio).threshold(Duration::from_millis(50));
    Server::builder(listing)
        .dispatch(tool)
        .notifications(Notifications::with_hub(hub.clone()))
        .tasks(tasks)
        .build()
        .expect("a server")
}

fn task_id(created: &Value) -> String {
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().expect("a taskId").to_owned()
}

fn call(name: &str) -> Value {
    request(1, "tools/call", json!({"name": name}))
}

/// The retryable answer: -32603 with `data.retryAfter`, nothing of the store's reason.
fn assert_retryable(answer: &Value) {
    assert_eq!(
        answer["error"],
        json!({"code": -32603, "message": "Service unavailable; retry later", "data": {"retryAfter": 1}}),
        "{answer}"
    );
}

async fn open_listen(server: &Server, filter: Value) -> Result<mcp_kernel_router::transport::Listen, Value> {
    let message = request(9, "subscriptions/listen", json!({"notifications": filter}));
    let envelope = mcp_kernel_router::wire::Envelope::from_value(message).expect("an envelope");
    server
        .open_listen(envelope, mcp_kernel_router::transport::Inbound::new())
        .await
        .map_err(|handled| handled.response.map(|r| r.to_value()).unwrap_or(Value::Null))
}

#[tokio::test]
async fn with_the_store_unreachable_the_task_methods_are_refused_retryable_and_plain_calls_are_served() {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    let id = task_id(&send(&server, call("required")).await);
    store.set_down(true);
    for method in ["tasks/get", "tasks/cancel"] {
        assert_retryable(&send(&server, request(2, method, json!({"taskId": id}))).await);
    }
    let update = json!({"taskId": id, "inputResponses": {}});
    assert_retryable(&send(&server, request(3, "tasks/update", update)).await);
    let plain = send(&server, call("plain")).await;
    assert_eq!(plain["result"]["content"][0]["text"], "plain", "{plain}");
}

#[tokio::test]
async fn with_the_store_unreachable_an_optional_tool_is_answered_as_without_tasks_and_a_required_one_is_refused_retryable()
 {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    store.set_down(true);
    let optional = tokio::time::timeout(Duration::from_secs(5), send(&server, call("optional")))
        .await
        .expect("answered, not hung");
    assert_eq!(optional["result"]["content"][0]["text"], "slept 300", "{optional}");
    let required = tokio::time::timeout(Duration::from_secs(5), send(&server, call("required")))
        .await
        .expect("answered, not hung");
    assert_retryable(&required);
}

#[tokio::test]
async fn with_the_hub_unreachable_a_listen_is_refused_retryable_before_it_is_acknowledged() {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    hub.down.store(true, Ordering::SeqCst);
    let refused = open_listen(&server, json!({"toolsListChanged": true})).await.expect_err("refused");
    assert_retryable(&refused);
    assert_eq!(refused["id"], 9);
    hub.down.store(false, Ordering::SeqCst);
    let listen = open_listen(&server, json!({"toolsListChanged": true})).await.expect("served again");
    assert_eq!(listen.acknowledgment()["params"]["notifications"], json!({"toolsListChanged": true}));
}

#[tokio::test]
async fn with_the_store_unreachable_a_listen_for_task_ids_is_refused_retryable() {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    let id = task_id(&send(&server, call("required")).await);
    store.set_down(true);
    let refused = open_listen(&server, json!({"taskIds": [id]})).await.expect_err("refused");
    assert_retryable(&refused);
}

#[tokio::test]
async fn a_listen_whose_running_tasks_watch_is_lost_ends_with_its_completion_rather_than_stay_deaf() {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    let id = task_id(
        &send(&server, request(1, "tools/call", json!({"name": "required", "arguments": {"ms": 60_000}})))
            .await,
    );
    let mut listen = open_listen(&server, json!({"taskIds": [id]})).await.expect("a listen");
    assert_eq!(listen.acknowledgment()["params"]["notifications"]["taskIds"], json!([id]));
    store.cut_watches();
    let ended = tokio::time::timeout(Duration::from_secs(3), async {
        // Bounded: at most a status notification or two before the end.
        for _ in 0..5 {
            if listen.next().await.is_none() {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ended, Ok(true), "the listen went on without a watch on its running task");
    let completion = listen.completion().to_value();
    assert_eq!(completion["id"], 9, "{completion}");
    assert!(completion.get("result").is_some(), "{completion}");
}

#[tokio::test]
async fn a_tasks_outcome_is_written_again_when_the_store_is_unreachable_for_a_moment() {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    store.fail_terminal.store(3, Ordering::SeqCst);
    let id = task_id(
        &send(&server, request(1, "tools/call", json!({"name": "required", "arguments": {"ms": 100}}))).await,
    );
    let mut status = Value::Null;
    for _ in 0..300 {
        let got = send(&server, request(2, "tasks/get", json!({"taskId": id}))).await;
        status = got["result"]["status"].clone();
        if status == "completed" {
            assert_eq!(got["result"]["result"]["content"][0]["text"], "slept 100");
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, "completed", "the outcome was given up after a short outage");
    assert_eq!(store.fail_terminal.load(Ordering::SeqCst), 0, "three writes failed first");
}

#[tokio::test]
async fn a_run_whose_store_keeps_ending_its_watch_watches_again_ever_more_slowly_not_twenty_times_a_second() {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    let message = request(1, "tools/call", json!({"name": "required", "arguments": {"ms": 60_000}}));
    let id = task_id(&send(&server, message).await);
    // From now on every watch ends as soon as it is taken (a shared store whose source is gone).
    store.cut_watches();
    let before = store.watches.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    let watched = store.watches.load(Ordering::SeqCst) - before;
    // 50 + 100 + 200 + 400 + 800 ms: five or six watches in 1.6 s, where a fixed 50 ms pause takes 32.
    assert!(watched <= 8, "watched {watched} times in 1.6 s");
    assert!(watched >= 2, "watched {watched} times: the run stopped watching");
    let got = send(&server, request(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
}

#[tokio::test]
async fn a_listen_whose_read_of_a_woken_task_fails_ends_rather_than_stay_deaf_to_it() {
    let (store, hub) = (Switch::new(), SwitchHub::default());
    let server = server(&store, &hub);
    let id = task_id(
        &send(&server, request(1, "tools/call", json!({"name": "required", "arguments": {"ms": 60_000}})))
            .await,
    );
    let mut listen = open_listen(&server, json!({"taskIds": [id]})).await.expect("a listen");
    // The task is cancelled elsewhere while this instance cannot read the store: its wake-up comes,
    // its read fails, and no other wake-up will come.
    store.set_down(true);
    store.inner.request_cancel(&id, mcp_kernel_router::tasks::now_ms()).await.unwrap().unwrap();
    let next = tokio::time::timeout(Duration::from_secs(2), listen.next()).await;
    store.set_down(false);
    assert_eq!(next, Ok(None), "the listen ends: its client listens again and reads the task again");
    assert!(listen.completion().to_value().get("result").is_some());
}
