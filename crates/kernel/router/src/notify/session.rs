//! Legacy (`2025-11-25`) change notifications, for a transport whose connection is a session (stdio).
//!
//! Before `2026-07-28`, a client that had initialized a session was sent
//! `notifications/{tools,prompts,resources}/list_changed` for every list whose `listChanged` the server
//! advertised, and `notifications/resources/updated` for each uri it had `resources/subscribe`d to —
//! untagged, on the session's one channel. Only a transport that keeps a session can honour that; over
//! stateless HTTP the legacy methods stay refused.
//!
//! The transport makes one [`LegacySession`] per connection ([`LegacySession::new`]), attaches its
//! handle to every message ([`Inbound::session`](crate::transport::Inbound::session)) and reads the
//! other half, [`LegacyNotifications`], on a task of its own. The core opens the session when it
//! answers a legacy `initialize` on a server built with notifications (changes are held from then on,
//! and flow once the client sends `notifications/initialized`), and answers
//! `resources/subscribe` / `resources/unsubscribe` (a uri is accepted only if the caller may read it,
//! otherwise refused as a missing resource, -32002). When the hub's feed ends, so does
//! [`LegacyNotifications::next`]: the transport ends the session (its output closes), since a session
//! that silently stopped delivering would break the client's cache.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_channel::oneshot;
use serde_json::{Value, json};

use mcp_kernel_wire::types::method::{
    NOTIFICATION_PROMPTS_LIST_CHANGED, NOTIFICATION_RESOURCE_UPDATED, NOTIFICATION_RESOURCES_LIST_CHANGED,
    NOTIFICATION_TOOLS_LIST_CHANGED,
};

use crate::notify::change::ChangeKind;
use crate::notify::hub::ChangeFeed;

/// The most uris one session may be subscribed to at once; a subscribe past it is -32602.
pub const MAX_SESSION_SUBSCRIPTIONS: usize = 1024;

/// One connection's legacy session, as the core sees it: cheap to clone into every message's
/// [`Inbound`](crate::transport::Inbound).
#[derive(Clone)]
pub struct LegacySession {
    shared: Arc<Shared>,
}

struct Shared {
    uris: Mutex<BTreeSet<Arc<str>>>,
    opening: Mutex<Option<oneshot::Sender<Opened>>>,
    /// The feed subscribed at `initialize`, handed over at `notifications/initialized`: nothing is
    /// sent before it (2025-11-25 lifecycle), and nothing announced in between is lost.
    pending: Mutex<Option<Opened>>,
    /// The capabilities the client declared in its first `initialize` (an object), if any.
    capabilities: Mutex<Option<Arc<Value>>>,
    /// The client sent `notifications/initialized`: the server may send it requests (2025-11-25
    /// lifecycle: none but pings and logging before).
    ready: AtomicBool,
}

/// What the core hands the reading half when the session opens.
struct Opened {
    feed: ChangeFeed,
    key: Option<Arc<str>>,
}

impl std::fmt::Debug for LegacySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySession").finish_non_exhaustive()
    }
}

impl LegacySession {
    /// A new, unopened session and the half that reads its notifications.
    pub fn new() -> (LegacySession, LegacyNotifications) {
        let (sender, opened) = oneshot::channel();
        let opening = Mutex::new(Some(sender));
        let shared = Arc::new(Shared {
            uris: Mutex::default(),
            opening,
            pending: Mutex::default(),
            capabilities: Mutex::default(),
            ready: AtomicBool::new(false),
        });
        (
            LegacySession { shared: Arc::clone(&shared) },
            LegacyNotifications { shared, state: State::Waiting(opened) },
        )
    }

    /// Opens the session with `feed`, once (a second `initialize` changes nothing); its changes are held
    /// until [`LegacySession::initialized`].
    pub(crate) fn open(&self, feed: impl FnOnce() -> ChangeFeed, key: Option<Arc<str>>) {
        let unopened = self.shared.opening.lock().unwrap_or_else(PoisonError::into_inner).is_some();
        let mut pending = self.shared.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if unopened && pending.is_none() {
            *pending = Some(Opened { feed: feed(), key });
        }
    }

    /// The client sent `notifications/initialized`: the session's notifications flow from now on.
    pub(crate) fn initialized(&self) {
        self.shared.ready.store(true, Ordering::Release);
        let opened = self.shared.pending.lock().unwrap_or_else(PoisonError::into_inner).take();
        let sender = match opened {
            Some(_) => self.shared.opening.lock().unwrap_or_else(PoisonError::into_inner).take(),
            None => None,
        };
        if let (Some(sender), Some(opened)) = (sender, opened) {
            let _ = sender.send(opened);
        }
    }

    /// Remembers the capabilities the client declared in `initialize` (the first one that declares an
    /// object; a later `initialize` changes nothing, as it opens nothing).
    pub(crate) fn remember_capabilities(&self, declared: &Value) {
        if !declared.is_object() {
            return;
        }
        let mut capabilities = self.shared.capabilities.lock().unwrap_or_else(PoisonError::into_inner);
        if capabilities.is_none() {
            *capabilities = Some(Arc::new(declared.clone()));
        }
    }

    /// The capabilities the client declared in its `initialize`, once it has sent
    /// `notifications/initialized` (`None` before, or when it declared none): what a transport's
    /// [`ClientChannel`](crate::transport::ClientChannel) reports. The server sends a client no request
    /// but pings and logging before that notification (2025-11-25 lifecycle), so until then nothing is
    /// asked of it.
    pub fn client_capabilities(&self) -> Option<Arc<Value>> {
        if !self.shared.ready.load(Ordering::Acquire) {
            return None;
        }
        self.shared.capabilities.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Subscribes to `uri`; `false` when the session holds [`MAX_SESSION_SUBSCRIPTIONS`] others.
    pub(crate) fn subscribe(&self, uri: &str) -> bool {
        let mut uris = self.shared.uris.lock().unwrap_or_else(PoisonError::into_inner);
        if uris.contains(uri) {
            return true;
        }
        if uris.len() >= MAX_SESSION_SUBSCRIPTIONS {
            return false;
        }
        uris.insert(Arc::from(uri));
        true
    }

    /// Unsubscribes from `uri` (subscribed or not).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.shared.uris.lock().unwrap_or_else(PoisonError::into_inner).remove(uri);
    }
}

/// The reading half of a [`LegacySession`]: the session's notifications, in order.
pub struct LegacyNotifications {
    shared: Arc<Shared>,
    state: State,
}

enum State {
    Waiting(oneshot::Receiver<Opened>),
    Open(Opened),
    Ended,
}

impl std::fmt::Debug for LegacyNotifications {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacyNotifications").finish_non_exhaustive()
    }
}

impl LegacyNotifications {
    /// The session's next notification (a whole, untagged JSON-RPC notification). Cancel-safe.
    /// Pending until the session is opened and the client has sent `notifications/initialized`; `None` once the feed has ended (end the session then) or when every handle
    /// of the session is gone before it opened.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            match &mut self.state {
                State::Waiting(opened) => match opened.await {
                    Ok(opened) => self.state = State::Open(opened),
                    Err(_) => self.state = State::Ended,
                },
                State::Open(Opened { feed, key }) => {
                    let Some(change) = feed.next().await else {
                        self.state = State::Ended;
                        return None;
                    };
                    if !change.reaches(key.as_deref()) {
                        continue;
                    }
                    if let Some(message) = self.untagged(&change.kind) {
                        return Some(message);
                    }
                }
                State::Ended => return None,
            }
        }
    }

    /// The notification of `kind` for this session, if it is one the session is told of.
    fn untagged(&self, kind: &ChangeKind) -> Option<Value> {
        let method = match kind {
            ChangeKind::ToolsListChanged => NOTIFICATION_TOOLS_LIST_CHANGED,
            ChangeKind::PromptsListChanged => NOTIFICATION_PROMPTS_LIST_CHANGED,
            ChangeKind::ResourcesListChanged => NOTIFICATION_RESOURCES_LIST_CHANGED,
            ChangeKind::ResourceUpdated { uri } => {
                let subscribed =
                    self.shared.uris.lock().unwrap_or_else(PoisonError::into_inner).contains(uri);
                return subscribed.then(|| {
                    json!({ "jsonrpc": "2.0", "method": NOTIFICATION_RESOURCE_UPDATED, "params": { "uri": &**uri } })
                });
            }
        };
        Some(json!({ "jsonrpc": "2.0", "method": method }))
    }
}
