//! What the server reads: the JSON-RPC request and notification envelopes, and the params of every
//! request it serves.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::capabilities::ClientCapabilities;
use super::input::InputResponses;
use super::meta::{Implementation, JsonObject, Meta};
use super::notifications::{LoggingLevel, SubscriptionFilter};
use crate::jsonrpc::JSONRPC_VERSION;

/// A JSON-RPC request: `{"jsonrpc", "id", "method", "params"?}`; `P` types the params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub struct JsonRpcRequest<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request id (a string or an integer).
    pub id: Value,
    /// The method name.
    pub method: String,
    /// The params, when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// A `"2.0"` request.
    pub fn new(id: Value, method: impl Into<String>, params: Option<P>) -> Self {
        Self { jsonrpc: JSONRPC_VERSION.to_owned(), id, method: method.into(), params }
    }
}

/// A JSON-RPC notification: `{"jsonrpc", "method", "params"?}`; `P` types the params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub struct JsonRpcNotification<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The method name.
    pub method: String,
    /// The params, when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcNotification<P> {
    /// A `"2.0"` notification.
    pub fn new(method: impl Into<String>, params: Option<P>) -> Self {
        Self { jsonrpc: JSONRPC_VERSION.to_owned(), method: method.into(), params }
    }
}

/// Params carrying only `_meta` (`server/discover`, `ping`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverParams {
    /// Request metadata (protocol version, client info and capabilities on 2026-07-28).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `initialize` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The revision the client asks for; any JSON value, so a bad one can be echoed back.
    pub protocol_version: Value,
    /// What the client offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ClientCapabilities>,
    /// The client's identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of the `*/list` requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedParams {
    /// Opaque cursor from a previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// The tool name.
    pub name: String,
    /// The tool arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Answers to a previous input-required result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state from a previous input-required result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Task augmentation (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceParams {
    /// The resource URI.
    pub uri: String,
    /// Answers to a previous input-required result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state from a previous input-required result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    /// The prompt name.
    pub name: String,
    /// The prompt arguments (strings per the schema; kept as JSON so a bad one can be refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Answers to a previous input-required result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state from a previous input-required result (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteParams {
    /// What is being completed: a prompt or a resource template.
    #[serde(rename = "ref")]
    pub reference: CompleteReference,
    /// The argument being completed.
    pub argument: CompleteArgument,
    /// Values of arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The `ref` of a completion request, tagged by `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompleteReference {
    /// `"type": "ref/prompt"`.
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `"type": "ref/resource"`.
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

/// A prompt named by a completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReference {
    /// The prompt name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A resource template named by a completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateReference {
    /// The URI template.
    pub uri: String,
}

/// The argument a completion request completes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteArgument {
    /// The argument name.
    pub name: String,
    /// The partial value typed so far.
    pub value: String,
}

/// Context of a completion request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteContext {
    /// Already-resolved argument values (strings per the schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
}

/// Params of `subscriptions/listen` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenParams {
    /// The notifications the client wants.
    pub notifications: SubscriptionFilter,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `resources/subscribe` and `resources/unsubscribe` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeParams {
    /// The resource URI.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `logging/setLevel` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLevelParams {
    /// The least severe level the client wants.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
