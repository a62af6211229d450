//! `bench-kernel stdio` | `bench-kernel http 127.0.0.1:PORT`
//!
//! The `echo` tool served by mcp-kernel with every default on: full JSON Schema validation of the
//! arguments and every refusal layer of the HTTP transport (headers, `Mcp-Method`/`Mcp-Name`
//! mirroring, `Accept`, `Content-Type`, body limits). Only the Origin allowlist is opened
//! (`AllowedOrigins::any()`) and authorization admits everyone, as for a local benchmark.

use mcp_kernel::http::{AllowedOrigins, McpHttp};
use mcp_kernel::{Capabilities, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

/// The one tool, with exactly the schema every benchmarked server advertises.
fn catalog() -> Capabilities {
    Capabilities {
        tools: vec![ToolSpec::new("echo", Mode::ReadOnly).description("Echoes the message back.").input_schema(
            json!({
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
                "additionalProperties": false
            }),
        )],
        resources: Vec::new(),
        prompts: Vec::new(),
    }
}

/// Returns the (already validated) message as one text block.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match call.arguments.get_str("message") {
        Some(message) => Ok(ToolOutput::text(message)),
        None => Err(ToolError::new("message must be a string")),
    }
}

async fn serve_http(server: Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let service = McpHttp::builder(server).allowed_origins(AllowedOrigins::any()).authorize(|_| Ok(())).build();
    let app = axum::Router::new().route_service("/mcp", service);
    println!("listening on http://{bound}/mcp");
    mcp_kernel::http::serve(listener, app, std::future::pending()).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder(catalog()).server_name("bench-kernel").dispatch(dispatch).build()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["stdio"] => mcp_kernel::stdio::serve(server).await?,
        ["http", addr] => serve_http(server, addr).await?,
        _ => return Err("usage: bench-kernel stdio | bench-kernel http 127.0.0.1:PORT".into()),
    }
    Ok(())
}
