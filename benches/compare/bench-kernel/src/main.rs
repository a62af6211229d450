//! `bench-kernel stdio` | `bench-kernel http 127.0.0.1:PORT`
//!
//! The `echo` tool served by mcp-kernel with every default on: full JSON Schema validation of the
//! arguments and every refusal layer of the HTTP transport (headers, `Mcp-Method`/`Mcp-Name`
//! mirroring, `Accept`, `Content-Type`, body limits). Only the Origin allowlist is opened
//! (`AllowedOrigins::any()`) and authorization admits everyone, as for a local benchmark. Over HTTP
//! the service answers at `/mcp` itself (`Builder::path`; any other path is 404) and is served bare,
//! as a host serving MCP alone on a port serves it; with `BENCH_KERNEL_REDIS` (below) an axum router
//! mounts it beside `/stats`.
//!
//! The connection limits of `serve_with` keep their defaults (4,096 connections, 512 per peer)
//! unless `BENCH_KERNEL_MAX_CONNECTIONS=N` is set: then both are N. `cargo xtask bench compare
//! --drip N` sets it, because its N drip connections all come from 127.0.0.1, and so does `cargo
//! xtask bench curves` for its points above 512 connections.
//!
//! The listen limits keep their defaults (4,096 streams, 32 per client) unless
//! `BENCH_KERNEL_MAX_LISTENS=N` is set: then both are N; `BENCH_KERNEL_LISTEN_KEEP_ALIVE_MS=MS` sets
//! the keep-alive interval of a silent listen stream (the default is 15 s). `cargo xtask bench
//! compare --listen N` sets them, because its N streams all come from 127.0.0.1.
//!
//! For the catalog curves, `BENCH_CATALOG_TOOLS=N` lists N more tools before `echo` (`tool_00000`,
//! `tool_00001`, …), each with the echo schema and served by the same echo, and
//! `BENCH_CATALOG_TEMPLATES=N` lists N uri templates (`bench://t00000/{id}`, `bench://t00001/{id}`,
//! …) whose reader answers a read of any of them with one short text. Both are 0 when unset.
//!
//! Change notifications are on (`Notifications::in_process()`), for `cargo xtask bench compare
//! --listen`: a `subscriptions/listen` stream is held open and told of changes. One more tool,
//! `announce`, takes the echo's arguments, announces that the tools list changed
//! (`Notifier::tools_list_changed`) and echoes the message. It is listed after `echo`, except when
//! `BENCH_CATALOG_TOOLS` is set: the catalog curves compare the same list with rmcp's. Neither
//! changes the path of a `tools/call` of `echo`, which never looks at the notifications;
//! `BENCH_KERNEL_NOTIFICATIONS=off` serves the server without either, as it was before them, to
//! check that by measurement.
//!
//! Tasks are on too (`Tasks::in_process(TokioRuntime)`), for `cargo xtask bench compare --tasks`:
//! one more tool, `wait` (task mode optional), takes `{"ms": N}` (0 to 600,000), waits N ms — or until
//! its task is cancelled — and answers the server's clock at its return as text (microseconds since
//! the Unix epoch), so that a client can tell how long the answer, or the `notifications/tasks` of its
//! task, took to reach it. Called by a request that declared the extension, a call still running after
//! `BENCH_KERNEL_TASK_THRESHOLD_MS` (default 5) becomes a task. The store's bounds are raised to
//! `MAX_TASKS`, for everyone: the benchmark's tasks are nobody's (no owner key). `wait` is listed
//! after `announce`, with no catalog (`BENCH_CATALOG_TOOLS` unset); `echo` is never a task and its call
//! never looks at the tasks. `BENCH_KERNEL_TASKS=off` serves the server without them and without `wait`.
//!
//! With `BENCH_KERNEL_REDIS=redis://HOST:PORT` set, the notifications and the tasks go through that Redis
//! instead (the facade's `redis` feature, `mcp_kernel::redis`: `Notifications::with_hub`, `Tasks::with_store`; the server waits for
//! Redis at start), under the key prefix `BENCH_KERNEL_REDIS_PREFIX` (default `bench`), so that several
//! servers sharing one Redis serve as one, for `cargo xtask bench compare --redis`. Over HTTP the server
//! then also answers `GET /stats` beside `/mcp` with `{"redis_round_trips": N}`, the round trips it has
//! made to Redis so far. Unset, the server is exactly the one every other benchmark measures.
//!
//! Over HTTP, an interrupt (`SIGINT`) ends the server gracefully and the process exits 0, so that an
//! instrumented build writes its profile at exit (`cargo xtask bench pgo`).
//!
//! `BENCH_KERNEL_LEGACY_SESSIONS=on` serves `2025-11-25` clients with sessions
//! (`Builder::legacy_sessions`) instead of statelessly (the default, `LegacyClients::Stateless`), for
//! `cargo xtask bench compare --sessions` and the `sessions` curve: in process
//! (`LegacySessions::in_process()`), or in the Redis of `BENCH_KERNEL_REDIS` when it is set
//! (`Redis::session_store()`). The session bounds keep their defaults (16 per client, 10,000 in all)
//! unless `BENCH_KERNEL_MAX_SESSIONS=N` is set: then both are N, because a benchmark's sessions all
//! come from 127.0.0.1, one client.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_kernel::http::{AllowedOrigins, Builder, LegacySessions, McpHttp, ServeOptions};
use mcp_kernel::notify::{Notifications, Notifier};
use mcp_kernel::redis::{Redis, RedisConfig};
use mcp_kernel::resources::{ReadResource, ResourceTemplateSpec};
use mcp_kernel::router::sessions::SessionLimits;
use mcp_kernel::tasks::{TaskMode, Tasks, TokioRuntime};
use mcp_kernel::wire::types::ResourceContents;
use mcp_kernel::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

/// The most generated tools or templates (`BENCH_CATALOG_TOOLS`, `BENCH_CATALOG_TEMPLATES`).
const MAX_CATALOG: usize = 1_000_000;

/// A tool named `name` with exactly the schema every benchmarked server advertises for `echo`.
fn echo_spec(name: String) -> ToolSpec {
    ToolSpec::new(name, Mode::ReadOnly).description("Echoes the message back.").input_schema(json!({
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": false
    }))
}

/// The tool that announces a change of the tools list.
const ANNOUNCE: &str = "announce";
/// The tool that waits, and may become a task.
const WAIT: &str = "wait";
/// The longest wait (ms): the kernel's default time to live of a task.
const MAX_WAIT_MS: u64 = 600_000;
/// The store's bounds (all tasks and one owner's): above the most tasks a benchmark holds.
const MAX_TASKS: usize = 100_000;

/// `wait`: optional task mode, `{"ms": 0 to MAX_WAIT_MS}`.
fn wait_spec() -> ToolSpec {
    ToolSpec::new(WAIT, Mode::ReadOnly)
        .description("Waits ms milliseconds (or until its task is cancelled), then answers the time.")
        .task_mode(TaskMode::Optional)
        .input_schema(json!({
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS}},
            "required": ["ms"],
            "additionalProperties": false
        }))
}

/// `tools` generated tools, then `echo`, then `announce` if `announcing` and `wait` if `waiting`;
/// `templates` generated uri templates.
fn catalog(tools: usize, templates: usize, announcing: bool, waiting: bool) -> Listing {
    let mut specs: Vec<ToolSpec> = (0..tools).map(|i| echo_spec(format!("tool_{i:05}"))).collect();
    specs.push(echo_spec("echo".to_owned()));
    if announcing {
        specs.push(
            echo_spec(ANNOUNCE.to_owned())
                .description("Announces that the tools list changed, then echoes the message back."),
        );
    }
    if waiting {
        specs.push(wait_spec());
    }
    Listing {
        tools: specs,
        resources: (0..templates)
            .map(|i| ResourceTemplateSpec::new(format!("bench://t{i:05}/{{id}}"), format!("t{i:05}")).into())
            .collect(),
        prompts: Vec::new(),
    }
}

/// A count from the environment variable `var` (0 when unset).
fn count(var: &str) -> Result<usize, String> {
    match std::env::var(var) {
        Err(_) => Ok(0),
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|n| *n <= MAX_CATALOG)
            .ok_or_else(|| format!("{var}={v:?} is not a number up to {MAX_CATALOG}")),
    }
}

/// Returns the (already validated) message as one text block, whichever tool was called, moved out of
/// the arguments rather than copied; with a notifier (a call of `announce`), first tells every listen
/// stream that the tools list changed.
async fn dispatch(announce: Option<Notifier>, mut call: ToolCall) -> Result<ToolOutput, ToolError> {
    if let Some(notifier) = announce {
        notifier.tools_list_changed();
    }
    match call.arguments.take("message") {
        Some(Value::String(message)) => Ok(ToolOutput::text(message)),
        _ => Err(ToolError::new("message must be a string")),
    }
}

/// `wait`: `ms` milliseconds, cut short by its task's cancellation; answers the clock at its return.
async fn wait(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let ms = call.arguments.get("ms").and_then(serde_json::Value::as_u64).unwrap_or(0).min(MAX_WAIT_MS);
    if ms > 0 {
        let sleep = tokio::time::sleep(Duration::from_millis(ms));
        match call.context.task() {
            Some(task) => tokio::select! {
                () = sleep => {}
                () = task.cancelled() => {}
            },
            None => sleep.await,
        }
    }
    let micros = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
    Ok(ToolOutput::text(micros.to_string()))
}

/// Answers a read of any uri that matched a listed template with one short text.
async fn read(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    Ok(vec![ResourceContents::text(&request.uri, "bench")])
}

async fn serve_http(
    server: Server,
    addr: &str,
    redis: Option<Redis>,
) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let mut builder = McpHttp::builder(server).allowed_origins(AllowedOrigins::any()).authorize(|_| Ok(()));
    if let Some(sessions) = legacy_sessions(redis.as_ref())? {
        builder = builder.legacy_sessions(sessions);
    }
    let options = serve_options()?;
    let Some(redis) = redis else {
        // MCP alone on the port: the service answers at `/mcp` itself (`Builder::path`), no router.
        let service = listen_settings(builder.path("/mcp"))?.build();
        println!("listening on http://{bound}/mcp");
        mcp_kernel::http::serve_with(listener, service, interrupted(), options).await?;
        return Ok(());
    };
    // `/stats` beside `/mcp`: an axum router in front, as a host with other routes mounts the service.
    let service = listen_settings(builder)?.build();
    let app = axum::Router::new()
        .route_service("/mcp", service)
        .route("/stats", axum::routing::get(move || std::future::ready(stats(&redis))));
    println!("listening on http://{bound}/mcp");
    mcp_kernel::http::serve_with(listener, app, interrupted(), options).await?;
    Ok(())
}

/// Resolves at the process's first interrupt (`SIGINT`); never, if the handler cannot be installed.
async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// `GET /stats` over Redis: the round trips made to it so far.
fn stats(redis: &Redis) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    let body = json!({"redis_round_trips": redis.round_trips()}).to_string();
    ([(axum::http::header::CONTENT_TYPE, "application/json")], body)
}

/// The Redis of `BENCH_KERNEL_REDIS`, under the prefix `BENCH_KERNEL_REDIS_PREFIX`, if it is set.
fn redis_config() -> Result<Option<RedisConfig>, String> {
    let Ok(url) = std::env::var("BENCH_KERNEL_REDIS") else { return Ok(None) };
    let prefix = std::env::var("BENCH_KERNEL_REDIS_PREFIX").unwrap_or_else(|_| "bench".to_owned());
    let config = RedisConfig::from_url(&url).map_err(|e| format!("BENCH_KERNEL_REDIS: {e}"))?;
    Ok(Some(config.key_prefix(prefix)))
}

/// The listen limits and keep-alive interval of `BENCH_KERNEL_MAX_LISTENS` and
/// `BENCH_KERNEL_LISTEN_KEEP_ALIVE_MS`, and the client's share of the body budget of
/// `BENCH_KERNEL_MAX_BODY_BYTES_PER_CLIENT` (the defaults where unset).
fn listen_settings<O, A>(mut builder: Builder<O, A>) -> Result<Builder<O, A>, String> {
    if let Some(n) = number("BENCH_KERNEL_MAX_LISTENS")? {
        builder = builder.max_listens(n).max_listens_per_client(n);
    }
    if let Some(ms) = number("BENCH_KERNEL_LISTEN_KEEP_ALIVE_MS")? {
        builder = builder.listen_keep_alive(Duration::from_millis(ms as u64));
    }
    // All of a benchmark's connections come from 127.0.0.1, one client to the body budget.
    if let Some(bytes) = number("BENCH_KERNEL_MAX_BODY_BYTES_PER_CLIENT")? {
        builder = builder.max_body_bytes_per_client(bytes);
    }
    Ok(builder)
}

/// A positive number from the environment variable `var`, if it is set.
fn number(var: &str) -> Result<Option<usize>, String> {
    match std::env::var(var) {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!("{var}={v:?} is not a positive number")),
        },
    }
}

/// `2025-11-25` sessions when `BENCH_KERNEL_LEGACY_SESSIONS` is `on` (in `redis` when given, else in
/// process), within the bounds of `BENCH_KERNEL_MAX_SESSIONS`; `None` (stateless legacy clients, the
/// default) when it is unset or `off`.
fn legacy_sessions(redis: Option<&Redis>) -> Result<Option<LegacySessions>, String> {
    const VAR: &str = "BENCH_KERNEL_LEGACY_SESSIONS";
    match std::env::var(VAR).as_deref() {
        Err(_) | Ok("off") => return Ok(None),
        Ok("on") => {}
        Ok(other) => return Err(format!("{VAR}={other:?}: on or off")),
    }
    let sessions = match redis {
        Some(redis) => LegacySessions::with_store(Arc::new(redis.session_store())),
        None => LegacySessions::in_process(),
    };
    Ok(Some(match number("BENCH_KERNEL_MAX_SESSIONS")? {
        Some(n) => sessions.limits(session_limits(n)),
        None => sessions,
    }))
}

/// The default session bounds with sessions per client and in all both raised to `n`.
fn session_limits(n: usize) -> SessionLimits {
    let mut limits = SessionLimits::default();
    limits.per_owner = n;
    limits.total = n;
    limits
}

/// The defaults, or both connection limits raised to `BENCH_KERNEL_MAX_CONNECTIONS`.
fn serve_options() -> Result<ServeOptions, String> {
    const VAR: &str = "BENCH_KERNEL_MAX_CONNECTIONS";
    match std::env::var(VAR) {
        Err(_) => Ok(ServeOptions::new()),
        Ok(v) => {
            let n: usize = v.trim().parse().map_err(|_| format!("{VAR}={v:?} is not a number"))?;
            Ok(ServeOptions::new().max_connections(n).max_connections_per_peer(n))
        }
    }
}

/// Whether change notifications are on: `BENCH_KERNEL_NOTIFICATIONS` unset or `on`; `off` serves the
/// server without them and without `announce`.
fn notifications_on() -> Result<bool, String> {
    const VAR: &str = "BENCH_KERNEL_NOTIFICATIONS";
    match std::env::var(VAR).as_deref() {
        Err(_) | Ok("on") => Ok(true),
        Ok("off") => Ok(false),
        Ok(other) => Err(format!("{VAR}={other:?}: on or off")),
    }
}

/// Whether tasks are on: `BENCH_KERNEL_TASKS` unset or `on`; `off` serves the server without them and
/// without `wait`.
fn tasks_on() -> Result<bool, String> {
    const VAR: &str = "BENCH_KERNEL_TASKS";
    match std::env::var(VAR).as_deref() {
        Err(_) | Ok("on") => Ok(true),
        Ok("off") => Ok(false),
        Ok(other) => Err(format!("{VAR}={other:?}: on or off")),
    }
}

/// The tasks opt-in: in process (or in `redis`), on tokio, past `BENCH_KERNEL_TASK_THRESHOLD_MS`
/// (default 5 ms).
fn tasks(redis: Option<&Redis>) -> Result<Tasks, String> {
    let threshold = number("BENCH_KERNEL_TASK_THRESHOLD_MS")?.unwrap_or(5);
    let tasks = match redis {
        Some(redis) => Tasks::with_store(redis.task_store(), TokioRuntime),
        None => Tasks::in_process(TokioRuntime),
    };
    Ok(tasks
        .threshold(Duration::from_millis(threshold as u64))
        .max_tasks(MAX_TASKS)
        .max_tasks_per_owner(MAX_TASKS))
}

/// The runtime `BENCH_KERNEL_RUNTIME` names: `multi-thread` (the default, what `#[tokio::main]`
/// builds) or `current-thread`.
fn runtime() -> Result<tokio::runtime::Runtime, Box<dyn std::error::Error>> {
    const VAR: &str = "BENCH_KERNEL_RUNTIME";
    let mut builder = match std::env::var(VAR).as_deref() {
        Err(_) | Ok("multi-thread") => tokio::runtime::Builder::new_multi_thread(),
        Ok("current-thread") => tokio::runtime::Builder::new_current_thread(),
        Ok(other) => return Err(format!("{VAR}={other:?}: multi-thread or current-thread").into()),
    };
    Ok(builder.enable_all().build()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tools, templates) = (count("BENCH_CATALOG_TOOLS")?, count("BENCH_CATALOG_TEMPLATES")?);
    let (notifying, tasking) = (notifications_on()?, tasks_on()?);
    let listing = catalog(tools, templates, notifying && tools == 0, tasking && tools == 0);
    let runtime = runtime()?;
    let redis = match redis_config()? {
        Some(config) => Some(runtime.block_on(Redis::connect(config))?),
        None => None,
    };
    let builder = Server::builder(listing).server_name("bench-kernel");
    let notifications = notifying.then(|| match &redis {
        Some(redis) => Notifications::with_hub(redis.change_hub()),
        None => Notifications::in_process(),
    });
    let notifier = notifications.as_ref().map(Notifications::notifier);
    let mut builder = builder.dispatch(move |call: ToolCall| {
        // Only `wait` and `announce` are told apart: a call of `echo` costs two name comparisons more.
        let waits = *call.name == *WAIT;
        let announce = notifier.as_ref().filter(|_| *call.name == *ANNOUNCE).cloned();
        async move { if waits { wait(call).await } else { dispatch(announce, call).await } }
    });
    if let Some(notifications) = notifications {
        builder = builder.notifications(notifications);
    }
    if tasking {
        builder = builder.tasks(tasks(redis.as_ref())?);
    }
    // Without templates the server is exactly the one every other benchmark measures.
    if templates > 0 {
        builder = builder.resource_reader(read);
    }
    let server = builder.build()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["stdio"] => runtime.block_on(mcp_kernel::stdio::serve(server))?,
        ["http", addr] => runtime.block_on(serve_http(server, addr, redis))?,
        _ => return Err("usage: bench-kernel stdio | bench-kernel http 127.0.0.1:PORT".into()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_sessions_raises_the_per_client_and_total_bounds_only() {
        let (raised, defaults) = (session_limits(10_064), SessionLimits::default());
        assert_eq!((raised.per_owner, raised.total), (10_064, 10_064));
        assert_eq!((raised.idle, raised.pending_per_session), (defaults.idle, defaults.pending_per_session));
        assert_eq!(
            (raised.subscriptions, raised.subscription_bytes),
            (defaults.subscriptions, defaults.subscription_bytes)
        );
    }
}
