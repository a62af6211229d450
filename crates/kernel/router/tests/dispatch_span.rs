//! The one dispatch span (protocol.md B-14): the server, the tool, the method and the outcome, after
//! the OpenTelemetry conventions for MCP; never arguments, results or headers. A validation failure
//! emits no dispatch span.
//!
//! In a test binary of its own: it records through a scoped subscriber, whose interest in the span
//! another test of the same process could settle first.

#[path = "integration/support/mod.rs"]
mod support;

use serde_json::json;
use support::spans::Spans;
use support::*;

#[tokio::test]
async fn the_dispatch_span_names_server_tool_method_and_outcome_never_a_payload() {
    let (spans, _guard) = Spans::install();
    let server = server();
    let secret = "s3cret-argument-value";
    let r =
        send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":{"place": secret}})))
            .await;
    assert_eq!(r["result"]["isError"], false);
    send(&server, modern(2, "tools/call", json!({"name":"fail"}))).await;
    send(&server, modern(3, "tools/call", json!({"name":"panics"}))).await;

    let dispatch = spans.named("mcp.dispatch");
    assert_eq!(dispatch.len(), 3);
    let names: std::collections::BTreeSet<_> = dispatch.iter().flat_map(|s| s.field_names()).collect();
    let expected = [
        "error.type",
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "jsonrpc.request.id",
        "mcp.method.name",
        "mcp.protocol.version",
        "otel.kind",
        "otel.name",
        "otel.status_code",
        "outcome",
        "rpc.response.status_code",
        "server",
        "tool",
    ];
    assert_eq!(names, expected.into_iter().collect());
    let outcomes: Vec<_> = dispatch.iter().map(|s| s.field("outcome").unwrap()).collect();
    assert_eq!(outcomes, ["\"ok\"", "\"error\"", "\"panic\""]);
    let ok = &dispatch[0];
    assert_eq!(ok.field("server"), Some("mcp-kernel"));
    assert_eq!(ok.field("otel.name"), Some("tools/call get_weather"));
    assert_eq!(ok.field("otel.kind"), Some("\"server\""));
    assert_eq!(ok.field("mcp.method.name"), Some("\"tools/call\""));
    assert_eq!(ok.field("gen_ai.operation.name"), Some("\"execute_tool\""));
    assert_eq!(ok.field("gen_ai.tool.name"), Some("get_weather"));
    assert_eq!(ok.field("mcp.protocol.version"), Some("\"2026-07-28\""));
    assert_eq!(ok.field("jsonrpc.request.id"), Some("1"));
    assert_eq!((ok.field("error.type"), ok.field("otel.status_code")), (None, None));
    assert_eq!(dispatch[1].field("error.type"), Some("\"tool_error\""));
    assert_eq!(dispatch[1].field("otel.status_code"), Some("\"error\""));
    assert_eq!(dispatch[2].field("error.type"), Some("\"-32603\""));
    assert_eq!(dispatch[2].field("rpc.response.status_code"), Some("-32603"));
    let all = spans.every_value();
    assert!(all.iter().all(|v| !v.contains(secret)), "arguments never reach the trace: {all:?}");
    assert!(all.iter().all(|v| !v.contains("Oslo") && !v.contains("upstream")), "nor results");
}

#[tokio::test]
async fn a_validation_failure_emits_no_dispatch_span() {
    let (spans, _guard) = Spans::install();
    let server = server();
    let r = send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":{}}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert!(spans.all().is_empty(), "no span at all: {:?}", spans.all());
}
