//! Testing a host in process: [`TestClient`] speaks the real wire format to a server, with no process
//! and no socket; [`Called`] is a typed answer with its notifications, [`ClientError`] a refusal.
//!
//! Every call builds a real JSON-RPC request object (with the `_meta` its era requires), hands it to
//! the server exactly as a transport would ([`crate::Server::handle_envelope`]) (with the client's extensions and a
//! notification sink), and parses the JSON-RPC response into the wire crate's typed results. Nothing
//! goes around the router: a request the router would refuse from a real client is refused here.

mod exchange;
mod outcome;

use std::sync::atomic::AtomicU64;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use mcp_kernel_wire::ProtocolVersion;
use mcp_kernel_wire::types::{
    CallToolResult, CompleteResult, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};

pub use outcome::{Called, ClientError};

use crate::contract::CompletionRef;
use crate::live::LiveServer;
use crate::notify::log::LogLevel;
use crate::request::extensions::Extensions;

/// An in-process MCP client over a [`crate::Server`], for testing a host's tools, readers and prompts.
///
/// It speaks `2026-07-28` unless told otherwise ([`TestClient::era`]); request ids are increasing
/// integers from 1. A JSON-RPC error answer is an `Err` ([`ClientError::Rpc`]); a tool's failure
/// (`isError: true`) is an `Ok` result, as it is on the wire.
///
/// ```
/// use mcp_kernel_router::wire::types::ContentBlock;
/// use mcp_kernel_router::testing::TestClient;
/// use mcp_kernel_router::{Listing, Mode, Server, ToolError, ToolSpec, Tools};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize)]
/// struct Echo {
///     message: String,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_kernel_router::testing::ClientError> {
/// let schema = json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]});
/// let tools = Tools::new().add(
///     ToolSpec::new("echo", Mode::ReadOnly).input_schema(schema),
///     |args: Echo, _cx| async move { Ok::<_, ToolError>(args.message) },
/// );
/// let server = Server::builder(Listing::new()).tools(tools).build().expect("a valid catalog");
///
/// let client = TestClient::new(server);
/// assert_eq!(client.list_tools().await?[0].name, "echo");
/// let called = client.call_tool("echo", json!({"message": "hi"})).await?;
/// assert_eq!(called.result.content, [ContentBlock::text("hi")]);
/// assert_eq!(called.result.is_error, Some(false));
///
/// // Arguments the schema refuses are the router's `isError` result, not a call of the handler.
/// let refused = client.call_tool("echo", json!({"message": 7})).await?;
/// assert_eq!(refused.result.is_error, Some(true));
/// // An unknown tool is the router's JSON-RPC error.
/// let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
/// assert_eq!(unknown.rpc().map(|e| e.code), Some(-32602));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TestClient {
    server: LiveServer,
    era: ProtocolVersion,
    capabilities: Value,
    extensions: Extensions,
    progress: bool,
    log_level: Option<LogLevel>,
    next_id: AtomicU64,
}

impl TestClient {
    /// The most pages a `list_*` method reads before it stops with [`ClientError::TooManyPages`].
    pub const MAX_PAGES: usize = 10_000;

    /// A client of `server` (a [`crate::Server`] or a [`LiveServer`], whose replacements it sees).
    pub fn new(server: impl Into<LiveServer>) -> Self {
        Self {
            server: server.into(),
            era: ProtocolVersion::V2026_07_28,
            capabilities: json!({}),
            extensions: Extensions::new(),
            progress: false,
            log_level: None,
            next_id: AtomicU64::new(1),
        }
    }

    /// Speaks `era`: `2026-07-28` sends `_meta` protocol version and client capabilities on every
    /// request; `2025-11-25` sends neither (the legacy, undeclared shape).
    pub fn era(mut self, era: ProtocolVersion) -> Self {
        self.era = era;
        self
    }

    /// The client capabilities declared on every `2026-07-28` request (default `{}`).
    pub fn client_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Attaches `extensions` to every request, as a transport would (merged into those already set).
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions.extend(extensions);
        self
    }

    /// Attaches the caller's principal to every request (the host reads it with
    /// [`crate::RequestContext::principal`]).
    pub fn principal<P: Clone + Send + Sync + 'static>(mut self, principal: P) -> Self {
        self.extensions.insert(principal);
        self
    }

    /// Gives every request a fresh `_meta.progressToken`, so its progress notifications are captured.
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Asks for log notifications at `level` and above (`2026-07-28`: `_meta`
    /// `io.modelcontextprotocol/logLevel`; `2025-11-25` sends nothing: the host's minimum applies).
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Every tool, following `nextCursor` to the end.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all::<ListToolsResult>("tools/list").await
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all::<ListResourcesResult>("resources/list").await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all::<ListResourceTemplatesResult>("resources/templates/list").await
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all::<ListPromptsResult>("prompts/list").await
    }

    /// `tools/call` (`arguments`: an object, or null for none); a tool error is an `Ok` with
    /// `isError: true`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<Called<CallToolResult>, ClientError> {
        let params = with_arguments(json!({"name": name}), arguments);
        self.typed("tools/call", params).await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<Called<ReadResourceResult>, ClientError> {
        self.typed("resources/read", json!({"uri": uri})).await
    }

    /// `prompts/get` (`arguments`: an object of strings, or null for none).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<Called<GetPromptResult>, ClientError> {
        let params = with_arguments(json!({"name": name}), arguments);
        self.typed("prompts/get", params).await
    }

    /// `completion/complete` of `argument_name`, typed so far as `value`, of a prompt or template.
    pub async fn complete(
        &self,
        reference: CompletionRef,
        argument_name: &str,
        value: &str,
    ) -> Result<Called<CompleteResult>, ClientError> {
        let reference = match reference {
            CompletionRef::Prompt { name } => json!({"type": "ref/prompt", "name": &*name}),
            CompletionRef::ResourceTemplate { uri } => json!({"type": "ref/resource", "uri": uri}),
        };
        let params = json!({"ref": reference, "argument": {"name": argument_name, "value": value}});
        self.typed("completion/complete", params).await
    }

    /// Any request: `params` (an object, or null for `{}`) gets the era's `_meta`, the caller's own
    /// `_meta` keys winning; the result comes back as a JSON value, unchecked.
    pub async fn request(&self, method: &str, params: Value) -> Result<Called<Value>, ClientError> {
        self.exchange(method, params).await
    }

    /// Reads every page of a list, at most [`TestClient::MAX_PAGES`].
    async fn list_all<P: Page>(&self, method: &str) -> Result<Vec<P::Item>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..Self::MAX_PAGES {
            let params = match cursor.take() {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let (page, next) = self.typed::<P>(method, params).await?.map(P::split).result;
            items.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(items),
            }
        }
        Err(ClientError::TooManyPages { method: method.to_owned(), pages: Self::MAX_PAGES })
    }
}

/// `params` with `arguments`, unless they are null.
fn with_arguments(mut params: Value, arguments: Value) -> Value {
    if !arguments.is_null() {
        params["arguments"] = arguments;
    }
    params
}

/// One page of a paginated list result.
trait Page: DeserializeOwned {
    /// What the list holds.
    type Item;
    /// The page's items and its `nextCursor`.
    fn split(self) -> (Vec<Self::Item>, Option<String>);
}

macro_rules! page {
    ($result:ty, $item:ty, $field:ident) => {
        impl Page for $result {
            type Item = $item;
            fn split(self) -> (Vec<$item>, Option<String>) {
                (self.$field, self.next_cursor)
            }
        }
    };
}

page!(ListToolsResult, Tool, tools);
page!(ListResourcesResult, Resource, resources);
page!(ListResourceTemplatesResult, ResourceTemplate, resource_templates);
page!(ListPromptsResult, Prompt, prompts);

#[cfg(test)]
mod tests;
