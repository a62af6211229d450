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
//!
//! Threat: **a listener deaf to its tasks**. A shared store ends its watches when it loses its own
//! source (its connection to the engine); a task still running whose watch ended can change without a
//! word reaching this listen. So a watch that ends is read once more: a task that is terminal or gone
//! is done with, one still running means the feed is [`TaskNext::Lost`] and the listen ends with its
//! completion result — the client listens again and reads its tasks again. So does a woken task whose
//! read fails: what woke it is not known, and no other wake-up may come.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::{BoxStream, SelectAll};
use serde_json::{Value, json};

use mcp_kernel_wire::types::method::NOTIFICATION_TASKS;
use mcp_kernel_wire::version::META_SUBSCRIPTION_ID;

use crate::tasks::record::TaskRecord;
use crate::tasks::store::TaskStore;

/// One wake-up of a watched task: its id, and whether its watch ended with it.
pub(crate) type Wake = (Arc<str>, Watching);

/// Whether a task's watch lives on after a wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watching {
    /// More wake-ups may come.
    On,
    /// The store ended the watch: nothing more will wake this task.
    Ended,
}

/// What a feed's wait ended with.
#[derive(Debug)]
pub(crate) enum TaskNext {
    /// A watched task changed: its state now.
    Changed(Box<TaskRecord>),
    /// Every watched task has sent its terminal status (or is gone).
    AllDone,
    /// The store ended the watch of a task still running: the listen must end.
    Lost,
}

/// The acknowledged tasks of one listen and their wake-ups.
#[derive(Default)]
pub(crate) struct TaskFeed {
    store: Option<Arc<dyn TaskStore>>,
    wakes: SelectAll<BoxStream<'static, Wake>>,
    /// Woken tasks not read yet (kept across a cancelled read, so no wake-up is lost).
    pending: VecDeque<Wake>,
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
    pub(crate) fn watch(&self, id: &str) -> Option<BoxStream<'static, Wake>> {
        let store = self.store.as_ref()?;
        let id: Arc<str> = Arc::from(id);
        let watch = store.watch(&id);
        // Each wake-up, then one last item when the store ends the watch.
        let stream = futures_util::stream::unfold(Some((id, watch)), |state| async move {
            let (id, mut watch) = state?;
            if watch.woken().await {
                Some(((Arc::clone(&id), Watching::On), Some((id, watch))))
            } else {
                Some(((id, Watching::Ended), None))
            }
        });
        Some(stream.boxed())
    }

    /// Keeps a watch taken by [`TaskFeed::watch`] for a task the acknowledgment names.
    pub(crate) fn keep(&mut self, watch: BoxStream<'static, Wake>) {
        self.wakes.push(watch);
        self.open += 1;
    }

    /// Whether a task is still watched.
    pub(crate) fn is_open(&self) -> bool {
        self.open > 0
    }

    /// The next change of a watched task, read from the store. Cancel-safe: a wake-up taken is read on
    /// the next call if this one is dropped.
    pub(crate) async fn next(&mut self) -> TaskNext {
        let Some(store) = self.store.clone() else { return TaskNext::AllDone };
        loop {
            if self.open == 0 {
                return TaskNext::AllDone;
            }
            let (id, watching) = match self.pending.front() {
                Some(wake) => wake.clone(),
                None => {
                    // Every watch that ends says so before its stream ends: with a task open, the
                    // streams cannot all be over.
                    let Some(wake) = self.wakes.next().await else { return TaskNext::Lost };
                    self.pending.push_back(wake.clone());
                    wake
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
                // What woke the task is not known, and nothing may wake it again: the listen ends (its
                // client listens again and reads its tasks again) rather than stay deaf to it.
                Err(error) => {
                    tracing::error!(%error, "the task store failed while a listen read a task; the listen ends");
                    return TaskNext::Lost;
                }
            };
            let sent = self.sent.entry(Arc::clone(&id)).or_insert(0);
            if record.revision <= *sent {
                if watching == Watching::Ended && !record.status.is_terminal() {
                    return TaskNext::Lost;
                }
                continue;
            }
            *sent = record.revision;
            if record.status.is_terminal() {
                self.finish(id);
            } else if watching == Watching::Ended {
                // Its change is sent; the end of its watch is reported at the next call.
                self.pending.push_front((Arc::clone(&id), Watching::Ended));
            }
            return TaskNext::Changed(Box::new(record));
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
