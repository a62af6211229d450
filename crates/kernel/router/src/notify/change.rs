//! What can change, and who is told: the change kinds a server announces (MCP `2026-07-28`
//! `subscriptions/listen`, and the legacy session notifications of `2025-11-25`), each addressed to
//! every listener or to one caller's listeners.
//!
//! A change carries no content: a list change says only that a list changed (the client lists again),
//! a resource update names only the uri. It is serializable, so a hub shared by many instances can carry
//! it between processes as it is. (A task's status does not travel here: a listen watches the tasks it
//! names in the task store, `tasks/feed.rs`.)

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One kind of change a listener may have asked to be told of.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ChangeKind {
    /// The tools list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompts list changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The resources list changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// One resource's content changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The resource's uri; only listeners that subscribed to exactly this uri are told.
        uri: Arc<str>,
    },
}

/// Who is told of a change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "to", content = "caller", rename_all = "camelCase")]
pub enum Audience {
    /// Every listener (that asked for the kind).
    Everyone,
    /// Only the listeners of one caller: those whose caller key
    /// ([`Notifications::caller_key`](crate::notify::Notifications::caller_key)) is this one.
    Caller(Arc<str>),
}

/// One announced change: what changed and who is told.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Change {
    /// What changed.
    pub kind: ChangeKind,
    /// Who is told.
    pub audience: Audience,
}

impl Change {
    /// A change told to every listener that asked for its kind.
    pub fn to_everyone(kind: ChangeKind) -> Self {
        Self { kind, audience: Audience::Everyone }
    }

    /// A change told only to the listeners of the caller `key`.
    pub fn to_caller(kind: ChangeKind, key: impl Into<Arc<str>>) -> Self {
        Self { kind, audience: Audience::Caller(key.into()) }
    }

    /// Whether a listener whose caller key is `key` is in the audience.
    pub(crate) fn reaches(&self, key: Option<&str>) -> bool {
        match &self.audience {
            Audience::Everyone => true,
            Audience::Caller(caller) => key == Some(&**caller),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_for_one_caller_reaches_only_that_callers_listeners() {
        let change = Change::to_caller(ChangeKind::ResourcesListChanged, "alice");
        assert!(change.reaches(Some("alice")));
        assert!(!change.reaches(Some("bob")));
        assert!(!change.reaches(None), "an anonymous listener is nobody's");
        assert!(Change::to_everyone(ChangeKind::ToolsListChanged).reaches(None));
    }

    #[test]
    fn a_change_round_trips_through_json_for_a_shared_hub() {
        let change = Change::to_caller(ChangeKind::ResourceUpdated { uri: "notes://1".into() }, "alice");
        let text = serde_json::to_string(&change).unwrap();
        assert_eq!(serde_json::from_str::<Change>(&text).unwrap(), change);
        let everyone = Change::to_everyone(ChangeKind::PromptsListChanged);
        let text = serde_json::to_string(&everyone).unwrap();
        assert_eq!(serde_json::from_str::<Change>(&text).unwrap(), everyone);
    }
}
