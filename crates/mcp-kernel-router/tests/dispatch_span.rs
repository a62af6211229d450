//! The one dispatch span (protocol.md B-14): server name, tool and outcome; never arguments, results
//! or headers. A validation failure emits no dispatch span.

mod support;

use std::sync::{Arc, Mutex};

use serde_json::json;
use support::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Registry;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Every (span name, field, value) the layer saw.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(String, String, String)>>>);

struct Recorder<'a> {
    span: &'static str,
    into: &'a Seen,
}

impl Visit for Recorder<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.into.0.lock().unwrap().push((
            self.span.to_owned(),
            field.name().to_owned(),
            format!("{value:?}"),
        ));
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for Seen {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        attrs.record(&mut Recorder { span: attrs.metadata().name(), into: self });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let name = ctx.span(id).map(|s| s.name()).unwrap_or("?");
        values.record(&mut Recorder { span: name, into: self });
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        event.record(&mut Recorder { span: "event", into: self });
    }
}

fn fields(seen: &Seen) -> Vec<(String, String, String)> {
    seen.0.lock().unwrap().clone()
}

#[tokio::test]
async fn the_dispatch_span_names_server_tool_and_outcome_only() {
    let seen = Seen::default();
    let _guard = tracing::subscriber::set_default(Registry::default().with(seen.clone()));
    let server = server();
    let secret = "s3cret-argument-value";
    let r =
        send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":{"place": secret}})))
            .await;
    assert_eq!(r["result"]["isError"], false);
    send(&server, modern(2, "tools/call", json!({"name":"fail"}))).await;
    send(&server, modern(3, "tools/call", json!({"name":"panics"}))).await;

    let all = fields(&seen);
    let dispatch: Vec<_> = all.iter().filter(|(span, _, _)| span == "mcp.dispatch").collect();
    let names: std::collections::BTreeSet<_> = dispatch.iter().map(|(_, f, _)| f.as_str()).collect();
    assert_eq!(names, ["outcome", "server", "tool"].into_iter().collect());
    let outcomes: Vec<_> =
        dispatch.iter().filter(|(_, f, _)| f == "outcome").map(|(_, _, v)| v.as_str()).collect();
    assert_eq!(outcomes, ["\"ok\"", "\"error\"", "\"panic\""]);
    assert!(dispatch.iter().any(|(_, f, v)| f == "server" && v == "mcp-kernel"));
    assert!(all.iter().all(|(_, _, v)| !v.contains(secret)), "arguments never reach the trace: {all:?}");
    assert!(all.iter().all(|(_, _, v)| !v.contains("Oslo") && !v.contains("upstream")), "nor results");
}

#[tokio::test]
async fn a_validation_failure_emits_no_dispatch_span() {
    let seen = Seen::default();
    let _guard = tracing::subscriber::set_default(Registry::default().with(seen.clone()));
    let server = server();
    let r = send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":{}}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert!(fields(&seen).iter().all(|(span, _, _)| span != "mcp.dispatch"));
}
