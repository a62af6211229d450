//! The session's caller and live replacement: what `StdioOptions::principal` (or `extensions`) holds
//! reaches the host's code on every request; a `LiveServer` serves each message to its end by the
//! server current when it was read, and the next message sees a replacement.

use std::sync::Arc;

use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::{Extensions, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_stdio::StdioOptions;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

use crate::harness::{Session, bounded, call, request};

/// The host's principal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Caller(String);

/// Another value a host may attach.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tenant(u32);

/// `whoami` answers the principal and tenant it was handed; `count` reports progress first.
fn whoami_server() -> Server {
    let tools = vec![ToolSpec::new("whoami", Mode::ReadOnly), ToolSpec::new("count", Mode::ReadOnly)];
    Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(|call: ToolCall| async move {
            if &*call.name == "count" {
                call.context.progress().report(1.0, None, None);
            }
            let caller = call.context.principal::<Caller>().map(|caller| caller.0.clone());
            let tenant = call.context.principal::<Tenant>().map(|tenant| tenant.0);
            ToolOutput::json(&json!({"caller": caller, "tenant": tenant}))
        })
        .build()
        .expect("builds")
}

fn structured(response: &Value) -> &Value {
    &response["result"]["structuredContent"]
}

/// A modern request: `params._meta` declares 2026-07-28.
fn modern(id: i64, tool: &str) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": meta}})
}

#[tokio::test]
async fn the_principal_stdio_options_attach_reaches_every_request() {
    bounded(async {
        let mut extensions = Extensions::new();
        extensions.insert(Tenant(7));
        let options = StdioOptions::default().extensions(extensions).principal(Caller("local".into()));
        let mut session = Session::start(whoami_server(), options);
        session.send_json(call(1, "whoami")).await;
        assert_eq!(structured(&session.expect().await), &json!({"caller": "local", "tenant": 7}));
        session.send_json(modern(2, "whoami")).await;
        let response = session.expect().await;
        assert_eq!(response["id"], 2);
        assert_eq!(structured(&response), &json!({"caller": "local", "tenant": 7}));
        // With a progress token: the notification first, then the answer, which still sees the caller.
        let mut with_token = modern(3, "count");
        with_token["params"]["_meta"]["progressToken"] = json!("t");
        session.send_json(with_token).await;
        assert_eq!(session.expect().await["method"], "notifications/progress");
        assert_eq!(structured(&session.expect().await), &json!({"caller": "local", "tenant": 7}));
        session.ends_clean().await;

        // Nothing attached: nothing seen.
        let mut session = Session::start(whoami_server(), StdioOptions::default());
        session.send_json(call(1, "whoami")).await;
        assert_eq!(structured(&session.expect().await), &json!({"caller": null, "tenant": null}));
        session.ends_clean().await;
    })
    .await;
}

/// A server answering `gate` with `version` once a permit of `gate` is available (reporting each
/// start), and listing `extra` tools that answer their own name.
fn versioned(
    version: &'static str,
    extra: &[&str],
    gate: &Arc<Semaphore>,
    started: &mpsc::UnboundedSender<&'static str>,
) -> Server {
    let tools = std::iter::once("gate")
        .chain(extra.iter().copied())
        .map(|name| ToolSpec::new(name, Mode::ReadOnly))
        .collect();
    let gate = Arc::clone(gate);
    let started = started.clone();
    Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(move |call: ToolCall| {
            let gate = Arc::clone(&gate);
            let started = started.clone();
            async move {
                if &*call.name == "gate" {
                    let _ = started.send(version);
                    gate.acquire().await.map_err(|_| ToolError::new("closed"))?.forget();
                }
                ToolOutput::json(&json!({"server": version, "tool": &*call.name}))
            }
        })
        .build()
        .expect("builds")
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
