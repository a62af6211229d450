//! The trace context of an HTTP request's headers, handed to the core beside the message.
//!
//! A client's HTTP instrumentation may send W3C `traceparent`, `tracestate` and `baggage` headers; MCP
//! instrumentation puts the same keys in `params._meta`. The transport reads the headers once, with the
//! parsers every transport shares (`mcp_kernel_wire::trace`), and attaches them to the request
//! (`Inbound::trace_carrier`); the core continues the trace `_meta` carries first and these only when
//! `_meta` carries no valid `traceparent` (`docs/tracing.md`). A header that does not parse is ignored:
//! it is never echoed in an answer or a log, and the request is served as if it were absent. A
//! `traceparent` sent twice is invalid; the values of a repeated `tracestate` or `baggage` are one list.

use http::{HeaderMap, HeaderName, Version};

use mcp_kernel_router::transport::Network;
use mcp_kernel_wire::trace::TraceCarrier;

static TRACEPARENT: HeaderName = HeaderName::from_static(mcp_kernel_wire::trace::TRACEPARENT);
static TRACESTATE: HeaderName = HeaderName::from_static(mcp_kernel_wire::trace::TRACESTATE);
static BAGGAGE: HeaderName = HeaderName::from_static(mcp_kernel_wire::trace::BAGGAGE);

/// What the request's trace headers carry (nothing, without them, or when no subscriber records spans
/// at INFO, the level of the request's span).
pub(crate) fn carrier(headers: &HeaderMap) -> TraceCarrier {
    if !tracing::level_enabled!(tracing::Level::INFO) {
        return TraceCarrier::default();
    }
    let parents = headers.get_all(&TRACEPARENT);
    let baggage = headers.get_all(&BAGGAGE);
    if parents.iter().next().is_none() && baggage.iter().next().is_none() {
        return TraceCarrier::default();
    }
    TraceCarrier::from_values(parents, headers.get_all(&TRACESTATE), baggage)
}

/// The request's network, for its span: TCP, HTTP of the request's version.
pub(crate) fn network(version: Version) -> Network {
    let version = match version {
        Version::HTTP_09 => "0.9",
        Version::HTTP_10 => "1.0",
        Version::HTTP_2 => "2",
        Version::HTTP_3 => "3",
        _ => "1.1",
    };
    Network::http(version)
}
