//! What a transport asks the core about one message before serving it, in one call
//! ([`Server::admit`]): the `x-mcp-header` parameters a `tools/call` mirrors, as this caller may see the
//! tool, and whether the request may be sent notifications.
//!
//! Threat: a tool the host's visibility filter hides from a caller must be refused exactly as one that
//! is not listed, headers included; the filter is asked here at most once, and its answer travels with
//! the request ([`Inbound::admitted`](crate::request::inbound::Inbound::admitted)), so a filter whose answer changes between two calls cannot let the
//! header checks and the call disagree.

use std::sync::Arc;

use serde_json::{Map, Value};

use mcp_kernel_wire::message::member;
use mcp_kernel_wire::version::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use mcp_kernel_wire::{Envelope, Method, ProtocolVersion};

use crate::catalog::visibility::{Listed, shown};
use crate::contract::{Era, RequestContext};
use crate::request::admitted::{Admitted, ToolHeaders};
use crate::request::extensions::Extensions;
use crate::server::Server;

impl Server {
    /// What a transport needs to know about `message`, sent with `extensions`, before it serves it: the
    /// headers its `tools/call` mirrors and whether it may be sent notifications
    /// ([`Admitted`]). The host's visibility filter is asked only for a `tools/call` of a listed tool,
    /// and only when the host gave one; the answer is handed back with [`Inbound::admitted`](crate::request::inbound::Inbound::admitted), so the
    /// filter decides once per request.
    pub fn admit(&self, message: &Envelope, extensions: &Extensions) -> Admitted<'_> {
        let notifies = self.notifies(message.meta().value());
        let listens = message.method() == Some(&Method::SubscriptionsListen);
        let called = match message.method() {
            Some(Method::ToolsCall) => {
                message.param_str("name").and_then(|name| self.inner.snapshot.tool(name))
            }
            _ => None,
        };
        let Some(tool) = called else {
            return Admitted { headers: ToolHeaders::UnknownTool, tool_shown: None, notifies, listens };
        };
        let Some(filter) = self.inner.injected.visibility.as_deref() else {
            return Admitted { headers: ToolHeaders::of(tool), tool_shown: None, notifies, listens };
        };
        let context = Self::lenient_context(message.meta().object().ok().flatten(), extensions);
        let visible = shown(Some(filter), Listed::Tool(&tool.name), &context);
        let headers = if visible { ToolHeaders::of(tool) } else { ToolHeaders::UnknownTool };
        Admitted { headers, tool_shown: Some((Arc::clone(&tool.name), visible)), notifies, listens }
    }

    /// The era and capabilities a `_meta` object declares, read leniently: a request whose `_meta` the
    /// core would refuse gets a bare context here, and is refused by the core whatever this says.
    pub(crate) fn lenient_context(
        meta: Option<&Map<String, Value>>,
        extensions: &Extensions,
    ) -> RequestContext {
        let version = meta.and_then(|m| member(m, META_PROTOCOL_VERSION)).and_then(Value::as_str);
        let era = match version.and_then(ProtocolVersion::parse) {
            Some(version) => Era::Declared(version),
            None => Era::Bare,
        };
        let capabilities =
            meta.and_then(|m| member(m, META_CLIENT_CAPABILITIES)).filter(|c| c.is_object()).cloned();
        RequestContext::new(era, capabilities.map(Arc::new)).with_extensions(extensions.clone())
    }
}
