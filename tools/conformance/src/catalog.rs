//! The catalog the conformance suite expects (`conformance-suite.md` section 6): every tool, resource,
//! template and prompt the library can serve today, with the exact names, schemas and payloads, the
//! completer of `completion/complete`, the multi-round-trip (`test_input_required_result_*`) tools
//! and prompt with the request-state sealer they need, the tools that ask the client for sampling and
//! elicitation (`crate::asking`), the tasks extension's fixtures (`crate::tasks`),
//! and the two diagnostic triggers with the entries they toggle in and out (`crate::live`).

use mcp_kernel::notify::LogLevel;
use mcp_kernel::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel::router::completion::{Completion, CompletionRef, CompletionRequest};
use mcp_kernel::router::sealing::HmacSealer;
use mcp_kernel::router::{InputRequired, RetryInput};
use mcp_kernel::wire::types::{
    AudioContent, ContentBlock, CreateMessageRequestParams, EmbeddedResource, ImageContent, InputRequest,
    PromptMessage, ResourceContents, Role, SamplingContent, SamplingContentBlock, SamplingMessage,
    TextResourceContents,
};
use mcp_kernel::{Listing, Mode, ReaderError, ToolCall, ToolError, ToolOutput, ToolSpec};
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

/// The tool the suite calls to change the tools list (`server-stateless`, SEP-2575 checks).
pub const TOOL_TRIGGER: &str = "test_trigger_tool_change";
/// The tool the suite calls to change the prompts list.
pub const PROMPT_TRIGGER: &str = "test_trigger_prompt_change";
/// The tool [`TOOL_TRIGGER`] toggles in and out of the list.
pub const DYNAMIC_TOOL: &str = "test_dynamic_tool";
/// The prompt [`PROMPT_TRIGGER`] toggles in and out of the list.
pub const DYNAMIC_PROMPT: &str = "test_dynamic_prompt";

/// Which of the toggled entries are listed: all the catalog's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Toggles {
    /// [`DYNAMIC_TOOL`] is listed.
    pub dynamic_tool: bool,
    /// [`DYNAMIC_PROMPT`] is listed.
    pub dynamic_prompt: bool,
}

/// What the harness offers with `toggles`. `test_simple_text` is listed first (the suite calls
/// `tools[0]`); the toggled tool is listed last (the router sorts prompts by name).
pub fn capabilities(toggles: Toggles) -> Listing {
    let mut listing = fixed();
    if toggles.dynamic_tool {
        listing.tools.push(tool(DYNAMIC_TOOL, "Listed or not, as test_trigger_tool_change last left it."));
    }
    if toggles.dynamic_prompt {
        listing.prompts.push(
            PromptSpec::new(DYNAMIC_PROMPT)
                .description("Listed or not, as test_trigger_prompt_change last left it."),
        );
    }
    listing
}

/// The entries listed whatever the toggles.
fn fixed() -> Listing {
    let mut listing = Listing {
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
            tool("test_logging_tool", "Logs one info message only where a level is in force; returns text."),
            tool("test_tool_with_logging", "Logs three info messages, 50 ms apart, then returns text."),
            tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100, then returns text."),
            ToolSpec::new("json_schema_2020_12_tool", Mode::ReadOnly)
                .description("Advertises a draft 2020-12 schema verbatim.")
                .input_schema(json_schema_2020_12()),
            tool("test_input_required_result_elicitation", "Asks for the user's name, then greets them."),
            tool("test_input_required_result_sampling", "Asks the client's model a question."),
            tool("test_input_required_result_list_roots", "Asks for the client's roots."),
            tool("test_input_required_result_request_state", "Asks for a confirmation, with request state."),
            tool("test_input_required_result_multiple_inputs", "Asks for a name, a greeting and the roots."),
            tool("test_input_required_result_multi_round", "Asks for a name, then a colour, in two rounds."),
            tool("test_input_required_result_tampered_state", "Asks for a name, with sealed request state."),
            tool("test_input_required_result_capabilities", "Asks only for what the client declared."),
            ToolSpec::new("test_custom_header", Mode::ReadOnly)
                .description("Mirrors its value argument in the Mcp-Param-Value header.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"value": {"type": "string", "x-mcp-header": "Value"}},
                    "required": ["value"]
                })),
            ToolSpec::new(TOOL_TRIGGER, Mode::Proposal)
                .description("Toggles test_dynamic_tool in or out of the tools list.")
                .input_schema(no_arguments()),
            ToolSpec::new(PROMPT_TRIGGER, Mode::Proposal)
                .description("Toggles test_dynamic_prompt in or out of the prompts list.")
                .input_schema(no_arguments()),
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
            PromptSpec::new("test_input_required_result_prompt")
                .description("Asks the user for context before it renders."),
        ],
    };
    listing.tools.extend(crate::asking::tools());
    listing.tools.extend(crate::tasks::tools());
    listing
}

fn text(text: &str) -> ContentBlock {
    ContentBlock::text(text)
}

fn embedded(uri: &str, mime_type: &str, body: &str) -> ContentBlock {
    let mut contents = TextResourceContents::new(uri, body);
    contents.mime_type = Some(mime_type.to_owned());
    ContentBlock::Resource(EmbeddedResource::new(contents))
}

/// The tools but the triggers (`crate::live` answers those).
pub async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    if crate::tasks::is_fixture(&call.name) {
        return crate::tasks::dispatch(call).await;
    }
    if crate::asking::is_asking(&call.name) {
        return Ok(crate::asking::dispatch(&call));
    }
    if call.name.starts_with("test_input_required_result_") {
        return Ok(round_trip(&call.name, &call.context.retry_input().cloned().unwrap_or_default()));
    }
    if &*call.name == "test_tool_with_progress" {
        // Sent only when the request carried a progressToken (MCP S-52); otherwise free and silent.
        for step in [0.0, 50.0, 100.0] {
            call.context.progress().report(step, Some(100.0), None);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        return Ok(ToolOutput::content(vec![text("Progress reported: 0, 50, 100 of 100.")]));
    }
    if &*call.name == "test_tool_with_logging" {
        // Sent only where logs may go (MCP S-52): 2025-11-25 with the opt-in, or a request's logLevel.
        for message in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
            call.context.log(LogLevel::Info, None, Value::from(message));
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        return Ok(ToolOutput::content(vec![text("Logged: started, processing, completed.")]));
    }
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
        "test_logging_tool" => {
            call.context.log(LogLevel::Info, Some("test_logging_tool"), Value::from("Logged at info."));
            vec![text("Done; logged at info only where a log level is in force.")]
        }
        "json_schema_2020_12_tool" => vec![text("Accepted.")],
        DYNAMIC_TOOL => vec![text("The dynamic tool is listed and answers.")],
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
        DYNAMIC_PROMPT => vec![user(text("The dynamic prompt is listed and renders."))],
        "test_prompt_with_image" => vec![
            user(ContentBlock::Image(ImageContent::new(PNG, "image/png"))),
            user(text("Please analyze the image above.")),
        ],
        "test_input_required_result_prompt" => {
            let input = request.context.retry_input().cloned().unwrap_or_default();
            let Some(context) = field(&input, "user_context", "context") else {
                let schema = form("context", "string");
                let ask = InputRequired::new().elicit(
                    "user_context",
                    "What context should the prompt use?",
                    schema,
                );
                return Err(ReaderError::input_required(ask));
            };
            vec![user(text(&format!("Prompt with context: {context}")))]
        }
        _ => return Err(ReaderError::new("not a conformance prompt")),
    };
    Ok(PromptOutput { description: None, messages })
}

/// Completions: `test_prompt_with_arguments`'s arguments and the template's `id`, filtered by prefix.
pub async fn complete(request: CompletionRequest) -> Result<Completion, ReaderError> {
    let candidates: &[&str] = match (&request.reference, &*request.argument.name) {
        (CompletionRef::Prompt { name }, "arg1" | "arg2") if &**name == "test_prompt_with_arguments" => {
            &["test", "test-value", "testing", "example"]
        }
        (CompletionRef::ResourceTemplate { .. }, "id") => &["1", "123", "456"],
        _ => &[],
    };
    let prefix = request.argument.value.as_str();
    Ok(Completion::new(
        candidates.iter().filter(|c| c.starts_with(prefix)).map(|c| (*c).to_owned()).collect(),
    ))
}

/// A flat form asking for one property of one type.
fn form(property: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {property: {"type": kind}}, "required": [property]})
}

fn ask_name(key: &str, message: &str) -> InputRequired {
    InputRequired::new().elicit(key, message, form("name", "string"))
}

/// A `sampling/createMessage` of one user question.
fn sampling(question: &str, max_tokens: u64) -> InputRequest {
    let messages = vec![SamplingMessage::text(Role::User, question)];
    InputRequest::Sampling(CreateMessageRequestParams::new(messages, max_tokens))
}

/// A field of an accepted elicitation, as text.
fn field(input: &RetryInput, key: &str, name: &str) -> Option<String> {
    input.accepted(key)?.get(name).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

/// The text of a sampling answer.
fn sampled(input: &RetryInput, key: &str) -> Option<String> {
    match &input.sampling(key)?.content {
        SamplingContent::Single(SamplingContentBlock::Text(block)) => Some(block.text.clone()),
        _ => Some("(non-text content)".to_owned()),
    }
}

fn state(input: &RetryInput) -> Option<&str> {
    input.state.as_deref().and_then(|s| std::str::from_utf8(s).ok())
}

/// The `test_input_required_result_*` tools (`conformance-suite.md` §3b, §6): each asks until it has
/// what it needs — a missing answer is asked for again, never an error.
fn round_trip(name: &str, input: &RetryInput) -> ToolOutput {
    let done = |text: String| ToolOutput::text(text);
    let ask = ToolOutput::input_required;
    match name {
        "test_input_required_result_elicitation" => match field(input, "user_name", "name") {
            Some(name) => done(format!("Hello, {name}!")),
            None => ask(ask_name("user_name", "What is your name?")),
        },
        "test_input_required_result_sampling" => match sampled(input, "capital_question") {
            Some(answer) => done(format!("LLM response: {answer}")),
            None => ask(InputRequired::new()
                .request("capital_question", sampling("What is the capital of France?", 100))),
        },
        "test_input_required_result_list_roots" => match input.roots("client_roots") {
            Some(roots) => {
                let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
                done(format!("Client roots: {}", uris.join(", ")))
            }
            None => ask(InputRequired::new().list_roots("client_roots")),
        },
        "test_input_required_result_request_state" => match (state(input), field(input, "confirm", "ok")) {
            (Some("confirm-pending"), Some(ok)) => done(format!("state-ok: confirmed={ok}")),
            _ => ask(InputRequired::new()
                .elicit("confirm", "Please confirm", form("ok", "boolean"))
                .with_state("confirm-pending")),
        },
        "test_input_required_result_multiple_inputs" => {
            let name = field(input, "user_name", "name");
            let greeting = sampled(input, "greeting");
            match (state(input), name, greeting, input.roots("client_roots")) {
                (Some("all-pending"), Some(name), Some(greeting), Some(roots)) => {
                    done(format!("{greeting} {name}; {} root(s)", roots.roots.len()))
                }
                _ => ask(ask_name("user_name", "What is your name?")
                    .request("greeting", sampling("Generate a greeting", 50))
                    .list_roots("client_roots")
                    .with_state("all-pending")),
            }
        }
        "test_input_required_result_multi_round" => {
            match (state(input), field(input, "step1", "name"), field(input, "step2", "color")) {
                (Some("round-1"), Some(name), _) => ask(InputRequired::new()
                    .elicit("step2", "Step 2: What is your favorite color?", form("color", "string"))
                    .with_state(format!("round-2:{name}"))),
                (Some(state), _, Some(color)) if state.starts_with("round-2:") => {
                    done(format!("{} likes {color}", &state["round-2:".len()..]))
                }
                _ => ask(ask_name("step1", "Step 1: What is your name?").with_state("round-1")),
            }
        }
        "test_input_required_result_tampered_state" => {
            match (state(input), field(input, "user_name", "name")) {
                (Some("sealed"), Some(name)) => done(format!("Hello, {name}; the state verified.")),
                _ => ask(ask_name("user_name", "What is your name?").with_state("sealed")),
            }
        }
        "test_input_required_result_capabilities" => {
            if input.responses.is_empty() {
                // Everything the tool could use; the core leaves out what the client did not declare.
                ask(ask_name("user_name", "What is your name?")
                    .request("capital_question", sampling("What is the capital of France?", 100))
                    .list_roots("client_roots"))
            } else {
                done(format!("Answered: {}", input.responses.keys().cloned().collect::<Vec<_>>().join(", ")))
            }
        }
        _ => done("not a multi-round-trip tool".to_owned()),
    }
}

/// The request-state sealer, keyed with 32 random bytes from the operating system at start-up: a
/// retry must reach the same process (the suite's does), and a restart invalidates pending states.
pub fn request_state_sealer() -> Result<HmacSealer, Box<dyn std::error::Error>> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| format!("no operating-system randomness for the key: {e}"))?;
    Ok(HmacSealer::new(&key)?)
}
