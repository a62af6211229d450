//! With the `opentelemetry` feature, over real HTTP (`docs/tracing.md` T-5): the exported dispatch span
//! continues the `traceparent` header, or `_meta`'s over it (linking the header's span); a malformed
//! header starts a new root trace and is echoed nowhere; and two instances, each on its own listener,
//! called with one `traceparent`, export their spans under one trace id.

#[path = "integration/support/mod.rs"]
mod support;

use http::StatusCode;
use mcp_kernel_test_support::spans::{Exported, attribute};
use opentelemetry::trace::{SpanId, TraceId};
use serde_json::{Value, json};
use support::*;

const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT: &str = "00f067aa0ba902b7";
const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
const META_TRACEPARENT: &str = "00-11111111111111111111111111111111-2222222222222222-01";

fn echo(id: i64, meta: Value) -> Value {
    let mut message = request(id, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
    for (key, value) in meta.as_object().unwrap() {
        message["params"]["_meta"][key] = value.clone();
    }
    message
}

async fn call(addr: std::net::SocketAddr, message: &Value, traceparent: Option<&str>) -> Reply {
    let mut headers = headers_for(message);
    if let Some(traceparent) = traceparent {
        headers = with(headers, "traceparent", traceparent.as_bytes());
    }
    let reply = post(addr, Proto::H1, headers, bytes(message)).await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    reply
}

#[tokio::test]
async fn the_traceparent_header_makes_the_dispatch_span_a_child_of_the_callers_span() {
    let exported = Exported::install("mcp-kernel-http-tests");
    let running = start_default().await;
    bounded(call(running.addr, &echo(1, json!({})), Some(TRACEPARENT))).await;
    let spans = bounded(exported.spans_when("tools/call echo", 1, 100)).await;
    running.stop().await;
    assert_eq!(spans[0].span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(spans[0].parent_span_id, SpanId::from_hex(PARENT).unwrap());
    assert_eq!(attribute(&spans[0], "network.transport").as_deref(), Some("tcp"));
}

#[tokio::test]
async fn meta_wins_over_the_header_and_links_its_span() {
    let exported = Exported::install("mcp-kernel-http-tests");
    let running = start_default().await;
    bounded(call(running.addr, &echo(1, json!({"traceparent": META_TRACEPARENT})), Some(TRACEPARENT))).await;
    let spans = bounded(exported.spans_when("tools/call echo", 1, 100)).await;
    running.stop().await;
    let span = &spans[0];
    assert_eq!(span.span_context.trace_id(), TraceId::from_hex("11111111111111111111111111111111").unwrap());
    assert_eq!(span.parent_span_id, SpanId::from_hex("2222222222222222").unwrap());
    let linked: Vec<_> = span.links.iter().map(|l| l.span_context.span_id()).collect();
    assert_eq!(linked, [SpanId::from_hex(PARENT).unwrap()], "the header's span, as the transport context");
}

#[tokio::test]
async fn a_malformed_traceparent_header_starts_a_new_root_trace_and_is_never_echoed() {
    let exported = Exported::install("mcp-kernel-http-tests");
    let running = start_default().await;
    let malformed = "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01";
    let reply = bounded(call(running.addr, &echo(1, json!({})), Some(malformed))).await;
    let spans = bounded(exported.spans_when("tools/call echo", 1, 100)).await;
    running.stop().await;
    assert!(!String::from_utf8_lossy(&reply.raw).contains("0AF765"), "{reply:?}");
    assert_eq!(spans[0].parent_span_id, SpanId::INVALID, "a root span");
    assert_ne!(spans[0].span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    let values: Vec<String> = spans[0].attributes.iter().map(|kv| kv.value.to_string()).collect();
    assert!(values.iter().all(|v| !v.contains("0AF765")), "{values:?}");
}

#[tokio::test]
async fn two_instances_called_with_one_traceparent_export_one_trace() {
    let exported = Exported::install("mcp-kernel-http-tests");
    let instances = start_instances(2).await;
    for (i, instance) in instances.iter().enumerate() {
        let message = echo(i as i64 + 1, json!({"traceparent": TRACEPARENT}));
        bounded(call(instance.addr, &message, None)).await;
    }
    let spans = bounded(exported.spans_when("tools/call echo", 2, 100)).await;
    for instance in instances {
        instance.stop().await;
    }
    let mut servers: Vec<_> = spans.iter().map(|s| attribute(s, "server").unwrap_or_default()).collect();
    servers.sort();
    assert_eq!(servers, [instance_name(0), instance_name(1)], "one span from each instance");
    for span in &spans {
        assert_eq!(span.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap(), "one trace");
        assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT).unwrap(), "both under the caller's span");
    }
    assert_ne!(spans[0].span_context.span_id(), spans[1].span_context.span_id());
}
