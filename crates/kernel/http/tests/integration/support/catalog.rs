//! The fixture catalog (tools, resources, prompts) with its dispatch and readers, and the fixture
//! server built from it.

use std::num::NonZeroUsize;
use std::time::Duration;

use serde_json::{Value, json};

use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::wire::types::{
    BlobResourceContents, ContentBlock, PromptMessage, ResourceContents, Role, TextResourceContents,
};
use mcp_kernel_router::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

/// The schema of `search`: three annotated top-level properties, one nested, one unannotated.
pub fn search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "exact": {"type": "boolean", "x-mcp-header": "Exact"},
            "filter": {
                "type": "object",
                "properties": {"owner": {"type": "string", "x-mcp-header": "Owner"}}
            },
            "note": {"type": "string"}
        }
    })
}

/// The fixture catalog.
pub fn catalog() -> Listing {
    Listing {
        tools: vec![
            ToolSpec::new("get_weather", Mode::ReadOnly).description("Read the weather.").input_schema(
                json!({
                    "type": "object",
                    "properties": {"place": {"type": "string"}},
                    "required": ["place"],
                    "additionalProperties": false
                }),
            ),
            ToolSpec::new("echo", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"]
            })),
            ToolSpec::new("slow", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 5000}},
                "required": ["ms"]
            })),
            ToolSpec::new("panics", Mode::ReadOnly),
            ToolSpec::new("search", Mode::ReadOnly).input_schema(search_schema()),
            ToolSpec::new("elicit", Mode::Proposal).requires_client_capabilities(json!({"elicitation": {}})),
            // `number` may not be mirrored (MCP S-21): kept by `defer_header_annotation_faults`.
            ToolSpec::new("bad_header", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"n": {"type": "number", "x-mcp-header": "N"}}
            })),
        ],
        resources: vec![
            ResourceSpec::new("test://b", "b").mime_type("text/plain").into(),
            ResourceSpec::new("test://a", "a").into(),
            ResourceSpec::new("test://bytes", "bytes").mime_type("application/octet-stream").into(),
            ResourceSpec::new("test://panics", "panics").into(),
            ResourceTemplateSpec::new("test://place/{name}", "place").into(),
            ResourceTemplateSpec::new("test://files/{+path}", "files").into(),
        ],
        prompts: vec![
            PromptSpec::new("forecast")
                .description("Ask for a forecast.")
                .argument(PromptArgument::new("place").required(true)),
            PromptSpec::new("alpha"),
            PromptSpec::new("panics"),
        ],
    }
}

/// The fixture's dispatch.
pub async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "get_weather" => ToolOutput::json(&json!({"place": call.arguments.get("place"), "sky": "clear"})),
        "echo" => ToolOutput::json(&json!({"message": call.arguments.get("message")})),
        "slow" => {
            let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(0).min(5000);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ToolOutput::json(&json!({"slept": ms}))
        }
        "panics" => panic!("host bug: secret-panic-detail"),
        "search" | "bad_header" => ToolOutput::json(&call.arguments.to_value()),
        "elicit" => ToolOutput::json(&json!({"elicited": true})),
        _ => Err(ToolError::new("not in the fixture")),
    }
}

/// The fixture's resource reader.
pub async fn read_resource(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    match request.uri.as_str() {
        "test://bytes" => Ok(vec![BlobResourceContents::new("test://bytes", "AAEC/w==").into()]),
        "test://panics" => panic!("reader bug: secret-reader-detail"),
        uri => Ok(vec![TextResourceContents::new(uri, format!("contents of {uri}")).into()]),
    }
}

/// The fixture's prompt renderer.
pub async fn get_prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    if &*request.name == "panics" {
        panic!("prompt bug: secret-prompt-detail");
    }
    let place = request.arguments.get_str("place").unwrap_or("nowhere").to_owned();
    Ok(PromptOutput {
        description: Some("rendered".into()),
        messages: vec![PromptMessage::new(Role::User, ContentBlock::text(format!("Forecast for {place}")))],
    })
}

/// The fixture server (header-annotation faults deferred, so `bad_header` is listed).
pub fn server() -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .page_size(NonZeroUsize::new(50).expect("non-zero"))
        .defer_header_annotation_faults(true)
        .build()
        .expect("the fixture catalog builds")
}
