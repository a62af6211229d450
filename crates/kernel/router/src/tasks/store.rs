//! Where tasks are kept: the [`TaskStore`] trait, shaped so that a store shared by many processes fits
//! it as well as the in-process default ([`InProcessTaskStore`](crate::tasks::InProcessTaskStore)).
//!
//! A store has five required operations: `create` (bounded), `read`, `update` (one atomic edit of a
//! record — under a lock in one process, a compare-and-swap across many), `watch` and `wake` (the
//! instance running a task learns that a client wrote to it, possibly through another instance). The
//! task operations the core performs — a transition, recording input, a cancellation request, expiry
//! — are provided methods built on `update` and `wake`, so every store applies the same rules
//! (`record.rs`): a terminal status is never overwritten, by any instance.

use std::collections::BTreeMap;

use futures_util::StreamExt;
use serde_json::Value;

use crate::contract::BoxFuture;
use crate::tasks::record::{TaskRecord, Transition};

/// A store that could not do what it was asked. The reason is logged, never sent; the request that
/// needed the store is answered as its kind says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store cannot be reached now (its engine is down, paused or partitioned away): nothing was
    /// done, and the request may be retried — answered with
    /// [`ErrorObject::unavailable`](mcp_kernel_wire::ErrorObject::unavailable) (over HTTP, 503 with
    /// `retry-after`).
    #[error("the task store is unreachable: {0}")]
    Unavailable(String),
    /// The store answered, but not as it should (a corrupt record, a refused command): -32603.
    #[error("the task store failed: {0}")]
    Failed(String),
}

impl StoreError {
    /// Whether the store was unreachable (the request may be retried).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable(_))
    }

    /// The answer to a request that needed the store: retryable when it was unreachable, -32603
    /// otherwise. The reason is logged here, once.
    pub(crate) fn to_answer(&self, during: &str) -> mcp_kernel_wire::ErrorObject {
        if self.is_unavailable() {
            tracing::warn!(error = %self, "{during}: the task store is unreachable; answered retry-later");
            mcp_kernel_wire::ErrorObject::unavailable(1)
        } else {
            tracing::error!(error = %self, "{during}: the task store failed; answered -32603");
            mcp_kernel_wire::ErrorObject::internal()
        }
    }
}

/// The bounds a new task is created within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskLimits {
    /// The most tasks one owner may run at once (not terminal; a finished task frees its place).
    pub per_owner: usize,
    /// The most tasks the store holds for everyone.
    pub total: usize,
}

impl TaskLimits {
    /// Bounds of `per_owner` running tasks per owner and `total` stored tasks (a store's own tests
    /// build them with it).
    pub const fn new(per_owner: usize, total: usize) -> Self {
        Self { per_owner, total }
    }
}

/// Why a task was not created: a bound was reached (nothing stored is evicted to make room).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitReached {
    /// The owner holds [`TaskLimits::per_owner`] tasks.
    PerOwner(usize),
    /// The store holds [`TaskLimits::total`] tasks.
    Total(usize),
}

/// The result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

/// An edit of one record: changes it and says whether it did.
pub type Edit<'a> = &'a (dyn Fn(&mut TaskRecord) -> bool + Send + Sync);

/// Wake-ups for the instance running a task: each says "read the task again" (a client answered its
/// input or asked to cancel it, here or elsewhere). Wake-ups may be merged; none carries data.
pub struct TaskWatch {
    wakes: futures_util::stream::BoxStream<'static, ()>,
}

impl std::fmt::Debug for TaskWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskWatch").finish_non_exhaustive()
    }
}

impl TaskWatch {
    /// A watch over a stream of wake-ups.
    pub fn new(wakes: impl futures_util::Stream<Item = ()> + Send + 'static) -> Self {
        Self { wakes: wakes.boxed() }
    }

    /// Resolves at the next wake-up; `false` when none can come any more (the store dropped the
    /// watch: read the task again, and stop waiting).
    pub async fn woken(&mut self) -> bool {
        self.wakes.next().await.is_some()
    }
}

/// A place to keep tasks: see the module documentation.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task unless its owner or the store is at a bound in `limits`. Before the future
    /// resolves `Ok(Ok(()))`, a `read` of the task from anywhere must find it (SEP-2663: a task is
    /// durably created before its `CreateTaskResult` is sent).
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>>;

    /// The task `id`, if stored (a store may forget a task once [`TaskRecord::is_removable`]).
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>>;

    /// Applies `edit` to the task `id` atomically: `Some(record after the edit)` when the edit
    /// changed it, `None` when the task is not stored or the edit changed nothing.
    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>>;

    /// Wake-ups for the task `id` (the instance running it watches).
    fn watch(&self, id: &str) -> TaskWatch;

    /// The watch of the instance that runs the task `id`, held for as long as its run lasts. A store
    /// shared by many instances also holds the task's **lease** while this watch lives (renewed by a
    /// heartbeat), so that a task whose instance died is failed once the lease lapses, not left
    /// `working` until its time to live. By default, a plain [`TaskStore::watch`].
    fn watch_running(&self, id: &str) -> TaskWatch {
        self.watch(id)
    }

    /// Wakes whoever watches the task `id`, in any instance sharing this store.
    fn wake(&self, id: &str);

    /// Applies `transition` at `now` (refused, `None`, when the task is terminal), then wakes its
    /// watchers.
    fn transition<'a>(
        &'a self,
        id: &'a str,
        transition: Transition,
        now: u64,
    ) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            let edit = move |record: &mut TaskRecord| record.apply(&transition, now);
            let changed = self.update(id, &edit).await?;
            if changed.is_some() {
                self.wake(id);
            }
            Ok(changed)
        })
    }

    /// Records the client's `answers` (by wire key; keys not outstanding are ignored), then wakes the
    /// task's runner.
    fn record_input<'a>(
        &'a self,
        id: &'a str,
        answers: BTreeMap<String, Value>,
        now: u64,
    ) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            let edit = move |record: &mut TaskRecord| record.record_input(answers.clone(), now);
            let changed = self.update(id, &edit).await?;
            if changed.is_some() {
                self.wake(id);
            }
            Ok(changed)
        })
    }

    /// The client asked to cancel the task: it is `cancelled` at once unless it is terminal already
    /// (cancellation is cooperative: the handler is told and its outcome, whenever it comes, is not
    /// stored).
    fn request_cancel<'a>(&'a self, id: &'a str, now: u64) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        self.transition(id, Transition::Cancelled, now)
    }

    /// The task outlived its time to live: `failed` with `error` if it was still running.
    fn expire<'a>(
        &'a self,
        id: &'a str,
        error: Value,
        now: u64,
    ) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        let message = "the task outlived its time to live".to_owned();
        self.transition(id, Transition::Failed { error, message }, now)
    }
}
