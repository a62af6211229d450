//! The conformance harness: the suite's catalog over the HTTP transport, on 127.0.0.1 only.
//!
//! `conformance-server [--port N]` (default 0: a free port) prints `listening on http://127.0.0.1:N/mcp`
//! on stdout once it accepts connections, and stops on Ctrl-C (SIGINT). The served server is a
//! `LiveServer` the diagnostic triggers replace (`live`).

mod asking;
mod catalog;
mod live;
mod tasks;

use mcp_kernel::http::{AllowedOrigins, LegacySessions, McpHttp};

/// How the harness keeps `2025-11-25` clients: in sessions, in this process, at the default bounds.
///
/// A session is what the suite's scenarios that ask the client (`tools-call-sampling`,
/// `tools-call-elicitation`, `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`) and that
/// subscribe (`resources-subscribe`, `resources-unsubscribe`) need: the kernel asks a legacy client for
/// the tools of `asking/mod.rs`, which are written once the `2026-07-28` way, and keeps the
/// subscriptions; `server-sse-multiple-streams` needs the session id. The suite names no principal, so
/// its sessions count against its address, 127.0.0.1, at the default 16 per client: a whole run stays
/// within it.
fn legacy_sessions() -> LegacySessions {
    LegacySessions::in_process()
}

fn port_from_args() -> Result<u16, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(0),
        [flag, port] if flag == "--port" => port.parse().map_err(|_| format!("not a port: {port}")),
        _ => Err("usage: conformance-server [--port N]".to_owned()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_env_filter("warn").init();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port_from_args()?)).await?;
    let port = listener.local_addr()?.port();
    // The triggers replace the served server; `_harness` keeps what they rebuild it from.
    let (_harness, live) = live::Harness::start(catalog::request_state_sealer()?)?;
    let origins = ["http://localhost", "http://127.0.0.1"]
        .into_iter()
        .flat_map(|host| [host.to_owned(), format!("{host}:{port}")])
        .collect::<Vec<_>>();
    let service = McpHttp::builder(live)
        .allowed_origins(AllowedOrigins::list(origins))
        .authorize(|_parts| Ok(())) // a local test harness: everyone who reaches 127.0.0.1 may call
        .legacy_sessions(legacy_sessions()) // the suite's 2025-11-25 set: see `legacy_sessions`
        .build();
    let app = axum::Router::new().route_service("/mcp", service);
    println!("listening on http://127.0.0.1:{port}/mcp");
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    mcp_kernel::http::serve(listener, app, stop).await?;
    Ok(())
}
