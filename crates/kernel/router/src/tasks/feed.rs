//! The task status notifications of one `subscriptions/listen` stream: a watch on each task its
//! acknowledgment names, read again at each wake-up.
//!
//! Threat: **one client's tasks drowning everyone's listeners**. Any client can change its own tasks
//! at its own rate (create, answer, cancel); were task statuses announced through the change hub,
//! every listener's bounded feed would carry them, and a burst of one client's task churn would fill —
//! and so end — the listens of clients that never asked for tasks. So task statuses never go through
//! the hub: a listen watches only the tasks it acknowledged, in the task store (whose wake-ups reach
//! every instance sharing it), and reads each one again when woken. What it sends is the task as
//! `tasks/get` would answer it then; a read that shows nothing newer than what was sent (two wake-ups
//! for one change) sends nothing, and a task's last notification is its terminal status.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::{BoxStream, SelectAll};
use serde_json::{Value, json};

use mcp_kernel_wire::types::method::NOTIFICATION_TASKS;
use mcp_kernel_wire::version::META_SUBSCRIPTION_ID;

use crate::tasks::record::TaskRecord;
use crate::tasks::store::TaskStore;

/// The acknowledged tasks of one listen and their wake-ups.
#[derive(Default)]
pub(crate) struct TaskFeed {
    store: Option<Arc<dyn TaskStore>>,
    wakes: SelectAll<BoxStream<'static, Arc<str>>>,
    /// Woken tasks not read yet (kept across a cancelled read, so no wake-up is lost).
    pending: VecDeque<Arc<str>>,
    /// The revision last sent of each task.
    sent: HashMap<Arc<str>, u64>,
    /// Tasks whose terminal status was sent (or that are gone).
    done: HashSet<Arc<str>>,
    /// Tasks still watched.
    open: usize,
}

impl TaskFeed {
    /// A feed over `store`, watching no task yet.
    pub(crate) fn over(store: Arc<dyn TaskStore>) -> Self {
        Self { store: Some(store), ..Self::default() }
    }

    /// Watches the task `id` (before its state is read, so a change in between is not missed); the
    /// watch is given back to be kept with [`TaskFeed::keep`] or dropped.
    pub(crate) fn watch(&self, id: &str) -> Option<BoxStream<'static, Arc<str>>> {
        let store = self.store.as_ref()?;
        let id: Arc<str> = Arc::from(id);
        let watch = store.watch(&id);
        let stream = futures_util::stream::unfold((id, watch), |(id, mut watch)| async move {
            watch.woken().await.then(|| (Arc::clone(&id), (id, watch)))
        });
        Some(stream.boxed())
    }

    /// Keeps a watch taken by [`TaskFeed::watch`] for a task the acknowledgment names.
    pub(crate) fn keep(&mut self, watch: BoxStream<'static, Arc<str>>) {
        self.wakes.push(watch);
        self.open += 1;
    }

    /// Whether a task is still watched.
    pub(crate) fn is_open(&self) -> bool {
        self.open > 0
    }

    /// The next change of a watched task, read from the store; `None` when no watched task can change
    /// any more. Cancel-safe: a wake-up taken is read on the next call if this one is dropped.
    pub(crate) async fn next(&mut self) -> Option<TaskRecord> {
        let store = Arc::clone(self.store.as_ref()?);
        loop {
            if self.open == 0 {
                return None;
            }
            let id = match self.pending.front() {
                Some(id) => Arc::clone(id),
                None => {
                    let id = self.wakes.next().await?;
                    self.pending.push_back(Arc::clone(&id));
                    id
                }
            };
            let read = store.read(&id).await;
            self.pending.pop_front();
            if self.done.contains(&id) {
                continue;
            }
            let record = match read {
                Ok(Some(record)) => record,
                // Gone: nothing more will come of it.
                Ok(None) => {
                    self.finish(id);
                    continue;
                }
                Err(error) => {
                    tracing::error!(%error, "the task store failed while a listen read a task");
                    continue;
                }
            };
            let sent = self.sent.entry(Arc::clone(&id)).or_insert(0);
            if record.revision <= *sent {
                continue;
            }
            *sent = record.revision;
            if record.status.is_terminal() {
                self.finish(id);
            }
            return Some(record);
        }
    }

    fn finish(&mut self, id: Arc<str>) {
        if self.done.insert(id) {
            self.open -= 1;
        }
    }
}

/// The `notifications/tasks` message of `record` on the stream of the listen `subscription`: the
/// detailed task, tagged.
pub(crate) fn task_notification(subscription: &Value, record: &TaskRecord) -> Value {
    let mut params = record.detailed();
    params.insert("_meta".into(), json!({ META_SUBSCRIPTION_ID: subscription }));
    json!({ "jsonrpc": "2.0", "method": NOTIFICATION_TASKS, "params": params })
}
