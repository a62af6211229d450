//! What the server advertises about itself, as typed wire structs: its capabilities (from the host's
//! opt-ins) and its identity (`serverInfo`).

use mcp_kernel_wire::types::{
    Implementation, JsonObject, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};

use crate::options::ServerOptions;

/// The `capabilities` of `server/discover` and `initialize`: tools, resources and prompts (their
/// `listChanged` and `resources.subscribe` are `true` only where changes are announced: with the
/// notifications opt-in, and for `initialize` on a transport that keeps a session), then `completions`
/// with a completer and `logging` with the log opt-in.
pub(crate) fn capabilities(completions: bool, logging: bool, notifications: bool) -> ServerCapabilities {
    let changes = Some(notifications);
    ServerCapabilities {
        tools: Some(ToolsCapability { list_changed: changes }),
        resources: Some(ResourcesCapability { list_changed: changes, subscribe: changes }),
        prompts: Some(PromptsCapability { list_changed: changes }),
        completions: completions.then(JsonObject::new),
        logging: logging.then(JsonObject::new),
        ..ServerCapabilities::default()
    }
}

/// The server's name and version (`serverInfo`).
pub(crate) fn identity(options: &ServerOptions) -> Implementation {
    Implementation::new(options.server_name.clone(), options.server_version.clone())
}
