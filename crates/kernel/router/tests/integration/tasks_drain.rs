//! `Server::drain_tasks` under a transport's hard deadline: a drain dropped while it fails tasks
//! leaves those it did not reach to the next drain, so none is left `working`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_kernel_router::tasks::{
    Edit, InProcessTaskStore, LimitReached, StoreResult, TaskLimits, TaskMode, TaskRecord, TaskStatus,
    TaskStore, TaskWatch, Tasks,
};
use mcp_kernel_router::{BoxFuture, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

use crate::support::Tokio;
use crate::support::{MODERN, send};

/// The in-process store, whose edits take 200 ms once `slow` is set (a remote store's round trip).
struct SlowStore {
    inner: InProcessTaskStore,
    slow: Arc<AtomicBool>,
}

impl TaskStore for SlowStore {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        self.inner.create(record, limits)
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        self.inner.read(id)
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        let slow = self.slow.load(Ordering::SeqCst);
        Box::pin(async move {
            if slow {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            self.inner.update(id, edit).await
        })
    }

    fn watch(&self, id: &str) -> TaskWatch {
        self.inner.watch(id)
    }

    fn wake(&self, id: &str) {
        self.inner.wake(id);
    }
}

async fn stubborn(_call: ToolCall) -> Result<ToolOutput, ToolError> {
    tokio::time::sleep(Duration::from_secs(30)).await;
    Ok(ToolOutput::text("late"))
}

#[tokio::test]
async fn a_drain_dropped_midway_leaves_the_tasks_it_did_not_fail_to_the_next_drain() {
    let slow = Arc::new(AtomicBool::new(false));
    let inner = InProcessTaskStore::new();
    let store = SlowStore { inner: inner.clone(), slow: Arc::clone(&slow) };
    let tasks = Tasks::with_store(store, Tokio).threshold(Duration::from_millis(20));
    let listing = Listing {
        tools: vec![ToolSpec::new("stubborn", Mode::ReadOnly).task_mode(TaskMode::Optional)],
        ..Listing::default()
    };
    let server = Server::builder(listing).dispatch(stubborn).tasks(tasks).build().expect("a server");
    let mut ids = Vec::new();
    for id in 0..2 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "stubborn", "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        }}});
        let created = send(&server, call).await;
        ids.push(created["result"]["taskId"].as_str().expect("a task").to_owned());
    }
    slow.store(true, Ordering::SeqCst);
    // The hard deadline cuts the first drain while it fails the first task.
    let cut = tokio::time::timeout(Duration::from_millis(100), server.drain_tasks(Duration::ZERO)).await;
    assert!(cut.is_err(), "the drain was cut midway");
    server.drain_tasks(Duration::ZERO).await;
    for id in &ids {
        let record = inner.read(id).await.expect("the store answers").expect("the task is stored");
        assert_eq!(record.status, TaskStatus::Failed, "task {id} must not be left working");
    }
}
