//! One instance of a stateless MCP server, for the proxy tests (`tests/proxy.rs`), which run three of
//! them behind nginx and check that any instance can answer any request.
//!
//! ```text
//! cluster-host <listen-address> <instance-name>
//! CLUSTER_STATE_KEYS=<hex>[,<hex>…]   the request-state keys (`HmacSealer::from_hex_keys`): the first
//!                                     seals, every one opens
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
//! | `count {steps, interval_ms}` | reports progress `steps` times, `interval_ms` apart, each message `sent_at_unix_ms=<ms>`, then answers `{instance, steps}` |
//! | `slow {ms}` | sleeps `ms`, then answers `{instance, slept_ms}` |
//!
//! The resource `cluster://instance` reads as the instance's name; `tools/list` is public for a
//! minute (`ttlMs: 60000`, `cacheScope: "public"`). Beside `/mcp` the host mounts `GET /healthz`:
//! `{"instance": …, "in_flight": …}`, 200 while it serves.
//!
//! With `CLUSTER_REDIS_URL` set the instances share change notifications and tasks through Redis, and
//! serve two more tools, `touch` and `job` (`shared.rs` has the variables and the tools); the health
//! document then also counts the Redis round trips (`redis_round_trips`). Its logs go to stderr.
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
    AllowedOrigins, DEFAULT_MAX_CONNECTIONS, McpHttp, ServeOptions, bearer_token, serve_with,
};
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

fn catalog(shared: bool) -> Listing {
    let mut tools = vec![
        ToolSpec::new("whoami", Mode::ReadOnly)
            .description("Name the instance and the caller.")
            .input_schema(object(json!({}), &[])),
        ToolSpec::new("confirm", Mode::ReadOnly)
            .description("Ask the user to confirm an item, then say who asked and who answered.")
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
                    let form = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
                    let ask = InputRequired::new()
                        .elicit("confirm", format!("instance {name} asks: confirm {item}?"), form)
                        .with_state(name.as_bytes().to_vec());
                    Ok(ToolOutput::input_required(ask))
                }
                Some(retry) => {
                    let asked_by = retry.state.as_deref().map(String::from_utf8_lossy);
                    let confirmed =
                        retry.accepted("confirm").and_then(|c| c.get("ok")).and_then(Value::as_bool);
                    ToolOutput::json(&json!({
                        "instance": name,
                        "asked_by": asked_by,
                        "item": item,
                        "confirmed": confirmed.unwrap_or(false),
                    }))
                }
            }
        }
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
    let mut builder = Server::builder(catalog(instance.shared.is_some()))
        .server_name(format!("cluster-host {}", instance.name))
        .tools_cache(CacheHints { ttl_ms: TOOLS_TTL_MS, scope: CacheScope::Public })
        .request_state_sealer(sealer)
        .dispatch(move |call: ToolCall| dispatch(Arc::clone(&for_dispatch), call))
        .resource_reader(move |request: ReadResource| read(Arc::clone(&for_read), request));
    if let Some(shared) = &instance.shared {
        builder = builder.notifications(shared.notifications()).tasks(shared.tasks());
    }
    Ok(builder.build()?)
}

async fn run(address: &str, name: String) -> Result<(), BoxError> {
    let sealer = sealer()?;
    let shared = Shared::from_env()?;
    let instance =
        Arc::new(Instance { name, in_flight: AtomicUsize::new(0), whoami_calls: AtomicU64::new(0), shared });
    let mcp = McpHttp::builder(server(&instance, sealer)?)
        .allowed_origins(AllowedOrigins::list([APP_ORIGIN]))
        .authorize(|parts| {
            Ok(Caller(bearer_token(parts).map_or_else(|_| "anonymous".to_owned(), str::to_owned)))
        })
        .build();
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
