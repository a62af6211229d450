//! What the core reports about the requests it serves: the server span of a request and the trace it
//! continues (`docs/tracing.md`), and the dispatch observer hook (`observe.rs`).
//!
//! Every request the core routes gets exactly one `tracing` span, at INFO: `mcp.dispatch` for a
//! `tools/call` that reaches dispatch (the one dispatch site, `protocol.md` [B-14]), `mcp.request` for
//! every other routed method. Its fields follow the OpenTelemetry semantic conventions for MCP (server
//! spans): `otel.name` (`tools/call {tool}`, `prompts/get {prompt}`, else the method), `otel.kind`
//! `server`, `mcp.method.name`, `mcp.protocol.version`, `jsonrpc.request.id`, `gen_ai.tool.name` and
//! `gen_ai.operation.name` (`execute_tool`), `gen_ai.prompt.name`, `network.*`, and on failure
//! `error.type`, `rpc.response.status_code` and `otel.status_code`. When the request carries a valid
//! W3C trace context (`_meta` first, then what the transport read, [`Inbound::trace_carrier`]), the
//! span records `trace_id` and `parent_span_id`, and with the `opentelemetry` feature its parent is set
//! to the caller's span (`otel.rs`).
//!
//! Threat: a span is read by whoever reads the logs or the trace backend, so it holds names and
//! numbers the package chose or validated, never a payload: no argument, result, error text, resource
//! URI, header or `_meta` value, and no name the client made up — a method the package does not know
//! gets no span, a prompt or tool name is recorded only when the catalog lists it, a string request id
//! only when it is short printable ASCII. Trace context that does not parse is absent. With no
//! subscriber interested in the span, nothing is formatted: the fields' values are computed only for
//! an enabled span.
//!
//! [`Inbound::trace_carrier`]: crate::transport::Inbound::trace_carrier
//!
//! [B-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

pub(crate) mod observe;
#[cfg(feature = "opentelemetry")]
mod otel;

use std::fmt;

use serde_json::Value;
use tracing::Span;
use tracing::field::{Empty, display};

use mcp_kernel_wire::trace::{SpanId, TraceCarrier, TraceId};
use mcp_kernel_wire::{ErrorObject, Method};

use crate::contract::Era;

/// The longest string request id a span records (`jsonrpc.request.id`).
const MAX_RECORDED_ID: usize = 64;

/// The network a request came over: the span's `network.transport`, `network.protocol.name` and
/// `network.protocol.version` (OpenTelemetry semantic conventions). A transport attaches it with
/// [`Inbound::network`](crate::transport::Inbound::network).
///
/// ```
/// use mcp_kernel_router::transport::{Inbound, Network};
///
/// let inbound = Inbound::new().network(Network::http("1.1"));
/// # let _ = (inbound, Network::stdio());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    /// The HTTP version over TCP; `None`: stdio.
    http: Option<&'static str>,
}

impl Network {
    /// stdio: `network.transport` `pipe`.
    pub fn stdio() -> Network {
        Network { http: None }
    }

    /// HTTP over TCP: `network.transport` `tcp`, `network.protocol.name` `http` and
    /// `network.protocol.version` `version` (`"1.1"`, `"2"`).
    pub fn http(version: &'static str) -> Network {
        Network { http: Some(version) }
    }

    /// The `network.transport` value.
    pub fn transport(&self) -> &'static str {
        if self.http.is_some() { "tcp" } else { "pipe" }
    }
}

/// What the core knows of a routed request for its span.
pub(crate) struct RequestTrace<'a> {
    /// The trace context the request carried, `_meta` before the transport's.
    pub(crate) carrier: TraceCarrier,
    /// The request id as sent.
    pub(crate) id: &'a Value,
    pub(crate) network: Option<Network>,
}

/// What a span takes from the server and the request's context: the server name advertised in
/// `serverInfo`, and the revision the request declared.
#[derive(Clone, Copy)]
pub(crate) struct SpanSite<'a> {
    pub(crate) server: &'a str,
    pub(crate) era: Era,
}

impl SpanSite<'_> {
    fn version(&self) -> Option<&'static str> {
        match self.era {
            Era::Declared(version) => Some(version.as_str()),
            Era::Bare => None,
        }
    }
}

/// A span name of the conventions: the method, then the target when there is one.
struct SpanName<'a>(&'static str, Option<&'a str>);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// A request id as a span records it: an integer, or a short string of printable ASCII.
enum RequestId<'a> {
    Number(&'a serde_json::Number),
    Text(&'a str),
}

impl fmt::Display for RequestId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::Text(text) => f.write_str(text),
        }
    }
}

impl<'a> RequestTrace<'a> {
    fn request_id(&self) -> Option<RequestId<'a>> {
        match self.id {
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(RequestId::Number(n)),
            Value::String(s)
                if s.len() <= MAX_RECORDED_ID
                    && !s.is_empty()
                    && s.bytes().all(|b| (0x20..0x7f).contains(&b)) =>
            {
                Some(RequestId::Text(s))
            }
            _ => None,
        }
    }

    fn transport(&self) -> Option<&'static str> {
        self.network.map(|n| n.transport())
    }

    fn protocol(&self) -> (Option<&'static str>, Option<&'static str>) {
        match self.network.and_then(|n| n.http) {
            Some(version) => (Some("http"), Some(version)),
            None => (None, None),
        }
    }

    fn trace_id(&self) -> Option<TraceId> {
        self.carrier.context().map(|c| c.parent().trace_id())
    }

    fn parent_span_id(&self) -> Option<SpanId> {
        self.carrier.context().map(|c| c.parent().parent_id())
    }

    /// The `mcp.dispatch` span of a `tools/call` of the listed tool `tool`.
    pub(crate) fn dispatch_span(&self, site: SpanSite<'_>, tool: &str) -> Span {
        let (protocol, protocol_version) = self.protocol();
        let span = tracing::info_span!(
            "mcp.dispatch",
            otel.name = %SpanName(mcp_kernel_wire::types::method::TOOLS_CALL, Some(tool)),
            otel.kind = "server",
            otel.status_code = Empty,
            server = %site.server,
            tool = %tool,
            outcome = Empty,
            mcp.method.name = mcp_kernel_wire::types::method::TOOLS_CALL,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %tool,
            mcp.protocol.version = site.version(),
            jsonrpc.request.id = self.request_id().map(display),
            network.transport = self.transport(),
            network.protocol.name = protocol,
            network.protocol.version = protocol_version,
            error.type = Empty,
            rpc.response.status_code = Empty,
            trace_id = self.trace_id().map(display),
            parent_span_id = self.parent_span_id().map(display),
        );
        self.continue_trace(&span);
        span
    }

    /// The `mcp.request` span of any other routed request; `prompt` is the name of a listed prompt
    /// (`prompts/get`). A method the package does not know gets none (its name is the caller's text).
    pub(crate) fn request_span(&self, site: SpanSite<'_>, method: &Method, prompt: Option<&str>) -> Span {
        let Some(name) = method.known_name() else { return Span::none() };
        let (protocol, protocol_version) = self.protocol();
        let span = tracing::info_span!(
            "mcp.request",
            otel.name = %SpanName(name, prompt),
            otel.kind = "server",
            otel.status_code = Empty,
            server = %site.server,
            mcp.method.name = name,
            gen_ai.prompt.name = prompt,
            mcp.protocol.version = site.version(),
            jsonrpc.request.id = self.request_id().map(display),
            network.transport = self.transport(),
            network.protocol.name = protocol,
            network.protocol.version = protocol_version,
            error.type = Empty,
            rpc.response.status_code = Empty,
            trace_id = self.trace_id().map(display),
            parent_span_id = self.parent_span_id().map(display),
        );
        self.continue_trace(&span);
        span
    }

    /// With the `opentelemetry` feature, the caller's span becomes the span's parent; without it, the
    /// trace context is in the span's fields only.
    fn continue_trace(&self, span: &Span) {
        #[cfg(feature = "opentelemetry")]
        otel::continue_trace(span, &self.carrier);
        #[cfg(not(feature = "opentelemetry"))]
        let _ = span;
    }
}

/// Records how a span's request failed: `error.type` (the conventions' class of error), the JSON-RPC
/// code when there is one, and the span status `error`.
pub(crate) fn record_failure(span: &Span, error_type: &str, code: Option<i64>) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", error_type);
    if let Some(code) = code {
        span.record("rpc.response.status_code", display(code));
    }
    span.record("otel.status_code", "error");
}

/// Records a JSON-RPC error answer: `error.type` is its code (the conventions: the code as a string).
pub(crate) fn record_error(span: &Span, error: &ErrorObject) {
    if span.is_disabled() {
        return;
    }
    let code = error.code.to_string();
    record_failure(span, &code, Some(error.code));
}
