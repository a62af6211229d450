//! The end of a session with tasks running (in process, over in-memory pipes): a task that finishes
//! within `StdioOptions::task_grace` keeps its result, the `shutdown_grace` cut after a signal fails a
//! task still running at once, and a session whose output is gone fails its tasks at once.

use std::time::{Duration, Instant};

use mcp_kernel_router::tasks::{TaskMode, TaskRuntime, TaskStatus, Tasks};
use mcp_kernel_router::{BoxFuture, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_stdio::StdioOptions;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::harness::{Session, bounded};

const SHUTDOWN_REASON: &str = "the server shut down before the task finished";

/// Tasks on the test's tokio runtime.
struct Tokio;

impl TaskRuntime for Tokio {
    fn spawn(&self, task: BoxFuture<'static, ()>) {
        tokio::spawn(task);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// `quick` sleeps 300 ms; `stubborn` sleeps 60 s and ignores its cancellation.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let ms = if &*call.name == "quick" { 300 } else { 60_000 };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(ToolOutput::text(format!("slept {ms}")))
}

/// A server whose two tools may run as tasks, and its tasks (to read the store).
fn server() -> (Server, Tasks) {
    let tasks = Tasks::in_process(Tokio).threshold(Duration::from_millis(50));
    let tool = |name: &str| ToolSpec::new(name, Mode::ReadOnly).task_mode(TaskMode::Optional);
    let listing = Listing { tools: vec![tool("quick"), tool("stubborn")], ..Listing::default() };
    let server = Server::builder(listing).dispatch(dispatch).tasks(tasks.clone()).build().expect("a server");
    (server, tasks)
}

/// Calls `tool` declaring the extension; the id of the task it became.
async fn create(session: &mut Session, id: i64, tool: &str) -> String {
    session
        .send_json(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
            }}}))
        .await;
    let created = session.expect().await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().expect("a taskId").to_owned()
}

/// The stored status of task `id`, and its status message.
async fn stored(tasks: &Tasks, id: &str) -> (TaskStatus, Option<String>) {
    let record = tasks.store().read(id).await.expect("the store answers").expect("the task is stored");
    (record.status, record.status_message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_finishes_within_the_task_grace_keeps_its_result_at_end_of_input() {
    bounded(async {
        let (server, tasks) = server();
        let mut session = Session::start(server, StdioOptions::default().task_grace(Duration::from_secs(20)));
        let id = create(&mut session, 1, "quick").await;
        session.close();
        assert_eq!(session.rest().await, Vec::<Value>::new());
        session.finish().await.expect("a clean end");
        assert_eq!(stored(&tasks, &id).await.0, TaskStatus::Completed, "it finished within the grace");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shutdown_grace_cut_fails_a_running_task_at_once_whatever_the_task_grace() {
    bounded(async {
        let (server, tasks) = server();
        let (stop, stopped) = oneshot::channel::<()>();
        let options = StdioOptions::default()
            .shutdown_on(async move {
                let _ = stopped.await;
            })
            .shutdown_grace(Duration::from_millis(300))
            .task_grace(Duration::from_secs(60));
        let mut session = Session::start(server, options);
        let id = create(&mut session, 1, "stubborn").await;
        let signalled = Instant::now();
        stop.send(()).expect("the session holds the signal");
        session.finish().await.expect("a drained session returns Ok");
        assert!(signalled.elapsed() < Duration::from_secs(10), "ended at the cut: {:?}", signalled.elapsed());
        let (status, message) = stored(&tasks, &id).await;
        assert_eq!(status, TaskStatus::Failed, "never left working");
        assert_eq!(message.as_deref(), Some(SHUTDOWN_REASON));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_output_is_gone_fails_its_tasks_at_once() {
    bounded(async {
        let (server, tasks) = server();
        let mut session = Session::start(server, StdioOptions::default().task_grace(Duration::from_secs(60)));
        let id = create(&mut session, 1, "stubborn").await;
        let (mut input, served) = session.drop_output();
        // A request whose answer cannot be written: the output fails.
        let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
        if let Some(input) = input.as_mut() {
            let _ = tokio::io::AsyncWriteExt::write_all(input, format!("{ping}\n").as_bytes()).await;
        }
        let ended = served.await.expect("serve_io does not panic");
        assert!(ended.is_err(), "serve_io reports the output's failure");
        let (status, message) = stored(&tasks, &id).await;
        assert_eq!(status, TaskStatus::Failed);
        assert_eq!(message.as_deref(), Some(SHUTDOWN_REASON));
    })
    .await;
}
