//! The tasks opt-in ([`Tasks`]): the store, the runtime that runs a task after its `CreateTaskResult`
//! is sent, who owns a task, and the times and bounds — each with its default.
//!
//! | setting | default | what it bounds |
//! |---|---|---|
//! | [`threshold`](Tasks::threshold) | 500 ms | how long an optional tool may take before its call becomes a task |
//! | [`ttl`](Tasks::ttl) | 10 min | how long a task is kept from its creation (then failed if still running) |
//! | [`retention`](Tasks::retention) | 60 s | how long past its time to live a task is still answered before it is removed |
//! | [`poll_interval`](Tasks::poll_interval) | 1 s | the polling interval suggested to clients |
//! | [`max_tasks_per_owner`](Tasks::max_tasks_per_owner) | 64 | tasks one owner runs at once (not finished) |
//! | [`max_tasks`](Tasks::max_tasks) | 1,024 | tasks the store holds, finished ones included until removed |
//! | [`max_result_bytes`](Tasks::max_result_bytes) | 1 MiB | a stored result (a larger one fails the task) |
//!
//! The two bounds on what the store keeps multiply: at the defaults, 1,024 tasks of at most 1 MiB
//! each hold at most 1 GiB of results. Raise one, lower the other.
//! | [`cancel_grace`](Tasks::cancel_grace) | 5 s | how long a cancelled handler may run on to clean up |

use std::sync::Arc;
use std::time::Duration;

use crate::contract::{BoxFuture, RequestContext};
use crate::tasks::memory::InProcessTaskStore;
use crate::tasks::registry::Running;
use crate::tasks::store::{TaskLimits, TaskStore};

/// How long an optional tool may take before its call becomes a task, by default.
pub const DEFAULT_THRESHOLD: Duration = Duration::from_millis(500);
/// How long a task is kept from its creation, by default.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(600);
/// How long past its time to live a task is still answered, by default.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(60);
/// The polling interval suggested to clients, by default.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The most tasks one owner holds, by default.
pub const DEFAULT_MAX_TASKS_PER_OWNER: usize = 64;
/// The most tasks the store holds, by default.
pub const DEFAULT_MAX_TASKS: usize = 1024;
/// The largest stored result, by default.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1024 * 1024;
/// How long a cancelled handler may run on, by default.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(5);

/// What runs a task once its call has been answered: the core has no runtime of its own.
///
/// On tokio: `spawn` is `tokio::spawn` and `sleep` is `tokio::time::sleep` (the facade's
/// `mcp_kernel::tasks::TokioRuntime` is exactly that).
pub trait TaskRuntime: Send + Sync + 'static {
    /// Runs `task` to its end in the background.
    fn spawn(&self, task: BoxFuture<'static, ()>);
    /// A future that resolves after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// How a task's owner is named, from the request that creates or reads it.
pub type OwnerKey = Arc<dyn Fn(&RequestContext) -> Option<String> + Send + Sync>;

/// The tasks opt-in ([`ServerBuilder::tasks`](crate::ServerBuilder::tasks)); see the module table for
/// the defaults. Cheap to clone; a replacement server (a [`LiveServer`](crate::transport::LiveServer)
/// swap) built with a clone shares its tasks.
#[derive(Clone)]
pub struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) runtime: Arc<dyn TaskRuntime>,
    pub(crate) owner: Option<OwnerKey>,
    pub(crate) settings: Settings,
    pub(crate) running: Arc<Running>,
}

/// The times and bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settings {
    pub(crate) threshold: Duration,
    pub(crate) ttl: Option<Duration>,
    pub(crate) retention: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) limits: TaskLimits,
    pub(crate) max_result_bytes: usize,
    pub(crate) cancel_grace: Duration,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("settings", &self.settings)
            .field("owner", &self.owner.is_some())
            .finish_non_exhaustive()
    }
}

/// Milliseconds, saturated.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Tasks {
    /// Tasks kept in this process ([`InProcessTaskStore`]), run by `runtime`.
    pub fn in_process(runtime: impl TaskRuntime) -> Self {
        Self::with_store(InProcessTaskStore::new(), runtime)
    }

    /// Tasks kept in `store` (for instance one shared by many instances), run by `runtime`.
    pub fn with_store(store: impl TaskStore, runtime: impl TaskRuntime) -> Self {
        Self {
            store: Arc::new(store),
            runtime: Arc::new(runtime),
            owner: None,
            settings: Settings {
                threshold: DEFAULT_THRESHOLD,
                ttl: Some(DEFAULT_TASK_TTL),
                retention: DEFAULT_RETENTION,
                poll_interval: DEFAULT_POLL_INTERVAL,
                limits: TaskLimits { per_owner: DEFAULT_MAX_TASKS_PER_OWNER, total: DEFAULT_MAX_TASKS },
                max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
                cancel_grace: DEFAULT_CANCEL_GRACE,
            },
            running: Arc::default(),
        }
    }

    /// Names the owner of a task from the request (usually its principal): a task is answered only to
    /// requests whose owner key is its creator's (any other is told the task does not exist). The key
    /// is kept as a SHA-256 digest, never as given. Without it every task is nobody's, and its id —
    /// 128 random bits — is all that guards it.
    pub fn owner(mut self, key: impl Fn(&RequestContext) -> Option<String> + Send + Sync + 'static) -> Self {
        self.owner = Some(Arc::new(key));
        self
    }

    /// How long an optional tool's handler may run before its call becomes a task (default 500 ms).
    pub fn threshold(mut self, threshold: Duration) -> Self {
        self.settings.threshold = threshold;
        self
    }

    /// How long a task is kept from its creation (default 10 min); `None`: unlimited (`ttlMs: null`).
    /// A task still running at the end is failed and its handler cancelled.
    pub fn ttl(mut self, ttl: Option<Duration>) -> Self {
        self.settings.ttl = ttl;
        self
    }

    /// How long past its time to live a task is still answered before it is removed (default 60 s).
    pub fn retention(mut self, retention: Duration) -> Self {
        self.settings.retention = retention;
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`, default 1 s; at least 1 ms).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.settings.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// The most tasks one owner may run at once (not finished; default 64). A finished task frees its
    /// place at once; it stays in the store, and in [`Tasks::max_tasks`], until removed.
    pub fn max_tasks_per_owner(mut self, tasks: usize) -> Self {
        self.settings.limits.per_owner = tasks;
        self
    }

    /// The most tasks the store may hold, finished ones included until removed (default 1,024): the
    /// bound on the store's memory. With [`Tasks::ttl`] `None` no task is ever removed, so this bound is
    /// reached after that many calls became tasks, and every later call is refused.
    pub fn max_tasks(mut self, tasks: usize) -> Self {
        self.settings.limits.total = tasks;
        self
    }

    /// The largest result a task may store, encoded (default 1 MiB); a larger one fails the task.
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_result_bytes = bytes;
        self
    }

    /// How long a cancelled handler may run on to clean up before it is dropped (default 5 s).
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.settings.cancel_grace = grace;
        self
    }

    /// The store tasks are kept in.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }

    /// The digest naming the owner of a request (`None`: nobody's); `Err` when the host's key
    /// panicked (the request is answered -32603).
    pub(crate) fn owner_of(&self, context: &RequestContext) -> Result<Option<String>, OwnerPanicked> {
        let Some(key) = self.owner.as_ref() else { return Ok(None) };
        let named =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| key(context))).map_err(|_| {
                tracing::error!("the host's task owner key panicked; answered -32603");
                OwnerPanicked
            })?;
        Ok(named.map(|named| crate::tasks::owner::owner_digest(&named)))
    }
}

/// The host's owner key panicked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OwnerPanicked;
