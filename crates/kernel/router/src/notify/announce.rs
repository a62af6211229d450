//! What a [`LiveServer`](crate::transport::LiveServer) replacement announces: exactly the lists whose
//! advertised content changed, compared as a client would see them (each item's encoded form, in
//! order), never because a new server was built. The resources list covers concrete resources and
//! templates. What a visibility filter or a resource source answers is the host's: when it changes,
//! the host announces it with its notifier.

use std::sync::Arc;

use crate::notify::change::{Change, ChangeKind};
use crate::server::Server;

/// The list changes between `old` and `next`, in the order tools, prompts, resources.
pub(crate) fn changes(old: &Server, next: &Server) -> Vec<Change> {
    let (before, after) = (&old.inner.snapshot, &next.inner.snapshot);
    let tools = !before.tools_list.iter().map(|t| t.get()).eq(after.tools_list.iter().map(|t| t.get()));
    let prompts = !before.prompts.iter().map(|p| &p.item).eq(after.prompts.iter().map(|p| &p.item));
    let resources = !before.resources.iter().map(|r| &r.item).eq(after.resources.iter().map(|r| &r.item))
        || !before.templates.iter().map(|t| &t.item).eq(after.templates.iter().map(|t| &t.item));
    [
        (tools, ChangeKind::ToolsListChanged),
        (prompts, ChangeKind::PromptsListChanged),
        (resources, ChangeKind::ResourcesListChanged),
    ]
    .into_iter()
    .filter(|(changed, _)| *changed)
    .map(|(_, kind)| Change::to_everyone(kind))
    .collect()
}

/// Announces the list changes from `old` to `next` through `next`'s hub (a server without
/// notifications announces nothing).
pub(crate) fn announce(old: &Server, next: &Server) {
    let shared = match (old.notifications(), next.notifications()) {
        (Some(before), Some(after)) => Arc::ptr_eq(&before.hub, &after.hub),
        (None, _) => true,
        (Some(_), None) => false,
    };
    if !shared {
        // The old server's listeners read another hub: they will hear nothing of this server.
        tracing::warn!(
            "a LiveServer replacement does not share its predecessor's change hub; its listeners are not told"
        );
    }
    let Some(notifications) = next.notifications() else { return };
    for change in changes(old, next) {
        notifications.hub.publish(change);
    }
}
