//! The host's side of change notifications: [`Notifications`], the opt-in a server is built with, and
//! the [`Notifier`] handle the host announces changes through.
//!
//! A server built without notifications is exactly the stateless server it always was on the wire:
//! it advertises no `listChanged` and no `resources.subscribe`, and acknowledges every
//! `subscriptions/listen` with an empty filter, completing it at once (a client is never dropped for
//! asking, and a host that never changes holds no stream open).

use std::sync::Arc;

use crate::contract::RequestContext;
use crate::notify::change::{Change, ChangeKind};
use crate::notify::hub::{ChangeHub, InProcessHub};

/// How a listener's caller is named: the key a [`CallerNotifier`] addresses.
pub type CallerKey = Arc<dyn Fn(&RequestContext) -> Option<String> + Send + Sync>;

/// The notifications opt-in ([`ServerBuilder::notifications`](crate::ServerBuilder::notifications)):
/// the hub changes travel through, and how a listener's caller is named.
#[derive(Clone)]
pub struct Notifications {
    pub(crate) hub: Arc<dyn ChangeHub>,
    pub(crate) caller_key: Option<CallerKey>,
}

impl std::fmt::Debug for Notifications {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifications")
            .field("caller_key", &self.caller_key.is_some())
            .finish_non_exhaustive()
    }
}

impl Notifications {
    /// Notifications through a new [`InProcessHub`]: listeners of this process are told of changes
    /// announced in this process.
    pub fn in_process() -> Self {
        Self::with_hub(InProcessHub::new())
    }

    /// Notifications through `hub` (for instance one shared by many instances).
    pub fn with_hub(hub: impl ChangeHub) -> Self {
        Self::with_shared_hub(Arc::new(hub))
    }

    /// Notifications through a hub already shared with other servers (a replacement served by the same
    /// [`LiveServer`](crate::transport::LiveServer) must share its predecessor's hub, or listeners of
    /// the old one are not told).
    pub fn with_shared_hub(hub: Arc<dyn ChangeHub>) -> Self {
        Self { hub, caller_key: None }
    }

    /// Names the caller of a listen stream, from the request that opened it (usually from its
    /// principal): a change addressed with [`Notifier::to_caller`] reaches only listeners whose key is
    /// that caller's. Without it, a listener is nobody's and hears only changes addressed to everyone.
    pub fn caller_key(
        mut self,
        key: impl Fn(&RequestContext) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.caller_key = Some(Arc::new(key));
        self
    }

    /// The hub changes travel through.
    pub fn hub(&self) -> &Arc<dyn ChangeHub> {
        &self.hub
    }

    /// The caller key of the request `context` describes.
    pub(crate) fn key_of(&self, context: &RequestContext) -> Option<Arc<str>> {
        let key = self.caller_key.as_ref()?;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| key(context))) {
            Ok(key) => key.map(Arc::from),
            Err(_) => {
                tracing::error!("the host's caller key panicked; the listener is nobody's");
                None
            }
        }
    }

    /// The handle announcing through this hub.
    pub fn notifier(&self) -> Notifier {
        Notifier { hub: Arc::clone(&self.hub) }
    }
}

/// Announces changes to listeners: cheap to clone into handlers and background tasks
/// ([`Server::notifier`](crate::Server::notifier)).
#[derive(Clone)]
pub struct Notifier {
    hub: Arc<dyn ChangeHub>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier").finish_non_exhaustive()
    }
}

impl Notifier {
    /// Publishes one change as it is.
    pub fn publish(&self, change: Change) {
        self.hub.publish(change);
    }

    /// The tools list changed, for everyone.
    pub fn tools_list_changed(&self) {
        self.publish(Change::to_everyone(ChangeKind::ToolsListChanged));
    }

    /// The prompts list changed, for everyone.
    pub fn prompts_list_changed(&self) {
        self.publish(Change::to_everyone(ChangeKind::PromptsListChanged));
    }

    /// The resources list changed, for everyone.
    pub fn resources_list_changed(&self) {
        self.publish(Change::to_everyone(ChangeKind::ResourcesListChanged));
    }

    /// The resource `uri` changed: told to every listener that subscribed to it.
    pub fn resource_updated(&self, uri: &str) {
        self.publish(Change::to_everyone(ChangeKind::ResourceUpdated { uri: uri.into() }));
    }

    /// Announces to one caller's listeners only (see [`Notifications::caller_key`]).
    pub fn to_caller(&self, key: &str) -> CallerNotifier {
        CallerNotifier { hub: Arc::clone(&self.hub), key: key.into() }
    }
}

/// Announces to the listeners of one caller ([`Notifier::to_caller`]).
#[derive(Clone)]
pub struct CallerNotifier {
    hub: Arc<dyn ChangeHub>,
    key: Arc<str>,
}

impl std::fmt::Debug for CallerNotifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key names a caller: not for logs.
        f.debug_struct("CallerNotifier").finish_non_exhaustive()
    }
}

impl CallerNotifier {
    fn publish(&self, kind: ChangeKind) {
        self.hub.publish(Change::to_caller(kind, Arc::clone(&self.key)));
    }

    /// This caller's tools list changed.
    pub fn tools_list_changed(&self) {
        self.publish(ChangeKind::ToolsListChanged);
    }

    /// This caller's prompts list changed.
    pub fn prompts_list_changed(&self) {
        self.publish(ChangeKind::PromptsListChanged);
    }

    /// This caller's resources list changed.
    pub fn resources_list_changed(&self) {
        self.publish(ChangeKind::ResourcesListChanged);
    }

    /// The resource `uri` changed: told to this caller's listeners that subscribed to it.
    pub fn resource_updated(&self, uri: &str) {
        self.publish(ChangeKind::ResourceUpdated { uri: uri.into() });
    }
}
