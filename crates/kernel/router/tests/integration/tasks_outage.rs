//! A running task through its store's outage: a shared store that loses its engine ends every watch
//! and fails every read; when the engine comes back, its watches may be served again before its reads
//! are. A change written meanwhile (a cancellation through another instance, whose wake-up reached
//! nobody) must still reach the run: after an unread look, the run looks again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_channel::mpsc;
use mcp_kernel_router::tasks::{
    Edit, InProcessTaskStore, LimitReached, StoreError, StoreResult, TaskLimits, TaskMode, TaskRecord,
    TaskStore, TaskWatch, Tasks, now_ms,
};
use mcp_kernel_router::{BoxFuture, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

use crate::support::{MODERN, Tokio, send};

/// The in-process store behind a link that can go down: watches and reads each come back on their own.
#[derive(Clone, Default)]
struct Outage {
    inner: InProcessTaskStore,
    watches_down: Arc<AtomicBool>,
    reads_down: Arc<AtomicBool>,
    watchers: Arc<Mutex<Vec<mpsc::UnboundedSender<()>>>>,
}

impl Outage {
    fn down(&self, watches: bool, reads: bool) {
        self.watches_down.store(watches, Ordering::SeqCst);
        self.reads_down.store(reads, Ordering::SeqCst);
        if watches {
            // The subscription dropped: every watch ends.
            self.watchers.lock().unwrap_or_else(PoisonError::into_inner).clear();
        }
    }

    fn unreachable<T>(&self) -> Option<StoreResult<T>> {
        let down = self.reads_down.load(Ordering::SeqCst);
        down.then(|| Err(StoreError::Unavailable("the engine is down".into())))
    }
}

impl TaskStore for Outage {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        self.inner.create(record, limits)
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        match self.unreachable() {
            Some(down) => Box::pin(std::future::ready(down)),
            None => self.inner.read(id),
        }
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        match self.unreachable() {
            Some(down) => Box::pin(std::future::ready(down)),
            None => self.inner.update(id, edit),
        }
    }

    fn watch(&self, _id: &str) -> TaskWatch {
        if self.watches_down.load(Ordering::SeqCst) {
            return TaskWatch::new(futures_util::stream::empty());
        }
        let (sender, receiver) = mpsc::unbounded();
        self.watchers.lock().unwrap_or_else(PoisonError::into_inner).push(sender);
        TaskWatch::new(receiver)
    }

    fn wake(&self, _id: &str) {
        let watchers = self.watchers.lock().unwrap_or_else(PoisonError::into_inner);
        for watcher in watchers.iter() {
            let _ = watcher.unbounded_send(());
        }
    }
}

#[tokio::test]
async fn a_cancellation_written_during_an_outage_reaches_the_run_when_watches_return_before_reads() {
    let store = Outage::default();
    let told = Arc::new(AtomicBool::new(false));
    let handler_told = Arc::clone(&told);
    let dispatch = move |call: ToolCall| {
        let told = Arc::clone(&handler_told);
        async move {
            if let Some(task) = call.context.task() {
                tokio::select! {
                    () = task.cancelled() => told.store(true, Ordering::SeqCst),
                    () = tokio::time::sleep(Duration::from_secs(30)) => {}
                }
            }
            Ok::<_, ToolError>(ToolOutput::text("done"))
        }
    };
    let tasks = Tasks::with_store(store.clone(), Tokio).threshold(Duration::from_millis(20));
    let listing = Listing {
        tools: vec![ToolSpec::new("long", Mode::ReadOnly).task_mode(TaskMode::Optional)],
        ..Listing::default()
    };
    let server = Server::builder(listing).dispatch(dispatch).tasks(tasks).build().expect("a server");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "long", "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }}});
    let created = send(&server, call).await;
    let id = created["result"]["taskId"].as_str().expect("a task").to_owned();

    store.down(true, true);
    tokio::time::sleep(Duration::from_millis(120)).await;
    // Another instance cancels it; the wake-up it publishes reaches no one here.
    store.inner.request_cancel(&id, now_ms()).await.expect("the engine answers it").expect("cancelled");
    // The subscription is back first; reads follow a moment later.
    store.down(false, true);
    tokio::time::sleep(Duration::from_millis(200)).await;
    store.down(false, false);

    let started = Instant::now();
    while !told.load(Ordering::SeqCst) {
        assert!(started.elapsed() < Duration::from_secs(5), "the run never learnt of the cancellation");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
