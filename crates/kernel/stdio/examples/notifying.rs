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

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_kernel_router::notify::{Notifications, Notifier};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::wire::types::{ResourceContents, TextResourceContents};
use mcp_kernel_router::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_stdio::StdioOptions;
use serde_json::{Value, json};
use tokio::sync::watch;

/// What the command line asked for.
struct Settings {
    notifications: bool,
    max_listens: Option<usize>,
    max_in_flight: Option<usize>,
    grace: Option<Duration>,
}

impl Settings {
    fn read() -> Result<Self, String> {
        let mut settings =
            Settings { notifications: true, max_listens: None, max_in_flight: None, grace: None };
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
                _ => return Err("usage: notifying [--without-notifications] [--max-listens N] [--max-in-flight N] [--grace-ms N]".into()),
            }
        }
        Ok(settings)
    }
}

/// What the tools act on: the announcing handle, the served server, and the session's stop signal.
struct Host {
    notifications: Option<Notifications>,
    notifier: Notifier,
    live: OnceLock<LiveServer>,
    stop: watch::Sender<bool>,
}

/// The catalog: the three tools (and `added` once swapped), one resource and one template.
fn catalog(swapped: bool) -> Listing {
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
    Listing {
        tools,
        resources: vec![
            ResourceSpec::new("demo://config", "config").mime_type("application/json").into(),
            ResourceTemplateSpec::new("demo://notes/{name}", "note").into(),
        ],
        prompts: Vec::new(),
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
    let builder = Server::builder(catalog(swapped))
        .server_name("notifying")
        .dispatch(move |request: ToolCall| {
            let answer = call(&tools_host, &request);
            async move { answer }
        })
        .resource_reader(read);
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
    mcp_kernel_stdio::serve_with(live, options).await
}
