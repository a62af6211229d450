//! The trace context of the HTTP headers, as a plain `tracing` subscriber sees it
//! (`docs/tracing.md` T-2): `traceparent` (with `tracestate`, `baggage`) continued when `_meta` carries none, `_meta`
//! winning over it, a malformed header ignored and never echoed, and the span's network.
//!
//! In a test binary of its own: it records through a scoped subscriber, whose interest in the span
//! another test of the same process could settle first.

#[path = "integration/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};

use http::StatusCode;
use serde_json::{Value, json};
use support::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
const META_TRACEPARENT: &str = "00-11111111111111111111111111111111-2222222222222222-01";

/// Every `(span or "event", field, value)` recorded, spans by name.
#[derive(Clone, Default)]
struct Recorded(Arc<Mutex<Vec<(String, String, String)>>>);

struct Fields<'a>(String, &'a Recorded);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let seen = (self.0.clone(), field.name().to_owned(), format!("{value:?}"));
        self.1.0.lock().unwrap().push(seen);
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for Recorded {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        attrs.record(&mut Fields(attrs.metadata().name().to_owned(), self));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let name = ctx.span(id).map_or("?", |s| s.name()).to_owned();
        values.record(&mut Fields(name, self));
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        event.record(&mut Fields("event".to_owned(), self));
    }
}

impl Recorded {
    fn install() -> (Recorded, tracing::subscriber::DefaultGuard) {
        let recorded = Recorded::default();
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(recorded.clone()));
        (recorded, guard)
    }

    /// The values of `field` on the `mcp.dispatch` spans, in order.
    fn dispatch(&self, field: &str) -> Vec<String> {
        let all = self.0.lock().unwrap();
        all.iter().filter(|(s, f, _)| s == "mcp.dispatch" && f == field).map(|(_, _, v)| v.clone()).collect()
    }

    fn every_value(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|(_, _, v)| v.clone()).collect()
    }
}

fn echo(id: i64, meta: Value) -> Value {
    let mut message = request(id, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
    for (key, value) in meta.as_object().unwrap() {
        message["params"]["_meta"][key] = value.clone();
    }
    message
}

async fn call(addr: std::net::SocketAddr, proto: Proto, message: &Value, trace: &[(&str, &str)]) -> Reply {
    let mut headers = headers_for(message);
    for (name, value) in trace {
        headers = with(headers, name, value.as_bytes());
    }
    post(addr, proto, headers, bytes(message)).await
}

#[tokio::test]
async fn the_traceparent_header_is_continued_when_meta_carries_none() {
    let (recorded, _guard) = Recorded::install();
    bounded(async {
        let running = start_default().await;
        for proto in BOTH {
            let reply = call(running.addr, proto, &echo(1, json!({})), &[("traceparent", TRACEPARENT)]).await;
            assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        }
        running.stop().await;
    })
    .await;
    assert_eq!(recorded.dispatch("trace_id"), ["0af7651916cd43dd8448eb211c80319c"; 2]);
    assert_eq!(recorded.dispatch("parent_span_id"), ["00f067aa0ba902b7"; 2]);
    assert_eq!(recorded.dispatch("network.transport"), ["\"tcp\""; 2]);
    assert_eq!(recorded.dispatch("network.protocol.name"), ["\"http\""; 2]);
    assert_eq!(recorded.dispatch("network.protocol.version"), ["\"1.1\"", "\"2\""]);
}

#[tokio::test]
async fn meta_wins_over_the_traceparent_header() {
    let (recorded, _guard) = Recorded::install();
    bounded(async {
        let running = start_default().await;
        let message = echo(1, json!({"traceparent": META_TRACEPARENT}));
        let reply = call(running.addr, Proto::H1, &message, &[("traceparent", TRACEPARENT)]).await;
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        running.stop().await;
    })
    .await;
    assert_eq!(recorded.dispatch("trace_id"), ["11111111111111111111111111111111"]);
    assert_eq!(recorded.dispatch("parent_span_id"), ["2222222222222222"]);
}

#[tokio::test]
async fn a_malformed_trace_header_is_ignored_and_never_echoed() {
    let (recorded, _guard) = Recorded::install();
    let marker = "c0ffee";
    let malformed = [
        ("traceparent", format!("00-0AF7651916CD43DD8448EB211C80319C-{marker}0000000001-01")),
        ("tracestate", format!("Bad{marker}=1")),
        ("baggage", format!("k={marker} x")),
    ];
    bounded(async {
        let running = start_default().await;
        let trace: Vec<(&str, &str)> = malformed.iter().map(|(n, v)| (*n, v.as_str())).collect();
        // Twice the same valid value is no traceparent either.
        let twice = [("traceparent", TRACEPARENT), ("traceparent", TRACEPARENT)];
        for trace in [&trace[..], &twice[..]] {
            let reply = call(running.addr, Proto::H1, &echo(1, json!({})), trace).await;
            assert_eq!(reply.status, StatusCode::OK, "served as if absent: {reply:?}");
            assert!(!String::from_utf8_lossy(&reply.raw).contains(marker), "not in the body: {reply:?}");
            assert!(reply.headers.values().all(|v| !v.as_bytes().windows(6).any(|w| w == marker.as_bytes())));
        }
        running.stop().await;
    })
    .await;
    assert_eq!(recorded.dispatch("outcome").len(), 2, "both calls dispatched");
    assert!(recorded.dispatch("trace_id").is_empty() && recorded.dispatch("parent_span_id").is_empty());
    let all = recorded.every_value();
    assert!(all.iter().all(|v| !v.contains(marker)), "nothing echoed in a span or log: {all:?}");
}
