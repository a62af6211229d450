//! Traces that follow a request across instances behind a real proxy (`docs/tracing.md`,
//! `docs/deploy.md` "Traces across instances"): three instances in this process, each served by
//! `mcp_kernel::http::serve` on its own 127.0.0.1 listener, behind nginx configured exactly as
//! `docs/deploy.md` shows; calls carrying one W3C `traceparent` — as an HTTP header, which nginx passes
//! on, and in `_meta` — export, through the OpenTelemetry SDK's in-memory exporter, server spans of
//! several instances under that one trace id, each a child of the caller's span.
//!
//! Needs nginx and the `opentelemetry` feature: `cargo xtask edge proxy` runs it.

#[allow(dead_code, reason = "the cluster module serves proxy.rs too; this file uses its proxy alone")]
#[path = "proxy/cluster.rs"]
mod cluster;
#[allow(dead_code)]
mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use mcp_kernel::http::{AllowedOrigins, McpHttp};
use mcp_kernel::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_test_support::spans::{Exported, attribute};
use opentelemetry::trace::{SpanId, TraceId};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use cluster::Nginx;
use common::step;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
/// Calls sent through the proxy: two rounds of the three instances.
const CALLS: i64 = 6;

/// Instance `name`: one tool, `echo`, and its name in `serverInfo` (its spans record it as `server`).
async fn instance(name: &str) -> (SocketAddr, oneshot::Sender<()>) {
    let tools = vec![ToolSpec::new("echo", Mode::ReadOnly)];
    let server = Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(|_: ToolCall| std::future::ready(Ok::<_, ToolError>(ToolOutput::text("echoed"))))
        .server_name(name)
        .build()
        .expect("the instance's catalog builds");
    // No browser calls these instances: no origin is allowed (a request with an `Origin` is refused).
    let origins = AllowedOrigins::list(std::iter::empty::<&str>());
    let service = McpHttp::builder(server).allowed_origins(origins).authorize(|_| Ok(())).build();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("the bound address");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(mcp_kernel::http::serve(listener, service, async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// A `tools/call` of `echo`, `traceparent` in `_meta` when `in_meta`.
fn call(id: i64, in_meta: bool) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    if in_meta {
        meta["traceparent"] = json!(TRACEPARENT);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"_meta": meta, "name": "echo", "arguments": {}}})
}

/// Posts `message` through the proxy, `traceparent` as a header when `in_header`; the answer.
async fn post(url: &str, message: &Value, in_header: bool) -> Value {
    let http = reqwest::Client::builder().no_proxy().build().expect("reqwest client");
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(message.to_string());
    if in_header {
        request = request.header("traceparent", TRACEPARENT);
    }
    let response = step("POST through the proxy", request.timeout(Duration::from_secs(10)).send()).await;
    assert_eq!(response.status(), 200);
    let text = step("the answer's body", response.text()).await;
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("a JSON answer ({e}): {text}"))
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs nginx: cargo xtask edge proxy"]
async fn one_traceparent_through_the_proxy_is_one_trace_across_instances() {
    // The servers' tasks run on this test's one thread, under this subscriber.
    let exported = Exported::install("mcp-kernel-proxy-traces");

    let mut stops = Vec::new();
    let mut addrs = Vec::new();
    for name in ["instance-a", "instance-b", "instance-c"] {
        let (addr, stop) = instance(name).await;
        addrs.push(addr);
        stops.push(stop);
    }
    let nginx = Nginx::start([addrs[0], addrs[1], addrs[2]]).await;
    for id in 1..=CALLS {
        // Half with the header, which nginx must pass on, half with `_meta`: each carries the trace.
        let in_header = id % 2 == 1;
        let answer = post(&nginx.url(), &call(id, !in_header), in_header).await;
        assert_eq!(answer["result"]["content"][0]["text"], "echoed", "{answer}");
    }
    let spans = exported.spans_when("tools/call echo", CALLS as usize, 250).await;
    drop(nginx);
    for stop in stops {
        let _ = stop.send(());
    }

    let servers: BTreeSet<String> = spans.iter().filter_map(|s| attribute(s, "server")).collect();
    assert!(servers.len() >= 2, "the proxy spread the calls over several instances: {servers:?}");
    for span in &spans {
        assert_eq!(span.span_context.trace_id(), TraceId::from_hex(TRACE).expect("hex"), "one trace");
        assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT).expect("hex"), "under the caller's span");
    }
    let ids: BTreeSet<String> = spans.iter().map(|s| s.span_context.span_id().to_string()).collect();
    assert_eq!(ids.len(), spans.len(), "each request its own span");
    println!("one trace {TRACE} across {servers:?}: {} server spans", spans.len());
}
