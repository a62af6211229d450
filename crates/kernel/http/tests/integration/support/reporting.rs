//! A host that reports progress: a server whose `count` tool reports progress and whose `quiet` tool
//! reports nothing.

use std::time::Duration;

use mcp_kernel_http::{AllowedOrigins, LegacyClients, McpHttp};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

use super::{ALLOWED_ORIGIN, ALLOWED_ORIGIN_2, Running, serve};

/// The dispatch of [`reporting_server`]: `count` reports 0, 50 and 100 of 100 (5 ms apart), then
/// answers `counted`; any other tool answers `quiet` without reporting anything.
pub async fn reporting_dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "count" => {
            for step in [0.0, 50.0, 100.0] {
                call.context.progress().report(step, Some(100.0), Some("counting"));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(ToolOutput::text("counted"))
        }
        _ => Ok(ToolOutput::text("quiet")),
    }
}

/// A server with two tools: `count` (reports progress) and `quiet` (reports nothing).
pub fn reporting_server() -> Server {
    let catalog = Listing {
        tools: vec![ToolSpec::new("count", Mode::ReadOnly), ToolSpec::new("quiet", Mode::ReadOnly)],
        ..Listing::default()
    };
    Server::builder(catalog).dispatch(reporting_dispatch).build().expect("the reporting catalog builds")
}

/// Serves [`reporting_server`] on 127.0.0.1 (port 0), admitting everyone from the fixture's origins,
/// with `legacy` as its legacy-client policy.
pub async fn start_reporting(legacy: LegacyClients) -> Running {
    let service = McpHttp::builder(reporting_server())
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN, ALLOWED_ORIGIN_2]))
        .legacy_clients(legacy)
        .authorize(|_| Ok(()))
        .build();
    serve(service).await
}
