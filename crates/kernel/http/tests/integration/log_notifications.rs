//! Log notifications over HTTP (MCP S-52): with the host's opt-in, a 2025-11-25 request is streamed
//! from its first `notifications/message`; a `2026-07-28` request without `logLevel` gets plain JSON.

use std::time::Duration;

use http::HeaderValue;
use http::header::CONTENT_TYPE;
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::{LegacyClients, McpHttp};
use mcp_kernel_router::notify::LogLevel;
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

const MESSAGES: [&str; 3] = ["Tool execution started", "Tool processing data", "Tool execution completed"];

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    for message in MESSAGES {
        call.context.log(LogLevel::Info, None, Value::from(message));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(ToolOutput::text("logged"))
}

async fn start_logging() -> Running {
    let catalog = Listing { tools: vec![ToolSpec::new("logs", Mode::ReadOnly)], ..Listing::default() };
    let server: Server = Server::builder(catalog)
        .dispatch(dispatch)
        .log_notifications(LogLevel::Debug)
        .build()
        .expect("builds");
    let service = McpHttp::builder(server)
        .allowed_origins(mcp_kernel_http::AllowedOrigins::list([ALLOWED_ORIGIN]))
        .legacy_clients(LegacyClients::Stateless)
        .authorize(|_| Ok(()))
        .build();
    serve(service).await
}

fn assert_log_stream(reply: &Reply) {
    let events = sse_events(reply);
    assert_eq!(events.len(), 4, "three messages then the response: {events:?}");
    for (event, message) in events.iter().zip(MESSAGES) {
        assert_eq!(
            *event,
            json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": message}})
        );
    }
    assert_eq!(events[3]["id"], 1);
    assert_eq!(events[3]["result"]["content"][0]["text"], "logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_request_gets_its_log_messages_on_an_sse_stream_then_the_result() {
    bounded(async {
        let server = start_logging().await;
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "logs"}});
        let mut headers = standard_headers("tools/call", Some("logs"));
        headers.insert("mcp-protocol-version", HeaderValue::from_static(LEGACY));
        let reply = post(server.addr, Proto::H1, headers, bytes(&message)).await;
        assert_log_stream(&reply);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_gets_log_messages_only_when_it_set_a_log_level() {
    bounded(async {
        let server = start_logging().await;
        for proto in BOTH {
            let plain = request(1, "tools/call", json!({"name": "logs"}));
            let reply = post_message(server.addr, proto, &plain).await;
            assert_eq!(reply.status, 200);
            assert_eq!(reply.headers[CONTENT_TYPE], "application/json", "no logLevel: no stream");
            assert!(!String::from_utf8_lossy(&reply.raw).contains("notifications/message"));
            assert_eq!(reply.result()["content"][0]["text"], "logged");

            let mut leveled = request(1, "tools/call", json!({"name": "logs"}));
            leveled["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
            assert_log_stream(&post_message(server.addr, proto, &leveled).await);

            leveled["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
            let above = post_message(server.addr, proto, &leveled).await;
            assert_eq!(above.headers[CONTENT_TYPE], "application/json", "below the level: nothing sent");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_set_level_stays_404_on_2026_with_log_notifications_on() {
    bounded(async {
        let server = start_logging().await;
        let set = request(1, "logging/setLevel", json!({"level": "debug"}));
        let reply = post_message(server.addr, Proto::H1, &set).await;
        reply.assert_error(404, -32601, &json!(1));
    })
    .await;
}
