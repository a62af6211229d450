//! A complete host: the weather catalog, served over stdio.
//!
//! Run it with `cargo run --example weather --features connectome` and type JSON-RPC lines on stdin;
//! every report goes to stderr, stdout carries protocol lines only. With `-- --http 127.0.0.1:4000` it
//! serves the stateless Streamable HTTP transport at `http://127.0.0.1:4000/mcp` instead, to `2026-07-28` and `2025-11-25`
//! clients alike.
//!
//! Ctrl-C or `SIGTERM` stops either transport the way a rolling restart wants: nothing new is taken,
//! what was taken is answered, and the process exits 0. To watch it, make each reading slow
//! (`WEATHER_LATENCY_MS=5000`), start a call, and send `SIGTERM`: the call is answered, then the
//! process exits.

#[allow(dead_code)] // `WeatherHost::surface` is read by the `connectome_export` example, not here
mod catalog;

use mcp_kernel::Server;
use mcp_kernel::http::{AllowedOrigins, McpHttp};
use mcp_kernel::stdio::StdioOptions;

/// Serves the MCP endpoint at `/mcp` on `addr` (any other path is 404), until Ctrl-C or SIGTERM (then
/// drains). MCP is all the port serves, so the service checks the path itself: no router in front.
async fn serve_http(server: Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let port = listener.local_addr()?.port();
    let service = McpHttp::builder(server)
        .allowed_origins(AllowedOrigins::loopback(port))
        .authorize(|_parts| Ok(())) // a local demo: everyone who can reach the port may call
        // Clients that open with `initialize` (2025-11-25, most in use today) are served too, by
        // default; `.legacy_clients(LegacyClients::Refused)` would keep the endpoint to 2026-07-28.
        .path("/mcp")
        .build();
    tracing::info!("serving http://{}/mcp", listener.local_addr()?);
    mcp_kernel::http::serve(listener, service, mcp_kernel::shutdown_signal()).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(ansi).with_env_filter("info").init();
    let server = catalog::weather_server().map_err(|e| -> Box<dyn std::error::Error> { e })?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            // Run by hand, the program would sit silent waiting for input: one line says why, on
            // stderr, only when stdin is a terminal (a client's pipe never sees it; stdout carries
            // JSON-RPC alone).
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!("weather: reading JSON-RPC lines on stdin; see README");
            }
            let options = StdioOptions::default().shutdown_on(mcp_kernel::shutdown_signal());
            mcp_kernel::stdio::serve_with(server, options).await?;
        }
        [flag, addr] if flag == "--http" => serve_http(server, addr).await?,
        _ => return Err("usage: weather [--http ADDR]".into()),
    }
    Ok(())
}
