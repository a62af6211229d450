//! One instance of an MCP server for the proxy tests (`tests/proxy.rs`), which run three of them
//! behind nginx and check that any instance can answer any request; with Redis
//! (`tests/shared_state.rs`, `tests/legacy_sessions.rs`) they share their state, and with legacy
//! sessions on they serve `2025-11-25` clients with sessions (`tests/bridge_http.rs` runs one alone).
//!
//! ```text
//! cluster-host <listen-address> <instance-name>
//! CLUSTER_STATE_KEYS=<hex>[,<hex>…]   the request-state keys (`HmacSealer::from_hex_keys`): the first
//!                                     seals, every one opens
//! CLUSTER_LEGACY_SESSIONS=1           serve 2025-11-25 clients with sessions (`Mcp-Session-Id`, the
//!                                     GET stream, the core's bridge): in the Redis session store with
//!                                     CLUSTER_REDIS_URL, in this process without it; unset, they are
//!                                     served statelessly (the default)
//! ```
//!
//! Once bound it prints `listening http://<address>` on stdout; on SIGTERM (or Ctrl-C) it stops
//! accepting, finishes the requests it holds and exits 0, saying so on stderr. Every answer names the
//! instance, so a test sees which one served it:
//!
//! | tool | what it does |
//! |---|---|
//! | `whoami` | `{instance, caller, seq}`: the caller is the bearer token's text (`anonymous` without one), `seq` this instance's count of `whoami` calls |
//! | `confirm {item}` | asks for input on its first round (a form elicitation, the asking instance sealed in the state), completes on the retry with `{instance, asked_by, item, confirmed}` |
//! | `confirm_twice {item}` | asks twice, in two rounds (`first`, then `second`, the state carrying who asked and the first answer), then answers `{instance, asked_by: [first, second], item, confirmed}` (both answers `ok`) |
//! | `count {steps, interval_ms}` | reports progress `steps` times, `interval_ms` apart, each message `sent_at_unix_ms=<ms>`, then answers `{instance, steps}` |
//! | `slow {ms}` | sleeps `ms`, then answers `{instance, slept_ms}` |
//! | `touch` | with notifications (Redis, or legacy sessions): announces to everyone that the resources list changed and that `cluster://instance` was updated; answers `{instance}` |
//!
//! The resource `cluster://instance` reads as the instance's name (a client of a session may
//! subscribe to it: `touch` updates it); `tools/list` is public for a minute (`ttlMs: 60000`,
//! `cacheScope: "public"`). Beside `/mcp` the host mounts `GET /healthz`: `{"instance": …,
//! "in_flight": …}`, 200 while it serves.
//!
//! With `CLUSTER_REDIS_URL` set the instances share change notifications and tasks (and sessions, when
//! on) through Redis, and serve two more tools, `chore` and `job` (`shared.rs` has the variables and
//! the tools); the health document then also counts the Redis round trips (`redis_round_trips`). Its
//! logs go to stderr. Without Redis, legacy sessions come with in-process notifications, so that a
//! session's GET stream has something to carry.
//!
//! Threat: none of its own — it is test support, bound where the test says (127.0.0.1). It still
//! refuses bad input as a host should: a key list `HmacSealer::from_hex_keys` refuses stops it at
//! start, with a message that names the key's position, never the key.

use std::error::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::routing::get;
use mcp_kernel::http::{
    AllowedOrigins, DEFAULT_MAX_CONNECTIONS, LegacySessions, McpHttp, ServeOptions, bearer_token, serve_with,
};
use mcp_kernel::notify::{Notifications, Notifier};
use mcp_kernel::options::CacheHints;
use mcp_kernel::resources::{ReadResource, ResourceSpec};
use mcp_kernel::sealing::HmacSealer;
use mcp_kernel::wire::types::{CacheScope, ResourceContents};
use mcp_kernel::{
    InputRequired, Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};
use tokio::net::TcpListener;

mod shared;

use shared::Shared;

type BoxError = Box<dyn Error + Send + Sync>;

/// The environment variable holding the request-state keys.
const KEYS_VAR: &str = "CLUSTER_STATE_KEYS";
/// Set to `1`, legacy clients are served with sessions.
const SESSIONS_VAR: &str = "CLUSTER_LEGACY_SESSIONS";

/// The origin a browser page of the deployment would send (the proxy tests check that `Origin` is
/// forwarded: a foreign one is refused 403 through the proxy).
const APP_ORIGIN: &str = "http://app.localhost";

/// How long `tools/list` may be reused, by anyone: this catalog is the same for every caller.
const TOOLS_TTL_MS: u64 = 60_000;

/// The caller, named by the bearer token (the harness trusts it as given; a real host verifies it).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Caller(String);

/// What every tool and the health route share.
struct Instance {
    name: String,
    in_flight: AtomicUsize,
    whoami_calls: AtomicU64,
    /// The state shared through Redis, when `CLUSTER_REDIS_URL` is set.
    shared: Option<Shared>,
    /// The server's notifications (through Redis, or in process for legacy sessions), if any.
    notifications: Option<Notifications>,
    /// How `touch` announces, with notifications.
    notifier: Option<Notifier>,
}

/// Counts one call in flight while it lives.
struct InFlight(Arc<Instance>);

impl InFlight {
    fn enter(instance: &Arc<Instance>) -> Self {
        instance.in_flight.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(instance))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The sealer from `CLUSTER_STATE_KEYS`: the first key seals, every one listed opens.
fn sealer() -> Result<HmacSealer, String> {
    let text = std::env::var(KEYS_VAR).map_err(|_| format!("{KEYS_VAR} is not set"))?;
    HmacSealer::from_hex_keys(&text).map_err(|error| format!("{KEYS_VAR}: {error}"))
}

/// A closed object schema.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// Whether `CLUSTER_LEGACY_SESSIONS` turns legacy sessions on (`1`); anything else set is refused.
fn sessions_on() -> Result<bool, String> {
    match std::env::var(SESSIONS_VAR) {
        Err(_) => Ok(false),
        Ok(text) => match text.trim() {
            "1" => Ok(true),
            "0" | "" => Ok(false),
            _ => Err(format!("{SESSIONS_VAR} is 1 or 0")),
        },
    }
}

/// How legacy sessions are kept: in the Redis session store when Redis is shared, else in process.
fn legacy_sessions(shared: Option<&Shared>) -> LegacySessions {
    match shared {
        Some(shared) => LegacySessions::with_store(Arc::new(shared.session_store())),
        None => LegacySessions::in_process(),
    }
}

/// The `confirm_twice` state: who asked each round so far, and the first answer.
fn twice_state(asked_by: &[String], first: bool) -> Vec<u8> {
    json!({"asked_by": asked_by, "first": first}).to_string().into_bytes()
}

/// A form asking for one boolean, `ok`.
fn ok_form() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
}

/// Whether the retry's answer to `key` accepted with `ok: true`.
fn accepted_ok(retry: &mcp_kernel::RetryInput, key: &str) -> bool {
    retry.accepted(key).and_then(|c| c.get("ok")).and_then(Value::as_bool) == Some(true)
}

/// `confirm_twice`: see the module.
fn confirm_twice(name: &str, call: &ToolCall) -> Result<ToolOutput, ToolError> {
    let item = call.arguments.get_str("item").unwrap_or_default();
    let Some(retry) = call.context.retry_input() else {
        let ask = InputRequired::new()
            .elicit("first", format!("instance {name} asks (1 of 2): confirm {item}?"), ok_form())
            .with_state(twice_state(&[name.to_owned()], false));
        return Ok(ToolOutput::input_required(ask));
    };
    let state: Value =
        retry.state.as_deref().and_then(|s| serde_json::from_slice(s).ok()).unwrap_or_default();
    let mut asked_by: Vec<String> = state["asked_by"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if asked_by.len() < 2 {
        asked_by.push(name.to_owned());
        let ask = InputRequired::new()
            .elicit("second", format!("instance {name} asks (2 of 2): really {item}?"), ok_form())
            .with_state(twice_state(&asked_by, accepted_ok(retry, "first")));
        return Ok(ToolOutput::input_required(ask));
    }
    let confirmed = state["first"].as_bool() == Some(true) && accepted_ok(retry, "second");
    ToolOutput::json(&json!({"instance": name, "asked_by": asked_by, "item": item, "confirmed": confirmed}))
}

fn catalog(shared: bool, notifying: bool) -> Listing {
    let mut tools = vec![
        ToolSpec::new("whoami", Mode::ReadOnly)
            .description("Name the instance and the caller.")
            .input_schema(object(json!({}), &[])),
        ToolSpec::new("confirm", Mode::ReadOnly)
            .description("Ask the user to confirm an item, then say who asked and who answered.")
            .input_schema(object(json!({"item": {"type": "string", "maxLength": 64}}), &["item"])),
        ToolSpec::new("confirm_twice", Mode::ReadOnly)
            .description("Ask the user twice, in two rounds, then say who asked.")
            .input_schema(object(json!({"item": {"type": "string", "maxLength": 64}}), &["item"])),
        ToolSpec::new("count", Mode::ReadOnly)
            .description("Report progress at intervals, then finish.")
            .input_schema(object(
                json!({
                    "steps": {"type": "integer", "minimum": 1, "maximum": 20},
                    "interval_ms": {"type": "integer", "minimum": 1, "maximum": 1000}
                }),
                &["steps", "interval_ms"],
            )),
        ToolSpec::new("slow", Mode::ReadOnly).description("Take a moment, then finish.").input_schema(
            object(json!({"ms": {"type": "integer", "minimum": 0, "maximum": 10000}}), &["ms"]),
        ),
    ];
    if notifying {
        tools.push(
            ToolSpec::new("touch", Mode::ReadOnly)
                .description("Announce that the resources changed.")
                .input_schema(object(json!({}), &[])),
        );
    }
    if shared {
        tools.extend(shared::tools(object));
    }
    Listing {
        tools,
        resources: vec![ResourceSpec::new("cluster://instance", "instance").mime_type("text/plain").into()],
        prompts: vec![],
    }
}

fn unix_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0)
}

/// An integer argument the schema has already bounded.
fn bounded(call: &ToolCall, name: &str) -> u64 {
    call.arguments.get(name).and_then(Value::as_u64).unwrap_or(0)
}

async fn dispatch(instance: Arc<Instance>, call: ToolCall) -> Result<ToolOutput, ToolError> {
    let _in_flight = InFlight::enter(&instance);
    let name = instance.name.as_str();
    match &*call.name {
        "whoami" => {
            let caller = call.context.principal::<Caller>().map_or("anonymous", |c| c.0.as_str());
            let seq = instance.whoami_calls.fetch_add(1, Ordering::SeqCst) + 1;
            ToolOutput::json(&json!({"instance": name, "caller": caller, "seq": seq}))
        }
        "confirm" => {
            let item = call.arguments.get_str("item").unwrap_or_default();
            match call.context.retry_input() {
                None => {
                    let ask = InputRequired::new()
                        .elicit("confirm", format!("instance {name} asks: confirm {item}?"), ok_form())
                        .with_state(name.as_bytes().to_vec());
                    Ok(ToolOutput::input_required(ask))
                }
                Some(retry) => {
                    let asked_by = retry.state.as_deref().map(String::from_utf8_lossy);
                    ToolOutput::json(&json!({
                        "instance": name,
                        "asked_by": asked_by,
                        "item": item,
                        "confirmed": accepted_ok(retry, "confirm"),
                    }))
                }
            }
        }
        "confirm_twice" => confirm_twice(name, &call),
        "touch" => match &instance.notifier {
            Some(notifier) => {
                notifier.resources_list_changed();
                notifier.resource_updated("cluster://instance");
                ToolOutput::json(&json!({"instance": name}))
            }
            None => Err(ToolError::new("no such tool")),
        },
        "count" => {
            let (steps, interval) = (bounded(&call, "steps"), bounded(&call, "interval_ms"));
            for step in 1..=steps {
                tokio::time::sleep(Duration::from_millis(interval)).await;
                let message = format!("sent_at_unix_ms={}", unix_ms());
                call.context.progress().report(step as f64, Some(steps as f64), Some(&message));
            }
            ToolOutput::json(&json!({"instance": name, "steps": steps}))
        }
        "slow" => {
            let ms = bounded(&call, "ms");
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ToolOutput::json(&json!({"instance": name, "slept_ms": ms}))
        }
        _ => {
            let served = match &instance.shared {
                Some(shared) => shared::dispatch(shared, name, &call).await,
                None => None,
            };
            served.unwrap_or_else(|| Err(ToolError::new("no such tool")))
        }
    }
}

async fn read(instance: Arc<Instance>, request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    match request.uri.as_str() {
        "cluster://instance" => Ok(vec![ResourceContents::text(&request.uri, instance.name.clone())]),
        _ => Err(ReaderError::new("no such resource")),
    }
}

fn server(instance: &Arc<Instance>, sealer: HmacSealer) -> Result<Server, BoxError> {
    let (for_dispatch, for_read) = (Arc::clone(instance), Arc::clone(instance));
    let catalog = catalog(instance.shared.is_some(), instance.notifications.is_some());
    let mut builder = Server::builder(catalog)
        .server_name(format!("cluster-host {}", instance.name))
        .tools_cache(CacheHints { ttl_ms: TOOLS_TTL_MS, scope: CacheScope::Public })
        .request_state_sealer(sealer)
        .dispatch(move |call: ToolCall| dispatch(Arc::clone(&for_dispatch), call))
        .resource_reader(move |request: ReadResource| read(Arc::clone(&for_read), request));
    if let Some(notifications) = &instance.notifications {
        builder = builder.notifications(notifications.clone());
    }
    if let Some(shared) = &instance.shared {
        builder = builder.tasks(shared.tasks());
    }
    Ok(builder.build()?)
}

async fn run(address: &str, name: String) -> Result<(), BoxError> {
    let sealer = sealer()?;
    let shared = Shared::from_env()?;
    let sessions = sessions_on()?.then(|| legacy_sessions(shared.as_ref()));
    let notifications = match &shared {
        Some(shared) => Some(shared.notifications()),
        None => sessions.is_some().then(Notifications::in_process),
    };
    let notifier = notifications.as_ref().map(Notifications::notifier);
    let instance = Arc::new(Instance {
        name,
        in_flight: AtomicUsize::new(0),
        whoami_calls: AtomicU64::new(0),
        shared,
        notifications,
        notifier,
    });
    let mut mcp = McpHttp::builder(server(&instance, sealer)?)
        .allowed_origins(AllowedOrigins::list([APP_ORIGIN]))
        .authorize(|parts| {
            Ok(Caller(bearer_token(parts).map_or_else(|_| "anonymous".to_owned(), str::to_owned)))
        });
    if let Some(sessions) = sessions {
        mcp = mcp.legacy_sessions(sessions);
    }
    let mcp = mcp.build();
    let health = Arc::clone(&instance);
    let app = axum::Router::new().route_service("/mcp", mcp).route(
        "/healthz",
        get(move || {
            let mut body =
                json!({"instance": health.name, "in_flight": health.in_flight.load(Ordering::SeqCst)});
            if let Some(shared) = &health.shared {
                body["redis_round_trips"] = json!(shared.round_trips());
            }
            async move { ([(http::header::CONTENT_TYPE, "application/json")], body.to_string()) }
        }),
    );
    let listener = TcpListener::bind(address).await?;
    println!("listening http://{}", listener.local_addr()?);
    // Behind a proxy every connection comes from the proxy's address: the per-peer share is the whole.
    let options = ServeOptions::new().max_connections_per_peer(DEFAULT_MAX_CONNECTIONS);
    let draining = Arc::clone(&instance);
    let shutdown = async move {
        mcp_kernel::shutdown_signal().await;
        let held = draining.in_flight.load(Ordering::SeqCst);
        eprintln!("cluster-host {}: draining ({held} calls in flight)", draining.name);
    };
    serve_with(listener, app, shutdown, options).await?;
    eprintln!("cluster-host {}: stopped", instance.name);
    Ok(())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if std::env::var_os(shared::URL_VAR).is_some() {
        // The Redis client's and the core's logs, for the tests that read them (never a credential).
        let filter = tracing_subscriber::EnvFilter::try_from_env("CLUSTER_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(std::io::stderr)
            .init();
    }
    let [address, name] = args.as_slice() else {
        eprintln!("usage: cluster-host <listen-address> <instance-name>  ({KEYS_VAR}=<hex>[,<hex>…])");
        return std::process::ExitCode::from(2);
    };
    match run(address, name.clone()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cluster-host {name}: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
