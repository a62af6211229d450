//! The filter of one `subscriptions/listen` request, and the part of it the server honours.
//!
//! Threats: a uri probe through the acknowledgment, and a filter that costs the server more than it
//! costs the caller. A uri is honoured only if the caller may read it (listed for them, or matched by
//! a template listed for them); an unknown uri, one the caller may not see, and one that is not listed
//! are all left out of the acknowledgment in exactly the same way, so the acknowledgment says nothing
//! about uris a `resources/read` would not. At most [`MAX_RESOURCE_SUBSCRIPTIONS`] uris of at most
//! [`MAX_SUBSCRIBED_URI_BYTES`] each are considered; a longer list or a longer uri is refused with
//! -32602 before any is looked up.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use mcp_kernel_wire::ErrorObject;

use crate::notify::change::{Change, ChangeKind};

/// The most `resourceSubscriptions` one listen may name.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1024;
/// The longest uri a listen may subscribe to, in bytes.
pub const MAX_SUBSCRIBED_URI_BYTES: usize = 4096;
/// The most `taskIds` one listen may name (the tasks extension).
pub const MAX_TASK_SUBSCRIPTIONS: usize = 1024;
/// The longest task id a listen may name, in bytes (a task id of this server is 32).
pub const MAX_SUBSCRIBED_TASK_ID_BYTES: usize = 128;

/// Whether `params.notifications` asks for a change the hub carries (a flag `true`, or a non-empty uri
/// list), read without checking it.
pub(crate) fn asks_for_changes(params: Option<&Value>) -> bool {
    let Some(Value::Object(filter)) = params.and_then(|p| p.get("notifications")) else { return false };
    let flag = |name: &str| filter.get(name) == Some(&Value::Bool(true));
    let uris = matches!(filter.get("resourceSubscriptions"), Some(Value::Array(items)) if !items.is_empty());
    flag("toolsListChanged") || flag("promptsListChanged") || flag("resourcesListChanged") || uris
}

/// Whether `params.notifications` asks for task statuses (a non-empty `taskIds`), read without checking
/// it.
pub(crate) fn asks_for_tasks(params: Option<&Value>) -> bool {
    let Some(Value::Object(filter)) = params.and_then(|p| p.get("notifications")) else { return false };
    matches!(filter.get("taskIds"), Some(Value::Array(items)) if !items.is_empty())
}

/// What a listen asked for, as read from its `notifications` member.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    /// The uris, once each, in the order first asked.
    pub(crate) uris: Vec<String>,
    /// The task ids, once each, in the order first asked.
    pub(crate) task_ids: Vec<String>,
}

impl Asked {
    /// Reads `params.notifications`; anything but the four members of a filter with their types is
    /// -32602 (unknown members are ignored, as in every MCP object).
    pub(crate) fn read(params: Option<&Value>) -> Result<Self, ErrorObject> {
        let Some(Value::Object(filter)) = params.and_then(|p| p.get("notifications")) else {
            return Err(ErrorObject::invalid_params("subscriptions/listen requires a notifications object"));
        };
        let flag = |name: &str| match filter.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(ErrorObject::invalid_params("a subscription filter flag must be a boolean")),
        };
        let mut asked = Asked {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris: Vec::new(),
            task_ids: Vec::new(),
        };
        match filter.get("resourceSubscriptions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if items.len() <= MAX_RESOURCE_SUBSCRIPTIONS => {
                let mut seen = BTreeSet::new();
                for item in items {
                    let Value::String(uri) = item else {
                        return Err(ErrorObject::invalid_params("resourceSubscriptions must hold strings"));
                    };
                    if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
                        return Err(ErrorObject::invalid_params("a subscribed uri is too long"));
                    }
                    if seen.insert(uri.as_str()) {
                        asked.uris.push(uri.clone());
                    }
                }
            }
            Some(Value::Array(_)) => {
                return Err(ErrorObject::invalid_params("resourceSubscriptions names too many uris"));
            }
            Some(_) => return Err(ErrorObject::invalid_params("resourceSubscriptions must be an array")),
        }
        match filter.get("taskIds") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if items.len() <= MAX_TASK_SUBSCRIPTIONS => {
                let mut seen = BTreeSet::new();
                for item in items {
                    let Value::String(id) = item else {
                        return Err(ErrorObject::invalid_params("taskIds must hold strings"));
                    };
                    if id.len() > MAX_SUBSCRIBED_TASK_ID_BYTES {
                        return Err(ErrorObject::invalid_params("a subscribed task id is too long"));
                    }
                    if seen.insert(id.as_str()) {
                        asked.task_ids.push(id.clone());
                    }
                }
            }
            Some(Value::Array(_)) => return Err(ErrorObject::invalid_params("taskIds names too many tasks")),
            Some(_) => return Err(ErrorObject::invalid_params("taskIds must be an array")),
        }
        Ok(asked)
    }
}

/// What the server agreed to send one listener: the acknowledged filter.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Honoured {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) uris: BTreeSet<Arc<str>>,
    /// The accepted uris in the order asked, for the acknowledgment.
    pub(crate) uris_in_order: Vec<String>,
    /// The accepted task ids (the caller's own live tasks), in the order asked, for the
    /// acknowledgment.
    pub(crate) task_ids_in_order: Vec<String>,
}

impl Honoured {
    /// Whether no change the hub carries is honoured.
    pub(crate) fn wants_no_change(&self) -> bool {
        !self.tools && !self.prompts && !self.resources && self.uris.is_empty()
    }

    /// Whether nothing is honoured: the listen has nothing to wait for.
    pub(crate) fn is_empty(&self) -> bool {
        self.wants_no_change() && self.task_ids_in_order.is_empty()
    }

    /// Whether `change` is one this listener asked for and is in the audience of.
    pub(crate) fn wants(&self, change: &Change, key: Option<&str>) -> bool {
        let kind = match &change.kind {
            ChangeKind::ToolsListChanged => self.tools,
            ChangeKind::PromptsListChanged => self.prompts,
            ChangeKind::ResourcesListChanged => self.resources,
            ChangeKind::ResourceUpdated { uri } => self.uris.contains(uri),
        };
        kind && change.reaches(key)
    }

    /// The acknowledged filter: a flag only when honoured (`true`), the uris only when any is accepted.
    pub(crate) fn to_filter(&self) -> Value {
        let mut filter = Map::new();
        for (name, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                filter.insert(name.into(), Value::Bool(true));
            }
        }
        if !self.uris_in_order.is_empty() {
            let uris = self.uris_in_order.iter().cloned().map(Value::String).collect();
            filter.insert("resourceSubscriptions".into(), Value::Array(uris));
        }
        if !self.task_ids_in_order.is_empty() {
            let ids = self.task_ids_in_order.iter().cloned().map(Value::String).collect();
            filter.insert("taskIds".into(), Value::Array(ids));
        }
        Value::Object(filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(filter: Value) -> Result<Asked, ErrorObject> {
        Asked::read(Some(&json!({ "notifications": filter })))
    }

    #[test]
    fn a_listen_without_a_notifications_object_is_invalid_params() {
        assert_eq!(Asked::read(Some(&json!({}))).unwrap_err().code, -32602);
        assert_eq!(Asked::read(None).unwrap_err().code, -32602);
        assert_eq!(read(json!([])).unwrap_err().code, -32602);
    }

    #[test]
    fn a_flag_that_is_not_a_boolean_is_invalid_params() {
        assert_eq!(read(json!({"toolsListChanged": "yes"})).unwrap_err().code, -32602);
        assert_eq!(read(json!({"resourceSubscriptions": "a"})).unwrap_err().code, -32602);
        assert_eq!(read(json!({"resourceSubscriptions": [1]})).unwrap_err().code, -32602);
    }

    #[test]
    fn refuses_more_subscribed_uris_than_the_bound_before_looking_any_up() {
        let at_bound: Vec<String> = (0..MAX_RESOURCE_SUBSCRIPTIONS).map(|i| format!("u://{i}")).collect();
        assert_eq!(read(json!({ "resourceSubscriptions": at_bound })).unwrap().uris.len(), 1024);
        let past: Vec<String> = (0..=MAX_RESOURCE_SUBSCRIPTIONS).map(|i| format!("u://{i}")).collect();
        assert_eq!(read(json!({ "resourceSubscriptions": past })).unwrap_err().code, -32602);
        let long = "u".repeat(MAX_SUBSCRIBED_URI_BYTES + 1);
        assert_eq!(read(json!({ "resourceSubscriptions": [long] })).unwrap_err().code, -32602);
    }

    #[test]
    fn a_filter_asks_something_only_with_a_true_flag_or_a_uri() {
        let asks = |filter: Value| asks_for_changes(Some(&json!({ "notifications": filter })));
        assert!(!asks(json!({})));
        assert!(!asks(json!({"toolsListChanged": false, "resourceSubscriptions": []})));
        assert!(asks(json!({"promptsListChanged": true})));
        assert!(asks(json!({"resourceSubscriptions": ["a://"]})));
        assert!(!asks_for_changes(None));
    }

    #[test]
    fn refuses_more_task_ids_than_the_bound_and_ids_that_are_not_strings() {
        let at_bound: Vec<String> = (0..MAX_TASK_SUBSCRIPTIONS).map(|i| format!("t{i}")).collect();
        assert_eq!(read(json!({ "taskIds": at_bound })).unwrap().task_ids.len(), MAX_TASK_SUBSCRIPTIONS);
        let past: Vec<String> = (0..=MAX_TASK_SUBSCRIPTIONS).map(|i| format!("t{i}")).collect();
        assert_eq!(read(json!({ "taskIds": past })).unwrap_err().code, -32602);
        assert_eq!(read(json!({ "taskIds": [7] })).unwrap_err().code, -32602);
        assert_eq!(read(json!({ "taskIds": "t" })).unwrap_err().code, -32602);
        let long = "t".repeat(MAX_SUBSCRIBED_TASK_ID_BYTES + 1);
        assert_eq!(read(json!({ "taskIds": [long] })).unwrap_err().code, -32602);
        assert!(asks_for_tasks(Some(&json!({"notifications": {"taskIds": ["t"]}}))));
        assert!(!asks_for_changes(Some(&json!({"notifications": {"taskIds": ["t"]}}))));
    }

    #[test]
    fn a_uri_asked_twice_is_considered_once() {
        let asked = read(json!({"resourceSubscriptions": ["b://", "a://", "b://"]})).unwrap();
        assert_eq!(asked.uris, ["b://", "a://"]);
    }

    #[test]
    fn the_acknowledged_filter_names_only_what_is_honoured() {
        let honoured = Honoured { tools: true, ..Honoured::default() };
        assert_eq!(honoured.to_filter(), json!({"toolsListChanged": true}));
        assert_eq!(Honoured::default().to_filter(), json!({}));
    }
}
