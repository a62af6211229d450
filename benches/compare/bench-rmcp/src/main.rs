//! `bench-rmcp stdio` | `bench-rmcp http 127.0.0.1:PORT`
//!
//! The `echo` tool served by rmcp 3.11.0 with its idiomatic macros (`#[tool_router]`, `#[tool]`,
//! `#[tool_handler]`), configured for its best stateless throughput:
//!
//! - HTTP: `StreamableHttpService` with `legacy_session_mode: false` (every request is served on the
//!   stateless path; MCP 2026-07-28 requests always are), `json_response: true` (a terminal reply is
//!   one `application/json` body, not an SSE stream), the `NeverSessionManager`, no SSE keep-alive
//!   or priming, no Host allowlist (mcp-kernel has none either) and no Origin check (the default).
//!   The handler is built once; the per-request service factory clones two `Arc`s.
//! - stdio: `rmcp::transport::stdio_pipes()`, the non-blocking FIFO transport (it falls back to the
//!   blocking `stdio()` handles when stdin/stdout are not pipes).

use std::sync::{Arc, LazyLock};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

/// Exactly the schema every benchmarked server advertises (the macro would otherwise derive one
/// with schemars, which adds `$schema`).
static ECHO_SCHEMA: LazyLock<Arc<JsonObject>> = LazyLock::new(|| {
    let serde_json::Value::Object(schema) = serde_json::json!({
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": false
    }) else {
        unreachable!("an object literal")
    };
    Arc::new(schema)
});

fn echo_schema() -> Arc<JsonObject> {
    ECHO_SCHEMA.clone()
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    message: String,
}

#[derive(Clone)]
struct Echo {
    tool_router: Arc<ToolRouter<Echo>>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self { tool_router: Arc::new(Self::tool_router()) }
    }

    #[tool(
        description = "Echoes the message back.",
        input_schema = echo_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(message)])
    }
}

#[tool_handler(router = self.tool_router, name = "bench-rmcp")]
impl ServerHandler for Echo {}

async fn serve_http(addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let echo = Echo::new();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_sse_retry(None)
        .disable_allowed_hosts();
    let service: StreamableHttpService<Echo, NeverSessionManager> =
        StreamableHttpService::new(move || Ok(echo.clone()), Arc::new(NeverSessionManager::default()), config);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new().route_service("/mcp", service);
    println!("listening on http://{bound}/mcp");
    axum::serve(listener, app).await?;
    Ok(())
}

async fn serve_stdio() -> Result<(), Box<dyn std::error::Error>> {
    let running = match Echo::new().serve(rmcp::transport::stdio_pipes()).await {
        Ok(running) => running,
        // Input ended before the first request: nothing to serve.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    running.waiting().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["stdio"] => serve_stdio().await?,
        ["http", addr] => serve_http(addr).await?,
        _ => return Err("usage: bench-rmcp stdio | bench-rmcp http 127.0.0.1:PORT".into()),
    }
    Ok(())
}
