//! The catalog the conformance suite expects (`conformance-suite.md` section 6): every tool, resource,
//! template and prompt the library can serve today, with the exact names, schemas and payloads.

use mcp_kernel::wire::types::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, PromptMessage, ResourceContents, Role,
    TextResourceContents,
};
use mcp_kernel::{
    Capabilities, GetPrompt, Mode, PromptArgument, PromptOutput, PromptSpec, ReadResource, ReaderError,
    ResourceSpec, ResourceTemplateSpec, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

/// A 1x1 red PNG.
pub const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV file.
pub const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

/// The schema the pending `json-schema-2020-12` scenario expects to find verbatim.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn tool(name: &str, description: &str) -> ToolSpec {
    ToolSpec::new(name, Mode::ReadOnly).description(description).input_schema(no_arguments())
}

/// What the harness offers. `test_simple_text` is listed first (the suite calls `tools[0]`).
pub fn capabilities() -> Capabilities {
    Capabilities {
        tools: vec![
            tool("test_simple_text", "Returns a simple text response."),
            tool("test_image_content", "Returns an image."),
            tool("test_audio_content", "Returns an audio clip."),
            tool("test_embedded_resource", "Returns an embedded resource."),
            tool("test_multiple_content_types", "Returns text, an image and a resource."),
            tool("test_error_handling", "Always fails, as a tool error."),
            tool("test_missing_capability", "Needs the client's sampling capability.")
                .requires_client_capabilities(json!({"sampling": {}})),
            tool("test_streaming_elicitation", "Returns an ordinary result; never a server request."),
            tool("test_logging_tool", "Returns text; logs nothing without a log level."),
            ToolSpec::new("json_schema_2020_12_tool", Mode::ReadOnly)
                .description("Advertises a draft 2020-12 schema verbatim.")
                .input_schema(json_schema_2020_12()),
            ToolSpec::new("test_custom_header", Mode::ReadOnly)
                .description("Mirrors its value argument in the Mcp-Param-Value header.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"value": {"type": "string", "x-mcp-header": "Value"}},
                    "required": ["value"]
                })),
        ],
        resources: vec![
            ResourceSpec::new("test://static-text", "static-text")
                .description("A static text resource.")
                .mime_type("text/plain")
                .into(),
            ResourceSpec::new("test://static-binary", "static-binary")
                .description("A static binary resource (a PNG).")
                .mime_type("image/png")
                .into(),
            ResourceSpec::new("test://watched-resource", "watched-resource")
                .description("A resource clients may watch.")
                .mime_type("text/plain")
                .into(),
            ResourceTemplateSpec::new("test://template/{id}/data", "template")
                .description("Data for one id.")
                .mime_type("application/json")
                .into(),
        ],
        prompts: vec![
            PromptSpec::new("test_simple_prompt").description("A prompt with no arguments."),
            PromptSpec::new("test_prompt_with_arguments")
                .description("A prompt with two required arguments.")
                .argument(PromptArgument::new("arg1").required(true).description("The first argument."))
                .argument(PromptArgument::new("arg2").required(true).description("The second argument.")),
            PromptSpec::new("test_prompt_with_embedded_resource")
                .description("A prompt embedding a resource.")
                .argument(
                    PromptArgument::new("resourceUri").required(true).description("The resource to embed."),
                ),
            PromptSpec::new("test_prompt_with_image").description("A prompt with an image."),
        ],
    }
}

fn text(text: &str) -> ContentBlock {
    ContentBlock::text(text)
}

fn embedded(uri: &str, mime_type: &str, body: &str) -> ContentBlock {
    let mut contents = TextResourceContents::new(uri, body);
    contents.mime_type = Some(mime_type.to_owned());
    ContentBlock::Resource(EmbeddedResource::new(contents))
}

/// The tools.
pub async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let content = match &*call.name {
        "test_simple_text" => vec![text("This is a simple text response for testing.")],
        "test_image_content" => vec![ContentBlock::Image(ImageContent::new(PNG, "image/png"))],
        "test_audio_content" => vec![ContentBlock::Audio(AudioContent::new(WAV, "audio/wav"))],
        "test_embedded_resource" => {
            vec![embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")]
        }
        "test_multiple_content_types" => vec![
            text("Multiple content types test:"),
            ContentBlock::Image(ImageContent::new(PNG, "image/png")),
            embedded("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
        ],
        "test_error_handling" => {
            return Err(ToolError::new("This tool intentionally returns an error for testing"));
        }
        "test_missing_capability" => vec![text("The client declared the sampling capability.")],
        "test_streaming_elicitation" => vec![text("An ordinary result: this server sends no requests.")],
        "test_logging_tool" => vec![text("Done; nothing was logged without a log level.")],
        "json_schema_2020_12_tool" => vec![text("Accepted.")],
        "test_custom_header" => {
            vec![text(&format!("Value: {}", call.arguments.get_str("value").unwrap_or_default()))]
        }
        _ => return Err(ToolError::new("not a conformance tool")),
    };
    Ok(ToolOutput::content(content))
}

/// The resources and the template.
pub async fn read_resource(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let uri = request.uri;
    let contents = match uri.as_str() {
        "test://static-text" => {
            ResourceContents::text(&uri, "This is the content of the static text resource.")
                .with_mime_type("text/plain")
        }
        "test://static-binary" => {
            let mut blob = mcp_kernel::wire::types::BlobResourceContents::new(&uri, PNG);
            blob.mime_type = Some("image/png".to_owned());
            ResourceContents::Blob(blob)
        }
        "test://watched-resource" => {
            ResourceContents::text(&uri, "Watched resource content.").with_mime_type("text/plain")
        }
        other => {
            let id = other
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
                .ok_or_else(|| ReaderError::new("no such resource"))?;
            let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            ResourceContents::text(&uri, body.to_string()).with_mime_type("application/json")
        }
    };
    Ok(vec![contents])
}

/// The prompts.
pub async fn get_prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let arg = |name: &str| request.arguments.get_str(name).unwrap_or_default().to_owned();
    let user = |content: ContentBlock| PromptMessage::new(Role::User, content);
    let messages = match &*request.name {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments" => vec![user(text(&format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1"),
            arg("arg2")
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(embedded(&arg("resourceUri"), "text/plain", "Embedded resource content for testing.")),
            user(text("Please process the embedded resource above.")),
        ],
        "test_prompt_with_image" => vec![
            user(ContentBlock::Image(ImageContent::new(PNG, "image/png"))),
            user(text("Please analyze the image above.")),
        ],
        _ => return Err(ReaderError::new("not a conformance prompt")),
    };
    Ok(PromptOutput { description: None, messages })
}
