//! The host's side of the contract: dispatch, the two readers, and what they return.
//!
//! Each is an async function (it returns a future). The package awaits it at one site, catches a panic
//! there and answers -32603 without telling the caller anything more.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use mcp_kernel_wire::ProtocolVersion;
use mcp_kernel_wire::types::{ContentBlock, PromptMessage, ResourceContents};

use crate::arguments::Arguments;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How a request declared its revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// No `_meta` at all: served with legacy-shaped results (stdio only).
    Bare,
    /// `params._meta` named a revision.
    Declared(ProtocolVersion),
}

impl Era {
    /// True when the request declared `2026-07-28`.
    pub fn is_modern(self) -> bool {
        matches!(self, Era::Declared(v) if v.is_modern())
    }
}

/// What the package knows about the request being served, handed to the host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestContext {
    /// The request's era.
    pub era: Era,
    /// The client capabilities the request declared (`_meta` `clientCapabilities`); `None` when bare.
    pub client_capabilities: Option<Arc<Value>>,
}

impl RequestContext {
    /// A context for a request with the given era and declared client capabilities.
    pub fn new(era: Era, client_capabilities: Option<Arc<Value>>) -> Self {
        Self { era, client_capabilities }
    }
}

/// One validated `tools/call`, as dispatch receives it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolCall {
    /// The tool's name, as the catalog lists it.
    pub name: Arc<str>,
    /// The declared arguments the caller sent.
    pub arguments: Arguments,
    /// The request's context.
    pub context: RequestContext,
}

/// What a successful tool returns.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// A JSON value, sent as `structuredContent` and as one text block holding its JSON.
    Json(Value),
    /// Explicit content blocks, with optional structured content.
    Content {
        /// The blocks, in order.
        blocks: Vec<ContentBlock>,
        /// Structured content sent beside the blocks.
        structured: Option<Value>,
    },
}

impl ToolOutput {
    /// Any serializable value; one that cannot be serialized (a map with non-string keys) is a
    /// [`ToolError`] saying so.
    pub fn json<T: Serialize>(value: &T) -> Result<Self, ToolError> {
        serde_json::to_value(value)
            .map(ToolOutput::Json)
            .map_err(|_| ToolError::new("the tool's result could not be serialized"))
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput::Content { blocks: vec![ContentBlock::text(text)], structured: None }
    }

    /// Explicit content blocks.
    pub fn content(blocks: Vec<ContentBlock>) -> Self {
        ToolOutput::Content { blocks, structured: None }
    }

    /// Adds structured content to explicit blocks (a `Json` output keeps its own).
    pub fn with_structured(self, structured: Value) -> Self {
        match self {
            ToolOutput::Content { blocks, .. } => {
                ToolOutput::Content { blocks, structured: Some(structured) }
            }
            json => json,
        }
    }
}

/// A tool's failure: sent as a result with `isError: true`, never as a JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    reason: Value,
}

impl ToolError {
    /// A failure with a message, shown to the model as the result's text.
    pub fn new(message: impl Into<String>) -> Self {
        Self { reason: Value::String(message.into()) }
    }

    /// A failure with a structured reason (sent under `structuredContent.error`).
    pub fn structured(reason: Value) -> Self {
        Self { reason }
    }

    /// The reason.
    pub fn reason(&self) -> &Value {
        &self.reason
    }
}

/// A reader's refusal: carried to the client as data beside the not-found or prompt error.
#[derive(Debug, Clone, PartialEq)]
pub struct ReaderError {
    reason: Value,
}

impl ReaderError {
    /// A refusal with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self { reason: Value::String(message.into()) }
    }

    /// A refusal with a structured reason.
    pub fn structured(reason: Value) -> Self {
        Self { reason }
    }

    /// The reason.
    pub fn reason(&self) -> &Value {
        &self.reason
    }
}

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PromptOutput {
    /// An optional description of the rendered prompt.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// One `resources/read` the package has accepted (the uri is listed or matches a listed template).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadResource {
    /// The uri to read.
    pub uri: String,
    /// The request's context.
    pub context: RequestContext,
}

/// One `prompts/get` the package has accepted and validated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GetPrompt {
    /// The prompt's name, as the catalog lists it.
    pub name: Arc<str>,
    /// The declared arguments the caller sent (string values).
    pub arguments: Arguments,
    /// The request's context.
    pub context: RequestContext,
}

/// The host's tool dispatch.
pub trait Dispatch: Send + Sync + 'static {
    /// Runs one validated call.
    fn call(&self, call: ToolCall) -> BoxFuture<'static, Result<ToolOutput, ToolError>>;
}

impl<F, Fut> Dispatch for F
where
    F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    fn call(&self, call: ToolCall) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        Box::pin(self(call))
    }
}

/// The host's resource reader.
pub trait ResourceReader: Send + Sync + 'static {
    /// Reads one accepted uri.
    fn read(&self, request: ReadResource) -> BoxFuture<'static, Result<Vec<ResourceContents>, ReaderError>>;
}

impl<F, Fut> ResourceReader for F
where
    F: Fn(ReadResource) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, ReaderError>> + Send + 'static,
{
    fn read(&self, request: ReadResource) -> BoxFuture<'static, Result<Vec<ResourceContents>, ReaderError>> {
        Box::pin(self(request))
    }
}

/// The host's prompt renderer.
pub trait PromptReader: Send + Sync + 'static {
    /// Renders one accepted prompt.
    fn get(&self, request: GetPrompt) -> BoxFuture<'static, Result<PromptOutput, ReaderError>>;
}

impl<F, Fut> PromptReader for F
where
    F: Fn(GetPrompt) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptOutput, ReaderError>> + Send + 'static,
{
    fn get(&self, request: GetPrompt) -> BoxFuture<'static, Result<PromptOutput, ReaderError>> {
        Box::pin(self(request))
    }
}
