//! The weather catalog: one tool, one resource, one template, one prompt, and the functions behind
//! them. Shared by the example's `main.rs` and by the rmcp interoperability tests (`tests-rmcp`), so
//! that both speak to the very same host.

use mcp_kernel::wire::types::{ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_kernel::{
    BuildError, Capabilities, GetPrompt, Mode, PromptArgument, PromptOutput, PromptSpec, ReadResource,
    ReaderError, ResourceSpec, ResourceTemplateSpec, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::json;

/// What the host offers.
fn catalog() -> Capabilities {
    Capabilities {
        tools: vec![
            ToolSpec::new("get_weather", Mode::ReadOnly)
                .command_class("observe")
                .description("Read the current weather for a place.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"place": {"type": "string"}},
                    "required": ["place"],
                    "additionalProperties": false
                })),
        ],
        resources: vec![
            ResourceSpec::new("weather://places", "places").mime_type("text/plain").into(),
            ResourceTemplateSpec::new("weather://place/{name}", "place").into(),
        ],
        prompts: vec![
            PromptSpec::new("forecast")
                .description("Ask for a forecast.")
                .argument(PromptArgument::new("place").required(true)),
        ],
    }
}

/// The tool: a fixed reading, so the example needs no network.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    #[derive(serde::Deserialize)]
    struct Args {
        place: String,
    }
    let args: Args = call.arguments.deserialize().map_err(|_| ToolError::new("place must be a string"))?;
    match args.place.as_str() {
        "Oslo" | "Lima" => ToolOutput::json(&json!({"place": args.place, "temperature_c": 12})),
        _ => Err(ToolError::new("unknown place")),
    }
}

/// The one resource reader: the list of places, and one place by name.
async fn read_resource(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    if request.uri == "weather://places" {
        return Ok(vec![ResourceContents::text(&request.uri, "Oslo\nLima")]);
    }
    match request.uri.strip_prefix("weather://place/") {
        Some("Oslo" | "Lima") => Ok(vec![ResourceContents::text(&request.uri, "12°C")]),
        _ => Err(ReaderError::new("no such place")),
    }
}

/// The prompt renderer.
async fn get_prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let place = request.arguments.get_str("place").unwrap_or_default();
    Ok(PromptOutput {
        description: None,
        messages: vec![PromptMessage {
            role: Role::User,
            content: ContentBlock::text(format!("What is the forecast for {place}?")),
        }],
    })
}

/// The weather host, built.
pub fn weather_server() -> Result<Server, BuildError> {
    Server::builder(catalog())
        .server_name("weather")
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .build()
}
