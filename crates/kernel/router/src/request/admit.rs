//! What a transport asks the core about one message before serving it, in one call
//! ([`Server::admit`]): the `x-mcp-header` parameters a `tools/call` mirrors, as this caller may see the
//! tool, and whether the request may be sent notifications.
//!
//! Threat: a tool the host's visibility filter hides from a caller must be refused exactly as one that
//! is not listed, headers included; the filter is asked here at most once, and its answer travels with
//! the request ([`Inbound::admitted`]), so a filter whose answer changes between two calls cannot let the
//! header checks and the call disagree.

use std::sync::Arc;

use serde_json::{Map, Value};

use mcp_kernel_wire::version::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use mcp_kernel_wire::{Envelope, Method, ProtocolVersion};

use crate::catalog::snapshot::CompiledTool;
use crate::catalog::visibility::{Listed, shown};
use crate::contract::{Era, RequestContext};
use crate::request::extensions::Extensions;
#[cfg(doc)]
use crate::request::inbound::Inbound;
use crate::server::Server;

/// The `x-mcp-header` parameters a call to one tool mirrors in HTTP headers.
#[derive(Debug, Clone, Copy)]
pub enum ToolHeaders<'a> {
    /// Nothing is mirrored: the message calls no tool, or none this caller may see by that name (the
    /// core answers "Unknown tool").
    UnknownTool,
    /// The annotated parameters (possibly none).
    Params(&'a [mcp_kernel_schema::HeaderParam]),
    /// The tool's annotations break the MCP rules (kept by
    /// [`ServerBuilder::defer_header_annotation_faults`](crate::ServerBuilder::defer_header_annotation_faults)):
    /// every HTTP call to it is a host fault.
    Fault(&'a mcp_kernel_schema::SchemaError),
}

impl<'a> ToolHeaders<'a> {
    /// What a call to the listed `tool` mirrors.
    pub(crate) fn of(tool: &'a CompiledTool) -> Self {
        match tool.schema.header_fault() {
            Some(fault) => ToolHeaders::Fault(fault),
            None => ToolHeaders::Params(tool.schema.header_params()),
        }
    }
}

/// The core's answer to [`Server::admit`]: what a transport's own checks of one message need to know,
/// asked in one hop. Hand it back with [`Inbound::admitted`] when serving the message.
#[derive(Debug, Clone)]
pub struct Admitted<'a> {
    headers: ToolHeaders<'a>,
    /// The visibility filter's answer for the called tool, when it was asked.
    pub(crate) tool_shown: Option<(Arc<str>, bool)>,
    notifies: bool,
}

impl<'a> Admitted<'a> {
    /// What a `tools/call` must mirror in headers (`x-mcp-header`), as this caller may see the tool: a
    /// tool the host's filter hides from them is [`ToolHeaders::UnknownTool`], so a hidden tool is
    /// refused exactly as one that is not listed. Any other message mirrors nothing.
    pub fn tool_headers(&self) -> ToolHeaders<'a> {
        self.headers
    }

    /// Whether the request may be sent notifications while it runs: it carries a progress token, or
    /// the host opted in to log notifications and the request may receive them (on `2026-07-28`, it
    /// declared a `logLevel`). A transport that cannot stream need not attach a sink otherwise.
    pub fn may_notify(&self) -> bool {
        self.notifies
    }
}

impl Server {
    /// What a transport needs to know about `message`, sent with `extensions`, before it serves it: the
    /// headers its `tools/call` mirrors and whether it may be sent notifications
    /// ([`Admitted`]). The host's visibility filter is asked only for a `tools/call` of a listed tool,
    /// and only when the host gave one; the answer is handed back with [`Inbound::admitted`], so the
    /// filter decides once per request.
    pub fn admit(&self, message: &Envelope, extensions: &Extensions) -> Admitted<'_> {
        let notifies = self.notifies(message.meta().value());
        let called = match message.method() {
            Some(Method::ToolsCall) => {
                message.param_str("name").and_then(|name| self.inner.snapshot.tool(name))
            }
            _ => None,
        };
        let Some(tool) = called else {
            return Admitted { headers: ToolHeaders::UnknownTool, tool_shown: None, notifies };
        };
        let Some(filter) = self.inner.injected.visibility.as_deref() else {
            return Admitted { headers: ToolHeaders::of(tool), tool_shown: None, notifies };
        };
        let context = Self::lenient_context(message.meta().object().ok().flatten(), extensions);
        let visible = shown(Some(filter), Listed::Tool(&tool.name), &context);
        let headers = if visible { ToolHeaders::of(tool) } else { ToolHeaders::UnknownTool };
        Admitted { headers, tool_shown: Some((Arc::clone(&tool.name), visible)), notifies }
    }

    /// The era and capabilities a `_meta` object declares, read leniently: a request whose `_meta` the
    /// core would refuse gets a bare context here, and is refused by the core whatever this says.
    pub(crate) fn lenient_context(
        meta: Option<&Map<String, Value>>,
        extensions: &Extensions,
    ) -> RequestContext {
        let version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).and_then(Value::as_str);
        let era = match version.and_then(ProtocolVersion::parse) {
            Some(version) => Era::Declared(version),
            None => Era::Bare,
        };
        let capabilities =
            meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).filter(|c| c.is_object()).cloned();
        RequestContext::new(era, capabilities.map(Arc::new)).with_extensions(extensions.clone())
    }
}
