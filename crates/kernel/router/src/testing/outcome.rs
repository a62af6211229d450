//! What a [`crate::testing::TestClient`] call returns: the typed result with the notifications the request
//! produced, or the error that stopped it.

use serde_json::Value;

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::types::{
    InputRequiredResult, LoggingMessageNotificationParams, ProgressNotificationParams,
};

/// The `method` of a progress notification.
pub(crate) const PROGRESS: &str = "notifications/progress";
/// The `method` of a log notification.
pub(crate) const MESSAGE: &str = "notifications/message";

/// One answered request: its result and every notification the server sent while it ran, in order
/// (an `Err` answer drops them).
#[derive(Debug, Clone, PartialEq)]
pub struct Called<T> {
    /// The result, parsed as the method's wire type.
    pub result: T,
    /// Every notification the server sent while the request ran (whole JSON-RPC notifications).
    pub notifications: Vec<Value>,
}

impl<T> Called<T> {
    /// The params of every `notifications/progress`, in order.
    pub fn progress(&self) -> Vec<ProgressNotificationParams> {
        self.params_of(PROGRESS)
    }

    /// The params of every `notifications/message` (log notification), in order.
    pub fn logs(&self) -> Vec<LoggingMessageNotificationParams> {
        self.params_of(MESSAGE)
    }

    /// Keeps the notifications and replaces the result.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Called<U> {
        Called { result: f(self.result), notifications: self.notifications }
    }

    fn params_of<P: serde::de::DeserializeOwned>(&self, method: &str) -> Vec<P> {
        // Every notification was checked against its wire type when it arrived: none is skipped here.
        self.notifications
            .iter()
            .filter(|n| n.get("method").and_then(Value::as_str) == Some(method))
            .filter_map(|n| n.get("params").cloned())
            .filter_map(|params| serde_json::from_value(params).ok())
            .collect()
    }
}

/// Why a [`crate::testing::TestClient`] call has no result.
///
/// A tool's own failure is not one of these: it is a `CallToolResult` with `isError: true`, an `Ok`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error object.
    #[error("the server answered JSON-RPC error {}: {}", .0.code, .0.message)]
    Rpc(ErrorObject),
    /// The server asked for the client's input first (a `2026-07-28` `InputRequiredResult`).
    #[error("{method}: the server asks for input before it answers (resultType input_required)")]
    InputRequired {
        /// The request's method.
        method: String,
        /// The server's `InputRequiredResult`.
        result: Box<InputRequiredResult>,
    },
    /// What the server sent is not what the wire format promises (no response, another id, a result
    /// or notification that does not parse as its wire type, the wrong era's result shape).
    #[error("{method}: {reason}")]
    Malformed {
        /// The request's method.
        method: String,
        /// What was wrong.
        reason: String,
    },
    /// A list still named a `nextCursor` after [`crate::testing::TestClient::MAX_PAGES`] pages.
    #[error("{method}: still a nextCursor after {pages} pages")]
    TooManyPages {
        /// The list method.
        method: String,
        /// How many pages were read.
        pages: usize,
    },
}

impl ClientError {
    /// The JSON-RPC error object, when the server answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc(error) => Some(error),
            _ => None,
        }
    }

    /// A [`ClientError::Malformed`] for `method`.
    pub(crate) fn malformed(method: &str, reason: impl Into<String>) -> Self {
        ClientError::Malformed { method: method.to_owned(), reason: reason.into() }
    }
}
