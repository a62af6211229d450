//! What a transport hands the core beside the message: the request's extensions, where its
//! notifications go, and which revisions this transport serves.

use std::sync::Arc;

use mcp_kernel_wire::ProtocolVersion;
use mcp_kernel_wire::trace::TraceCarrier;

use crate::notify::progress::NotificationSink;
use crate::notify::session::LegacySession;
use crate::request::admitted::Admitted;
use crate::request::extensions::Extensions;
use crate::trace::Network;

/// Which of the server's revisions one transport serves on a path (the HTTP transport serves
/// `2026-07-28` on its stateless path and `2025-11-25` alone on its legacy one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Revisions {
    /// `2026-07-28` only: `server/discover` advertises it alone, and a request that declares no
    /// revision is refused.
    Stateless,
    /// The legacy revisions only (`2025-11-25`).
    Legacy,
}

impl Revisions {
    fn admits(self, version: ProtocolVersion) -> bool {
        match self {
            Revisions::Stateless => version.is_modern(),
            Revisions::Legacy => !version.is_modern(),
        }
    }
}

/// One message's surroundings, for [`crate::Server::handle_envelope`]: `Inbound::new()` is what
/// [`crate::Server::handle`] uses (no extensions, no notifications, every served revision).
#[derive(Clone, Default)]
pub struct Inbound {
    pub(crate) extensions: Extensions,
    pub(crate) sink: Option<NotificationSink>,
    pub(crate) revisions: Option<Revisions>,
    /// The host's filter's answer for this request's tool, when [`Server::admit`](crate::Server::admit) asked.
    pub(crate) tool_shown: Option<(Arc<str>, bool)>,
    /// The transport keeps no session (see [`Inbound::sessionless`]).
    pub(crate) sessionless: bool,
    /// The trace context the transport read (HTTP headers); the request's `_meta` wins over it.
    pub(crate) trace: TraceCarrier,
    /// The network the request came over, for its span.
    pub(crate) network: Option<Network>,
    pub(crate) session: Option<LegacySession>,
    /// Where this request's server-to-client requests go (a legacy client's connection or session).
    pub(crate) client: Option<crate::session::channel::SharedChannel>,
    /// The stored session this request is served in (HTTP legacy sessions).
    pub(crate) stored: Option<crate::session::stored::StoredSession>,
    /// This `initialize` opens a session the transport keeps (see [`Inbound::keeps_session`]).
    pub(crate) keeps_session: bool,
}

impl std::fmt::Debug for Inbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbound")
            .field("extensions", &self.extensions)
            .field("notifications", &self.sink.is_some())
            .field("revisions", &self.revisions)
            .field("tool_shown", &self.tool_shown)
            .field("sessionless", &self.sessionless)
            .field("trace", &self.trace)
            .field("network", &self.network)
            .field("session", &self.session.is_some())
            .field("client", &self.client.is_some())
            .field("stored", &self.stored)
            .field("keeps_session", &self.keeps_session)
            .finish()
    }
}

impl Inbound {
    /// Nothing attached, no notifications, every served revision.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attaches extensions (the caller's principal): the host reads them from
    /// [`crate::RequestContext::extensions`].
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Delivers the request's notifications to `sink` while it runs (`notifications/progress` when it
    /// carried `params._meta.progressToken`, `notifications/message` when it may receive them): every
    /// one is handed to `sink` before the core answers; none after. Attach one only when
    /// [`Admitted::may_notify`] says so.
    pub fn notifications(mut self, sink: NotificationSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// What [`Server::admit`](crate::Server::admit) answered about this message: the host's
    /// visibility filter's answer for the called tool, when it was asked (for the tool's mirrored
    /// headers). The core uses it instead of asking again, so the filter decides once per request and a
    /// filter whose answer changes between two calls cannot let the headers and the call disagree.
    pub fn admitted(mut self, admitted: &Admitted<'_>) -> Self {
        self.tool_shown = admitted.tool_shown.clone();
        self
    }

    /// The W3C trace context the transport read beside the message (the HTTP transport: the
    /// `traceparent`, `tracestate` and `baggage` headers). The request's server span continues the trace
    /// its `params._meta` carries, and this one only when `_meta` carries no valid `traceparent`
    /// (baggage likewise); see `docs/tracing.md`.
    ///
    /// ```
    /// use mcp_kernel_router::transport::Inbound;
    /// use mcp_kernel_router::wire::trace::TraceCarrier;
    ///
    /// let headers = TraceCarrier::from_values(
    ///     ["00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"],
    ///     None::<&str>,
    ///     None::<&str>,
    /// );
    /// let inbound = Inbound::new().trace_carrier(headers);
    /// # let _ = inbound;
    /// ```
    pub fn trace_carrier(mut self, carrier: TraceCarrier) -> Self {
        self.trace = carrier;
        self
    }

    /// The network the request came over, recorded in its span (`network.*`).
    pub fn network(mut self, network: Network) -> Self {
        self.network = Some(network);
        self
    }

    /// Serves only these of the server's revisions for this message.
    pub fn revisions(mut self, revisions: Revisions) -> Self {
        self.revisions = Some(revisions);
        self
    }

    /// The transport keeps no session (HTTP): a 2025-11-25 `logging/setLevel` is accepted as a no-op
    /// whether or not the host opted in to log notifications (MCP [S-64] item 7; the level in force
    /// stays the host's minimum), and `shutdown`, which ends a session, is not a method here.
    ///
    /// [S-64]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
    pub fn sessionless(mut self) -> Self {
        self.sessionless = true;
        self
    }

    /// The connection's legacy session (a transport whose connection is one, such as stdio): a legacy
    /// `initialize` opens its notifications, and `resources/subscribe` / `resources/unsubscribe` are
    /// answered for it, on a server built with notifications.
    pub fn session(mut self, session: &LegacySession) -> Self {
        self.session = Some(session.clone());
        self
    }

    /// Where this request's server-to-client requests go: with it, a `2025-11-25` request whose host
    /// answers "input required" is bridged (the core asks the client through the channel and calls the
    /// host again with the answers); without it, that answer is a host fault (-32603).
    pub fn client(mut self, channel: crate::session::channel::SharedChannel) -> Self {
        self.client = Some(channel);
        self
    }

    /// The stored `2025-11-25` session this request is served in (a transport that keeps sessions in a
    /// [`SessionStore`](crate::sessions::SessionStore), having resumed it for this request and checked
    /// that it is the caller's). A legacy request is then served as the session's: its revision and
    /// client capabilities are the session's, `resources/subscribe` and `resources/unsubscribe` edit the
    /// session's subscriptions in the store (on a server built with notifications), `logging/setLevel`
    /// stores the session's level (with log notifications on) and the request's log notifications are
    /// sent at it. A `2026-07-28` request ignores it.
    pub fn stored_session(mut self, session: crate::session::stored::StoredSession) -> Self {
        self.stored = Some(session);
        self
    }

    /// This legacy `initialize` opens a session the transport keeps (in a
    /// [`SessionStore`](crate::sessions::SessionStore)) once it is answered: the answer advertises what
    /// a stored session honours — `listChanged` and `resources.subscribe` on a server built with
    /// notifications, `logging` with log notifications on.
    pub fn keeps_session(mut self) -> Self {
        self.keeps_session = true;
        self
    }
}

/// The revisions one message may be served in: the server's, narrowed by the transport.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Served<'a> {
    pub(crate) all: &'a [ProtocolVersion],
    pub(crate) only: Option<Revisions>,
}

impl Served<'_> {
    /// Whether `version` is served.
    pub(crate) fn admits(&self, version: ProtocolVersion) -> bool {
        self.all.contains(&version) && self.only.is_none_or(|only| only.admits(version))
    }

    /// The served revisions, in advertising order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = ProtocolVersion> + '_ {
        self.all.iter().copied().filter(|v| self.only.is_none_or(|only| only.admits(*v)))
    }

    /// Whether a revision of the stateless (`modern`) or legacy kind is served.
    pub(crate) fn serves(&self, modern: bool) -> bool {
        self.iter().any(|v| v.is_modern() == modern)
    }

    /// The served revisions' names.
    pub(crate) fn names(&self) -> Vec<String> {
        self.iter().map(|v| v.as_str().to_owned()).collect()
    }
}
