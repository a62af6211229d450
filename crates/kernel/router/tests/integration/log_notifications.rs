//! Log notifications through the core (MCP S-52): the host's opt-in, the request's level on
//! `2026-07-28`, the host's minimum on 2025-11-25, delivered to the transport's sink, closed at the
//! response.

use std::sync::{Arc, Mutex};

use mcp_kernel_router::notify::LogLevel;
use mcp_kernel_router::transport::NotificationSink;
use mcp_kernel_router::{Listing, Mode, RequestContext, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

const LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

static KEPT: Mutex<Option<RequestContext>> = Mutex::new(None);

/// Logs once at every level, data = the level's name, and keeps its context.
async fn speak(call: ToolCall) -> Result<ToolOutput, ToolError> {
    for level in LEVELS {
        call.context.log(level, Some("speak"), json!(level));
    }
    *KEPT.lock().unwrap() = Some(call.context.clone());
    Ok(ToolOutput::text("spoken"))
}

fn server(opt_in: Option<LogLevel>) -> Server {
    let catalog = Listing { tools: vec![ToolSpec::new("speak", Mode::ReadOnly)], ..Listing::default() };
    let builder = Server::builder(catalog).dispatch(speak);
    let builder = match opt_in {
        Some(minimum) => builder.log_notifications(minimum),
        None => builder,
    };
    builder.build().expect("builds")
}

fn legacy(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

fn modern(method: &str, mut params: Value, level: Option<&str>) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    if let Some(level) = level {
        params["_meta"]["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    legacy(method, params)
}

fn sink() -> (NotificationSink, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    (Arc::new(move |n| kept.lock().unwrap().push(n)), seen)
}

/// The levels of the messages the sink received for one request.
async fn levels_sent(server: &Server, message: Value) -> Vec<String> {
    let (tx, seen) = sink();
    let handled = server.handle_with_notifications(message, tx).await;
    assert!(handled.response.unwrap().as_error().is_none());
    let seen = seen.lock().unwrap();
    for n in seen.iter() {
        assert_eq!(n["method"], "notifications/message");
        assert_eq!(n["params"]["logger"], "speak");
        assert_eq!(n["params"]["data"], n["params"]["level"]);
    }
    seen.iter().map(|n| n["params"]["level"].as_str().unwrap().to_owned()).collect()
}

/// The response to `message`, as JSON.
async fn body(server: &Server, message: Value) -> Value {
    let handled = server.handle(message).await;
    serde_json::from_slice(&handled.response.unwrap().to_bytes()).unwrap()
}

#[tokio::test]
async fn without_the_opt_in_nothing_is_logged_in_either_era() {
    let server = server(None);
    assert!(levels_sent(&server, legacy("tools/call", json!({"name": "speak"}))).await.is_empty());
    let call = modern("tools/call", json!({"name": "speak"}), Some("debug"));
    assert!(levels_sent(&server, call).await.is_empty());
    assert!(!server.may_notify(Some(&json!({"name": "speak"}))));
}

#[tokio::test]
async fn a_2026_request_gets_logs_only_at_or_above_its_log_level() {
    let server = server(Some(LogLevel::Debug));
    let call = modern("tools/call", json!({"name": "speak"}), Some("warning"));
    assert_eq!(levels_sent(&server, call).await, ["warning", "error", "critical", "alert", "emergency"]);
    let call = modern("tools/call", json!({"name": "speak"}), None);
    assert!(levels_sent(&server, call).await.is_empty(), "no logLevel: no message (S-52)");
}

#[tokio::test]
async fn a_2026_request_cannot_lower_the_host_minimum() {
    let server = server(Some(LogLevel::Error));
    let call = modern("tools/call", json!({"name": "speak"}), Some("debug"));
    assert_eq!(levels_sent(&server, call).await, ["error", "critical", "alert", "emergency"]);
}

#[tokio::test]
async fn a_legacy_request_gets_logs_at_or_above_the_host_minimum() {
    let server = server(Some(LogLevel::Notice));
    let call = legacy("tools/call", json!({"name": "speak", "_meta": {"progressToken": 1}}));
    let sent = levels_sent(&server, call).await;
    assert_eq!(sent, ["notice", "warning", "error", "critical", "alert", "emergency"]);
    let bare = legacy("tools/call", json!({"name": "speak"}));
    assert_eq!(levels_sent(&server, bare).await.len(), 6);
}

#[tokio::test]
async fn nothing_is_logged_after_the_response() {
    let server = server(Some(LogLevel::Debug));
    let (tx, seen) = sink();
    server.handle_with_notifications(legacy("tools/call", json!({"name": "speak"})), tx).await;
    assert_eq!(seen.lock().unwrap().len(), 8);
    let kept = KEPT.lock().unwrap().take().expect("the tool kept its context");
    assert!(!kept.log_enabled(LogLevel::Emergency), "closed at the response");
    kept.log(LogLevel::Emergency, None, json!("late"));
    assert_eq!(seen.lock().unwrap().len(), 8, "nothing after the response");
}

#[tokio::test]
async fn the_logging_capability_is_advertised_only_with_the_opt_in() {
    let initialize = || legacy("initialize", json!({"protocolVersion": "2025-11-25"}));
    let default = body(&server(None), initialize()).await;
    assert_eq!(
        serde_json::to_string(&default["result"]["capabilities"]).unwrap(),
        r#"{"tools":{"listChanged":false},"resources":{"listChanged":false,"subscribe":false},"prompts":{"listChanged":false}}"#,
        "without the opt-in the capabilities are unchanged, byte for byte"
    );
    let on = server(Some(LogLevel::Info));
    let mut expected = default["result"]["capabilities"].clone();
    expected["logging"] = json!({});
    assert_eq!(body(&on, initialize()).await["result"]["capabilities"], expected);
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"});
    assert_eq!(body(&on, discover).await["result"]["capabilities"], expected);
}

#[tokio::test]
async fn logging_set_level_is_answered_on_legacy_with_the_opt_in_and_stays_unknown_on_2026() {
    let on = server(Some(LogLevel::Info));
    let set = |level: &str| legacy("logging/setLevel", json!({"level": level}));
    assert_eq!(body(&on, set("debug")).await["result"], json!({}));
    assert_eq!(body(&on, set("loud")).await["error"]["code"], -32602);
    let modern_set = modern("logging/setLevel", json!({"level": "debug"}), None);
    assert_eq!(body(&on, modern_set).await["error"]["code"], -32601);
    assert_eq!(body(&server(None), set("debug")).await["error"]["code"], -32601);
}

#[test]
fn a_transport_passes_a_sink_only_where_a_notification_may_go() {
    let on = server(Some(LogLevel::Info));
    assert!(on.may_notify(None), "a legacy request may be logged to");
    assert!(on.may_notify(Some(&json!({"name": "speak"}))));
    let without = modern("tools/call", json!({"name": "speak"}), None);
    assert!(!on.may_notify(without.get("params")), "2026 without logLevel");
    let with = modern("tools/call", json!({"name": "speak"}), Some("info"));
    assert!(on.may_notify(with.get("params")));
    let off = server(None);
    assert!(off.may_notify(Some(&json!({"_meta": {"progressToken": "t"}}))), "progress as before");
    assert!(!off.may_notify(with.get("params")));
}

/// Answers `message` with what a sessionless transport (HTTP) attaches.
async fn sessionless(server: &Server, message: Value) -> (Value, mcp_kernel_router::transport::Control) {
    let inbound = mcp_kernel_router::transport::Inbound::new().sessionless();
    let handled = server.handle_inbound(message, inbound).await;
    (handled.response.map(|r| r.to_value()).unwrap_or(Value::Null), handled.control)
}

#[tokio::test]
async fn set_level_accepts_the_eight_levels_only() {
    for opt_in in [None, Some(LogLevel::Info)] {
        let server = server(opt_in);
        for level in LEVELS {
            let (answer, _) = sessionless(&server, legacy("logging/setLevel", json!({"level": level}))).await;
            assert_eq!(answer["result"], json!({}), "{level:?}, opt-in {opt_in:?}");
        }
        for params in [json!({"level": "INFO"}), json!({}), json!("info"), json!({"level": 3})] {
            let (answer, _) = sessionless(&server, legacy("logging/setLevel", params)).await;
            assert_eq!(answer["error"]["code"], json!(-32602));
        }
    }
}

#[tokio::test]
async fn set_level_without_the_opt_in_is_no_method_where_a_session_is_kept() {
    let answer = server(None).handle(legacy("logging/setLevel", json!({"level": "info"}))).await;
    assert_eq!(answer.response.expect("an answer").to_value()["error"]["code"], json!(-32601));
}

#[tokio::test]
async fn a_sessionless_transport_has_no_shutdown() {
    let (answer, control) = sessionless(&server(None), legacy("shutdown", json!({}))).await;
    assert_eq!(answer["error"]["code"], json!(-32601));
    assert_eq!(control, mcp_kernel_router::transport::Control::Continue);
    let kept = server(None).handle(legacy("shutdown", json!({}))).await;
    assert_eq!(kept.response.expect("an answer").to_value()["result"], json!({}));
    assert_eq!(kept.control, mcp_kernel_router::transport::Control::Shutdown);
}
