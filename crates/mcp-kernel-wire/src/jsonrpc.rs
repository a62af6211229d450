//! The JSON-RPC 2.0 envelope the server writes: a result or an error, addressed to a request id.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::error::ErrorObject;

/// The only JSON-RPC version either revision speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// The bytes a response's encoding starts with room for: a small result (a tool's short text answer
/// with the era's decoration is about 200 bytes) is then written without growing the buffer.
const RESPONSE_CAPACITY: usize = 256;

/// One response the server writes: `{"jsonrpc":"2.0","id":…,"result"|"error":…}`.
///
/// An `id` of `null` means the request's id could not be read: the member is then omitted, as the MCP
/// schema's `JSONRPCErrorResponse` requires (its `RequestId` is a string or an integer, never null).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered; `null` when it could not be read (then not written).
    pub id: Value,
    /// The result, or the error.
    pub body: Result<Value, ErrorObject>,
}

impl Response {
    /// A successful response.
    pub fn result(id: Value, result: Value) -> Self {
        Self { id, body: Ok(result) }
    }

    /// An error response.
    pub fn error(id: Value, error: ErrorObject) -> Self {
        Self { id, body: Err(error) }
    }

    /// The error, when this is an error response.
    pub fn as_error(&self) -> Option<&ErrorObject> {
        self.body.as_ref().err()
    }

    /// The compact JSON bytes of this response (no trailing newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        // Room for a typical answer at once, rather than growing from empty three or four times.
        let mut bytes = Vec::with_capacity(RESPONSE_CAPACITY);
        // A Value and an ErrorObject always serialize: their map keys are strings.
        match serde_json::to_writer(&mut bytes, self) {
            Ok(()) => bytes,
            Err(_) => br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}"#.to_vec(),
        }
    }

    /// This response as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        if !self.id.is_null() {
            map.serialize_entry("id", &self.id)?;
        }
        match &self.body {
            Ok(result) => map.serialize_entry("result", result)?,
            Err(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_jsonrpc_id_then_result() {
        let r = Response::result(json!(7), json!({"a": 1}));
        assert_eq!(String::from_utf8(r.to_bytes()).unwrap(), r#"{"jsonrpc":"2.0","id":7,"result":{"a":1}}"#);
    }

    #[test]
    fn omits_an_unreadable_id_and_absent_data() {
        let r = Response::error(Value::Null, ErrorObject::parse_error());
        assert_eq!(
            r.to_value(),
            json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: body is not valid JSON"}})
        );
    }
}
