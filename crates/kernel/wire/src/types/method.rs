//! Method names of both revisions.

/// `server/discover` (2026-07-28).
pub const DISCOVER: &str = "server/discover";
/// `initialize` (2025-11-25).
pub const INITIALIZE: &str = "initialize";
/// `ping` (2025-11-25).
pub const PING: &str = "ping";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe` (2025-11-25).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (2025-11-25).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `logging/setLevel` (2025-11-25).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `subscriptions/listen` (2026-07-28).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `tasks/get` (the tasks extension, `2026-07-28`).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/update` (the tasks extension, `2026-07-28`).
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/cancel` (the tasks extension, `2026-07-28`).
pub const TASKS_CANCEL: &str = "tasks/cancel";

/// `elicitation/create`, an input request (2026-07-28) or a server request (2025-11-25).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `sampling/createMessage`, an input request (2026-07-28) or a server request (2025-11-25).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `roots/list`, an input request (2026-07-28) or a server request (2025-11-25).
pub const ROOTS_LIST: &str = "roots/list";

/// `notifications/initialized` (2025-11-25, client to server).
pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled`.
pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress`.
pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
/// `notifications/message` (a log message).
pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
/// `notifications/resources/updated`.
pub const NOTIFICATION_RESOURCE_UPDATED: &str = "notifications/resources/updated";
/// `notifications/resources/list_changed`.
pub const NOTIFICATION_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/tools/list_changed`.
pub const NOTIFICATION_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/prompts/list_changed`.
pub const NOTIFICATION_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/subscriptions/acknowledged` (2026-07-28).
pub const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `notifications/tasks` (the tasks extension: a task's status, on a listen stream).
pub const NOTIFICATION_TASKS: &str = "notifications/tasks";
/// `notifications/roots/list_changed` (2025-11-25, client to server).
pub const NOTIFICATION_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";

/// A request's or notification's method, parsed once: every method either revision defines, the
/// stdio lifecycle's `shutdown` and `exit` (the design this package re-implements; neither revision
/// has them), and any other name kept as sent. Transports ask it what a method is (removed in the
/// stateless revision, able to stream, mirrored by `Mcp-Name`) instead of keeping their own tables.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `server/discover`.
    Discover,
    /// `initialize`.
    Initialize,
    /// `ping`.
    Ping,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourcesTemplatesList,
    /// `resources/read`.
    ResourcesRead,
    /// `resources/subscribe`.
    ResourcesSubscribe,
    /// `resources/unsubscribe`.
    ResourcesUnsubscribe,
    /// `prompts/list`.
    PromptsList,
    /// `prompts/get`.
    PromptsGet,
    /// `completion/complete`.
    CompletionComplete,
    /// `logging/setLevel`.
    LoggingSetLevel,
    /// `subscriptions/listen`.
    SubscriptionsListen,
    /// `tasks/get` (the tasks extension).
    TasksGet,
    /// `tasks/update` (the tasks extension).
    TasksUpdate,
    /// `tasks/cancel` (the tasks extension).
    TasksCancel,
    /// `notifications/initialized`.
    NotificationInitialized,
    /// `notifications/cancelled`.
    NotificationCancelled,
    /// `notifications/progress`.
    NotificationProgress,
    /// `notifications/roots/list_changed`.
    NotificationRootsListChanged,
    /// `shutdown` (the stdio lifecycle; not an MCP method).
    Shutdown,
    /// `exit` (the stdio lifecycle; not an MCP method).
    Exit,
    /// Any other name, as sent.
    Other(String),
}

/// The names of the known methods, in the enum's order: the table the tests hold `Method::known` and
/// `Method::as_str` (both `match`es) to.
#[cfg(test)]
const KNOWN: [(&str, Method); 24] = [
    (DISCOVER, Method::Discover),
    (INITIALIZE, Method::Initialize),
    (PING, Method::Ping),
    (TOOLS_LIST, Method::ToolsList),
    (TOOLS_CALL, Method::ToolsCall),
    (RESOURCES_LIST, Method::ResourcesList),
    (RESOURCES_TEMPLATES_LIST, Method::ResourcesTemplatesList),
    (RESOURCES_READ, Method::ResourcesRead),
    (RESOURCES_SUBSCRIBE, Method::ResourcesSubscribe),
    (RESOURCES_UNSUBSCRIBE, Method::ResourcesUnsubscribe),
    (PROMPTS_LIST, Method::PromptsList),
    (PROMPTS_GET, Method::PromptsGet),
    (COMPLETION_COMPLETE, Method::CompletionComplete),
    (LOGGING_SET_LEVEL, Method::LoggingSetLevel),
    (SUBSCRIPTIONS_LISTEN, Method::SubscriptionsListen),
    (TASKS_GET, Method::TasksGet),
    (TASKS_UPDATE, Method::TasksUpdate),
    (TASKS_CANCEL, Method::TasksCancel),
    (NOTIFICATION_INITIALIZED, Method::NotificationInitialized),
    (NOTIFICATION_CANCELLED, Method::NotificationCancelled),
    (NOTIFICATION_PROGRESS, Method::NotificationProgress),
    (NOTIFICATION_ROOTS_LIST_CHANGED, Method::NotificationRootsListChanged),
    ("shutdown", Method::Shutdown),
    ("exit", Method::Exit),
];

impl Method {
    /// The method named `name` (exact, case-sensitive); an unknown name is [`Method::Other`].
    pub fn parse(name: &str) -> Method {
        match Self::known(name) {
            Some(method) => method,
            None => Method::Other(name.to_owned()),
        }
    }

    /// The known method named `name`, without allocating for an unknown one.
    pub fn known(name: &str) -> Option<Method> {
        Some(match name {
            DISCOVER => Method::Discover,
            INITIALIZE => Method::Initialize,
            PING => Method::Ping,
            TOOLS_LIST => Method::ToolsList,
            TOOLS_CALL => Method::ToolsCall,
            RESOURCES_LIST => Method::ResourcesList,
            RESOURCES_TEMPLATES_LIST => Method::ResourcesTemplatesList,
            RESOURCES_READ => Method::ResourcesRead,
            RESOURCES_SUBSCRIBE => Method::ResourcesSubscribe,
            RESOURCES_UNSUBSCRIBE => Method::ResourcesUnsubscribe,
            PROMPTS_LIST => Method::PromptsList,
            PROMPTS_GET => Method::PromptsGet,
            COMPLETION_COMPLETE => Method::CompletionComplete,
            LOGGING_SET_LEVEL => Method::LoggingSetLevel,
            SUBSCRIPTIONS_LISTEN => Method::SubscriptionsListen,
            TASKS_GET => Method::TasksGet,
            TASKS_UPDATE => Method::TasksUpdate,
            TASKS_CANCEL => Method::TasksCancel,
            NOTIFICATION_INITIALIZED => Method::NotificationInitialized,
            NOTIFICATION_CANCELLED => Method::NotificationCancelled,
            NOTIFICATION_PROGRESS => Method::NotificationProgress,
            NOTIFICATION_ROOTS_LIST_CHANGED => Method::NotificationRootsListChanged,
            "shutdown" => Method::Shutdown,
            "exit" => Method::Exit,
            _ => return None,
        })
    }

    /// The method's name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            Method::Other(name) => name,
            known => known.known_name().unwrap_or_default(),
        }
    }

    /// The name of a method this crate knows, as a `&'static str` (an exhaustive `match`: a new variant
    /// does not compile without its name); `None` for [`Method::Other`], whose name is the caller's
    /// text, so that a span or a log line records only a name from this table.
    pub fn known_name(&self) -> Option<&'static str> {
        Some(match self {
            Method::Discover => DISCOVER,
            Method::Initialize => INITIALIZE,
            Method::Ping => PING,
            Method::ToolsList => TOOLS_LIST,
            Method::ToolsCall => TOOLS_CALL,
            Method::ResourcesList => RESOURCES_LIST,
            Method::ResourcesTemplatesList => RESOURCES_TEMPLATES_LIST,
            Method::ResourcesRead => RESOURCES_READ,
            Method::ResourcesSubscribe => RESOURCES_SUBSCRIBE,
            Method::ResourcesUnsubscribe => RESOURCES_UNSUBSCRIBE,
            Method::PromptsList => PROMPTS_LIST,
            Method::PromptsGet => PROMPTS_GET,
            Method::CompletionComplete => COMPLETION_COMPLETE,
            Method::LoggingSetLevel => LOGGING_SET_LEVEL,
            Method::SubscriptionsListen => SUBSCRIPTIONS_LISTEN,
            Method::TasksGet => TASKS_GET,
            Method::TasksUpdate => TASKS_UPDATE,
            Method::TasksCancel => TASKS_CANCEL,
            Method::NotificationInitialized => NOTIFICATION_INITIALIZED,
            Method::NotificationCancelled => NOTIFICATION_CANCELLED,
            Method::NotificationProgress => NOTIFICATION_PROGRESS,
            Method::NotificationRootsListChanged => NOTIFICATION_ROOTS_LIST_CHANGED,
            Method::Shutdown => "shutdown",
            Method::Exit => "exit",
            Method::Other(_) => return None,
        })
    }

    /// Whether the stateless revision (`2026-07-28`) has no such method while the legacy one (or the
    /// stdio lifecycle) does: `initialize`, `notifications/initialized`, `ping`, `shutdown`, `exit`.
    pub fn is_removed_in_stateless(&self) -> bool {
        matches!(
            self,
            Method::Initialize
                | Method::NotificationInitialized
                | Method::Ping
                | Method::Shutdown
                | Method::Exit
        )
    }

    /// Whether the host code serving it may report progress or log while it runs, so that a transport
    /// may answer it as a stream: `tools/call`, `resources/read`, `prompts/get`.
    pub fn may_stream(&self) -> bool {
        matches!(self, Method::ToolsCall | Method::ResourcesRead | Method::PromptsGet)
    }

    /// The `params` member the `Mcp-Name` header mirrors: `name` for `tools/call` and `prompts/get`,
    /// `uri` for `resources/read`, `taskId` for `tasks/get`, `tasks/update` and `tasks/cancel` (the
    /// tasks extension's routing header); `None` for every other method.
    pub fn name_param(&self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
            _ => None,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_name_parses_to_its_method_and_back() {
        for (name, method) in &KNOWN {
            assert_eq!(&Method::parse(name), method);
            assert_eq!(method.as_str(), *name);
        }
        // Every variant but `Other` has a name (the table and the match agree both ways).
        for (_, method) in &KNOWN {
            assert!(!method.as_str().is_empty(), "{method:?}");
            assert_eq!(Method::known(method.as_str()).as_ref(), Some(method));
        }
        assert_eq!(Method::parse("tools/Call"), Method::Other("tools/Call".into()));
        assert_eq!(Method::parse("x/y").as_str(), "x/y");
        assert_eq!(Method::known("x/y"), None);
        assert_eq!(Method::ToolsCall.known_name(), Some("tools/call"));
        assert_eq!(Method::parse("x/y").known_name(), None, "a caller's name is never a known one");
    }

    #[test]
    fn the_transport_questions_are_answered_by_the_method() {
        let removed: Vec<_> =
            KNOWN.iter().filter(|(_, m)| m.is_removed_in_stateless()).map(|(n, _)| *n).collect();
        assert_eq!(removed, ["initialize", "ping", "notifications/initialized", "shutdown", "exit"]);
        let streams: Vec<_> = KNOWN.iter().filter(|(_, m)| m.may_stream()).map(|(n, _)| *n).collect();
        assert_eq!(streams, ["tools/call", "resources/read", "prompts/get"]);
        assert_eq!(Method::ToolsCall.name_param(), Some("name"));
        assert_eq!(Method::ResourcesRead.name_param(), Some("uri"));
        assert_eq!(Method::ToolsList.name_param(), None);
        assert_eq!(Method::TasksGet.name_param(), Some("taskId"));
        assert_eq!(Method::TasksUpdate.name_param(), Some("taskId"));
        assert_eq!(Method::TasksCancel.name_param(), Some("taskId"));
    }
}
