//! Long-running tools: the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), `2026-07-28`
//! only.
//!
//! A host turns tasks on with [`Tasks`] ([`ServerBuilder::tasks`](crate::ServerBuilder::tasks)) and
//! gives each tool that may take long a [`TaskMode`] ([`ToolSpec::task_mode`](crate::ToolSpec::task_mode)).
//! A tool stays an async function: the kernel decides per request whether its call becomes a task
//! (`run.rs` has the table), answers `CreateTaskResult` once the store holds the task, and keeps running
//! the same future; `tasks/get`, `tasks/update` and `tasks/cancel` (`methods.rs`) read and steer it.
//! The handler sees its task through [`TaskHandle`] ([`RequestContext::task`](crate::RequestContext::task)):
//! a status message, and a cancellation it can await. It asks the client for input the one way it
//! always does — [`ToolOutput::InputRequired`](crate::ToolOutput::InputRequired) — and inside a task
//! that becomes `input_required`, answered through `tasks/update`, then a run with the answers.
//!
//! Nothing of this reaches a `2025-11-25` request or a request that did not declare the extension: no
//! `CreateTaskResult`, no task method (-32021 for a `2026-07-28` request without the extension,
//! -32601 for a legacy one), and a tool that runs only as a task is refused -32021. There is no
//! `tasks/result` and no `tasks/list` (-32601), and a legacy `task` request parameter is ignored.

pub(crate) mod feed;
pub(crate) mod handle;
pub(crate) mod memory;
pub(crate) mod methods;
pub(crate) mod options;
pub(crate) mod owner;
pub(crate) mod record;
pub(crate) mod registry;
pub(crate) mod run;
pub(crate) mod store;

pub use crate::catalog::spec::TaskMode;
pub use handle::TaskHandle;
pub use memory::InProcessTaskStore;
pub use options::{
    DEFAULT_CANCEL_GRACE, DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_TASKS, DEFAULT_MAX_TASKS_PER_OWNER,
    DEFAULT_POLL_INTERVAL, DEFAULT_RETENTION, DEFAULT_TASK_TTL, DEFAULT_THRESHOLD, OwnerKey, TaskRuntime,
    Tasks,
};
pub use record::{GivenInput, PendingInput, TakenInput, TaskRecord, TaskStatus, Timing, Transition, now_ms};
pub use run::MAX_INPUT_ROUNDS;
pub use store::{Edit, LimitReached, StoreError, StoreResult, TaskLimits, TaskStore, TaskWatch};
