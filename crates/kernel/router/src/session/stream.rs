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
//! The stream ends ([`SessionStream::next`] returns `None`) when the hub's feed ends (the client opens
//! it again, and lists again), and when the session is found ended or expired, or its store
//! unreachable, as an update is read: a stream never outlives its session, and never goes silently
//! deaf.

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
use crate::session::stored::StoredSession;
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

/// One stored session's notifications, in order, until the stream must end.
pub struct SessionStream {
    session: StoredSession,
    feed: ChangeFeed,
    key: Option<Arc<str>>,
}

impl std::fmt::Debug for SessionStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStream").field("session", &self.session).finish_non_exhaustive()
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
        Ok(SessionStream { session, feed, key })
    }
}

impl SessionStream {
    /// The session this stream serves.
    pub fn session(&self) -> &StoredSession {
        &self.session
    }

    /// The next notification (a whole, untagged JSON-RPC notification), or `None` when the stream must
    /// end: the hub's feed ended, or an update found the session ended, expired or its store
    /// unreachable. Cancel-safe up to a resource update being read from the store: one dropped then is
    /// not delivered.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            let change = self.feed.next().await?;
            if !change.reaches(self.key.as_deref()) {
                continue;
            }
            let method = match &change.kind {
                ChangeKind::ToolsListChanged => NOTIFICATION_TOOLS_LIST_CHANGED,
                ChangeKind::PromptsListChanged => NOTIFICATION_PROMPTS_LIST_CHANGED,
                ChangeKind::ResourcesListChanged => NOTIFICATION_RESOURCES_LIST_CHANGED,
                ChangeKind::ResourceUpdated { uri } => {
                    if is_subscribed(&self.session, uri).await? {
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

/// Whether `session` is subscribed to `uri` now (`None`: the session ended, or its store is
/// unreachable — the stream ends). Reading the session is using it: its idle expiry moves.
async fn is_subscribed(session: &StoredSession, uri: &str) -> Option<bool> {
    let owner = session.record().owner.as_deref();
    match session.store().resume(session.id(), owner, now_ms(), session.limits()).await {
        Ok(Some(record)) => Some(record.subscriptions.contains(uri)),
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(%error, "a session stream's store is unreachable; the stream ends");
            None
        }
    }
}
