//! A complete host: the weather catalog, served over stdio.
//!
//! Run it with `cargo run --example weather` and type JSON-RPC lines on stdin; every report goes to
//! stderr, stdout carries protocol lines only. With `-- --http 127.0.0.1:4000` it serves the stateless
//! Streamable HTTP transport at `http://127.0.0.1:4000/mcp` instead (Ctrl-C stops it).

use mcp_kernel::http::{AllowedOrigins, McpHttp};
use mcp_kernel::wire::types::{ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_kernel::{
    Capabilities, GetPrompt, Mode, PromptArgument, PromptOutput, PromptSpec, ReadResource, ReaderError,
    ResourceSpec, ResourceTemplateSpec, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::json;

/// What the host offers.
fn catalog() -> Capabilities {
    Capabilities {
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

/// The tool: a fixed reading, so the example needs no network.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    #[derive(serde::Deserialize)]
    struct Args {
        place: String,
    }
    let args: Args = call.arguments.deserialize().map_err(|_| ToolError::new("place must be a string"))?;
    match args.place.as_str() {
        "Oslo" | "Lima" => ToolOutput::json(&json!({"place": args.place, "temperature_c": 12})),
        _ => Err(ToolError::new("unknown place")),
    }
}

/// The one resource reader: the list of places, and one place by name.
async fn read_resource(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
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

/// Serves the MCP endpoint at `/mcp` on `addr`, mounted in an axum router, until Ctrl-C.
async fn serve_http(server: Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let port = listener.local_addr()?.port();
    let service = McpHttp::builder(server)
        .allowed_origins(AllowedOrigins::list([
            "http://localhost".to_owned(),
            "http://127.0.0.1".to_owned(),
            format!("http://localhost:{port}"),
            format!("http://127.0.0.1:{port}"),
        ]))
        .authorize(|_parts| Ok(())) // a local demo: everyone who can reach the port may call
        .build();
    let app = axum::Router::new().route_service("/mcp", service);
    tracing::info!("serving http://{}/mcp", listener.local_addr()?);
    mcp_kernel::http::serve(listener, app, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(ansi).with_env_filter("info").init();
    let server = Server::builder(catalog())
        .server_name("weather")
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .build()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => mcp_kernel::stdio::serve(server).await?,
        [flag, addr] if flag == "--http" => serve_http(server, addr).await?,
        _ => return Err("usage: weather [--http ADDR]".into()),
    }
    Ok(())
}
