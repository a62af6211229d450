//! One round trip in the wire format: a JSON-RPC request object in, through
//! [`crate::Server::handle_envelope`], and the JSON-RPC response and notifications read back strictly.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use mcp_kernel_wire::JSONRPC_VERSION;
use mcp_kernel_wire::types::{
    ErrorResponse, InputRequiredResult, JsonRpcNotification, JsonRpcRequest,
    LoggingMessageNotificationParams, ProgressNotificationParams, ResultResponse,
};
use mcp_kernel_wire::version::{META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION};

use super::TestClient;
use super::outcome::{Called, ClientError, MESSAGE, PROGRESS};
use crate::notify::progress::{NotificationSink, progress_token};
use crate::request::inbound::Inbound;

impl TestClient {
    /// The next request's id and its JSON-RPC request object.
    pub(super) fn message(&self, method: &str, params: Value) -> (Value, Value) {
        let id = Value::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let params = self.with_meta(&id, params);
        let request = JsonRpcRequest::new(id.clone(), method, Some(params));
        // A request of JSON values always serializes: its map keys are strings.
        let message = serde_json::to_value(request).unwrap_or(Value::Null);
        (id, message)
    }

    /// `params` with the `_meta` the era and the options call for; the caller's own `_meta` keys win.
    /// Params that are not an object (nor null, which is `{}`) are sent unchanged.
    fn with_meta(&self, id: &Value, params: Value) -> Value {
        let mut params = match params {
            Value::Null => Map::new(),
            Value::Object(params) => params,
            other => return other,
        };
        let mut meta = Map::new();
        if self.era.is_modern() {
            meta.insert(META_PROTOCOL_VERSION.into(), Value::from(self.era.as_str()));
            meta.insert(META_CLIENT_CAPABILITIES.into(), self.capabilities.clone());
            if let Some(level) = self.log_level {
                meta.insert(META_LOG_LEVEL.into(), json!(level));
            }
        }
        if self.progress {
            meta.insert("progressToken".into(), Value::from(format!("test-client-{id}")));
        }
        match params.remove("_meta") {
            Some(Value::Object(theirs)) => meta.extend(theirs),
            // Not an object: sent as given, for a test of the server's refusal.
            Some(other) => {
                params.insert("_meta".into(), other);
                return Value::Object(params);
            }
            None => {}
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        Value::Object(params)
    }

    /// Sends one request and reads its answer: the result value, or the error object as an `Err`.
    pub(super) async fn exchange(&self, method: &str, params: Value) -> Result<Called<Value>, ClientError> {
        let (id, message) = self.message(method, params);
        let token = progress_token(message.get("params")).cloned();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        let sink: NotificationSink =
            Arc::new(move |n| kept.lock().unwrap_or_else(PoisonError::into_inner).push(n));
        let inbound = Inbound::new().extensions(self.extensions.clone()).notifications(sink);
        let handled = self.server.current().handle_value(message, inbound).await;
        let notifications = std::mem::take(&mut *seen.lock().unwrap_or_else(PoisonError::into_inner));
        for notification in &notifications {
            check_notification(method, notification, token.as_ref())?;
        }
        let Some(response) = handled.response else {
            return Err(ClientError::malformed(method, "the server sent no response"));
        };
        let result = read_response(method, &id, response.to_value())?;
        Ok(Called { result, notifications })
    }

    /// Sends one request and parses its result as `T`, checking the era's result shape.
    pub(super) async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Called<T>, ClientError> {
        let called = self.exchange(method, params).await?;
        let result_type = called.result.get("resultType");
        if result_type.and_then(Value::as_str) == Some("input_required") {
            let result = decode::<InputRequiredResult>(method, called.result)?;
            return Err(ClientError::InputRequired { method: method.to_owned(), result: Box::new(result) });
        }
        match (self.era.is_modern(), result_type) {
            (true, None) => {
                return Err(ClientError::malformed(method, "a 2026-07-28 result lacks resultType"));
            }
            (false, Some(_)) => {
                return Err(ClientError::malformed(method, "a 2025-11-25 result carries resultType"));
            }
            _ => {}
        }
        let Called { result, notifications } = called;
        Ok(Called { result: decode(method, result)?, notifications })
    }
}

/// `value` as the wire type `T`, or an error naming the type and where it fails.
pub(super) fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, ClientError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let name = std::any::type_name::<T>().rsplit("::").next().unwrap_or("the result type");
        let at = error.path().to_string();
        let reason = format!("the result does not parse as {name}: {} (at {at})", error.inner());
        ClientError::malformed(method, reason)
    })
}

/// The result of the JSON-RPC response `response` to request `id`, or its error object as an `Err`.
pub(super) fn read_response(method: &str, id: &Value, response: Value) -> Result<Value, ClientError> {
    let malformed = |reason: &str| ClientError::malformed(method, reason);
    let Value::Object(members) = &response else { return Err(malformed("the response is not an object")) };
    if members.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
        return Err(malformed("the response lacks \"jsonrpc\": \"2.0\""));
    }
    if members.get("id") != Some(id) {
        return Err(malformed("the response does not carry the request's id"));
    }
    match (members.contains_key("result"), members.contains_key("error")) {
        (true, false) => {
            let response = serde_json::from_value::<ResultResponse<Value>>(response)
                .map_err(|_| malformed("the response does not parse as a JSON-RPC result response"))?;
            Ok(response.result)
        }
        (false, true) => {
            let response = serde_json::from_value::<ErrorResponse>(response)
                .map_err(|_| malformed("the error does not parse as a JSON-RPC error object"))?;
            Err(ClientError::Rpc(response.error))
        }
        _ => Err(malformed("the response carries neither or both of result and error")),
    }
}

/// Checks one notification of a request that carried `token`: a JSON-RPC notification, and progress
/// and log params of their wire types (progress only under the request's own token).
pub(super) fn check_notification(
    method: &str,
    notification: &Value,
    token: Option<&Value>,
) -> Result<(), ClientError> {
    let malformed = |reason: &str| Err(ClientError::malformed(method, reason));
    let parsed = serde_json::from_value::<JsonRpcNotification<Value>>(notification.clone());
    let Ok(parsed) = parsed else { return malformed("a notification is not a JSON-RPC notification") };
    if parsed.jsonrpc != JSONRPC_VERSION || notification.get("id").is_some() {
        return malformed("a notification is not a JSON-RPC 2.0 notification (or carries an id)");
    }
    let params = parsed.params.unwrap_or(Value::Null);
    match parsed.method.as_str() {
        PROGRESS => match serde_json::from_value::<ProgressNotificationParams>(params) {
            Err(_) => malformed("a progress notification does not parse as ProgressNotificationParams"),
            Ok(progress) if Some(&progress.progress_token) != token => {
                malformed("a progress notification does not carry the request's progress token")
            }
            Ok(_) => Ok(()),
        },
        MESSAGE => match serde_json::from_value::<LoggingMessageNotificationParams>(params) {
            Err(_) => malformed("a log notification does not parse as LoggingMessageNotificationParams"),
            Ok(_) => Ok(()),
        },
        _ => Ok(()),
    }
}
