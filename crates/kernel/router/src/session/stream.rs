//! What a stored `2025-11-25` session is told outside any request ([`Server::session_stream`]): the
//! notifications its GET stream carries over HTTP.
//!
//! The same event source as `subscriptions/listen`: the server's [`ChangeHub`](crate::notify::ChangeHub),
//! subscribed with `try_subscribe` (an unreachable shared hub refuses the stream, retryably, rather
//! than open one that would stay silent), each change filtered by the caller key of the request that
//! opened the stream, as a listen's is. The session is told, untagged as `2025-11-25` has it:
//!
//! - `notifications/{tools,prompts,resources}/list_changed`, which a server built with notifications
//!   advertises to a session at `initialize`;
//! - `notifications/resources/updated` for a uri the session is subscribed to **when the change
//!   arrives**: the subscriptions are read from the store then, so a `resources/subscribe` served by
//!   another instance counts, and an unsubscribe stops the updates at once.
//!
//! **One stream per session, across instances.** `2025-11-25` has the server send each message on one
//! of the client's streams only; a session's GET streams may be open on several instances at once (a
//! client that opened another through a proxy), each subscribed to the same changes. So a stream takes
//! its session over ([`SessionStream::take_over`]): a fresh token recorded in the session
//! ([`SessionEdit::Stream`]), and a notification goes out only while the session's token is the
//! stream's own — **every notification reads the session** from its store (in process a map look-up;
//! Redis one round trip), and the stream that finds another's token ends. A change published at the
//! moment a newer stream takes over may reach both streams, or neither (a client that opens a stream
//! lists again).
//!
//! The stream ends ([`SessionStream::next`] returns `None`) when the hub's feed ends (the client opens
//! it again, and lists again), and when, as a notification is read, the session is found ended,
//! expired, taken over by a newer stream, or its store unreachable: a stream never outlives its
//! session, never goes silently deaf, and never speaks beside a newer one. A transport checks the same
//! between notifications with [`StreamCheck`].

use std::sync::Arc;

use serde_json::{Value, json};

use mcp_kernel_wire::types::method::{
    NOTIFICATION_PROMPTS_LIST_CHANGED, NOTIFICATION_RESOURCE_UPDATED, NOTIFICATION_RESOURCES_LIST_CHANGED,
    NOTIFICATION_TOOLS_LIST_CHANGED,
};

use crate::contract::{Era, RequestContext};
use crate::notify::change::ChangeKind;
use crate::notify::hub::{ChangeFeed, HubUnavailable};
use crate::request::extensions::Extensions;
use crate::server::Server;
use crate::session::store::{SessionEdit, SessionError, SessionRecord};
use crate::session::stored::{StoredSession, new_session_id};
use crate::tasks::StoreError;
use crate::tasks::record::now_ms;

/// Why a session's stream was not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamRefused {
    /// The server announces no changes (built without notifications): there is nothing to stream.
    #[error("the server announces no changes")]
    NoNotifications,
    /// The change hub cannot deliver now (retry later).
    #[error(transparent)]
    Unavailable(#[from] HubUnavailable),
}

/// One stored session's notifications, in order, until the stream must end. It delivers nothing
/// until it has taken its session over ([`SessionStream::take_over`]).
pub struct SessionStream {
    check: StreamCheck,
    feed: ChangeFeed,
    key: Option<Arc<str>>,
}

impl std::fmt::Debug for SessionStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStream").field("session", &self.check.session).finish_non_exhaustive()
    }
}

/// Whether a [`SessionStream`] is still its session's one stream: what the stream reads before each
/// notification, for a transport to read between them too (a stream superseded on another instance
/// ends at its next check). Cheap to clone.
#[derive(Clone)]
pub struct StreamCheck {
    session: StoredSession,
    /// The stream's token once it took its session over (a secret, as the session id is).
    token: Option<Arc<str>>,
}

impl std::fmt::Debug for StreamCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamCheck").field("session", &self.session).finish_non_exhaustive()
    }
}

impl StreamCheck {
    /// The session as its store holds it now, if it is live and this stream is still its own (the
    /// read is use of the session: its idle expiry moves); `None` otherwise, and when the store is
    /// unreachable (logged): the stream must end.
    pub async fn current(&self) -> Option<SessionRecord> {
        let token = self.token.as_deref()?;
        let session = &self.session;
        let owner = session.record().owner.as_deref();
        match session.store().resume(session.id(), owner, now_ms(), session.limits()).await {
            Ok(Some(record)) if record.stream.as_deref() == Some(token) => Some(record),
            Ok(Some(_)) => {
                tracing::debug!("a session stream was taken over by a newer one; it ends");
                None
            }
            Ok(None) => None,
            Err(error) => {
                tracing::warn!(%error, "a session stream's store is unreachable; the stream ends");
                None
            }
        }
    }

    /// Whether the session is live and this stream still its own ([`StreamCheck::current`]).
    pub async fn holds(&self) -> bool {
        self.current().await.is_some()
    }
}

impl Server {
    /// Opens the notification stream of `session`, for a request whose transport attached `extensions`
    /// (the caller's principal, from which the caller key is read, as a listen's is).
    pub fn session_stream(
        &self,
        session: StoredSession,
        extensions: Extensions,
    ) -> Result<SessionStream, StreamRefused> {
        let Some(notifications) = self.notifications() else { return Err(StreamRefused::NoNotifications) };
        let feed = notifications.hub.try_subscribe()?;
        let context =
            RequestContext::new(Era::Declared(session.version()), Some(Arc::clone(session.capabilities())))
                .with_extensions(extensions);
        let key = notifications.key_of(&context);
        Ok(SessionStream { check: StreamCheck { session, token: None }, feed, key })
    }
}

impl SessionStream {
    /// The session this stream serves.
    pub fn session(&self) -> &StoredSession {
        &self.check.session
    }

    /// Makes this stream its session's one stream, on every instance sharing its store: a fresh token
    /// recorded in the session ([`SessionEdit::Stream`]), after which the older stream, wherever it is
    /// open, delivers nothing more and ends at its next notification or check. `Ok(false)` when the
    /// session ended meanwhile. Open the stream (its feed subscribed) before taking over, and take over
    /// last, once nothing else can refuse the stream: a stream refused after it would have silenced the
    /// older one for nothing.
    pub async fn take_over(&mut self) -> Result<bool, SessionError> {
        let Some(token) = new_session_id() else {
            return Err(StoreError::Failed("the system's random source failed".into()).into());
        };
        let session = &self.check.session;
        let edit = SessionEdit::Stream(token.clone());
        let taken = session.store().edit(session.id(), edit, session.limits()).await?;
        if taken {
            self.check.token = Some(token.into());
        }
        Ok(taken)
    }

    /// What this stream checks before each notification, for its transport to check between them.
    pub fn check(&self) -> StreamCheck {
        self.check.clone()
    }

    /// The next notification (a whole, untagged JSON-RPC notification), or `None` when the stream must
    /// end: the hub's feed ended, or the session, read for the notification, was found ended, expired,
    /// taken over by a newer stream or its store unreachable (a stream never taken over ends at its
    /// first notification). Cancel-safe up to the session being read: a notification dropped then is
    /// not delivered.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            let change = self.feed.next().await?;
            if !change.reaches(self.key.as_deref()) {
                continue;
            }
            // Every notification reads the session: it goes out only on the session's one stream.
            let record = self.check.current().await?;
            let method = match &change.kind {
                ChangeKind::ToolsListChanged => NOTIFICATION_TOOLS_LIST_CHANGED,
                ChangeKind::PromptsListChanged => NOTIFICATION_PROMPTS_LIST_CHANGED,
                ChangeKind::ResourcesListChanged => NOTIFICATION_RESOURCES_LIST_CHANGED,
                ChangeKind::ResourceUpdated { uri } => {
                    // The subscriptions as they are now: one made through another instance counts.
                    if record.subscriptions.contains(&**uri) {
                        return Some(json!({
                            "jsonrpc": "2.0",
                            "method": NOTIFICATION_RESOURCE_UPDATED,
                            "params": { "uri": &**uri },
                        }));
                    }
                    continue;
                }
            };
            return Some(json!({ "jsonrpc": "2.0", "method": method }));
        }
    }
}
