//! The host's side of the contract: dispatch, the two readers, the optional completer, and what they
//! return.
//!
//! Each is an async function (it returns a future). The package awaits it at one site, catches a panic
//! there and answers -32603 without telling the caller anything more.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use mcp_kernel_wire::ProtocolVersion;
use mcp_kernel_wire::types::{ContentBlock, PromptMessage, ResourceContents};

use crate::catalog::template::TemplateMatch;
use crate::notify::log::{LogLevel, Logger};
use crate::notify::progress::Progress;
use crate::request::arguments::Arguments;
pub use crate::request::caller::NoCaller;
use crate::request::extensions::Extensions;
use crate::request::input::{InputRequired, RetryInput};
pub use crate::request::reader_error::ReaderError;

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
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestContext {
    /// The request's era.
    pub era: Era,
    /// The client capabilities the request declared (`_meta` `clientCapabilities`); `None` when bare.
    pub client_capabilities: Option<Arc<Value>>,
    /// What the transport attached: the caller's principal, above all (see [`Extensions`]).
    pub(crate) extensions: Extensions,
    /// A retry's verified input responses and state (only with a request-state sealer, `2026-07-28`).
    pub(crate) retry: Option<Arc<RetryInput>>,
    /// The request's progress reporter (inert unless it carried `_meta.progressToken`).
    pub(crate) progress: Progress,
    /// The request's logger (inert unless log notifications may reach this request).
    pub(crate) log: Logger,
    /// The task this call may become (a tool that may run as a task, for a client that takes tasks).
    pub(crate) task: Option<crate::tasks::TaskHandle>,
}

impl RequestContext {
    /// A context for a request with the given era and declared client capabilities.
    pub fn new(era: Era, client_capabilities: Option<Arc<Value>>) -> Self {
        Self {
            era,
            client_capabilities,
            extensions: Extensions::new(),
            retry: None,
            progress: Progress::default(),
            log: Logger::default(),
            task: None,
        }
    }

    /// The same context carrying `extensions` (for tests of host code; the transports set them).
    pub fn with_extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// What the transport attached to this request: `authorize`'s principal over HTTP, the value given
    /// to the stdio transport, anything a [`crate::transport::Inbound`] carried.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The caller's principal of type `P`, if the transport attached one (`extensions().get::<P>()`).
    pub fn principal<P: Send + Sync + 'static>(&self) -> Option<&P> {
        self.extensions.get::<P>()
    }

    /// The caller's principal of type `P`, or [`NoCaller`]: `let user = cx.caller::<User>()?;` works in
    /// a tool, a resource reader and a prompt renderer alike (see [`NoCaller`] for how each answers it).
    pub fn caller<P: Send + Sync + 'static>(&self) -> Result<&P, NoCaller> {
        self.extensions.get::<P>().ok_or(NoCaller)
    }

    /// A retry's verified input responses and state: present only on a retry of a request answered
    /// "input required" (needs a request-state sealer and `2026-07-28`).
    pub fn retry_input(&self) -> Option<&RetryInput> {
        self.retry.as_deref()
    }

    /// The task this call runs as, or may become: present only for a tool whose
    /// [`TaskMode`](crate::tasks::TaskMode) is not `Never`, called by a client that declared the tasks
    /// extension, on a server built with tasks. Set a status message, or await a cancellation.
    pub fn task(&self) -> Option<&crate::tasks::TaskHandle> {
        self.task.as_ref()
    }

    /// The request's progress reporter: inert (free, sends nothing) unless the request carried
    /// `_meta.progressToken` and the transport delivers notifications.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Sends `notifications/message {level, logger?, data}` on this request's stream — only when the
    /// host opted in ([`crate::ServerBuilder::log_notifications`]), the transport delivers
    /// notifications, the request is still running, and `level` is at or above the request's level
    /// (`2026-07-28`: its `_meta` `io.modelcontextprotocol/logLevel`, none set: nothing is sent;
    /// 2025-11-25: the host's minimum). Otherwise one check, and nothing is sent.
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        self.log.log(level, logger, data);
    }

    /// Whether [`RequestContext::log`] at `level` would send now (to skip building costly data).
    pub fn log_enabled(&self, level: LogLevel) -> bool {
        self.log.enabled(level)
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

impl ToolCall {
    /// A call built by hand, for testing a dispatch function without a server.
    pub fn new(name: impl Into<Arc<str>>, arguments: Arguments, context: RequestContext) -> Self {
        Self { name: name.into(), arguments, context }
    }
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
    /// Not yet: the client's input is needed first (sent as an `InputRequiredResult`; needs a
    /// request-state sealer and a `2026-07-28` request, otherwise it is answered -32603).
    InputRequired(InputRequired),
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

    /// Asks the client for input before the call can finish (see [`ToolOutput::InputRequired`]).
    pub fn input_required(required: InputRequired) -> Self {
        ToolOutput::InputRequired(required)
    }

    /// Adds structured content to explicit blocks (a `Json` output keeps its own).
    pub fn with_structured(self, structured: Value) -> Self {
        match self {
            ToolOutput::Content { blocks, .. } => {
                ToolOutput::Content { blocks, structured: Some(structured) }
            }
            other => other,
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
    /// The template the uri matched, with its variables.
    pub(crate) template: Option<TemplateMatch>,
    /// The request's context.
    pub context: RequestContext,
}

impl ReadResource {
    /// A read built by hand, for testing a reader without a server.
    pub fn new(uri: impl Into<String>, context: RequestContext) -> Self {
        Self { uri: uri.into(), template: None, context }
    }

    /// The listed template the uri matched, with its decoded variables (`None` for a listed resource).
    pub fn template(&self) -> Option<&TemplateMatch> {
        self.template.as_ref()
    }
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

impl GetPrompt {
    /// A request built by hand, for testing a prompt reader without a server.
    pub fn new(name: impl Into<Arc<str>>, arguments: Arguments, context: RequestContext) -> Self {
        Self { name: name.into(), arguments, context }
    }
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
        // Allocated first, so that the optimizer can build the host's future in its allocation
        // (`Box::pin` builds it on the stack and copies it in whole).
        let boxed: Box<Fut> = Box::write(Box::new_uninit(), self(call));
        Box::into_pin(boxed)
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
        // Allocated first, as a tool's future is (above).
        let boxed: Box<Fut> = Box::write(Box::new_uninit(), self(request));
        Box::into_pin(boxed)
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
        // Allocated first, as a tool's future is (above).
        let boxed: Box<Fut> = Box::write(Box::new_uninit(), self(request));
        Box::into_pin(boxed)
    }
}

/// What a `completion/complete` completes: an argument of a listed prompt or a variable of a listed
/// uri template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// `ref/prompt`: the prompt's name, as the catalog lists it.
    Prompt {
        /// The prompt's name.
        name: Arc<str>,
    },
    /// `ref/resource`: the uri template, as the catalog lists it.
    ResourceTemplate {
        /// The uri template.
        uri: String,
    },
}

/// The argument being completed: a declared prompt argument or a template variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionArgument {
    /// The argument's name, as the catalog declares it.
    pub name: Arc<str>,
    /// What the user has typed so far.
    pub value: String,
}

/// One `completion/complete` the package has accepted and validated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The prompt or template being completed.
    pub reference: CompletionRef,
    /// The argument being completed.
    pub argument: CompletionArgument,
    /// Values already resolved (`context.arguments`), only the names the prompt or template declares.
    pub context_arguments: BTreeMap<String, String>,
    /// The request's context.
    pub context: RequestContext,
}

/// The completer's suggestions; the package sends at most 100 (see [`Completer`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// The suggested values, most relevant first.
    pub values: Vec<String>,
    /// The total number of matches, which may exceed the values sent.
    pub total: Option<u64>,
    /// Whether more matches exist than were sent.
    pub has_more: Option<bool>,
}

impl Completion {
    /// The given values, with no total and no `hasMore`.
    pub fn new(values: Vec<String>) -> Self {
        Self { values, ..Self::default() }
    }
}

/// The host's completer: optional; with one, `completions` is advertised and `completion/complete`
/// served.
///
/// It runs only for a listed prompt and one of its declared arguments, or a listed uri template and one
/// of its variables. More than 100 values are cut to the first 100, with `hasMore: true` and `total`
/// set to the completer's total (at least the count returned). A refusal is -32602 with `{reason}`.
pub trait Completer: Send + Sync + 'static {
    /// Suggests values for one accepted request.
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'static, Result<Completion, ReaderError>>;
}

impl<F, Fut> Completer for F
where
    F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, ReaderError>> + Send + 'static,
{
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'static, Result<Completion, ReaderError>> {
        // Allocated first, as a tool's future is (above).
        let boxed: Box<Fut> = Box::write(Box::new_uninit(), self(request));
        Box::into_pin(boxed)
    }
}
