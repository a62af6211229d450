//! Progress through the core (MCP S-52): opt-in by token, delivered to the transport's sink, closed at
//! the response.

use std::sync::{Arc, Mutex};

use mcp_kernel_router::notify::Progress;
use mcp_kernel_router::transport::NotificationSink;
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

static KEPT: Mutex<Option<Progress>> = Mutex::new(None);

async fn count(call: ToolCall) -> Result<ToolOutput, ToolError> {
    for step in [0.0, 50.0, 50.0, 100.0] {
        call.context.progress().report(step, Some(100.0), None);
    }
    *KEPT.lock().unwrap() = Some(call.context.progress().clone());
    Ok(ToolOutput::text("counted"))
}

fn server() -> Server {
    let catalog = Listing { tools: vec![ToolSpec::new("count", Mode::ReadOnly)], ..Listing::default() };
    Server::builder(catalog).dispatch(count).build().expect("builds")
}

fn call(token: Option<Value>) -> Value {
    let mut params = json!({"name": "count"});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
}

fn sink() -> (NotificationSink, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    (Arc::new(move |n| kept.lock().unwrap().push(n)), seen)
}

#[tokio::test]
async fn progress_is_sent_only_with_a_token_and_stops_at_the_response() {
    let server = server();
    let (tx, seen) = sink();
    let plain = server.handle(call(None)).await;
    let without = server.handle_with_notifications(call(None), tx.clone()).await;
    assert_eq!(plain, without, "no token: the same answer and nothing sent");
    assert!(seen.lock().unwrap().is_empty());

    let with = server.handle_with_notifications(call(Some(json!("t"))), tx).await;
    assert_eq!(plain, with, "a token changes nothing in the response");
    let progress: Vec<f64> =
        seen.lock().unwrap().iter().map(|n| n["params"]["progress"].as_f64().unwrap()).collect();
    assert_eq!(progress, [0.0, 50.0, 100.0], "a repeated value is dropped");
    let kept = KEPT.lock().unwrap().take().expect("the tool kept its reporter");
    assert!(!kept.is_enabled(), "closed at the response");
    kept.report(200.0, None, None);
    assert_eq!(seen.lock().unwrap().len(), 3, "nothing after the response");
}
