//! The tasks extension's fixture: tasks run on the test's tokio runtime, a catalog of tools that may
//! run as tasks, the callers `authorize` names, and task messages that declare the extension.

use std::time::Duration;

use http::HeaderMap;
use http::request::Parts;
use serde_json::{Value, json};

use mcp_kernel_http::Refused;
use mcp_kernel_router::notify::Notifications;
use mcp_kernel_router::tasks::{TaskMode, TaskRuntime, Tasks};
use mcp_kernel_router::{BoxFuture, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

use super::{META_CAPABILITIES, META_VERSION, MODERN, headers_for, with};

/// The extension's identifier.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The message a task still running at the drain's end is failed with.
pub const SHUTDOWN_REASON: &str = "the server shut down before the task finished";

/// Tasks on the tokio runtime of the test: `spawn` is `tokio::spawn`, `sleep` is `tokio::time::sleep`.
#[derive(Debug, Clone, Copy)]
pub struct Tokio;

impl TaskRuntime for Tokio {
    fn spawn(&self, task: BoxFuture<'static, ()>) {
        tokio::spawn(task);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The principal `authorize` admits with: who the `x-caller` header names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller(pub String);

/// `authorize` of the task tests: the caller `x-caller` names; 401 without one.
pub fn caller(parts: &Parts) -> Result<Caller, Refused> {
    let named = parts.headers.get("x-caller").and_then(|value| value.to_str().ok());
    named.map(|name| Caller(name.to_owned())).ok_or_else(|| Refused::unauthenticated("no x-caller"))
}

/// The tasks opt-in of the fixture: a 50 ms threshold, each task owned by its caller, a short
/// cancellation grace.
pub fn task_options(tasks: Tasks) -> Tasks {
    tasks
        .threshold(Duration::from_millis(50))
        .owner(|cx| cx.principal::<Caller>().map(|caller| caller.0.clone()))
        .cancel_grace(Duration::from_millis(200))
}

/// The fixture's tasks, kept in this process.
pub fn fixture_tasks() -> Tasks {
    task_options(Tasks::in_process(Tokio))
}

/// The task catalog: `slow` (optional) sleeps `ms` (default 10 s) unless cancelled, `required` does
/// the same but runs only as a task, `stubborn` sleeps 30 s and ignores its cancellation.
pub fn task_catalog() -> Listing {
    let schema = json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}});
    let tool = |name: &str, mode: TaskMode| {
        ToolSpec::new(name, Mode::ReadOnly).task_mode(mode).input_schema(schema.clone())
    };
    Listing {
        tools: vec![
            tool("slow", TaskMode::Optional),
            tool("required", TaskMode::Required),
            tool("stubborn", TaskMode::Optional),
        ],
        ..Listing::default()
    }
}

/// The task catalog's dispatch.
pub async fn task_dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "slow" | "required" => {
            let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(10_000);
            let task = call.context.task().cloned();
            let cancelled = async {
                match &task {
                    Some(task) => task.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(ToolOutput::text(format!("slept {ms}"))),
                () = cancelled => Ok(ToolOutput::text("stopped")),
            }
        }
        "stubborn" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(ToolOutput::text("late"))
        }
        _ => Err(ToolError::new("not in the task catalog")),
    }
}

/// The task catalog served with `tasks` (and change notifications, when given).
pub fn task_server(tasks: Tasks, notifications: Option<&Notifications>) -> Server {
    let builder = Server::builder(task_catalog()).dispatch(task_dispatch).tasks(tasks);
    match notifications {
        Some(notifications) => builder.notifications(notifications.clone()).build(),
        None => builder.build(),
    }
    .expect("the task catalog builds")
}

/// A modern request whose `_meta` declares the tasks extension.
pub fn task_request(id: impl Into<Value>, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({META_VERSION: MODERN, META_CAPABILITIES: {"extensions": {TASKS: {}}}});
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// The standard headers of `message` (`Mcp-Name` included), as `caller` when named.
pub fn headers_as(message: &Value, caller: Option<&str>) -> HeaderMap {
    let headers = headers_for(message);
    match caller {
        Some(caller) => with(headers, "x-caller", caller.as_bytes()),
        None => headers,
    }
}
