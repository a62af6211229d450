//! A `LiveServer` over stdio: each message is served to its end by the server current when it was read,
//! and the next message sees a replacement. Workspace-only (left out of the package): the versioned
//! servers are `mcp-kernel-test-support`'s.

#[path = "stdio/harness.rs"]
#[allow(dead_code)] // This binary uses a part of the harness only.
mod harness;

use std::sync::Arc;

use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_stdio::StdioOptions;
use mcp_kernel_test_support::live::versioned;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

use harness::{Session, bounded, call, request};

fn structured(response: &Value) -> &Value {
    &response["result"]["structuredContent"]
}

fn tool_names(response: &Value) -> Vec<&str> {
    let tools = response["result"]["tools"].as_array().expect("a tool list");
    tools.iter().filter_map(|tool| tool["name"].as_str()).collect()
}

#[tokio::test]
async fn a_request_in_flight_when_the_server_is_replaced_finishes_on_the_old_server() {
    bounded(async {
        let gate = Arc::new(Semaphore::new(0));
        let (started, mut starts) = mpsc::unbounded_channel();
        let live = LiveServer::new(versioned("old", &[], &gate, &started));
        let mut session = Session::start(live.clone(), StdioOptions::default());
        session.send_json(call(1, "gate")).await;
        assert_eq!(starts.recv().await, Some("old"));

        let _old = live.replace(versioned("new", &["added"], &gate, &started));
        session.send_json(request(2, "tools/list")).await;
        let listed = session.expect().await;
        assert_eq!(listed["id"], 2, "the list is answered while the first call waits: {listed}");
        assert_eq!(tool_names(&listed), ["gate", "added"]);
        session.send_json(call(3, "added")).await;
        let added = session.expect().await;
        assert_eq!(
            (&added["id"], structured(&added)),
            (&json!(3), &json!({"server": "new", "tool": "added"}))
        );

        gate.add_permits(1);
        let first = session.expect().await;
        assert_eq!(
            (&first["id"], structured(&first)),
            (&json!(1), &json!({"server": "old", "tool": "gate"}))
        );
        gate.add_permits(1);
        session.send_json(call(4, "gate")).await;
        let again = session.expect().await;
        assert_eq!(
            (&again["id"], structured(&again)),
            (&json!(4), &json!({"server": "new", "tool": "gate"}))
        );
        assert_eq!(starts.recv().await, Some("new"));
        session.ends_clean().await;
    })
    .await;
}
