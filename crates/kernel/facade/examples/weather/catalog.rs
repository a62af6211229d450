//! The weather catalog: one tool, one resource, one template, one prompt, and the functions behind
//! them, plus the connectome surface (its three resources and the copyable `connectome` tool). Shared by
//! the example's `main.rs` and by the rmcp interoperability tests (`tests-rmcp`), so that both speak to
//! the very same host.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_kernel::connectome::graph::declared::Declared;
use mcp_kernel::connectome::observe::Collector;
use mcp_kernel::connectome::{self, Surface};
use mcp_kernel::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel::wire::types::{ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_kernel::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

/// What the host offers: its own parts, then the connectome surface.
fn catalog() -> Listing {
    let mut capabilities = own_catalog();
    capabilities.tools.push(connectome::tool_spec());
    capabilities.resources.extend(connectome::resources());
    capabilities
}

/// The weather host's own parts.
fn own_catalog() -> Listing {
    Listing {
        tools: vec![
            ToolSpec::new("get_weather", Mode::ReadOnly)
                .command_class("observe")
                .description("Read the current weather for a place.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"place": {"type": "string"}},
                    "required": ["place"],
                    "additionalProperties": false
                })),
        ],
        resources: vec![
            ResourceSpec::new("weather://places", "places").mime_type("text/plain").into(),
            ResourceTemplateSpec::new("weather://place/{name}", "place").into(),
        ],
        prompts: vec![
            PromptSpec::new("forecast")
                .description("Ask for a forecast.")
                .argument(PromptArgument::new("place").required(true)),
        ],
    }
}

/// How long each reading takes: `WEATHER_LATENCY_MS` (default 0), read once. A remote service's
/// reading takes a while; this one can be made to, to watch a drain answer a call in flight.
fn reading_latency() -> Duration {
    static LATENCY: OnceLock<Duration> = OnceLock::new();
    *LATENCY.get_or_init(|| {
        let millis = std::env::var("WEATHER_LATENCY_MS").ok().and_then(|ms| ms.parse().ok());
        Duration::from_millis(millis.unwrap_or(0).min(60_000))
    })
}

/// The tool: a fixed reading, so the example needs no network (taking [`reading_latency`]).
async fn get_weather(call: ToolCall) -> Result<ToolOutput, ToolError> {
    #[derive(serde::Deserialize)]
    struct Args {
        place: String,
    }
    let args: Args = call.arguments.deserialize().map_err(|_| ToolError::new("place must be a string"))?;
    let latency = reading_latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    match args.place.as_str() {
        "Oslo" | "Lima" => ToolOutput::json(&json!({"place": args.place, "temperature_c": 12})),
        _ => Err(ToolError::new("unknown place")),
    }
}

/// The host's resource reader: the list of places, and one place by name.
async fn read_place(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    if request.uri == "weather://places" {
        return Ok(vec![ResourceContents::text(&request.uri, "Oslo\nLima")]);
    }
    match request.uri.strip_prefix("weather://place/") {
        Some("Oslo" | "Lima") => Ok(vec![ResourceContents::text(&request.uri, "12°C")]),
        _ => Err(ReaderError::new("no such place")),
    }
}

/// The prompt renderer.
async fn get_prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let place = request.arguments.get_str("place").unwrap_or_default();
    Ok(PromptOutput {
        description: None,
        messages: vec![PromptMessage {
            role: Role::User,
            content: ContentBlock::text(format!("What is the forecast for {place}?")),
        }],
    })
}

/// Seconds since the Unix epoch, for the diff's window.
fn unix_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The weather host: its server, and its connectome surface (which the server also serves).
pub struct WeatherHost {
    /// The server, with the surface listed in its catalog and the collector on its dispatch site.
    pub server: Server,
    /// The declared graph, the collector and the window, as the server reads them.
    pub surface: Surface,
}

/// The weather host, its diff window running from when it was built until each read.
pub fn weather_host() -> Result<WeatherHost, HostError> {
    let started = unix_seconds();
    weather_host_with_window(
        move || serde_json::json!({"started_at_unix_s": started, "ended_at_unix_s": unix_seconds()}),
    )
}

/// The weather host with the given diff window. Its declared graph is its catalog, each tool mapped to
/// the module that serves it; its collector is fed by the one dispatch site.
pub fn weather_host_with_window(
    window: impl Fn() -> serde_json::Value + Send + Sync + 'static,
) -> Result<WeatherHost, HostError> {
    let declared = Declared::builder("weather")
        .catalog(connectome::declared_catalog(&catalog()))
        .tool_module("get_weather", "weather::catalog")
        .tool_module(connectome::TOOL_NAME, "mcp_kernel::connectome")
        .build()?;
    let collector = Collector::new();
    collector.start();
    let surface = Surface::new().declared(declared.graph).observed(collector.clone()).window(window);
    let (for_dispatch, for_reader) = (surface.clone(), surface.clone());
    let server = Server::builder(catalog())
        .server_name("weather")
        .observe_dispatch(collector)
        .dispatch(move |call: ToolCall| {
            let surface = for_dispatch.clone();
            async move {
                match &*call.name {
                    connectome::TOOL_NAME => surface.call(&call.arguments),
                    _ => get_weather(call).await,
                }
            }
        })
        .resource_reader(move |request: ReadResource| {
            let answer = for_reader.read(&request.uri);
            async move {
                match answer {
                    Some(answer) => answer.map_err(|e| ReaderError::new(e.to_string())),
                    None => read_place(request).await,
                }
            }
        })
        .prompt_reader(get_prompt)
        .build()?;
    Ok(WeatherHost { server, surface })
}

/// The weather host's server.
pub fn weather_server() -> Result<Server, HostError> {
    weather_host().map(|host| host.server)
}

/// Why the weather host could not be built.
pub type HostError = Box<dyn std::error::Error + Send + Sync>;
