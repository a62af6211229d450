//! A stdio server that announces changes: `subscriptions/listen` streams (`2026-07-28`) and legacy
//! sessions (`2025-11-25`) are told of them.
//!
//! ```sh
//! cargo run -q -p mcp-kernel-stdio --example notifying
//! ```
//!
//! Its tools change what it announces:
//!
//! * `announce` `{"change": "tools" | "prompts" | "resources" | "updated", "uri": "…"}` publishes one
//!   change through the server's `Notifier` (`updated` names the resource `uri`);
//! * `swap` replaces the served catalog with one that also lists the tool `added`: the `LiveServer`
//!   announces exactly that the tools list changed;
//! * `stop` completes the session's shutdown signal: the session drains (every open listen gets its
//!   completion result) and the process exits 0.
//!
//! It lists the resource `demo://config` and the template `demo://notes/{name}`. Options:
//! `--without-notifications` (built without them: listens are acknowledged empty and complete at once,
//! `initialize` advertises no `listChanged`), `--max-listens N`, `--max-in-flight N`, `--grace-ms N`. Logs go to stderr
//! (`RUST_LOG=debug`).
//!
//! With `--tasks` it is built with the tasks extension (tasks kept in this process, a 100 ms
//! threshold) and lists two more tools, each of which may run as a task: `slow` `{"ms": n}` sleeps `n`
//! ms (default 10 s) unless its task is cancelled, and `stubborn` sleeps 60 s and ignores cancellation.
//! `--task-grace-ms N` sets how long the tasks still running when the session ends may take
//! (`StdioOptions::task_grace`). When the session is over, the status of every task it ran is written
//! to stderr, one line each: `notifying: task <id> <status>: <status message>`.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use mcp_kernel_router::notify::{Notifications, Notifier};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::tasks::{TaskHandle, TaskMode, TaskRuntime, Tasks};
use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::wire::types::{ResourceContents, TextResourceContents};
use mcp_kernel_router::{
    BoxFuture, Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use mcp_kernel_stdio::StdioOptions;
use serde_json::{Value, json};
use tokio::sync::watch;

/// What the command line asked for.
struct Settings {
    notifications: bool,
    max_listens: Option<usize>,
    max_in_flight: Option<usize>,
    grace: Option<Duration>,
    tasks: bool,
    task_grace: Option<Duration>,
}

impl Settings {
    fn read() -> Result<Self, String> {
        let mut settings = Settings {
            notifications: true,
            max_listens: None,
            max_in_flight: None,
            grace: None,
            tasks: false,
            task_grace: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut number = |name: &str| {
                args.next()
                    .and_then(|value| value.parse::<u64>().ok())
                    .ok_or_else(|| format!("{name} takes a number"))
            };
            match arg.as_str() {
                "--without-notifications" => settings.notifications = false,
                "--max-listens" => {
                    let listens = number("--max-listens")?;
                    settings.max_listens = Some(usize::try_from(listens).map_err(|e| e.to_string())?);
                }
                "--max-in-flight" => {
                    let requests = number("--max-in-flight")?;
                    settings.max_in_flight = Some(usize::try_from(requests).map_err(|e| e.to_string())?);
                }
                "--grace-ms" => settings.grace = Some(Duration::from_millis(number("--grace-ms")?)),
                "--tasks" => settings.tasks = true,
                "--task-grace-ms" => {
                    settings.task_grace = Some(Duration::from_millis(number("--task-grace-ms")?));
                }
                _ => return Err("usage: notifying [--without-notifications] [--max-listens N] [--max-in-flight N] [--grace-ms N] [--tasks] [--task-grace-ms N]".into()),
            }
        }
        Ok(settings)
    }
}

/// What the tools act on: the announcing handle, the served server, the session's stop signal, and
/// the tasks (with `--tasks`) with the handle of every task run.
struct Host {
    notifications: Option<Notifications>,
    notifier: Notifier,
    live: OnceLock<LiveServer>,
    stop: watch::Sender<bool>,
    tasks: Option<Tasks>,
    ran: Mutex<Vec<TaskHandle>>,
}

/// Tasks run on tokio: `spawn` is `tokio::spawn`, `sleep` is `tokio::time::sleep`.
struct Tokio;

impl TaskRuntime for Tokio {
    fn spawn(&self, task: BoxFuture<'static, ()>) {
        tokio::spawn(task);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The catalog: the three tools (and `added` once swapped; `slow` and `stubborn` with tasks), one
/// resource and one template.
fn catalog(swapped: bool, tasks: bool) -> Listing {
    let change = json!({
        "type": "object",
        "properties": {
            "change": {"type": "string", "enum": ["tools", "prompts", "resources", "updated"]},
            "uri": {"type": "string"}
        },
        "required": ["change"],
        "additionalProperties": false
    });
    let mut tools = vec![
        ToolSpec::new("announce", Mode::ReadOnly).description("Announce one change.").input_schema(change),
        ToolSpec::new("swap", Mode::ReadOnly).description("Serve a catalog that also lists `added`."),
        ToolSpec::new("stop", Mode::ReadOnly).description("Drain the session and exit."),
    ];
    if swapped {
        tools.push(ToolSpec::new("added", Mode::ReadOnly).description("Listed once swapped."));
    }
    if tasks {
        let ms = json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}});
        tools.push(
            ToolSpec::new("slow", Mode::ReadOnly)
                .description("Sleep `ms` milliseconds unless cancelled.")
                .input_schema(ms)
                .task_mode(TaskMode::Optional),
        );
        tools.push(
            ToolSpec::new("stubborn", Mode::ReadOnly)
                .description("Sleep a minute, whatever is asked.")
                .task_mode(TaskMode::Optional),
        );
    }
    Listing {
        tools,
        resources: vec![
            ResourceSpec::new("demo://config", "config").mime_type("application/json").into(),
            ResourceTemplateSpec::new("demo://notes/{name}", "note").into(),
        ],
        prompts: Vec::new(),
    }
}

/// A call of `slow` or `stubborn`: its task's handle is kept for the report at exit.
async fn task_tool(host: Arc<Host>, call: ToolCall) -> Result<ToolOutput, ToolError> {
    let task = call.context.task().cloned();
    if let Some(task) = &task {
        host.ran.lock().unwrap_or_else(PoisonError::into_inner).push(task.clone());
    }
    if &*call.name == "stubborn" {
        tokio::time::sleep(Duration::from_secs(60)).await;
        return ToolOutput::json(&json!({"slept": 60_000}));
    }
    let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(10_000);
    let cancelled = async {
        match &task {
            Some(task) => task.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => ToolOutput::json(&json!({"slept": ms})),
        () = cancelled => ToolOutput::json(&json!({"stopped": true})),
    }
}

/// Writes the status of every task run to stderr, one line each.
async fn report_tasks(host: &Host) {
    let Some(tasks) = &host.tasks else { return };
    let ran = std::mem::take(&mut *host.ran.lock().unwrap_or_else(PoisonError::into_inner));
    for id in ran.iter().filter_map(TaskHandle::task_id) {
        if let Ok(Some(record)) = tasks.store().read(&id).await {
            let message = record.status_message.unwrap_or_default();
            eprintln!("notifying: task {id} {}: {message}", record.status.as_str());
        }
    }
}

/// One tool call.
fn call(host: &Arc<Host>, call: &ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "announce" => {
            let uri = call.arguments.get("uri").and_then(Value::as_str);
            match (call.arguments.get("change").and_then(Value::as_str), uri) {
                (Some("tools"), _) => host.notifier.tools_list_changed(),
                (Some("prompts"), _) => host.notifier.prompts_list_changed(),
                (Some("resources"), _) => host.notifier.resources_list_changed(),
                (Some("updated"), Some(uri)) => host.notifier.resource_updated(uri),
                _ => return Err(ToolError::new("name a change (and a uri for `updated`)")),
            }
            ToolOutput::json(&json!({"announced": true}))
        }
        "swap" => {
            let live = host.live.get().ok_or_else(|| ToolError::new("not serving yet"))?;
            let next = build(host, true).map_err(|_| ToolError::new("the swapped catalog did not build"))?;
            live.replace(next);
            ToolOutput::json(&json!({"swapped": true}))
        }
        "stop" => {
            host.stop.send_replace(true);
            ToolOutput::json(&json!({"stopping": true}))
        }
        name => ToolOutput::json(&json!({"tool": name})),
    }
}

async fn read(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    Ok(vec![TextResourceContents::new(request.uri.as_str(), "{}").into()])
}

/// The server of `catalog(swapped)`, announcing through the host's hub when it has notifications.
fn build(host: &Arc<Host>, swapped: bool) -> Result<Server, mcp_kernel_router::BuildError> {
    let tools_host = Arc::clone(host);
    let mut builder = Server::builder(catalog(swapped, host.tasks.is_some()))
        .server_name("notifying")
        .dispatch(move |request: ToolCall| {
            let host = Arc::clone(&tools_host);
            async move {
                match &*request.name {
                    "slow" | "stubborn" => task_tool(host, request).await,
                    _ => call(&host, &request),
                }
            }
        })
        .resource_reader(read);
    if let Some(tasks) = &host.tasks {
        builder = builder.tasks(tasks.clone());
    }
    match &host.notifications {
        Some(notifications) => builder.notifications(notifications.clone()).build(),
        None => builder.build(),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let settings = Settings::read().map_err(std::io::Error::other)?;
    // Without notifications the hub is never read: what `announce` publishes reaches nobody.
    let hub = Notifications::in_process();
    let (stop, mut stopped) = watch::channel(false);
    let host = Arc::new(Host {
        notifier: hub.notifier(),
        notifications: settings.notifications.then_some(hub),
        live: OnceLock::new(),
        stop,
        tasks: settings.tasks.then(|| Tasks::in_process(Tokio).threshold(Duration::from_millis(100))),
        ran: Mutex::new(Vec::new()),
    });
    let live = LiveServer::new(build(&host, false).map_err(std::io::Error::other)?);
    let _ = host.live.set(live.clone());
    let mut options = StdioOptions::default().shutdown_on(async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    });
    if let Some(listens) = settings.max_listens {
        options = options.max_listens(listens);
    }
    if let Some(requests) = settings.max_in_flight {
        options = options.max_in_flight(requests);
    }
    if let Some(grace) = settings.grace {
        options = options.shutdown_grace(grace);
    }
    if let Some(grace) = settings.task_grace {
        options = options.task_grace(grace);
    }
    let served = mcp_kernel_stdio::serve_with(live, options).await;
    report_tasks(&host).await;
    served
}
