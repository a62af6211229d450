//! A small catalog served whole — ten tools, ten resources, a template, ten prompts, a prompt reader,
//! a resource reader, a completer and the log opt-in — and the requests the `core/*` list, read, get,
//! complete, discover and initialize benches send it.
#![allow(dead_code, reason = "only core.rs times these paths; host_api.rs times tools/call alone")]

use mcp_kernel_router::completion::{Completion, CompletionRequest};
use mcp_kernel_router::notify::LogLevel;
use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::wire::types::{ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_kernel_router::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

/// How many tools, resources and prompts the catalog lists.
pub const ITEMS: usize = 10;

/// `server/discover`, probed without `_meta`.
pub const DISCOVER: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;

/// A 2025-11-25 `initialize`.
pub const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

/// A bare `ping`.
pub const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A bare `logging/setLevel`.
pub const SET_LEVEL: &[u8] =
    br#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}"#;

/// A `2026-07-28` `tools/list`.
pub const TOOLS_LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// A `2026-07-28` `resources/list`.
pub const RESOURCES_LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// A `2026-07-28` `prompts/list`.
pub const PROMPTS_LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// A `2026-07-28` `resources/read` of a listed resource.
pub const RESOURCES_READ: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"uri":"bench://doc/3"}}"#;

/// A `2026-07-28` `prompts/get` with its one argument.
pub const PROMPTS_GET: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"prompt_3","arguments":{"topic":"rust"}}}"#;

/// A `2026-07-28` `completion/complete` of that argument.
pub const COMPLETE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"ref":{"type":"ref/prompt","name":"prompt_3"},"argument":{"name":"topic","value":"ru"}}}"#;

const TOPICS: [&str; 6] = ["ruby", "rust", "rune", "rusty", "rugby", "rural"];

fn listing() -> Listing {
    let mut listing = Listing::new();
    for i in 0..ITEMS {
        listing.tools.push(
            ToolSpec::new(format!("tool_{i}"), Mode::ReadOnly)
                .description(format!("Tool number {i}."))
                .input_schema(json!({
                    "type": "object",
                    "properties": {"message": {"type": "string"}, "count": {"type": "integer"}},
                    "required": ["message"],
                    "additionalProperties": false
                })),
        );
        listing.resources.push(
            ResourceSpec::new(format!("bench://doc/{i}"), format!("doc {i}")).mime_type("text/plain").into(),
        );
        listing.prompts.push(
            PromptSpec::new(format!("prompt_{i}"))
                .description(format!("Prompt number {i}."))
                .argument(PromptArgument::new("topic").required(true).description("What about")),
        );
    }
    listing.resources.push(ResourceTemplateSpec::new("bench://page/{n}", "page").into());
    listing
}

/// The catalog with every host function given: each answers at once.
pub fn catalog_server() -> Server {
    Server::builder(listing())
        .dispatch(|_: ToolCall| std::future::ready(Ok::<_, ToolError>(ToolOutput::text("ok"))))
        .resource_reader(|read: ReadResource| {
            std::future::ready(Ok::<_, ReaderError>(vec![ResourceContents::text(read.uri, "body text")]))
        })
        .prompt_reader(|get: GetPrompt| {
            let topic = get.arguments.get_str("topic").unwrap_or_default().to_owned();
            std::future::ready(Ok::<_, ReaderError>(PromptOutput {
                description: Some("A rendered prompt.".to_owned()),
                messages: vec![PromptMessage::new(
                    Role::User,
                    ContentBlock::text(format!("Tell me about {topic}.")),
                )],
            }))
        })
        .completer(|request: CompletionRequest| {
            let prefix = request.argument.value;
            let values = TOPICS.iter().filter(|t| t.starts_with(&prefix)).map(|t| (*t).to_owned()).collect();
            std::future::ready(Ok::<_, ReaderError>(Completion::new(values)))
        })
        .log_notifications(LogLevel::Info)
        .build()
        .expect("bench catalog")
}
