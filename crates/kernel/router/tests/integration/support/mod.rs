//! A fixture host and helpers shared by the router's integration tests.
#![allow(dead_code)]

pub mod channel;
pub mod official;
pub mod spans;

use std::num::NonZeroUsize;

use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::wire::types::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, PromptMessage, ResourceContents,
    ResourceLink, Role, TextResourceContents,
};
use mcp_kernel_router::{Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

pub const MODERN: &str = "2026-07-28";
pub const LEGACY: &str = "2025-11-25";

pub fn weather_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"place": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
        "required": ["place"],
        "additionalProperties": false
    })
}

pub fn catalog() -> Listing {
    Listing {
        tools: vec![
            ToolSpec::new("get_weather", Mode::ReadOnly)
                .command_class("observe")
                .description("Read the weather.")
                .input_schema(weather_schema()),
            ToolSpec::new("open", Mode::Proposal).input_schema(json!({
                "type": "object",
                "properties": {"known": {}},
                "additionalProperties": true
            })),
            ToolSpec::new("no_schema", Mode::ReadOnly),
            ToolSpec::new("fail", Mode::ReadOnly),
            ToolSpec::new("fail_map", Mode::ReadOnly),
            ToolSpec::new("panics", Mode::ReadOnly),
            ToolSpec::new("string_out", Mode::ReadOnly),
            ToolSpec::new("content", Mode::ReadOnly),
            ToolSpec::new("needs_elicitation", Mode::Proposal)
                .requires_client_capabilities(json!({"elicitation": {}})),
        ],
        resources: vec![
            ResourceSpec::new("test://c", "c").mime_type("text/plain").into(),
            ResourceSpec::new("test://a", "a").into(),
            ResourceSpec::new("test://b", "b").size(4).into(),
            ResourceSpec::new("test://refused", "refused").into(),
            ResourceSpec::new("test://panics", "panics").into(),
            ResourceTemplateSpec::new("test://place/{name}", "place").into(),
            ResourceTemplateSpec::new("test://files/{+path}", "files").into(),
        ],
        prompts: vec![
            PromptSpec::new("forecast")
                .description("Ask for a forecast.")
                .argument(PromptArgument::new("place").required(true).description("Where")),
            PromptSpec::new("broken"),
            PromptSpec::new("alpha").argument(PromptArgument::new("x")),
            PromptSpec::new("panics"),
        ],
    }
}

pub async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "get_weather" => {
            ToolOutput::json(&json!({"place": call.arguments.get("place"), "declared": call.arguments.len()}))
        }
        "open" | "no_schema" => ToolOutput::json(&call.arguments.to_value()),
        "fail" => Err(ToolError::new("upstream unavailable")),
        "fail_map" => Err(ToolError::structured(json!({"kind": "quota", "left": 0}))),
        "panics" => panic!("host bug"),
        "string_out" => ToolOutput::json(&"plain"),
        "content" => Ok(ToolOutput::content(vec![
            ContentBlock::text("hello"),
            ContentBlock::Image(ImageContent::new("AAEC/w==", "image/png")),
            ContentBlock::Audio(AudioContent::new("AAEC/w==", "audio/wav")),
            ContentBlock::ResourceLink(ResourceLink::new("test://a", "a")),
            ContentBlock::Resource(EmbeddedResource::new(TextResourceContents::new("test://b", "bee"))),
        ])
        .with_structured(json!({"n": 5}))),
        "needs_elicitation" => ToolOutput::json(&json!({"ok": true})),
        _ => Err(ToolError::new("not in fixture")),
    }
}

pub async fn read_resource(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    match request.uri.as_str() {
        "test://refused" => Err(ReaderError::new("gone")),
        "test://panics" => panic!("reader bug"),
        uri => Ok(vec![TextResourceContents::new(uri, "body").into()]),
    }
}

pub async fn get_prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    match &*request.name {
        "broken" => Err(ReaderError::new("template missing")),
        "panics" => panic!("prompt bug"),
        _ => Ok(PromptOutput {
            description: Some("rendered".into()),
            messages: vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(format!(
                    "Forecast for {}",
                    request.arguments.get_str("place").unwrap_or("?")
                )),
            )],
        }),
    }
}

pub fn server() -> Server {
    server_with_page(50)
}

pub fn server_with_page(page: usize) -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .page_size(NonZeroUsize::new(page).unwrap())
        .build()
        .expect("the fixture catalog builds")
}

/// `params._meta` for a modern request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A modern request.
pub fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A legacy-declared request.
pub fn legacy(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": LEGACY});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A bare request (no `_meta`).
pub fn bare(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Sends one message and returns the response as JSON (`Value::Null` when there is none).
pub async fn send(server: &Server, message: Value) -> Value {
    server.handle(message).await.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

/// The error code of a response.
pub fn code(response: &Value) -> i64 {
    response["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {response}"))
}

/// Sends one message as the caller `principal` (a `String` in the request's extensions; `None`:
/// no principal) and returns the response as JSON (`Value::Null` when there is none).
pub async fn send_as(server: &Server, principal: Option<&str>, message: Value) -> Value {
    let mut extensions = mcp_kernel_router::Extensions::new();
    if let Some(principal) = principal {
        extensions.insert(principal.to_owned());
    }
    let inbound = mcp_kernel_router::transport::Inbound::new().extensions(extensions);
    server.handle_inbound(message, inbound).await.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

/// The `key` member of every item of `result[field]`, in order.
pub fn names(response: &Value, field: &str, key: &str) -> Vec<String> {
    let items = response["result"][field].as_array().unwrap_or_else(|| panic!("no {field}: {response}"));
    items.iter().map(|item| item[key].as_str().unwrap_or_default().to_owned()).collect()
}

/// The text of a tool result's first content block.
pub fn first_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {response}"))
}

/// What was logged (formatted, no colours) on this thread while the guard of [`capture_logs`] was held.
#[derive(Clone, Default)]
pub struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

thread_local! {
    static CAPTURING: std::cell::RefCell<Option<Logs>> = const { std::cell::RefCell::new(None) };
}

/// Writes into the capturing buffer of the thread that logs, if it has one.
struct ThreadWriter;

impl std::io::Write for ThreadWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        CAPTURING.with(|capturing| {
            if let Some(logs) = &*capturing.borrow() {
                logs.0.lock().unwrap().extend_from_slice(bytes);
            }
        });
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Stops capturing this thread's logs when dropped.
pub struct CaptureGuard(());

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        CAPTURING.with(|capturing| capturing.borrow_mut().take());
    }
}

/// Captures the log events of this thread (where a `#[tokio::test]` runs its request) until the
/// guard is dropped. One global subscriber serves every test of the binary: a per-thread default
/// subscriber would race with tracing's global callsite-interest cache while other tests run.
pub fn capture_logs() -> (Logs, CaptureGuard) {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(|| ThreadWriter)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber");
    });
    let logs = Logs::default();
    CAPTURING.with(|capturing| *capturing.borrow_mut() = Some(logs.clone()));
    (logs, CaptureGuard(()))
}

/// Tasks run on the tokio runtime of the test (the tasks extension needs a `TaskRuntime`).
pub struct Tokio;

impl mcp_kernel_router::tasks::TaskRuntime for Tokio {
    fn spawn(&self, task: mcp_kernel_router::BoxFuture<'static, ()>) {
        tokio::spawn(task);
    }

    fn sleep(&self, duration: std::time::Duration) -> mcp_kernel_router::BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}
