//! The trace a request carries, as a plain `tracing` subscriber sees it (`docs/tracing.md` T-1 to T-4):
//! `params._meta.traceparent` first, then the transport's carrier; one server span per routed request;
//! malformed context ignored and never echoed; no name the client made up.
//!
//! In a test binary of its own: it records through a scoped subscriber, whose interest in the span
//! another test of the same process could settle first.

#[path = "integration/support/mod.rs"]
mod support;

use mcp_kernel_router::transport::Inbound;
use mcp_kernel_router::wire::trace::TraceCarrier;
use serde_json::{Value, json};
use support::spans::Spans;
use support::*;

const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT: &str = "00f067aa0ba902b7";
const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
const OTHER: &str = "00-11111111111111111111111111111111-2222222222222222-01";

/// A modern `tools/call` of `get_weather` whose `_meta` also holds `extra`.
fn call_with_meta(id: Value, extra: Value) -> Value {
    let mut message = modern(1, "tools/call", json!({"name": "get_weather", "arguments": {"place": "Oslo"}}));
    message["id"] = id;
    for (key, value) in extra.as_object().unwrap() {
        message["params"]["_meta"][key] = value.clone();
    }
    message
}

async fn send_inbound(server: &mcp_kernel_router::Server, message: Value, inbound: Inbound) -> Value {
    server.handle_inbound(message, inbound).await.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_meta_traceparent_is_continued_by_the_dispatch_span() {
    let (spans, _guard) = Spans::install();
    let r = send(&server(), call_with_meta(json!(1), json!({"traceparent": TRACEPARENT}))).await;
    assert_eq!(r["result"]["isError"], false);
    let [dispatch] = &spans.named("mcp.dispatch")[..] else { panic!("one dispatch span: {:?}", spans.all()) };
    assert_eq!(dispatch.field("trace_id"), Some(TRACE));
    assert_eq!(dispatch.field("parent_span_id"), Some(PARENT));
    assert_eq!(spans.all().len(), 1, "exactly one server span per request");
}

#[tokio::test]
async fn the_transports_carrier_is_continued_when_meta_carries_no_traceparent() {
    let (spans, _guard) = Spans::install();
    let headers = TraceCarrier::from_values([TRACEPARENT], None::<&str>, None::<&str>);
    let inbound = Inbound::new().trace_carrier(headers);
    send_inbound(&server(), call_with_meta(json!(1), json!({})), inbound).await;
    let dispatch = &spans.named("mcp.dispatch")[0];
    assert_eq!((dispatch.field("trace_id"), dispatch.field("parent_span_id")), (Some(TRACE), Some(PARENT)));
}

#[tokio::test]
async fn meta_wins_over_the_transports_carrier() {
    let (spans, _guard) = Spans::install();
    let headers = TraceCarrier::from_values([OTHER], None::<&str>, None::<&str>);
    let inbound = Inbound::new().trace_carrier(headers.clone());
    send_inbound(&server(), call_with_meta(json!(1), json!({"traceparent": TRACEPARENT})), inbound).await;
    // A malformed `_meta` value does not hide the transport's valid one.
    let inbound = Inbound::new().trace_carrier(headers);
    send_inbound(&server(), call_with_meta(json!(2), json!({"traceparent": "00-bad"})), inbound).await;
    let dispatch = spans.named("mcp.dispatch");
    assert_eq!(dispatch[0].field("trace_id"), Some(TRACE));
    assert_eq!(dispatch[1].field("trace_id"), Some("11111111111111111111111111111111"));
}

#[tokio::test]
async fn a_malformed_trace_context_is_ignored_and_never_echoed() {
    let (spans, _guard) = Spans::install();
    let marker = "c0ffee";
    let malformed = [
        format!("00-0AF7651916CD43DD8448EB211C80319C-{marker}0000000001-01"),
        format!("00-00000000000000000000000000000000-{marker}0000000001-01"),
        format!("01-{marker}-x"),
    ];
    for (i, traceparent) in malformed.iter().enumerate() {
        let extra = json!({
            "traceparent": traceparent,
            "tracestate": format!("Bad{marker}=1"),
            "baggage": format!("k={marker} {marker}")
        });
        let response = send(&server(), call_with_meta(json!(i), extra)).await;
        assert_eq!(response["result"]["isError"], false, "the call is served: {response}");
        assert!(!response.to_string().contains(marker), "nothing echoed in the answer: {response}");
    }
    let dispatch = spans.named("mcp.dispatch");
    assert_eq!(dispatch.len(), malformed.len());
    assert!(dispatch.iter().all(|s| s.field("trace_id").is_none() && s.field("parent_span_id").is_none()));
    let all = spans.every_value();
    assert!(all.iter().all(|v| !v.contains(marker)), "nothing echoed in a span or log: {all:?}");
}

#[tokio::test]
async fn tracestate_and_baggage_are_never_span_fields() {
    let (spans, _guard) = Spans::install();
    let extra = json!({"traceparent": TRACEPARENT, "tracestate": "vendor=s3cret", "baggage": "user=alice"});
    send(&server(), call_with_meta(json!(1), extra)).await;
    let all = spans.every_value();
    assert!(all.iter().all(|v| !v.contains("s3cret") && !v.contains("alice")), "{all:?}");
}

#[tokio::test]
async fn every_other_routed_method_gets_one_request_span() {
    let (spans, _guard) = Spans::install();
    let server = server();
    let mut list = modern(1, "tools/list", json!({}));
    list["params"]["_meta"]["traceparent"] = json!(TRACEPARENT);
    send(&server, list).await;
    send(&server, modern(2, "resources/read", json!({"uri": "test://a"}))).await;
    send(&server, modern(3, "prompts/get", json!({"name": "forecast", "arguments": {"place": "x"}}))).await;
    let unknown = send(&server, modern(4, "prompts/get", json!({"name": "made-up-prompt"}))).await;
    let request = spans.named("mcp.request");
    assert_eq!(request.len(), 4, "{request:?}");
    assert!(spans.named("mcp.dispatch").is_empty());
    assert_eq!(request[0].field("otel.name"), Some("tools/list"));
    assert_eq!(request[0].field("mcp.method.name"), Some("\"tools/list\""));
    assert_eq!(request[0].field("trace_id"), Some(TRACE));
    assert_eq!(request[1].field("otel.name"), Some("resources/read"));
    assert_eq!(request[1].field("trace_id"), None, "a request without context starts no remote trace");
    assert!(request[1].fields.iter().all(|(_, v)| !v.contains("test://a")), "no resource URI");
    assert_eq!(request[2].field("otel.name"), Some("prompts/get forecast"));
    assert_eq!(request[2].field("gen_ai.prompt.name"), Some("\"forecast\""));
    // A prompt the catalog does not list: its name is the caller's text, never recorded.
    let code = unknown["error"]["code"].as_i64().expect("an error").to_string();
    assert_eq!(request[3].field("otel.name"), Some("prompts/get"));
    assert_eq!(request[3].field("gen_ai.prompt.name"), None);
    assert_eq!(request[3].field("error.type"), Some(format!("{code:?}").as_str()));
    assert_eq!(request[3].field("rpc.response.status_code"), Some(code.as_str()));
    assert_eq!(request[3].field("otel.status_code"), Some("\"error\""));
    assert!(spans.every_value().iter().all(|v| !v.contains("made-up-prompt")));
}

#[tokio::test]
async fn a_method_the_package_does_not_know_gets_no_span() {
    let (spans, _guard) = Spans::install();
    let r = send(&server(), modern(1, "x/caller-chosen-name", json!({}))).await;
    assert_eq!(code(&r), -32601);
    assert!(spans.all().is_empty(), "{:?}", spans.all());
}

#[tokio::test]
async fn a_string_request_id_is_recorded_only_when_short_and_printable() {
    let (spans, _guard) = Spans::install();
    let server = server();
    for id in [json!("req-7"), json!("line\nbreak"), json!("x".repeat(65)), json!(42)] {
        send(&server, call_with_meta(id, json!({}))).await;
    }
    let ids: Vec<_> = spans
        .named("mcp.dispatch")
        .iter()
        .map(|s| s.field("jsonrpc.request.id").map(str::to_owned))
        .collect();
    assert_eq!(ids, [Some("req-7".to_owned()), None, None, Some("42".to_owned())]);
}

#[tokio::test]
async fn the_span_names_the_revision_the_request_declared() {
    let (spans, _guard) = Spans::install();
    let server = server();
    send(&server, legacy(1, "tools/list", json!({}))).await;
    send(&server, bare(2, "tools/list", json!({}))).await;
    let request = spans.named("mcp.request");
    assert_eq!(request[0].field("mcp.protocol.version"), Some("\"2025-11-25\""));
    assert_eq!(request[1].field("mcp.protocol.version"), None);
}
