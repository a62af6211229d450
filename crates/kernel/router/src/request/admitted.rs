//! The core's answer about one message before it is served ([`Server::admit`](crate::Server::admit)):
//! what a `tools/call` mirrors in headers as this caller may see the tool, and whether the request may
//! be sent notifications. Its own module so that what a transport attaches ([`Inbound`]) can carry it
//! without depending on the question's code.
//!
//! [`Inbound`]: crate::request::inbound::Inbound

use std::sync::Arc;

use crate::catalog::snapshot::CompiledTool;

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

/// The core's answer to [`Server::admit`](crate::Server::admit): what a transport's own checks of one message need to know,
/// asked in one hop. Hand it back with [`Inbound::admitted`](crate::request::inbound::Inbound::admitted) when serving the message.
#[derive(Debug, Clone)]
pub struct Admitted<'a> {
    pub(crate) headers: ToolHeaders<'a>,
    /// The visibility filter's answer for the called tool, when it was asked.
    pub(crate) tool_shown: Option<(Arc<str>, bool)>,
    pub(crate) notifies: bool,
    /// The message is a `subscriptions/listen` request.
    pub(crate) listens: bool,
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

    /// Whether the message is a `subscriptions/listen` request: serve it with
    /// [`Server::open_listen`](crate::Server::open_listen) rather than
    /// [`Server::handle_envelope`](crate::Server::handle_envelope) (which answers it as a request that
    /// completes at once, acknowledgment lost).
    pub fn listens(&self) -> bool {
        self.listens
    }
}
