//! What the server advertises about itself, as typed wire structs: its capabilities (from the host's
//! opt-ins) and its identity (`serverInfo`).

use mcp_kernel_wire::types::{
    Implementation, JsonObject, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};

use crate::options::ServerOptions;

/// The `capabilities` of `server/discover` and `initialize`: tools, resources and prompts (none of
/// their lists ever changes, and no resource can be subscribed to), then `completions` with a completer
/// and `logging` with the log opt-in.
pub(crate) fn capabilities(completions: bool, logging: bool) -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability { list_changed: Some(false) }),
        resources: Some(ResourcesCapability { list_changed: Some(false), subscribe: Some(false) }),
        prompts: Some(PromptsCapability { list_changed: Some(false) }),
        completions: completions.then(JsonObject::new),
        logging: logging.then(JsonObject::new),
        ..ServerCapabilities::default()
    }
}

/// The server's name and version (`serverInfo`).
pub(crate) fn identity(options: &ServerOptions) -> Implementation {
    Implementation::new(options.server_name.clone(), options.server_version.clone())
}
