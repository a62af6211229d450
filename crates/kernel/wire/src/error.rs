//! JSON-RPC error objects and the error codes of both MCP revisions.
//!
//! Every refusal the package issues, at every layer, is one of the constructors below. The message texts
//! are not a promise (codes, data shapes and HTTP statuses are). Nothing a caller sent is copied into an
//! error unless the specification asks for it (or the package chooses to name it), and what is copied
//! obeys one echo bound, [`shorten`], applied here by the constructors, so no layer can forget it:
//!
//! * `data.uri` of a resource not found (-32002, or -32602 under 2026-07-28):
//!   [`ErrorObject::resource_not_found`];
//! * `data.name` of a prompt error (-32602): [`ErrorObject::prompt_error`];
//! * `data.requested` of an unsupported protocol version (-32022): [`ErrorObject::unsupported_version`];
//! * the repeated key named in the message of a duplicate-key refusal (-32600):
//!   [`ErrorObject::duplicate_key`].
//!
//! Nothing else a caller sent is ever repeated: not an unknown tool's name, not a method name, not a header
//! value, not an argument.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JSON-RPC and MCP error codes the package emits.
pub mod code {
    /// The bytes are not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The message is not a valid JSON-RPC request (or a transport refused it before routing).
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not served at this revision.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params are malformed (including an unknown tool under 2026-07-28).
    pub const INVALID_PARAMS: i64 = -32602;
    /// A fault in the host or the package; nothing more is said.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Resource not found, 2025-11-25 only (2026-07-28 answers [`INVALID_PARAMS`]).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// A standard HTTP header is missing, malformed or disagrees with the body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability it did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The requested protocol revision is not served.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// The longest piece of caller-supplied text an error ever repeats, in characters (Unicode scalar values),
/// not counting the [`SHORTENED_MARK`] of a shortened echo.
pub const MAX_ECHO_CHARS: usize = 128;

/// The mark that ends every shortened echo: `…` (U+2026 HORIZONTAL ELLIPSIS).
pub const SHORTENED_MARK: char = '\u{2026}';

/// A JSON-RPC error object: `{"code", "message", "data"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`code`]).
    pub code: i64,
    /// One short sentence; its text is not part of the contract.
    pub message: String,
    /// Structured detail, present only where the error table lists it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// `data` of an unsupported-version error: what is served and what was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedVersionData {
    /// The revisions this endpoint serves, in advertising order.
    pub supported: Vec<String>,
    /// The revision the caller named, within the echo bound ([`shorten_value`]: always a string).
    pub requested: Value,
}

/// `data` of a missing-client-capability error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingCapabilityData {
    /// The client capabilities the request needs, as a `ClientCapabilities` object.
    pub required_capabilities: Value,
}

/// `data` of a resource-not-found error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceNotFoundData {
    /// The uri the caller asked for (the specification requires it in `data`), within the echo bound.
    pub uri: String,
    /// The host reader's reason, when the reader refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Value>,
}

/// `data` of a prompt error: which prompt, and the reason when there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptErrorData {
    /// The prompt name the caller asked for (for a listed prompt, as listed), within the echo bound.
    pub name: String,
    /// Why the prompt could not be rendered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Value>,
}

/// The echo bound: caller-supplied text repeated in an error, shortened to at most [`MAX_ECHO_CHARS`]
/// characters.
///
/// Text of at most [`MAX_ECHO_CHARS`] characters is returned unchanged. Longer text keeps its first
/// [`MAX_ECHO_CHARS`] characters, cut on a character boundary (so the result is valid UTF-8 and a valid
/// JSON string), followed by [`SHORTENED_MARK`]: a shortened echo has exactly `MAX_ECHO_CHARS + 1`
/// characters and ends with `…`. The rule is idempotent, and its result is at most 515 bytes of UTF-8
/// whatever the input's length. Every constructor below that repeats caller text applies it.
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => {
            let mut short = String::with_capacity(at + SHORTENED_MARK.len_utf8());
            short.push_str(&text[..at]);
            short.push(SHORTENED_MARK);
            short
        }
    }
}

/// The echo bound for a JSON value that should be a string (`requested`, whose schema type is
/// `string`): a string is [`shorten`]ed; any other value is repeated as its compact JSON text, shortened,
/// so the echo is always a bounded string.
pub fn shorten_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(shorten(text)),
        other => Value::String(shorten(&other.to_string())),
    }
}

fn to_data<T: Serialize>(data: &T) -> Option<Value> {
    // The data types above contain only strings and JSON values: serialization cannot fail.
    serde_json::to_value(data).ok()
}

impl ErrorObject {
    /// An error with no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700: the bytes are not JSON.
    pub fn parse_error() -> Self {
        Self::new(code::PARSE_ERROR, "Parse error: body is not valid JSON")
    }

    /// -32700: an empty body.
    pub fn empty_body() -> Self {
        Self::new(code::PARSE_ERROR, "Parse error: empty body")
    }

    /// -32600: the top level is not an object; `kind` names what it is ("an array", "a string", …).
    pub fn not_an_object(kind: &str) -> Self {
        Self::new(code::INVALID_REQUEST, format!("Expected a JSON object, got {kind}"))
    }

    /// -32600: nesting deeper than the bound.
    pub fn too_deep(max_depth: usize) -> Self {
        Self::new(code::INVALID_REQUEST, format!("Request body nests deeper than {max_depth} levels"))
    }

    /// -32600: a repeated key, named as a JSON string after [`shorten`].
    pub fn duplicate_key(key: &str) -> Self {
        let key = serde_json::to_string(&shorten(key)).unwrap_or_default();
        Self::new(code::INVALID_REQUEST, format!("Request body repeats a key: duplicate key {key}"))
    }

    /// -32600: a JSON-RPC batch reached the core.
    pub fn batch() -> Self {
        Self::new(code::INVALID_REQUEST, "Batch requests are not supported at any supported protocol version")
    }

    /// -32600: not a JSON-RPC 2.0 request.
    pub fn invalid_request() -> Self {
        Self::new(code::INVALID_REQUEST, "Invalid Request")
    }

    /// -32600 with a transport's own message (body cap, deadline, framing, origin, method, authorize).
    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    /// -32601: the method is not served. The caller's method name is not repeated.
    pub fn method_not_found() -> Self {
        Self::new(code::METHOD_NOT_FOUND, "Method not found")
    }

    /// -32602: `tools/call` names no listed tool (2026-07-28 [S-31]). The name is not repeated.
    ///
    /// [S-31]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
    pub fn unknown_tool() -> Self {
        Self::new(code::INVALID_PARAMS, "Unknown tool")
    }

    /// -32602 with a message that begins "Invalid params: ".
    pub fn invalid_params(detail: &str) -> Self {
        Self::new(code::INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// -32602 carrying prompt `data` (`{name, reason?}`); `name` is [`shorten`]ed.
    pub fn prompt_error(detail: &str, data: PromptErrorData) -> Self {
        let data = PromptErrorData { name: shorten(&data.name), ..data };
        let mut e = Self::invalid_params(detail);
        e.data = to_data(&data);
        e
    }

    /// -32603: a host or package fault. Nothing more is said.
    pub fn internal() -> Self {
        Self::new(code::INTERNAL_ERROR, "Internal error")
    }

    /// -32002 (legacy) resource not found, with `data: {uri, reason?}`; `uri` is [`shorten`]ed.
    pub fn resource_not_found(data: ResourceNotFoundData) -> Self {
        let data = ResourceNotFoundData { uri: shorten(&data.uri), ..data };
        let mut e = Self::new(code::RESOURCE_NOT_FOUND, "Resource not found");
        e.data = to_data(&data);
        e
    }

    /// -32020: a header is missing, malformed or disagrees with the body.
    pub fn header_mismatch(detail: &str) -> Self {
        Self::new(code::HEADER_MISMATCH, format!("Header mismatch: {detail}"))
    }

    /// -32021: the request needs client capabilities it did not declare.
    pub fn missing_capability(required_capabilities: Value) -> Self {
        let mut e = Self::new(code::MISSING_REQUIRED_CLIENT_CAPABILITY, "Missing required client capability");
        e.data = to_data(&MissingCapabilityData { required_capabilities });
        e
    }

    /// -32022: the requested revision is not served; `requested` is shortened by [`shorten_value`].
    pub fn unsupported_version(data: UnsupportedVersionData) -> Self {
        let data = UnsupportedVersionData { requested: shorten_value(&data.requested), ..data };
        let mut e = Self::new(code::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version");
        e.data = to_data(&data);
        e
    }

    /// -32603 "Service unavailable; retry later" with `data: {"retryAfter": seconds}`: something the
    /// request needs (a shared store, a shared event source) is unreachable for now. A write that
    /// timed out may still be applied when the store comes back; retrying is safe all the same (a
    /// new task gets a new id, and a cancel or an answer applied twice changes nothing). Over HTTP it
    /// is answered 503 with `retry-after`.
    pub fn unavailable(retry_after_seconds: u32) -> Self {
        let mut e = Self::new(code::INTERNAL_ERROR, "Service unavailable; retry later");
        e.data = Some(serde_json::json!({ "retryAfter": retry_after_seconds }));
        e
    }

    /// The seconds after which an [`ErrorObject::unavailable`] request may be retried; `None` for any
    /// other error.
    pub fn retry_after(&self) -> Option<u32> {
        if self.code != code::INTERNAL_ERROR {
            return None;
        }
        let seconds = self.data.as_ref()?.get("retryAfter")?.as_u64()?;
        u32::try_from(seconds).ok()
    }

    /// True for -32601, the one error a Streamable HTTP endpoint answers with 404.
    pub fn is_method_not_found(&self) -> bool {
        self.code == code::METHOD_NOT_FOUND
    }
}

/// The details of the `_meta` refusals both transports and the core give (-32602 "Invalid params:
/// …"), written once.
pub mod detail {
    /// A request with `_meta` at its top level instead of in `params`.
    pub const TOP_LEVEL_META: &str =
        "_meta belongs in params._meta (2026-07-28 RequestParams), not at the top level of the request";
    /// `params._meta` that is not an object.
    pub const META_NOT_OBJECT: &str = "params._meta must be an object";
    /// A 2026-07-28 request without client capabilities.
    pub const META_CAPABILITIES_MISSING: &str = "params._meta lacks io.modelcontextprotocol/clientCapabilities, \
                                                 which 2026-07-28 requires on every request";
    /// Client capabilities that are not an object.
    pub const META_CAPABILITIES_NOT_OBJECT: &str =
        "params._meta io.modelcontextprotocol/clientCapabilities must be an object";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unavailable_error_says_when_to_retry_and_no_other_error_does() {
        let error = ErrorObject::unavailable(2);
        assert_eq!(error.code, code::INTERNAL_ERROR);
        assert_eq!(error.retry_after(), Some(2));
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            serde_json::json!({"code": -32603, "message": "Service unavailable; retry later", "data": {"retryAfter": 2}})
        );
        assert_eq!(ErrorObject::internal().retry_after(), None);
        let lookalike = ErrorObject::invalid_params("x").with_data(serde_json::json!({"retryAfter": 1}));
        assert_eq!(lookalike.retry_after(), None, "only -32603 carries a retry hint");
    }

    #[test]
    fn shortens_long_echoes_on_a_char_boundary() {
        let long = "é".repeat(500);
        let short = shorten(&long);
        assert_eq!(short.chars().count(), MAX_ECHO_CHARS + 1);
        assert!(short.ends_with('…'));
        assert_eq!(shorten("abc"), "abc");
    }

    #[test]
    fn text_at_the_echo_bound_is_kept_and_shortening_is_idempotent() {
        let at_bound = "\u{1F600}".repeat(MAX_ECHO_CHARS);
        assert_eq!(shorten(&at_bound), at_bound, "at most the bound: unchanged");
        let over = format!("{at_bound}x");
        let short = shorten(&over);
        assert_eq!(short, format!("{at_bound}{SHORTENED_MARK}"));
        assert_eq!(shorten(&short), short, "shortening a shortened echo changes nothing");
        assert!(short.len() <= 515, "{} bytes", short.len());
        assert_eq!(shorten(""), "");
    }

    #[test]
    fn every_echoed_field_obeys_the_one_echo_bound() {
        let long = "\u{e9}".repeat(10_000);
        let expected = shorten(&long);
        assert_eq!(expected.chars().count(), MAX_ECHO_CHARS + 1);
        let reason = Some(Value::from("the host's reason, never shortened"));

        let e = ErrorObject::resource_not_found(ResourceNotFoundData {
            uri: long.clone(),
            reason: reason.clone(),
        });
        assert_eq!(e.data, Some(serde_json::json!({"uri": expected, "reason": reason})));
        let e =
            ErrorObject::prompt_error("unknown prompt", PromptErrorData { name: long.clone(), reason: None });
        assert_eq!(e.data, Some(serde_json::json!({"name": expected})));
        let data =
            UnsupportedVersionData { supported: vec!["2026-07-28".into()], requested: long.clone().into() };
        let e = ErrorObject::unsupported_version(data);
        assert_eq!(e.data, Some(serde_json::json!({"supported": ["2026-07-28"], "requested": expected})));
        let e = ErrorObject::duplicate_key(&long);
        assert_eq!(e.message, format!("Request body repeats a key: duplicate key \"{expected}\""));
    }

    #[test]
    fn a_requested_value_that_is_not_a_string_is_echoed_as_bounded_text() {
        assert_eq!(shorten_value(&Value::from(7)), Value::from("7"));
        let big = Value::Array(vec![Value::from("x".repeat(1_000)); 10]);
        let echoed = shorten_value(&big);
        assert_eq!(echoed.as_str().map(|text| text.chars().count()), Some(MAX_ECHO_CHARS + 1));
    }

    #[test]
    fn duplicate_key_names_the_key_as_a_json_string() {
        let e = ErrorObject::duplicate_key("a\"b");
        assert_eq!(e.code, code::INVALID_REQUEST);
        assert_eq!(e.message, "Request body repeats a key: duplicate key \"a\\\"b\"");
        assert!(e.data.is_none());
    }

    #[test]
    fn data_shapes_serialize_with_the_spec_field_names() {
        let e = ErrorObject::missing_capability(serde_json::json!({"elicitation": {}}));
        assert_eq!(e.data, Some(serde_json::json!({"requiredCapabilities": {"elicitation": {}}})));
        let e = ErrorObject::unsupported_version(UnsupportedVersionData {
            supported: vec!["2026-07-28".into()],
            requested: "1900-01-01".into(),
        });
        assert_eq!(e.data, Some(serde_json::json!({"supported": ["2026-07-28"], "requested": "1900-01-01"})));
    }
}
