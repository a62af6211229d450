//! The JSON-RPC 2.0 envelope the server writes: a result or an error, addressed to a request id.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::encoded::Encoded;
use crate::error::ErrorObject;

/// The only JSON-RPC version either revision speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// The bytes a response's encoding starts with room for: a small result (a tool's short text answer
/// with the era's decoration is about 200 bytes) is then written without growing the buffer.
const RESPONSE_CAPACITY: usize = 256;

/// The room `{"jsonrpc":"2.0","id":…,"result":…}` takes around an encoded result, with a short id.
const ENVELOPE_BYTES: usize = 48;

/// One response the server writes: `{"jsonrpc":"2.0","id":…,"result"|"error":…}`.
///
/// An `id` of `null` means the request's id could not be read: the member is then omitted, as the MCP
/// schema's `JSONRPCErrorResponse` requires (its `RequestId` is a string or an integer, never null).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered; `null` when it could not be read (then not written).
    pub id: Value,
    /// The result, or the error.
    pub body: Result<Payload, ErrorObject>,
}

/// A result as the server holds it: a JSON value, or JSON already encoded.
///
/// The core encodes its hot answers (`tools/call`, `tools/list`) straight to bytes rather than build a
/// [`Value`] that is written once and dropped; either form is written the same way and reads back as
/// the same value ([`Payload::to_value`]). Two payloads are equal when their values are.
#[derive(Debug, Clone)]
pub enum Payload {
    /// A JSON value.
    Value(Value),
    /// Compact JSON, written as is.
    Encoded(Encoded),
}

impl Payload {
    /// This payload as a JSON value (an encoded one is read back).
    pub fn to_value(&self) -> Value {
        match self {
            Payload::Value(value) => value.clone(),
            Payload::Encoded(encoded) => Self::read_back(encoded.get()),
        }
    }

    /// This payload as a JSON value, without a copy when it already is one.
    pub fn into_value(self) -> Value {
        match self {
            Payload::Value(value) => value,
            Payload::Encoded(encoded) => Self::read_back(encoded.get()),
        }
    }

    /// The encoded JSON, when this payload holds bytes.
    pub fn as_encoded(&self) -> Option<&str> {
        match self {
            Payload::Value(_) => None,
            Payload::Encoded(encoded) => Some(encoded.get()),
        }
    }

    fn read_back(json: &str) -> Value {
        // Encoded JSON is valid JSON, written by a serializer, at whatever depth it wrote: read back
        // without serde_json's recursion limit (128), which would refuse what the writer recursed
        // through already. Untrusted input is bounded by the reader (`MAX_DEPTH`), never read here.
        let mut reader = serde_json::Deserializer::from_str(json);
        reader.disable_recursion_limit();
        serde::Deserialize::deserialize(&mut reader).unwrap_or(Value::Null)
    }
}

impl From<Value> for Payload {
    fn from(value: Value) -> Self {
        Payload::Value(value)
    }
}

impl From<Box<RawValue>> for Payload {
    fn from(raw: Box<RawValue>) -> Self {
        Payload::Encoded(raw.into())
    }
}

impl From<Encoded> for Payload {
    fn from(encoded: Encoded) -> Self {
        Payload::Encoded(encoded)
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Payload::Value(a), Payload::Value(b)) => a == b,
            (Payload::Encoded(a), Payload::Encoded(b)) if a.get() == b.get() => true,
            _ => self.to_value() == other.to_value(),
        }
    }
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Payload::Value(value) => value.serialize(serializer),
            // Read again into a `RawValue` (see `Encoded::to_raw_value`): the transports write an
            // encoded result with `Response::to_bytes` and `into_pieces`, which copy it as it is.
            Payload::Encoded(encoded) => {
                encoded.to_raw_value().map_err(serde::ser::Error::custom)?.serialize(serializer)
            }
        }
    }
}

impl Response {
    /// A successful response.
    pub fn result(id: Value, result: Value) -> Self {
        Self { id, body: Ok(Payload::Value(result)) }
    }

    /// A successful response whose result is already encoded.
    pub fn encoded(id: Value, result: impl Into<Encoded>) -> Self {
        Self { id, body: Ok(Payload::Encoded(result.into())) }
    }

    /// An error response.
    pub fn error(id: Value, error: ErrorObject) -> Self {
        Self { id, body: Err(error) }
    }

    /// The error, when this is an error response.
    pub fn as_error(&self) -> Option<&ErrorObject> {
        self.body.as_ref().err()
    }

    /// The result as a JSON value, when this is a successful response.
    pub fn result_value(&self) -> Option<Value> {
        self.body.as_ref().ok().map(Payload::to_value)
    }

    /// The compact JSON bytes of this response (no trailing newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        // An encoded result is copied as it is, behind the envelope's head, into one buffer of its size.
        if let Ok(Payload::Encoded(encoded)) = &self.body
            && let Some(mut bytes) = result_head(&self.id, encoded.get().len() + ENVELOPE_BYTES)
        {
            bytes.extend_from_slice(encoded.get().as_bytes());
            bytes.extend_from_slice(RESULT_TAIL);
            return bytes;
        }
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
        // Not `serde_json::to_value(self)`: it reads an encoded result back with the recursion limit.
        let mut response = serde_json::Map::with_capacity(3);
        response.insert("jsonrpc".into(), Value::from(JSONRPC_VERSION));
        if !self.id.is_null() {
            response.insert("id".into(), self.id.clone());
        }
        match &self.body {
            Ok(result) => response.insert("result".into(), result.to_value()),
            Err(error) => response.insert("error".into(), serde_json::to_value(error).unwrap_or(Value::Null)),
        };
        Value::Object(response)
    }
}

/// A response's compact JSON as the pieces of one vectored write ([`Response::into_pieces`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pieces {
    /// All of it, in one buffer.
    Whole(Vec<u8>),
    /// A large encoded result, left in the buffer it was encoded into, between the envelope's bytes.
    Around {
        /// The envelope's bytes before the result: `{"jsonrpc":"2.0","id":…,"result":`.
        head: Vec<u8>,
        /// The result's JSON, in the buffer it was encoded into.
        result: String,
        /// The envelope's bytes after the result: `}`.
        tail: &'static [u8],
    },
}

impl Pieces {
    /// How many bytes the pieces hold together.
    pub fn len(&self) -> usize {
        match self {
            Pieces::Whole(bytes) => bytes.len(),
            Pieces::Around { head, result, tail } => head.len() + result.len() + tail.len(),
        }
    }

    /// Whether the pieces hold no byte (never, for a response's).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pieces as one buffer (a copy of a large result: for tests and logs).
    pub fn concat(&self) -> Vec<u8> {
        match self {
            Pieces::Whole(bytes) => bytes.clone(),
            Pieces::Around { head, result, tail } => [head.as_slice(), result.as_bytes(), tail].concat(),
        }
    }
}

impl Response {
    /// The bytes of [`to_bytes`](Self::to_bytes), without copying an encoded result of `copy_below`
    /// bytes or more: such a result stays in its own buffer, between the envelope's bytes before and
    /// after it, for a transport that writes the three with one vectored write. A smaller result, an
    /// error and a [`Payload::Value`] are written whole, as `to_bytes` writes them.
    ///
    /// A megabyte answer is then held in memory once rather than twice, and never copied after it was
    /// encoded.
    pub fn into_pieces(self, copy_below: usize) -> Pieces {
        let encoded = match self.body {
            Ok(Payload::Encoded(encoded)) if encoded.get().len() >= copy_below => encoded,
            body => return Pieces::Whole(Response { id: self.id, body }.to_bytes()),
        };
        match result_head(&self.id, ENVELOPE_BYTES) {
            Some(head) => Pieces::Around { head, result: encoded.into_string(), tail: RESULT_TAIL },
            None => Pieces::Whole(Response::encoded(self.id, encoded).to_bytes()),
        }
    }
}

/// The bytes after a result: the envelope's `}`.
const RESULT_TAIL: &[u8] = b"}";

/// The bytes `Serialize for Response` writes before a result — `{"jsonrpc":"2.0","id":…,"result":` —
/// in a buffer with room for `capacity` bytes; `None` if the id does not serialize (a `Value` always
/// does: its map keys are strings).
fn result_head(id: &Value, capacity: usize) -> Option<Vec<u8>> {
    let mut head = Vec::with_capacity(capacity);
    head.extend_from_slice(br#"{"jsonrpc":""#);
    head.extend_from_slice(JSONRPC_VERSION.as_bytes());
    head.extend_from_slice(br#"","#);
    if !id.is_null() {
        head.extend_from_slice(br#""id":"#);
        serde_json::to_writer(&mut head, id).ok()?;
        head.push(b',');
    }
    head.extend_from_slice(br#""result":"#);
    Some(head)
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

    #[test]
    fn an_encoded_result_is_written_as_the_value_it_encodes() {
        let value = json!({"content": [{"type": "text", "text": "é \"q\""}], "isError": false, "n": 1.5});
        let raw = serde_json::value::to_raw_value(&value).unwrap();
        let encoded = Response::encoded(json!("a"), raw);
        let plain = Response::result(json!("a"), value.clone());
        assert_eq!(encoded.to_bytes(), plain.to_bytes());
        assert_eq!(encoded.to_value(), plain.to_value());
        assert_eq!(encoded.result_value(), Some(value));
        assert_eq!(encoded, plain);
    }

    #[test]
    fn an_encoded_result_nesting_deeper_than_128_reads_back_as_its_value() {
        // serde_json's reader refuses past 128 levels by default; the serializer writes any depth.
        let deep = (0..200).fold(json!({"a": 1}), |inner, _| json!([inner]));
        let deeper = json!([deep.clone()]);
        let encoded = |value: &Value| Payload::from(serde_json::value::to_raw_value(value).unwrap());
        assert_eq!(encoded(&deep).to_value(), deep);
        assert_eq!(encoded(&deep).into_value(), deep);
        assert_ne!(encoded(&deep), encoded(&deeper));
        assert_ne!(encoded(&deep), Payload::Value(Value::Null));
        assert_eq!(encoded(&deep), Payload::Value(deep.clone()));
        let response = Response::encoded(json!(1), serde_json::value::to_raw_value(&deep).unwrap());
        assert_eq!(response.to_value(), json!({"jsonrpc": "2.0", "id": 1, "result": deep}));
        assert_eq!(response.result_value(), Some(deep));
    }

    fn encoded(id: Value, result: &Value) -> Response {
        Response::encoded(id, serde_json::value::to_raw_value(result).unwrap())
    }

    #[test]
    fn a_large_encoded_result_is_left_between_the_envelopes_bytes() {
        let result = json!({"content": [{"type": "text", "text": "x".repeat(100)}]});
        let response = encoded(json!(7), &result);
        let whole = response.to_bytes();
        let Pieces::Around { head, result: text, tail } = response.into_pieces(64) else {
            panic!("a result of 64 bytes or more is not copied");
        };
        assert_eq!(head, br#"{"jsonrpc":"2.0","id":7,"result":"#);
        assert_eq!(text.as_ref(), serde_json::to_string(&result).unwrap());
        assert_eq!(tail, b"}");
        assert_eq!([head.as_slice(), text.as_bytes(), tail].concat(), whole);
    }

    #[test]
    fn a_small_result_an_error_and_a_value_are_written_whole() {
        let small = encoded(json!(1), &json!({"a": 1}));
        assert_eq!(
            small.into_pieces(8),
            Pieces::Whole(br#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#.to_vec())
        );
        let error = Response::error(json!(2), ErrorObject::method_not_found());
        assert_eq!(error.clone().into_pieces(0), Pieces::Whole(error.to_bytes()));
        let value = Response::result(json!(3), json!({"b": "x".repeat(64)}));
        assert_eq!(value.clone().into_pieces(0), Pieces::Whole(value.to_bytes()));
    }

    mod pieces_properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
        #[test]
        fn pieces_and_to_bytes_hold_the_bytes_serde_writes(
            id in prop_oneof![
                Just(Value::Null),
                any::<i64>().prop_map(Value::from),
                "[ -~é\u{1F600}\"\\\\\n]{0,12}".prop_map(Value::from),
            ],
            text in "[ -~é\u{1F600}\"\\\\\n]{0,40}",
            copy_below in 0usize..80,
        ) {
            let result = json!({"content": [{"type": "text", "text": text}], "isError": false});
            let response = encoded(id.clone(), &result);
            // Written by serde through `Serialize for Response`, from a `Value`: not by `result_head`.
            let expected = serde_json::to_vec(&Response::result(id, result)).unwrap();
            prop_assert_eq!(response.to_bytes(), expected.clone());
            let pieces = response.into_pieces(copy_below);
            prop_assert_eq!(pieces.len(), expected.len());
            prop_assert_eq!(pieces.concat(), expected);
        }
        }
    }

    #[test]
    fn payloads_differ_when_their_values_do() {
        let one = Payload::from(serde_json::value::to_raw_value(&json!({"a": 1})).unwrap());
        let two = Payload::Value(json!({"a": 2}));
        assert_ne!(one, two);
        assert_eq!(one.as_encoded(), Some(r#"{"a":1}"#));
        assert_eq!(two.as_encoded(), None);
    }
}
