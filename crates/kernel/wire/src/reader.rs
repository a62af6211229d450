//! The one bounded JSON reader both transports (stdio and HTTP) use.
//!
//! Every byte a client sends reaches the package through [`read_message`] (or, for opaque values such as
//! pagination cursors, [`read_value`]). The reader is deliberately stricter than a plain
//! `serde_json::from_slice`, because each bound below closes a known attack on JSON front ends:
//!
//! * **Nesting depth ([`MAX_DEPTH`]).** A body such as `[[[[…]]]]` costs a recursive decoder one stack frame
//!   per level and a tree builder one heap node per level; a few hundred kilobytes of brackets can overflow
//!   the stack (a crash, not an error) or pin memory far beyond the body's size. The depth is measured by a
//!   linear pre-scan over the raw bytes *before* anything is decoded, and the scan stops at the first level
//!   past the cap, so a 100,000-deep body is refused after reading 65 bytes of it. `serde_json`'s own
//!   recursion limit (128) sits above the cap, so this pre-scan is the bound that governs.
//! * **Duplicate keys.** JSON leaves `{"a":1,"a":2}` undefined: one parser keeps the first value, another
//!   the last, a third both. When a proxy, an authorizer or a logger parses the same bytes as the server,
//!   a repeated key lets a caller show each of them a different message (request smuggling, e.g. a
//!   harmless `method` to the gate and a dangerous one to the router). Any object, at any depth, that
//!   repeats a key is refused; keys are compared as decoded strings, so `"a"` and `"\u0061"` are the same
//!   key. The check is one hash look-up per key, keeping the read linear.
//! * **Shape.** A JSON-RPC message is an object. Anything else at the top level — notably an array, which
//!   is a JSON-RPC batch, served by neither protocol revision — is refused by [`read_message`] with
//!   [`ReadError::NotAnObject`], naming only the kind of value found.
//!
//! Refusals come in a fixed order: emptiness, then depth, then decoding (any syntax error anywhere in the
//! body, invalid UTF-8, trailing bytes, a number out of range), then duplicate keys, then shape. A repeated
//! key is recorded out of band by the decoder (never through an error message a caller's text could
//! imitate), and the body is still decoded to the end, so a body that is both malformed and repetitive is
//! always a parse error.
//!
//! Memory stays proportional to the input: the bytes are decoded in place (never copied), and the only
//! allocations are the resulting [`Value`] tree, which is what `serde_json` itself would build.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::ErrorObject;

/// The deepest nesting of arrays and objects admitted; a top-level `{}` is depth 1.
pub const MAX_DEPTH: usize = 64;

/// Why bytes were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The input is empty or only JSON whitespace.
    Empty,
    /// The input is not one well-formed JSON value (including invalid UTF-8 and trailing bytes).
    Parse,
    /// The top level is well-formed JSON but not an object (an array is a batch).
    NotAnObject(JsonKind),
    /// Arrays and objects nest deeper than [`MAX_DEPTH`].
    TooDeep,
    /// An object, at any depth, repeats this (decoded) key.
    DuplicateKey(String),
}

/// The kind of a top-level JSON value that is not an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonKind {
    /// `[…]`, i.e. a JSON-RPC batch.
    Array,
    /// `"…"`.
    String,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

impl JsonKind {
    /// The kind with its article, as the error message names it.
    fn described(self) -> &'static str {
        match self {
            JsonKind::Array => "an array",
            JsonKind::String => "a string",
            JsonKind::Number => "a number",
            JsonKind::Bool => "a boolean",
            JsonKind::Null => "null",
        }
    }
}

impl ReadError {
    /// The JSON-RPC error object this refusal is answered with.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            ReadError::Empty => ErrorObject::empty_body(),
            ReadError::Parse => ErrorObject::parse_error(),
            ReadError::NotAnObject(kind) => ErrorObject::not_an_object(kind.described()),
            ReadError::TooDeep => ErrorObject::too_deep(MAX_DEPTH),
            ReadError::DuplicateKey(key) => ErrorObject::duplicate_key(key),
        }
    }

    /// The HTTP status a Streamable HTTP endpoint answers this refusal with (always 400).
    pub fn http_status(&self) -> u16 {
        400
    }

    /// The JSON-RPC error code: -32700 for an empty or malformed body, -32600 otherwise.
    pub fn code(&self) -> i64 {
        match self {
            ReadError::Empty | ReadError::Parse => crate::code::PARSE_ERROR,
            ReadError::NotAnObject(_) | ReadError::TooDeep | ReadError::DuplicateKey(_) => {
                crate::code::INVALID_REQUEST
            }
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_error_object().message)
    }
}

impl std::error::Error for ReadError {}

/// Reads one JSON-RPC message: must be a JSON object at top level.
pub fn read_message(bytes: &[u8]) -> Result<Map<String, Value>, ReadError> {
    match read_value(bytes)? {
        Value::Object(map) => Ok(map),
        Value::Array(_) => Err(ReadError::NotAnObject(JsonKind::Array)),
        Value::String(_) => Err(ReadError::NotAnObject(JsonKind::String)),
        Value::Number(_) => Err(ReadError::NotAnObject(JsonKind::Number)),
        Value::Bool(_) => Err(ReadError::NotAnObject(JsonKind::Bool)),
        Value::Null => Err(ReadError::NotAnObject(JsonKind::Null)),
    }
}

/// Same bounds (depth, duplicate keys) but any top-level value is admitted (used to decode cursors).
pub fn read_value(bytes: &[u8]) -> Result<Value, ReadError> {
    if bytes.iter().all(|&b| is_json_whitespace(b)) {
        return Err(ReadError::Empty);
    }
    if exceeds_depth(bytes, MAX_DEPTH) {
        return Err(ReadError::TooDeep);
    }
    let duplicate = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let seed = ValueSeed { duplicate: &duplicate };
    let value = seed
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|_| ReadError::Parse)?;
    match duplicate.into_inner() {
        Some(key) => Err(ReadError::DuplicateKey(key)),
        None => Ok(value),
    }
}

/// The four whitespace bytes of RFC 8259 (nothing else, not even form feed).
fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// True when arrays and objects outside strings nest deeper than `max`. Stops at the first byte past it.
///
/// The scan tracks string state (quotes and backslash escapes) so that brackets inside strings do not
/// count. For well-formed JSON it measures exactly the nesting the decoder would recurse into; for
/// malformed JSON it may over- or under-count, which is harmless: the decoder refuses such input anyway,
/// and its own recursion limit stays above `max`.
fn exceeds_depth(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        at += 1;
        match b {
            b'"' => {
                // Skip the string: jump from one quote or backslash to the next.
                loop {
                    match bytes[at.min(bytes.len())..].iter().position(|&c| c == b'"' || c == b'\\') {
                        None => return false,
                        Some(offset) => {
                            at += offset;
                            if bytes[at] == b'"' {
                                at += 1;
                                break;
                            }
                            at += 2; // a backslash and the byte it escapes
                        }
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Decodes any JSON value into a [`Value`], recording the first repeated key it meets in `duplicate`.
///
/// A repeated key is not an error to the decoder: the seed notes it out of band and goes on, so that the
/// rest of the body is still checked for syntax and a caller's key text can never pose as this refusal.
#[derive(Clone, Copy)]
struct ValueSeed<'a> {
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // serde_json refuses non-finite numbers itself; mirror its `Value` for completeness.
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        // A growing Vec keeps room for more: `[[[0]]]` would cost four Values per one-element array.
        // Trimming bounds the decoded tree to one Value per JSON value.
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            match map.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(access.next_value_seed(self)?);
                }
                Entry::Occupied(entry) => {
                    // Remember the first repeat only, then decode the repeated entry's value as strictly
                    // as any other (a malformed value is a parse error, not a duplicate) and drop it.
                    {
                        let mut duplicate = self.duplicate.borrow_mut();
                        if duplicate.is_none() {
                            *duplicate = Some(entry.key().clone());
                        }
                    }
                    let _repeated: Value = access.next_value_seed(self)?;
                }
            }
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_scan_counts_containers_outside_strings_only() {
        assert!(!exceeds_depth(b"{}", 1));
        assert!(exceeds_depth(b"[{}]", 1));
        assert!(!exceeds_depth(br#"["[[[", "\"[[", "\\"]"#, 1));
        assert!(exceeds_depth(br#"["\\", []]"#, 1));
        assert!(!exceeds_depth(b"]]]]{", 1));
    }

    #[test]
    fn kinds_are_described_with_their_article() {
        assert_eq!(JsonKind::Array.described(), "an array");
        assert_eq!(JsonKind::Bool.described(), "a boolean");
        assert_eq!(JsonKind::Null.described(), "null");
    }
}
