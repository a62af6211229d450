//! A `LiveServer` behind the HTTP service: each request is served to its end by the server current
//! when it arrived; the next request sees the replacement. Workspace-only (left out of the package): the
//! versioned servers are `mcp-kernel-test-support`'s.

#[path = "integration/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

use mcp_kernel_http::{AllowedOrigins, McpHttp};
use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_test_support::live::versioned;
use support::*;

fn call(id: i64, tool: &str) -> Value {
    request(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

fn tool_names(reply: &Reply) -> Vec<String> {
    let tools = reply.result()["tools"].as_array().expect("a tool list");
    tools.iter().filter_map(|tool| tool["name"].as_str().map(str::to_owned)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_in_flight_when_the_server_is_replaced_finishes_on_the_old_server() {
    bounded(async {
        for proto in BOTH {
            let gate = Arc::new(Semaphore::new(0));
            let (started, mut starts) = mpsc::unbounded_channel();
            let live = LiveServer::new(versioned("old", &[], &gate, &started));
            let service = McpHttp::builder(live.clone())
                .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
                .authorize(|_| Ok(()))
                .build();
            let server = serve(service).await;
            let addr = server.addr;
            let in_flight = tokio::spawn(async move { post_message(addr, proto, &call(1, "gate")).await });
            let first =
                tokio::time::timeout(EXCHANGE_TIMEOUT, starts.recv()).await.expect("the call started");
            assert_eq!(first, Some("old"));

            let _old = live.replace(versioned("new", &["added"], &gate, &started));
            // The next request sees the new catalog, while the first is still waiting on the old one.
            let list = request(2, "tools/list", json!({}));
            let listed = post_message(server.addr, proto, &list).await;
            assert_eq!(tool_names(&listed), ["gate", "added"], "{proto:?}");
            let added = post_message(server.addr, proto, &call(3, "added")).await;
            assert_eq!(added.result()["structuredContent"], json!({"server": "new", "tool": "added"}));
            assert!(!in_flight.is_finished(), "the first call is still waiting on its gate");

            gate.add_permits(1);
            let reply =
                tokio::time::timeout(EXCHANGE_TIMEOUT, in_flight).await.expect("answered").expect("joined");
            assert_eq!(
                reply.result()["structuredContent"],
                json!({"server": "old", "tool": "gate"}),
                "{proto:?}"
            );
            // A new call of the same tool is the new server's.
            gate.add_permits(1);
            let reply = post_message(server.addr, proto, &call(4, "gate")).await;
            assert_eq!(reply.result()["structuredContent"], json!({"server": "new", "tool": "gate"}));
            let second = tokio::time::timeout(Duration::from_secs(1), starts.recv()).await.expect("started");
            assert_eq!(second, Some("new"));
            server.stop().await;
        }
    })
    .await;
}
