//! The small catalog both transport targets serve: tools (one with `x-mcp-header` parameters),
//! resources, a template and prompts, with host functions that answer at once and never panic.

use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::wire::types::{
    ContentBlock, PromptMessage, ResourceContents, Role, TextResourceContents,
};
use mcp_kernel_router::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

/// The fixture catalog.
fn catalog() -> Listing {
    Listing {
        tools: vec![
            ToolSpec::new("echo", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"message": {"type": "string", "maxLength": 64}},
                "required": ["message"]
            })),
            ToolSpec::new("search", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "limit": {"type": "integer", "x-mcp-header": "Limit"},
                    "exact": {"type": "boolean", "x-mcp-header": "Exact"},
                    "filter": {
                        "type": "object",
                        "properties": {"owner": {"type": "string", "x-mcp-header": "Owner"}}
                    },
                    "note": {"type": "string", "pattern": "^[a-z ]*$"}
                }
            })),
            ToolSpec::new("fails", Mode::Proposal),
        ],
        resources: vec![
            ResourceSpec::new("test://a", "a").mime_type("text/plain").into(),
            ResourceSpec::new("test://b", "b").into(),
            ResourceTemplateSpec::new("test://place/{name}", "place").into(),
        ],
        prompts: vec![
            PromptSpec::new("forecast").argument(PromptArgument::new("place").required(true)),
            PromptSpec::new("alpha"),
        ],
    }
}

/// The fixture's tools: `echo` and `search` return their arguments, `fails` is a tool error.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "echo" | "search" => ToolOutput::json(&call.arguments.to_value()),
        _ => Err(ToolError::new("the fixture tool failed")),
    }
}

/// The fixture's resource reader: one text content per uri.
async fn read_resource(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    Ok(vec![TextResourceContents::new(request.uri.as_str(), "contents").into()])
}

/// The fixture's prompt renderer.
async fn get_prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let place = request.arguments.get_str("place").unwrap_or("nowhere").len();
    Ok(PromptOutput {
        description: None,
        messages: vec![PromptMessage::new(Role::User, ContentBlock::text(format!("Forecast ({place})")))],
    })
}

/// The fixture server (page size 1, so that every list has cursors).
pub(crate) fn server() -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .page_size(std::num::NonZeroUsize::MIN)
        .build()
        .expect("the fixture catalog builds")
}
