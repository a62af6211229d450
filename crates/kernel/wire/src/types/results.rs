//! Results the server returns (the `result` member of a response).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::capabilities::ServerCapabilities;
use super::content::{ContentBlock, ResourceContents};
use super::input::InputRequests;
use super::meta::{Implementation, Meta};
use super::prompt::{Prompt, PromptMessage};
use super::resource::{Resource, ResourceTemplate};
use super::tool::Tool;

/// How the client must read a 2026-07-28 result (absent on 2025-11-25 results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// `"complete"`: the result is final.
    Complete,
    /// `"input_required"`: the result is an [`InputRequiredResult`].
    InputRequired,
}

/// Who may cache a cacheable result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any cache, across authorization contexts.
    Public,
    /// Only within the same authorization context.
    Private,
}

/// Result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// The revisions the server serves.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How the model should use the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Cache lifetime in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache the result.
    pub cache_scope: CacheScope,
    /// Result metadata (`io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of `initialize` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated revision.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// The server's identity.
    pub server_info: Implementation,
    /// How the model should use the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Declares a paginated list result, the one shape every `*/list` result shares: `resultType`, the
/// page of items under its own member, then the tail (`nextCursor`, `ttlMs`, `cacheScope`, `_meta`),
/// in that wire order.
macro_rules! paginated_result {
    ($(#[$doc:meta])* $name:ident { $(#[$items_doc:meta])* $items:ident: $item:ty }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// `complete` on 2026-07-28; absent on 2025-11-25.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub result_type: Option<ResultType>,
            $(#[$items_doc])*
            pub $items: Vec<$item>,
            /// Cursor of the next page, if any.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<String>,
            /// Cache lifetime in milliseconds (2026-07-28).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ttl_ms: Option<u64>,
            /// Who may cache the result (2026-07-28).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cache_scope: Option<CacheScope>,
            /// Result metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<Meta>,
        }
    };
}

paginated_result! {
    /// Result of `tools/list`.
    ListToolsResult {
        /// The page of tools.
        tools: Tool
    }
}

paginated_result! {
    /// Result of `resources/list`.
    ListResourcesResult {
        /// The page of resources.
        resources: Resource
    }
}

paginated_result! {
    /// Result of `resources/templates/list`.
    ListResourceTemplatesResult {
        /// The page of resource templates.
        resource_templates: ResourceTemplate
    }
}

paginated_result! {
    /// Result of `prompts/list`.
    ListPromptsResult {
        /// The page of prompts.
        prompts: Prompt
    }
}

/// Result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// `complete` on 2026-07-28; absent on 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The contents (one resource may yield several).
    pub contents: Vec<ResourceContents>,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// `complete` on 2026-07-28; absent on 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result, conforming to the tool's output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool itself failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result with the given content and nothing else.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self { content, ..Self::default() }
    }
}

/// Result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// `complete` on 2026-07-28; absent on 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Description of the rendered prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The rendered messages.
    pub messages: Vec<PromptMessage>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A result with no content (`ping`, `logging/setLevel`, the close of `subscriptions/listen`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// `complete` on 2026-07-28; absent on 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata (`io.modelcontextprotocol/subscriptionId` on a closed listen).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of `subscriptions/listen` when the stream closes: an empty result whose `_meta` names the
/// subscription.
pub type SubscriptionsListenResult = EmptyResult;

/// A 2026-07-28 result asking the client for input before it retries the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `input_required`.
    pub result_type: ResultType,
    /// What the client must obtain, keyed by a server-chosen name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client passes back unchanged on retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InputRequiredResult {
    /// An input-required result with the given requests and state.
    pub fn new(input_requests: Option<InputRequests>, request_state: Option<String>) -> Self {
        Self { result_type: ResultType::InputRequired, input_requests, request_state, meta: None }
    }
}

/// Result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// `complete` on 2026-07-28; absent on 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The completion values.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The `completion` member of a [`CompleteResult`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 suggested values.
    pub values: Vec<String>,
    /// The total number of matches, which may exceed `values.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}
