//! The cluster host's shared state, on when `CLUSTER_REDIS_URL` is set: change notifications through
//! the Redis change hub, tasks in the Redis task store and (with `CLUSTER_LEGACY_SESSIONS=1`)
//! `2025-11-25` sessions in the Redis session store, so that a listen held by one instance hears a
//! change made through another, a task created through one is read, answered and cancelled through
//! any (`tests/shared_state.rs`), and a session initialized through one is served by every one
//! (`tests/legacy_sessions.rs`).
//!
//! ```text
//! CLUSTER_REDIS_URL=redis://127.0.0.1:<port>   on; without it the host is stateless, as before
//! CLUSTER_REDIS_PREFIX=<prefix>                the key prefix (default `cluster`)
//! CLUSTER_REDIS_PASSWORD=<password>            the password, read from the environment, never logged
//! CLUSTER_REDIS_TIMEOUT_MS=<ms>                how long a Redis command may take before it is unavailable
//! CLUSTER_REDIS_LEASE_MS=<ms>                  a running task's lease (the tests keep it short)
//! CLUSTER_TASK_THRESHOLD_MS=<ms>               how long a call runs before it becomes a task (default 500)
//! ```
//!
//! Two more tools (`touch`, in `main.rs`, announces through the shared hub too):
//!
//! | tool | what it does |
//! |---|---|
//! | `chore {ms}` | a task when it takes longer than the threshold (`TaskMode::Optional`), for a client that takes tasks and while the task store answers; else an ordinary call: runs `ms` (until cancelled), answers `{instance, ms}` |
//! | `job {ms, ask}` | a task only (`TaskMode::Required`): with `ask`, it first becomes a task, then asks `go` (a form elicitation: `input_required` until `tasks/update`); then it runs `ms` (until cancelled), its status message `running on <instance>`, and answers `{instance, ms, answered}` |
//!
//! A task is owned by its caller (the bearer token's caller, as for `whoami`); the store keeps only the
//! core's digest of it.

use std::time::Duration;

use mcp_kernel::notify::Notifications;
use mcp_kernel::redis::{Redis, RedisConfig, RedisSessionStore};
use mcp_kernel::tasks::{DEFAULT_THRESHOLD, TaskMode, Tasks, TokioRuntime};
use mcp_kernel::{InputRequired, Mode, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

use crate::Caller;

/// Turns the shared state on: the Redis URL.
pub const URL_VAR: &str = "CLUSTER_REDIS_URL";
const PREFIX_VAR: &str = "CLUSTER_REDIS_PREFIX";
const PASSWORD_VAR: &str = "CLUSTER_REDIS_PASSWORD";
const TIMEOUT_VAR: &str = "CLUSTER_REDIS_TIMEOUT_MS";
const LEASE_VAR: &str = "CLUSTER_REDIS_LEASE_MS";
const THRESHOLD_VAR: &str = "CLUSTER_TASK_THRESHOLD_MS";

/// The key of the `job` tool's one question.
const GO: &str = "go";

/// What the instance shares with the others, and what its two tools need.
pub struct Shared {
    /// The connection every shared piece goes through.
    redis: Redis,
    /// The change hub of the server's notifications.
    notifications: Notifications,
    /// The task opt-in, over the Redis task store.
    tasks: Tasks,
    /// How long a call runs before it becomes a task.
    threshold: Duration,
}

/// A number of milliseconds from `name`, if set.
fn millis(name: &str) -> Result<Option<Duration>, String> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(text) => text
            .trim()
            .parse()
            .map(|ms| Some(Duration::from_millis(ms)))
            .map_err(|_| format!("{name} is a number of milliseconds")),
    }
}

impl Shared {
    /// The shared state when `CLUSTER_REDIS_URL` is set (inside tokio: the connection is made, and
    /// made again, in the background); `None` without it. An error names the variable, never its value.
    pub fn from_env() -> Result<Option<Self>, String> {
        let Ok(url) = std::env::var(URL_VAR) else { return Ok(None) };
        let prefix = std::env::var(PREFIX_VAR).unwrap_or_else(|_| "cluster".to_owned());
        let mut config =
            RedisConfig::from_url(&url).map_err(|error| format!("{URL_VAR}: {error}"))?.key_prefix(prefix);
        if std::env::var_os(PASSWORD_VAR).is_some() {
            config = config.password_from_env(PASSWORD_VAR);
        }
        if let Some(timeout) = millis(TIMEOUT_VAR)? {
            config = config.response_timeout(timeout);
        }
        if let Some(lease) = millis(LEASE_VAR)? {
            config = config.lease(lease);
        }
        let threshold = millis(THRESHOLD_VAR)?.unwrap_or(DEFAULT_THRESHOLD);
        let redis = Redis::start(config);
        let notifications = Notifications::with_hub(redis.change_hub());
        let tasks = Tasks::with_store(redis.task_store(), TokioRuntime)
            .threshold(threshold)
            .owner(|cx| cx.principal::<Caller>().map(|caller| caller.0.clone()));
        Ok(Some(Self { redis, notifications, tasks, threshold }))
    }

    /// The notifications opt-in, through the Redis change hub.
    pub fn notifications(&self) -> Notifications {
        self.notifications.clone()
    }

    /// The tasks opt-in, in the Redis task store.
    pub fn tasks(&self) -> Tasks {
        self.tasks.clone()
    }

    /// The store of the `2025-11-25` sessions, shared by every instance of the prefix.
    pub fn session_store(&self) -> RedisSessionStore {
        self.redis.session_store()
    }

    /// Redis round trips so far (for the health document).
    pub fn round_trips(&self) -> u64 {
        self.redis.round_trips()
    }
}

/// The two tools the shared state adds.
pub fn tools(object: impl Fn(Value, &[&str]) -> Value) -> Vec<ToolSpec> {
    vec![
        ToolSpec::new("chore", Mode::ReadOnly)
            .description("Work a while; a task if it takes long.")
            .task_mode(TaskMode::Optional)
            .input_schema(object(
                json!({"ms": {"type": "integer", "minimum": 0, "maximum": 600_000}}),
                &["ms"],
            )),
        ToolSpec::new("job", Mode::ReadOnly)
            .description("Run as a task: ask first if told to, then work a while.")
            .task_mode(TaskMode::Required)
            .input_schema(object(
                json!({
                    "ms": {"type": "integer", "minimum": 0, "maximum": 600_000},
                    "ask": {"type": "boolean"}
                }),
                &["ms"],
            )),
    ]
}

/// Serves `chore` and `job`; `None` for any other tool.
pub async fn dispatch(
    shared: &Shared,
    instance: &str,
    call: &ToolCall,
) -> Option<Result<ToolOutput, ToolError>> {
    match &*call.name {
        "chore" => {
            let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
            let worked = work(call, ms).await.map(|()| json!({"instance": instance, "ms": ms}));
            Some(worked.and_then(|answer| ToolOutput::json(&answer)))
        }
        "job" => Some(job(shared, instance, call).await),
        _ => None,
    }
}

/// `job`: see the module.
async fn job(shared: &Shared, instance: &str, call: &ToolCall) -> Result<ToolOutput, ToolError> {
    let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
    let ask = call.arguments.get("ask").and_then(Value::as_bool).unwrap_or(false);
    let task = call.context.task().cloned();
    let answered = match call.context.retry_input() {
        Some(retry) => {
            Some(retry.accepted(GO).and_then(|c| c.get("ok")).and_then(Value::as_bool) == Some(true))
        }
        None if ask => {
            if let Some(task) = &task {
                task.set_status_message(format!("asking on {instance}"));
            }
            // Past the threshold first: the call is a task (`working`) when it asks, so the question
            // becomes the task's `input_required`, not a multi-round-trip answer.
            tokio::time::sleep(shared.threshold + Duration::from_millis(100)).await;
            let form =
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            let question = format!("instance {instance} asks: go on?");
            return Ok(ToolOutput::input_required(InputRequired::new().elicit(GO, question, form)));
        }
        None => None,
    };
    if let Some(task) = &task {
        task.set_status_message(format!("running on {instance}"));
    }
    work(call, ms).await?;
    ToolOutput::json(&json!({"instance": instance, "ms": ms, "answered": answered}))
}

/// Works `ms`, or until the call's task is cancelled (an error, which is not stored: the task is
/// `cancelled` already; the handler only stops early).
async fn work(call: &ToolCall, ms: u64) -> Result<(), ToolError> {
    let cancelled = async {
        match call.context.task() {
            Some(task) => task.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
        () = cancelled => Err(ToolError::new("cancelled")),
    }
}
