//! The in-process task store: every task of this process in one map, behind one lock.
//!
//! Threat: **store exhaustion**. A caller that creates tasks faster than they finish or expire would
//! grow the map without bound, so `create` refuses past the owner's bound (the owner's tasks still
//! running) and the store's (every task stored, finished ones included until removed: that bound is
//! the store's memory). Nothing stored is evicted early to make room. Tasks
//! are removed once [`TaskRecord::is_removable`]; the sweep runs inside `create` and `read`, so a store
//! holding no task costs nothing, and one holding tasks costs a look at the earliest removal deadline.
//!
//! What it loses: everything, when the process ends. A host that must keep tasks across restarts, or
//! share them between instances, uses a store of its own behind the same trait.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use futures_channel::mpsc;

use crate::contract::BoxFuture;
use crate::tasks::record::{TaskRecord, now_ms};
use crate::tasks::store::{Edit, LimitReached, StoreResult, TaskLimits, TaskStore, TaskWatch};

/// Tasks kept in this process (the default store).
#[derive(Clone, Default)]
pub struct InProcessTaskStore {
    inner: Arc<Mutex<Tasks>>,
}

impl std::fmt::Debug for InProcessTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessTaskStore").field("tasks", &self.len()).finish()
    }
}

#[derive(Default)]
struct Tasks {
    records: HashMap<String, TaskRecord>,
    /// Running (not terminal) tasks by owner (`None`: nobody's), for the per-owner bound.
    per_owner: HashMap<Option<String>, usize>,
    /// `(removal deadline, id)`, earliest first.
    removals: BTreeSet<(u64, String)>,
    /// The runners watching each task.
    watchers: HashMap<String, Vec<mpsc::Sender<()>>>,
}

impl Tasks {
    fn sweep(&mut self, now: u64) {
        while let Some((at, _)) = self.removals.first() {
            if *at > now {
                return;
            }
            let Some((_, id)) = self.removals.pop_first() else { return };
            if let Some(record) = self.records.remove(&id)
                && !record.status.is_terminal()
            {
                self.forget_owner(&record.owner);
            }
            // Dropping the senders ends the watches: a runner still waiting reads again and stops.
            self.watchers.remove(&id);
        }
    }

    fn forget_owner(&mut self, owner: &Option<String>) {
        if let Some(count) = self.per_owner.get_mut(owner) {
            *count -= 1;
            if *count == 0 {
                self.per_owner.remove(owner);
            }
        }
    }
}

impl InProcessTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many tasks are stored (finished ones included, until removed).
    pub fn len(&self) -> usize {
        self.lock().records.len()
    }

    /// Whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Tasks> {
        // A panic under the lock leaves whole records (every edit is applied to a clone first).
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TaskStore for InProcessTaskStore {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        let created = {
            let mut tasks = self.lock();
            tasks.sweep(now_ms());
            let owned = tasks.per_owner.get(&record.owner).copied().unwrap_or(0);
            if tasks.records.len() >= limits.total {
                Err(LimitReached::Total(limits.total))
            } else if owned >= limits.per_owner {
                Err(LimitReached::PerOwner(limits.per_owner))
            } else {
                *tasks.per_owner.entry(record.owner.clone()).or_insert(0) += 1;
                if let Some(at) = record.remove_after_ms {
                    tasks.removals.insert((at, record.id.clone()));
                }
                tasks.records.insert(record.id.clone(), record);
                Ok(())
            }
        };
        Box::pin(std::future::ready(Ok(created)))
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        let record = {
            let mut tasks = self.lock();
            tasks.sweep(now_ms());
            tasks.records.get(id).cloned()
        };
        Box::pin(std::future::ready(Ok(record)))
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        let changed = {
            let mut tasks = self.lock();
            match tasks.records.get(id) {
                Some(record) => {
                    let was_running = !record.status.is_terminal();
                    let mut edited = record.clone();
                    let changed = edit(&mut edited);
                    if changed {
                        if was_running && edited.status.is_terminal() {
                            tasks.forget_owner(&edited.owner);
                        }
                        tasks.records.insert(id.to_owned(), edited.clone());
                    }
                    changed.then_some(edited)
                }
                None => None,
            }
        };
        Box::pin(std::future::ready(Ok(changed)))
    }

    fn watch(&self, id: &str) -> TaskWatch {
        // One pending wake-up is enough: each says only "read again".
        let (sender, receiver) = mpsc::channel(1);
        let mut tasks = self.lock();
        if tasks.records.contains_key(id) {
            tasks.watchers.entry(id.to_owned()).or_default().push(sender);
        }
        TaskWatch::new(receiver)
    }

    fn wake(&self, id: &str) {
        let mut tasks = self.lock();
        if let Some(watchers) = tasks.watchers.get_mut(id) {
            watchers.retain_mut(|sender| match sender.try_send(()) {
                Ok(()) => true,
                Err(error) => error.is_full(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::record::{TaskStatus, Timing, Transition};
    use futures_util::FutureExt;
    use serde_json::json;

    const LIMITS: TaskLimits = TaskLimits { per_owner: 2, total: 3 };

    fn task(id: &str, owner: Option<&str>, ttl_ms: Option<u64>) -> TaskRecord {
        let timing = Timing { ttl_ms, poll_interval_ms: None, retention_ms: 0 };
        TaskRecord::new(id.into(), owner.map(str::to_owned), timing, now_ms())
    }

    fn create(store: &InProcessTaskStore, record: TaskRecord) -> Result<(), LimitReached> {
        store.create(record, LIMITS).now_or_never().unwrap().unwrap()
    }

    #[test]
    fn refuses_past_the_owners_bound_and_the_stores_without_evicting_anything() {
        let store = InProcessTaskStore::new();
        create(&store, task("a1", Some("alice"), None)).unwrap();
        create(&store, task("a2", Some("alice"), None)).unwrap();
        assert_eq!(create(&store, task("a3", Some("alice"), None)), Err(LimitReached::PerOwner(2)));
        create(&store, task("b1", Some("bob"), None)).unwrap();
        assert_eq!(create(&store, task("c1", Some("carol"), None)), Err(LimitReached::Total(3)));
        assert_eq!(store.len(), 3, "nothing stored was evicted");
        // A finished task frees its owner's place, but stays in the store's count until removed.
        store.transition("a1", Transition::Cancelled, now_ms()).now_or_never().unwrap().unwrap();
        assert_eq!(create(&store, task("a4", Some("alice"), None)), Err(LimitReached::Total(3)));
    }

    #[test]
    fn a_finished_task_frees_its_owners_place_at_once() {
        let store = InProcessTaskStore::new();
        let limits = TaskLimits { per_owner: 2, total: 10 };
        let create = |record| store.create(record, limits).now_or_never().unwrap().unwrap();
        create(task("a1", Some("alice"), None)).unwrap();
        create(task("a2", Some("alice"), None)).unwrap();
        let done = Transition::Completed(json!({"content": []}));
        store.transition("a1", done, now_ms()).now_or_never().unwrap().unwrap();
        create(task("a3", Some("alice"), None)).unwrap();
        assert_eq!(create(task("a4", Some("alice"), None)), Err(LimitReached::PerOwner(2)));
    }

    #[test]
    fn a_task_past_its_removal_deadline_is_swept_and_frees_its_owners_place() {
        let store = InProcessTaskStore::new();
        let mut gone = task("old", Some("alice"), Some(0));
        gone.remove_after_ms = Some(0);
        create(&store, gone).unwrap();
        create(&store, task("kept", Some("alice"), None)).unwrap();
        assert!(store.read("old").now_or_never().unwrap().unwrap().is_none());
        assert!(store.read("kept").now_or_never().unwrap().unwrap().is_some());
        create(&store, task("new", Some("alice"), None)).unwrap();
    }

    #[test]
    fn a_transition_wakes_the_runner_watching_the_task() {
        let store = InProcessTaskStore::new();
        create(&store, task("t", None, None)).unwrap();
        let mut watch = store.watch("t");
        assert!(watch.woken().now_or_never().is_none(), "nothing happened yet");
        let after = store.request_cancel("t", now_ms()).now_or_never().unwrap().unwrap().unwrap();
        assert_eq!(after.status, TaskStatus::Cancelled);
        assert_eq!(watch.woken().now_or_never(), Some(true));
        let refused = store.transition("t", Transition::Completed(json!({})), now_ms());
        assert!(refused.now_or_never().unwrap().unwrap().is_none(), "terminal stays terminal");
    }

    #[test]
    fn a_removed_task_ends_its_watch() {
        let store = InProcessTaskStore::new();
        let mut short = task("t", None, Some(0));
        short.remove_after_ms = Some(0);
        create(&store, short).unwrap();
        let mut watch = store.watch("t");
        store.read("t").now_or_never().unwrap().unwrap();
        assert_eq!(watch.woken().now_or_never(), Some(false));
    }
}
