//! One inbound JSON-RPC message, understood once: the [`Envelope`].
//!
//! A transport reads the bytes with the bounded reader ([`crate::read_message`]), turns the object
//! into an envelope, and from then on asks the envelope rather than the JSON map: is it a request,
//! which [`Method`] it names, its `params`, what its `params._meta` declares. The router dispatches on
//! the same envelope, so a method name is matched once per message and the `_meta` shape rules are
//! written once, here, for the core and the HTTP header checks alike (`protocol.md` [B-3.2], [B-3.6],
//! [B-3.8]; HTTP [D-13] to [D-15]).
//!
//! Building an envelope refuses nothing: a message with a bad id or no method is still an envelope,
//! and the layer that owns the rule (the core, or a transport's shape check) refuses it, in its order.
//! Only `id`, `method` and `params` are kept when the envelope is built; of `jsonrpc`, a top-level
//! `_meta`, `result` and `error` the envelope keeps whether they were there, and every other member
//! is dropped.
//!
//! [B-3.2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [B-3.6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [B-3.8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-15]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

use serde_json::{Map, Value};

use crate::error::ErrorObject;
use crate::error::detail::{
    META_CAPABILITIES_MISSING, META_CAPABILITIES_NOT_OBJECT, META_NOT_OBJECT, TOP_LEVEL_META,
};
use crate::types::method::Method;
use crate::version::{META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION};
use crate::{JSONRPC_VERSION, ProtocolVersion};

/// One decoded JSON-RPC message: its id, its method (matched once), its `params` and the request's
/// `params._meta`, taken apart from the object the bounded reader returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// `"jsonrpc": "2.0"` was present.
    jsonrpc: bool,
    /// The `id` member as sent (any JSON value; absent for a notification).
    id: Option<Value>,
    /// The method, when the `method` member is a string.
    method: Option<Method>,
    /// Whether a `method` member was present at all (a string or not).
    method_sent: bool,
    /// `params` as sent, without `_meta` when `params` is an object.
    params: Option<Value>,
    /// `params._meta` as sent.
    meta: RequestMeta,
    /// A `_meta` member beside `method` (MCP reserves `_meta` for inside `params`).
    top_level_meta: bool,
    /// Exactly one of `result` and `error` was present.
    answers: bool,
}

impl Envelope {
    /// The envelope of a decoded message; a batch (an array) or a scalar is refused with the error
    /// the core answers it with (`-32600`, id `null`).
    pub fn from_value(message: Value) -> Result<Envelope, ErrorObject> {
        match message {
            Value::Object(map) => Ok(Envelope::from_object(map)),
            Value::Array(_) => Err(ErrorObject::batch()),
            Value::String(_) => Err(ErrorObject::not_an_object("a string")),
            Value::Number(_) => Err(ErrorObject::not_an_object("a number")),
            Value::Bool(_) => Err(ErrorObject::not_an_object("a boolean")),
            Value::Null => Err(ErrorObject::not_an_object("null")),
        }
    }

    /// The envelope of a decoded JSON object (what [`crate::read_message`] returns).
    pub fn from_object(map: Map<String, Value>) -> Envelope {
        // One pass over the members, each key compared once: no hashing, no reordering of the map.
        // A map holds each key once, so this sees exactly what look-ups by name would.
        let mut members = Members::default();
        for (key, value) in map {
            match key.as_str() {
                "jsonrpc" => members.jsonrpc = value.as_str() == Some(JSONRPC_VERSION),
                "id" => members.id = Some(value),
                "method" => {
                    members.method_sent = true;
                    if let Value::String(name) = value {
                        members.method = Some(Method::known(&name).unwrap_or(Method::Other(name)));
                    }
                }
                "params" => members.params = Some(value),
                "_meta" => members.top_level_meta = true,
                "result" => members.has_result = true,
                "error" => members.has_error = true,
                _ => {}
            }
        }
        members.into_envelope()
    }

    /// Whether `"jsonrpc": "2.0"` was present.
    pub fn is_jsonrpc(&self) -> bool {
        self.jsonrpc
    }

    /// The `id` member as sent, whatever its type; `None` for a notification.
    pub fn id(&self) -> Option<&Value> {
        self.id.as_ref()
    }

    /// Whether the message carries an `id` member (a request, or a response), valid or not.
    pub fn has_id(&self) -> bool {
        self.id.is_some()
    }

    /// Whether the id is one a request may carry: a string or an integer, never `null` (MCP [S-1]).
    ///
    /// [S-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
    pub fn has_valid_id(&self) -> bool {
        self.id.as_ref().is_some_and(is_valid_id)
    }

    /// The id an answer to this message may repeat: the id when it is valid, `null` otherwise.
    pub fn echoable_id(&self) -> Value {
        match &self.id {
            Some(id) if is_valid_id(id) => id.clone(),
            _ => Value::Null,
        }
    }

    /// The method, when the `method` member is a string (an unknown name is [`Method::Other`]).
    pub fn method(&self) -> Option<&Method> {
        self.method.as_ref()
    }

    /// `params` as sent, without its `_meta` (read that with [`Envelope::meta`]).
    pub fn params(&self) -> Option<&Value> {
        self.params.as_ref()
    }

    /// `params`, when it is an object (without its `_meta`).
    pub fn params_object(&self) -> Option<&Map<String, Value>> {
        self.params.as_ref().and_then(Value::as_object)
    }

    /// The string member `field` of `params` (the tool name, a resource URI), if there is one.
    pub fn param_str(&self, field: &str) -> Option<&str> {
        member(self.params_object()?, field)?.as_str()
    }

    /// The request's `params._meta`.
    pub fn meta(&self) -> &RequestMeta {
        &self.meta
    }

    /// Whether the message is a JSON-RPC request or notification as transports execute them:
    /// `"jsonrpc": "2.0"`, a string method, and no id or a valid one.
    pub fn is_call(&self) -> bool {
        self.jsonrpc && self.method.is_some() && self.id.as_ref().is_none_or(is_valid_id)
    }

    /// Whether the message is a JSON-RPC 2.0 response: `"jsonrpc": "2.0"`, an id, no `method`, and
    /// exactly one of `result` and `error`.
    pub fn is_response(&self) -> bool {
        self.jsonrpc && !self.method_sent && self.id.is_some() && self.answers
    }

    /// `protocol.md` [B-3.2]: `_meta` belongs inside `params`; one beside `method` is refused
    /// (`-32602`), on every transport, with the same words.
    ///
    /// [B-3.2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub fn top_level_meta(&self) -> Result<(), ErrorObject> {
        if self.top_level_meta { Err(ErrorObject::invalid_params(TOP_LEVEL_META)) } else { Ok(()) }
    }

    /// Takes the envelope apart: the id as sent, the method, `params` (without `_meta`) and
    /// `params._meta`.
    pub fn into_parts(self) -> (Option<Value>, Option<Method>, Option<Value>, RequestMeta) {
        (self.id, self.method, self.params, self.meta)
    }
}

/// What an envelope keeps of a message's members, gathered from a decoded map
/// ([`Envelope::from_object`]) or as the bytes are read ([`crate::read_envelope`]); each member's rule
/// is the one written in [`Envelope::from_object`].
#[derive(Debug, Default)]
pub(crate) struct Members {
    pub(crate) jsonrpc: bool,
    pub(crate) id: Option<Value>,
    pub(crate) method: Option<Method>,
    pub(crate) method_sent: bool,
    pub(crate) params: Option<Value>,
    /// `params._meta`, when the reader set it aside as it read `params`; `None`: still in `params`.
    pub(crate) meta: Option<RequestMeta>,
    pub(crate) top_level_meta: bool,
    pub(crate) has_result: bool,
    pub(crate) has_error: bool,
}

impl Members {
    /// The envelope: `params._meta` taken out of an object `params`, unless already set aside.
    pub(crate) fn into_envelope(self) -> Envelope {
        let Members {
            jsonrpc,
            id,
            method,
            method_sent,
            mut params,
            meta,
            top_level_meta,
            has_result,
            has_error,
        } = self;
        let meta = match (meta, &mut params) {
            (Some(meta), _) => meta,
            // Shifted out, so that the other members keep the order they were sent in (as when the
            // reader sets `_meta` aside).
            (None, Some(Value::Object(params))) => RequestMeta(params.shift_remove("_meta")),
            (None, _) => RequestMeta(None),
        };
        let answers = has_result != has_error;
        Envelope { jsonrpc, id, method, method_sent, params, meta, top_level_meta, answers }
    }
}

/// Objects with at most this many members are searched member by member rather than hashed: comparing
/// a few short keys costs less than one SipHash of the key (the `preserve_order` map's hasher), and a
/// request's own objects (the envelope's `params`, its `_meta`) hold a handful of members.
const SCANNED_MEMBERS: usize = 8;

/// The member `key` of `map`: compared member by member in a small object, looked up by hash in a
/// larger one (so that a caller's object of thousands of members still costs one look-up).
pub fn member<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= SCANNED_MEMBERS {
        map.iter().find_map(|(name, value)| (name == key).then_some(value))
    } else {
        map.get(key)
    }
}

/// The member `key` of `map`, moved out where it lies, a `null` left in its place (so nothing is
/// shifted): found as [`member`] finds it, for an object read for little else before it is dropped.
pub fn take_member(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if map.len() <= SCANNED_MEMBERS {
        map.iter_mut().find_map(|(name, value)| (name == key).then(|| value.take()))
    } else {
        map.get_mut(key).map(Value::take)
    }
}

/// A request id is a string or an integer (never null: MCP [S-1]).
///
/// [S-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// A request's `params._meta`, as sent: where a `2026-07-28` request declares its revision and
/// capabilities, and any request its progress token.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestMeta(Option<Value>);

impl RequestMeta {
    /// A `_meta` value as a request would carry it (`None`: absent).
    pub fn new(meta: Option<Value>) -> Self {
        Self(meta)
    }

    /// The value as sent, whatever its type; `None` when absent.
    pub fn value(&self) -> Option<&Value> {
        self.0.as_ref()
    }

    /// Whether `params._meta` was present (even `null`).
    pub fn is_present(&self) -> bool {
        self.0.is_some()
    }

    /// The member `key`, when `_meta` is an object holding it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        member(self.0.as_ref()?.as_object()?, key)
    }

    /// `protocol.md` [B-3.8]: `params._meta`, when present, is an object (`-32602` otherwise); `Ok(None)`
    /// when absent.
    ///
    /// [B-3.8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub fn object(&self) -> Result<Option<&Map<String, Value>>, ErrorObject> {
        match &self.0 {
            None => Ok(None),
            Some(Value::Object(meta)) => Ok(Some(meta)),
            Some(_) => Err(ErrorObject::invalid_params(META_NOT_OBJECT)),
        }
    }

    /// The declared `io.modelcontextprotocol/protocolVersion` member as sent, whatever its type.
    pub fn protocol_version(&self) -> Option<&Value> {
        self.get(META_PROTOCOL_VERSION)
    }

    /// The revision the request declares, read leniently: `None` when absent, not a string or not a
    /// revision this crate knows (whether it is served is the router's question).
    pub fn declared_version(&self) -> Option<ProtocolVersion> {
        self.protocol_version().and_then(Value::as_str).and_then(ProtocolVersion::parse)
    }

    /// The declared `io.modelcontextprotocol/clientCapabilities` member as sent, whatever its type.
    pub fn client_capabilities(&self) -> Option<&Value> {
        self.get(META_CLIENT_CAPABILITIES)
    }

    /// `protocol.md` [B-3.6] and HTTP [D-15]: a `2026-07-28` request declares its client's capabilities,
    /// as an object (`-32602` naming which is wrong otherwise).
    ///
    /// [B-3.6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    /// [D-15]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub fn require_capabilities(&self) -> Result<(), ErrorObject> {
        match self.client_capabilities() {
            None => Err(ErrorObject::invalid_params(META_CAPABILITIES_MISSING)),
            Some(Value::Object(_)) => Ok(()),
            Some(_) => Err(ErrorObject::invalid_params(META_CAPABILITIES_NOT_OBJECT)),
        }
    }

    /// The `io.modelcontextprotocol/logLevel` member as sent, whatever its type.
    pub fn log_level(&self) -> Option<&Value> {
        self.get(META_LOG_LEVEL)
    }

    /// The `progressToken` member as sent, whatever its type.
    pub fn progress_token(&self) -> Option<&Value> {
        self.get("progressToken")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn envelope(message: Value) -> Envelope {
        Envelope::from_value(message).expect("an object")
    }

    #[test]
    fn method_is_matched_once_and_unknown_names_are_kept() {
        let known = envelope(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}));
        assert_eq!(known.method(), Some(&Method::ToolsCall));
        let unknown = envelope(json!({"jsonrpc": "2.0", "id": 1, "method": "x/y"}));
        assert_eq!(unknown.method(), Some(&Method::Other("x/y".into())));
        assert_eq!(envelope(json!({"jsonrpc": "2.0", "id": 1, "method": 7})).method(), None);
    }

    #[test]
    fn take_member_moves_a_member_out_of_a_small_or_a_large_object() {
        let mut small = json!({"name": "t", "arguments": {"a": 1}}).as_object().cloned().expect("an object");
        assert_eq!(take_member(&mut small, "arguments"), Some(json!({"a": 1})));
        assert_eq!(small, *json!({"name": "t", "arguments": null}).as_object().expect("an object"));
        assert_eq!(take_member(&mut small, "absent"), None);
        let mut large: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!(i))).collect();
        assert_eq!(take_member(&mut large, "k7"), Some(json!(7)));
        assert_eq!(large.get("k7"), Some(&Value::Null), "a null left in its place in a large object too");
        assert_eq!(large.keys().nth(8).map(String::as_str), Some("k8"), "nothing shifted");
    }

    #[test]
    fn params_meta_is_taken_out_of_params() {
        let message = envelope(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "_meta": {"progressToken": 3}}}));
        assert_eq!(message.params(), Some(&json!({"name": "t"})));
        assert_eq!(message.meta().progress_token(), Some(&json!(3)));
        assert_eq!(message.param_str("name"), Some("t"));
    }

    #[test]
    fn meta_of_params_that_are_not_an_object_is_absent() {
        let message = envelope(json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]}));
        assert!(!message.meta().is_present());
        assert_eq!(message.params(), Some(&json!([1])));
    }

    #[test]
    fn batches_and_scalars_are_not_envelopes() {
        assert_eq!(Envelope::from_value(json!([])), Err(ErrorObject::batch()));
        assert_eq!(Envelope::from_value(json!(null)), Err(ErrorObject::not_an_object("null")));
        assert_eq!(Envelope::from_value(json!("x")), Err(ErrorObject::not_an_object("a string")));
    }

    #[test]
    fn only_string_and_integer_ids_are_echoed() {
        for (id, echoed) in [(json!(4), json!(4)), (json!("a"), json!("a")), (json!(1.5), Value::Null)] {
            let message = envelope(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
            assert_eq!(message.echoable_id(), echoed);
        }
        let null = envelope(json!({"jsonrpc": "2.0", "id": null, "method": "ping"}));
        assert!(null.has_id() && !null.has_valid_id() && !null.is_call());
    }

    #[test]
    fn a_response_has_an_id_no_method_and_one_outcome() {
        assert!(envelope(json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_response());
        assert!(!envelope(json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}})).is_response());
        assert!(!envelope(json!({"jsonrpc": "2.0", "id": 1, "method": 3, "result": {}})).is_response());
        assert!(!envelope(json!({"id": 1, "result": {}})).is_response());
    }

    #[test]
    fn top_level_meta_is_refused_with_one_message() {
        let message = envelope(json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "_meta": {}}));
        assert_eq!(message.top_level_meta(), Err(ErrorObject::invalid_params(TOP_LEVEL_META)));
    }

    #[test]
    fn meta_shape_rules_name_what_is_wrong() {
        assert_eq!(
            RequestMeta::new(Some(json!(5))).object(),
            Err(ErrorObject::invalid_params(META_NOT_OBJECT))
        );
        assert_eq!(RequestMeta::new(None).object(), Ok(None));
        let missing = RequestMeta::new(Some(json!({})));
        assert_eq!(
            missing.require_capabilities(),
            Err(ErrorObject::invalid_params(META_CAPABILITIES_MISSING))
        );
        let scalar = RequestMeta::new(Some(json!({META_CLIENT_CAPABILITIES: 1})));
        assert_eq!(
            scalar.require_capabilities(),
            Err(ErrorObject::invalid_params(META_CAPABILITIES_NOT_OBJECT))
        );
        let declared = RequestMeta::new(Some(json!({META_PROTOCOL_VERSION: "2026-07-28"})));
        assert_eq!(declared.declared_version(), Some(ProtocolVersion::parse("2026-07-28").expect("known")));
    }

    /// The envelope as look-ups by name would build it (what the one pass must equal).
    fn by_name(mut map: Map<String, Value>) -> Envelope {
        let jsonrpc = map.get("jsonrpc").and_then(Value::as_str) == Some(JSONRPC_VERSION);
        let id = map.remove("id");
        let (method, method_sent) = match map.remove("method") {
            Some(Value::String(name)) => (Some(Method::known(&name).unwrap_or(Method::Other(name))), true),
            Some(_) => (None, true),
            None => (None, false),
        };
        let mut params = map.remove("params");
        let meta = match &mut params {
            Some(Value::Object(params)) => RequestMeta(params.shift_remove("_meta")),
            _ => RequestMeta(None),
        };
        let top_level_meta = map.contains_key("_meta");
        let answers = map.contains_key("result") != map.contains_key("error");
        Envelope { jsonrpc, id, method, method_sent, params, meta, top_level_meta, answers }
    }

    proptest::proptest! {
        #[test]
        fn one_pass_over_the_members_sees_what_look_ups_by_name_see(
            members in proptest::collection::vec((0usize..10, 0usize..6), 0..10),
        ) {
            const KEYS: [&str; 10] =
                ["jsonrpc", "id", "method", "params", "_meta", "result", "error", "extra", "Id", "method "];
            let values = [
                json!("2.0"),
                json!("1.0"),
                json!(7),
                json!("tools/call"),
                json!({"_meta": {"progressToken": 1}, "name": "echo"}),
                json!([1, 2]),
            ];
            let map: Map<String, Value> =
                members.iter().map(|&(k, v)| (KEYS[k].to_owned(), values[v].clone())).collect();
            proptest::prop_assert_eq!(Envelope::from_object(map.clone()), by_name(map));
        }
    }
}
