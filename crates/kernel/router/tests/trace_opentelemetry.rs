//! With the `opentelemetry` feature and a `tracing-opentelemetry` layer (`docs/tracing.md` T-5): the
//! exported server span has the client's trace id and the caller's span as its parent; malformed
//! context starts a new root trace; baggage reaches host code; what the span replaced is linked.

#[path = "integration/support/mod.rs"]
mod support;

use std::sync::Arc;

use mcp_kernel_router::transport::Inbound;
use mcp_kernel_router::wire::trace::TraceCarrier;
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_test_support::spans::{Exported, attribute};
use opentelemetry::baggage::BaggageExt;
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceContextExt, TraceId};
use serde_json::{Value, json};
use support::*;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT: &str = "00f067aa0ba902b7";
const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
const OTHER: &str = "00-11111111111111111111111111111111-2222222222222222-01";

fn trace_id(hex: &str) -> TraceId {
    TraceId::from_hex(hex).unwrap()
}

fn span_id(hex: &str) -> SpanId {
    SpanId::from_hex(hex).unwrap()
}

fn call(meta: Value) -> Value {
    let mut message = modern(1, "tools/call", json!({"name": "get_weather", "arguments": {"place": "Oslo"}}));
    for (key, value) in meta.as_object().unwrap() {
        message["params"]["_meta"][key] = value.clone();
    }
    message
}

#[tokio::test]
async fn a_meta_traceparent_makes_the_dispatch_span_a_child_of_the_callers_span() {
    let exported = Exported::install("mcp-kernel-tests");
    let r = send(&server(), call(json!({"traceparent": TRACEPARENT, "tracestate": "rojo=1"}))).await;
    assert_eq!(r["result"]["isError"], false);
    let [span] = &exported.spans("tools/call get_weather")[..] else { panic!("one dispatch span") };
    assert_eq!(span.span_context.trace_id(), trace_id(TRACE));
    assert_eq!(span.parent_span_id, span_id(PARENT));
    assert!(span.parent_span_is_remote);
    assert_eq!(span.span_kind, SpanKind::Server);
    assert_eq!(span.span_context.trace_state().get("rojo"), Some("1"));
    assert_eq!(attribute(span, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(attribute(span, "gen_ai.tool.name").as_deref(), Some("get_weather"));
    assert_eq!(attribute(span, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(span.status, Status::Unset);
}

#[tokio::test]
async fn the_transports_carrier_is_the_parent_when_meta_carries_none() {
    let exported = Exported::install("mcp-kernel-tests");
    let headers = TraceCarrier::from_values([TRACEPARENT], None::<&str>, None::<&str>);
    server().handle_inbound(call(json!({})), Inbound::new().trace_carrier(headers)).await;
    let span = &exported.spans("tools/call get_weather")[0];
    assert_eq!((span.span_context.trace_id(), span.parent_span_id), (trace_id(TRACE), span_id(PARENT)));
}

#[tokio::test]
async fn meta_wins_and_the_transports_span_is_linked() {
    let exported = Exported::install("mcp-kernel-tests");
    let headers = TraceCarrier::from_values([OTHER], None::<&str>, None::<&str>);
    server()
        .handle_inbound(call(json!({"traceparent": TRACEPARENT})), Inbound::new().trace_carrier(headers))
        .await;
    let span = &exported.spans("tools/call get_weather")[0];
    assert_eq!((span.span_context.trace_id(), span.parent_span_id), (trace_id(TRACE), span_id(PARENT)));
    let linked: Vec<_> = span.links.iter().map(|l| l.span_context.span_id()).collect();
    assert_eq!(linked, [span_id("2222222222222222")]);
}

#[tokio::test]
async fn a_malformed_traceparent_starts_a_new_root_trace() {
    let exported = Exported::install("mcp-kernel-tests");
    let malformed = "00-0AF7651916CD43DD8448EB211C80319C-00F067AA0BA902B7-01";
    send(&server(), call(json!({"traceparent": malformed}))).await;
    let span = &exported.spans("tools/call get_weather")[0];
    assert_eq!(span.parent_span_id, SpanId::INVALID, "a root span");
    assert_ne!(span.span_context.trace_id(), trace_id(TRACE));
    assert!(span.links.is_empty());
}

#[tokio::test]
async fn an_ambient_span_is_linked_when_the_callers_context_replaces_it() {
    let exported = Exported::install("mcp-kernel-tests");
    let outer = tracing::info_span!("host.request");
    let outer_context = outer.context().span().span_context().clone();
    send(&server(), call(json!({"traceparent": TRACEPARENT}))).instrument(outer).await;
    let span = &exported.spans("tools/call get_weather")[0];
    assert_eq!(span.parent_span_id, span_id(PARENT), "the caller's span, not the ambient one");
    let linked: Vec<_> = span.links.iter().map(|l| l.span_context.span_id()).collect();
    assert_eq!(linked, [outer_context.span_id()]);
    // Without context from the caller, the ambient span stays the parent.
    let outer = tracing::info_span!("host.request");
    let outer_id = outer.context().span().span_context().span_id();
    send(&server(), call(json!({}))).instrument(outer).await;
    let second = &exported.spans("tools/call get_weather")[1];
    assert_eq!(second.parent_span_id, outer_id);
}

#[tokio::test]
async fn failures_set_error_type_and_the_span_status() {
    let exported = Exported::install("mcp-kernel-tests");
    let server = server();
    let mut tool_error = modern(1, "tools/call", json!({"name": "fail"}));
    tool_error["params"]["_meta"]["traceparent"] = json!(TRACEPARENT);
    send(&server, tool_error).await;
    send(&server, modern(2, "prompts/get", json!({"name": "nope"}))).await;
    let failed = &exported.spans("tools/call fail")[0];
    assert_eq!(attribute(failed, "error.type").as_deref(), Some("tool_error"));
    assert!(matches!(failed.status, Status::Error { .. }));
    let refused = &exported.spans("prompts/get")[0];
    assert_eq!(refused.span_kind, SpanKind::Server);
    assert_eq!(attribute(refused, "error.type").as_deref(), Some("-32602"));
    assert!(matches!(refused.status, Status::Error { .. }));
}

#[tokio::test]
async fn host_code_runs_in_the_continued_trace_and_reads_the_baggage() {
    let exported = Exported::install("mcp-kernel-tests");
    // The host reads the trace and the baggage from the current span, as an outbound client would.
    let seen: Arc<std::sync::Mutex<Option<(TraceId, String)>>> = Arc::default();
    let into = Arc::clone(&seen);
    let catalog = Listing { tools: vec![ToolSpec::new("probe", Mode::ReadOnly)], ..Listing::default() };
    let server = Server::builder(catalog)
        .dispatch(move |_call: ToolCall| {
            let context = tracing::Span::current().context();
            let user = context.baggage().get("user").map(|v| v.to_string()).unwrap_or_default();
            *into.lock().unwrap() = Some((context.span().span_context().trace_id(), user));
            async { Ok::<_, ToolError>(ToolOutput::text("ok")) }
        })
        .build()
        .unwrap();
    let mut message = modern(1, "tools/call", json!({"name": "probe"}));
    message["params"]["_meta"]["traceparent"] = json!(TRACEPARENT);
    message["params"]["_meta"]["baggage"] = json!("user=al%20ice;p=1");
    send(&server, message).await;
    assert_eq!(seen.lock().unwrap().clone(), Some((trace_id(TRACE), "al ice".to_owned())));
    assert_eq!(exported.spans("tools/call probe").len(), 1);
}
