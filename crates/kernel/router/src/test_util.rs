//! Test-only views of a server (feature `test-util`): a transport's questions asked one at a time, a
//! message handled from a JSON value with notifications, and the same server narrowed to some
//! revisions. Not for transports: they ask [`Server::admit`] and call [`Server::handle_envelope`].

use std::sync::Arc;

use serde_json::{Map, Value};

use mcp_kernel_wire::ProtocolVersion;

use crate::catalog::compile::{BuildError, check_versions};
use crate::catalog::visibility::{Listed, shown};
use crate::contract::RequestContext;
use crate::notify::progress::NotificationSink;
use crate::request::admitted::ToolHeaders;
use crate::request::extensions::Extensions;
use crate::request::inbound::Inbound;
use crate::server::{Handled, Server};

impl Server {
    /// What a call to `tool` mirrors in headers (`x-mcp-header`), whoever calls it.
    pub fn tool_headers(&self, tool: &str) -> ToolHeaders<'_> {
        self.inner.snapshot.tool(tool).map_or(ToolHeaders::UnknownTool, ToolHeaders::of)
    }

    /// The context the core gives a request with these `params` and `extensions`: its era and client
    /// capabilities as `params._meta` declares them (read leniently: a request whose `_meta` the core
    /// would refuse gets a bare context here, and is refused by the core whatever this says).
    pub fn context_for(
        &self,
        params: Option<&Map<String, Value>>,
        extensions: &Extensions,
    ) -> RequestContext {
        let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
        Self::lenient_context(meta, extensions)
    }

    /// What a call to `tool` by the request `context` describes mirrors: a tool the host's filter hides
    /// from it is [`ToolHeaders::UnknownTool`], as in [`Server::admit`].
    pub fn tool_headers_for(&self, tool: &str, context: &RequestContext) -> ToolHeaders<'_> {
        let Some(listed) = self.inner.snapshot.tool(tool) else { return ToolHeaders::UnknownTool };
        let filter = self.inner.injected.visibility.as_deref();
        match shown(filter, Listed::Tool(&listed.name), context) {
            true => ToolHeaders::of(listed),
            false => ToolHeaders::UnknownTool,
        }
    }

    /// Whether a request with these `params` may be sent notifications ([`Admitted::may_notify`](crate::transport::Admitted::may_notify)).
    pub fn may_notify(&self, params: Option<&Value>) -> bool {
        self.notifies(params.and_then(|p| p.get("_meta")))
    }

    /// The same server serving only `versions` (the catalog and the host's functions are shared): a
    /// test's way to a server of one revision. A transport narrows a message's revisions with
    /// [`Inbound::revisions`] instead.
    pub fn restricted_to(
        &self,
        versions: impl IntoIterator<Item = ProtocolVersion>,
    ) -> Result<Server, BuildError> {
        let mut options = self.inner.options.clone();
        options.supported_versions = versions.into_iter().collect();
        check_versions(&options.supported_versions)?;
        Ok(Self::assemble(Arc::clone(&self.inner.snapshot), options, self.inner.injected.clone()))
    }

    /// Handles one message like [`Server::handle`], delivering the request's `notifications/progress`
    /// to `sink` while it runs when it carried `params._meta.progressToken` (a string or an integer),
    /// and its `notifications/message` when it may receive them ([`Server::may_notify`]).
    /// Every notification is handed to `sink` before this returns; none after.
    pub async fn handle_with_notifications(&self, message: Value, sink: NotificationSink) -> Handled {
        self.handle_value(message, Inbound::new().notifications(sink)).await
    }

    /// Handles one message given as a JSON value with what a transport would attach (see
    /// [`Server::handle_envelope`]).
    pub async fn handle_inbound(&self, message: Value, inbound: Inbound) -> Handled {
        self.handle_value(message, inbound).await
    }
}
