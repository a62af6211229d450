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
//!
//! For the catalog curves, `BENCH_CATALOG_TOOLS=N` adds N more tools to the router at run time,
//! `tool_00000`, `tool_00001`, … (N of them): each is the `echo` route under another name
//! (`ToolRouter::add_route`), so it has the echo schema and is served by the same function. rmcp has
//! no router for uri templates (a host writes `read_resource` itself), so there is no template
//! catalog here.

#![forbid(unsafe_code)]

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

/// The most generated tools (`BENCH_CATALOG_TOOLS`).
const MAX_CATALOG: usize = 1_000_000;

/// `BENCH_CATALOG_TOOLS` (0 when unset).
fn catalog_tools() -> Result<usize, String> {
    const VAR: &str = "BENCH_CATALOG_TOOLS";
    match std::env::var(VAR) {
        Err(_) => Ok(0),
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|n| *n <= MAX_CATALOG)
            .ok_or_else(|| format!("{VAR}={v:?} is not a number up to {MAX_CATALOG}")),
    }
}

#[tool_router]
impl Echo {
    /// The macro's router (`echo`), with `tools` copies of the echo route under generated names.
    fn new(tools: usize) -> Self {
        let mut router = Self::tool_router();
        if let Some(echo) = router.map.get("echo").cloned() {
            for i in 0..tools {
                let mut route = echo.clone();
                route.attr.name = format!("tool_{i:05}").into();
                router.add_route(route);
            }
        }
        Self { tool_router: Arc::new(router) }
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
    let echo = Echo::new(catalog_tools()?);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_sse_retry(None)
        .disable_allowed_hosts();
    let service: StreamableHttpService<Echo, NeverSessionManager> = StreamableHttpService::new(
        move || Ok(echo.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let app = axum::Router::new().route_service("/mcp", service);
    println!("listening on http://{bound}/mcp");
    // axum's `http2` feature is on (the workspace's `axum` dependency): this serves HTTP/1.1 and h2c.
    axum::serve(listener, app).await?;
    Ok(())
}

async fn serve_stdio() -> Result<(), Box<dyn std::error::Error>> {
    let running = match Echo::new(catalog_tools()?).serve(rmcp::transport::stdio_pipes()).await {
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
