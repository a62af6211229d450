//! Typed response envelopes, for callers that want more than [`crate::Response`]'s JSON values.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::ErrorObject;
use crate::jsonrpc::JSONRPC_VERSION;

/// A successful response: `{"jsonrpc", "id", "result"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultResponse<T> {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id of the request answered.
    pub id: Value,
    /// The result.
    pub result: T,
}

impl<T> ResultResponse<T> {
    /// A `"2.0"` result response.
    pub fn new(id: Value, result: T) -> Self {
        Self { jsonrpc: JSONRPC_VERSION.to_owned(), id, result }
    }
}

/// An error response: `{"jsonrpc", "id"?, "error"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id of the request answered: `Some(Value::Null)` writes `"id": null`; `None` omits the member.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    /// The error.
    pub error: ErrorObject,
}

impl ErrorResponse {
    /// A `"2.0"` error response.
    pub fn new(id: Option<Value>, error: ErrorObject) -> Self {
        Self { jsonrpc: JSONRPC_VERSION.to_owned(), id, error }
    }
}

/// Reads a present member as `Some`, even when it is `null` (serde would otherwise read `None`).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}
