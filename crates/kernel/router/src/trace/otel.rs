//! The `opentelemetry` feature: the bridge from the validated trace context to the span
//! `tracing-opentelemetry` exports.
//!
//! With a [`TraceContext`] the span's parent is set to the caller's span (a remote span context of its
//! trace id, span id, flags and `tracestate`), so the exported span has the client's trace id and the
//! caller's span as parent. The conventions say the server span SHOULD link the ambient context it
//! replaced as parent: a span current when the core was called (an HTTP server span of the host's), and
//! a second source's `traceparent` of another span (the HTTP headers, when `_meta` won). A valid
//! `baggage` is put into the span's context either way (with no trace context, over the ambient parent),
//! where host code reads it (`Span::current().context().baggage()`).
//!
//! Without a `tracing-opentelemetry` layer in the subscriber this does nothing (`set_parent` has no
//! layer to tell), and it never runs for a span no subscriber wants.

use opentelemetry::baggage::{BaggageExt, KeyValueMetadata};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::{Context, trace};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use mcp_kernel_wire::trace::{TraceCarrier, TraceContext, TraceParent};

/// Sets the span's parent from the carrier; links what it replaced.
pub(super) fn continue_trace(span: &Span, carrier: &TraceCarrier) {
    if span.is_disabled() || carrier.is_empty() {
        return;
    }
    let ambient = Span::current();
    let mut parent = match carrier.context() {
        Some(context) => Context::new().with_remote_span_context(remote(context)),
        None => ambient.context(),
    };
    if let Some(baggage) = carrier.baggage() {
        let members = baggage
            .members()
            .map(|m| KeyValueMetadata::new(m.key.to_owned(), m.value().into_owned(), m.properties));
        parent = parent.with_baggage(members.collect::<Vec<_>>());
    }
    // No OpenTelemetry layer (or a span already started): the fields still hold the context.
    if span.set_parent(parent).is_err() || carrier.context().is_none() {
        return;
    }
    let replaced = ambient.context().span().span_context().clone();
    if replaced.is_valid() {
        span.add_link(replaced);
    }
    if let Some(other) = carrier.linked() {
        span.add_link(span_context(other, TraceState::default()));
    }
}

/// The caller's span, as OpenTelemetry's remote span context.
fn remote(context: &TraceContext) -> SpanContext {
    let state = context
        .state()
        .and_then(|state| TraceState::from_key_value(state.members()).ok())
        .unwrap_or_default();
    span_context(context.parent(), state)
}

fn span_context(parent: &TraceParent, state: TraceState) -> SpanContext {
    let trace_id = TraceId::from_bytes(parent.trace_id().to_bytes());
    let span_id = SpanId::from_bytes(parent.parent_id().to_bytes());
    let flags = if parent.is_sampled() { TraceFlags::SAMPLED } else { TraceFlags::default() };
    trace::SpanContext::new(trace_id, span_id, flags, true, state)
}
