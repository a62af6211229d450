//! The session's caller: what `StdioOptions::principal` (or `extensions`) holds reaches the host's code
//! on every request. (A `LiveServer`'s replacement is `tests/live_server.rs`'s, a binary of its own.)

use mcp_kernel_router::{Extensions, Listing, Mode, Server, ToolCall, ToolOutput, ToolSpec};
use mcp_kernel_stdio::StdioOptions;
use serde_json::{Value, json};

use crate::harness::{Session, bounded, call};

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
