//! The one bounded JSON reader both transports (stdio and HTTP) use.
//!
//! Every byte a client sends reaches the package through [`read_message`] (or, for opaque values such as
//! pagination cursors, [`read_value`]). The reader is deliberately stricter than a plain
//! `serde_json::from_slice`, because each bound below closes a known attack on JSON front ends:
//!
//! * **Nesting depth ([`MAX_DEPTH`]).** A body such as `[[[[…]]]]` costs a recursive decoder one stack frame
//!   per level and a tree builder one heap node per level; a few hundred kilobytes of brackets can overflow
//!   the stack (a crash, not an error) or pin memory far beyond the body's size. The decoder counts the
//!   levels it opens and stops at the first one past the cap, before building anything inside it, so a
//!   100,000-deep body is refused after reading 65 bytes of it. `serde_json`'s own recursion limit (128)
//!   sits above the cap, so this count is the bound that governs.
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
//! **One pass.** A body that is accepted is read once: the decode is the only walk over its bytes (a
//! well-formed body is neither empty nor deeper than the decoder's count admits). Only a body the decoder
//! refuses, for its syntax or its depth, is looked at again, to name the refusal in the order above: blank,
//! else nested past the cap anywhere outside strings (a linear scan that stops at the first level past it,
//! and counts a well-formed prefix exactly as the decoder does), else a parse error. So a malformed body
//! that is also too deep is refused as too deep, wherever its syntax error lies.
//!
//! Memory stays proportional to the input: the bytes are decoded in place (never copied), and the only
//! allocations are the resulting [`Value`] tree, which is what `serde_json` itself would build.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::ErrorObject;

mod envelope;

pub use envelope::read_envelope;

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
    let duplicate = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let seed = ValueSeed::<MAX_DEPTH>::new(&duplicate);
    let decoded = seed.deserialize(&mut deserializer).and_then(|value| deserializer.end().map(|()| value));
    match (decoded, duplicate.into_inner()) {
        (Ok(_), Some(key)) => Err(ReadError::DuplicateKey(key)),
        (Ok(value), None) => Ok(value),
        (Err(_), _) => Err(refusal_of_undecodable(bytes)),
    }
}

/// Why bytes the decoder refused are refused, in the documented order: blank, then too deep, then
/// malformed. Runs only on refused input, so an accepted body is walked once.
pub(super) fn refusal_of_undecodable(bytes: &[u8]) -> ReadError {
    if bytes.iter().all(|&b| is_json_whitespace(b)) {
        ReadError::Empty
    } else if exceeds_depth(bytes, MAX_DEPTH) {
        ReadError::TooDeep
    } else {
        ReadError::Parse
    }
}

/// The four whitespace bytes of RFC 8259 (nothing else, not even form feed).
fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// True when arrays and objects outside strings nest deeper than `max`. Stops at the first byte past it.
///
/// The scan tracks string state (quotes and backslash escapes) so that brackets inside strings do not
/// count. For well-formed JSON, and for a well-formed prefix, it measures exactly the nesting the decoder
/// recurses into; past a syntax error it may over- or under-count, which only decides which refusal a
/// body the decoder refused anyway gets (the one it got when this scan ran before the decode).
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

/// Decodes any JSON value into a [`Value`], recording the first repeated key it meets in `duplicate`
/// and refusing an array or object that would open a level past `MAX` ([`MAX_DEPTH`] in [`read_value`]).
///
/// A repeated key is not an error to the decoder: the seed notes it out of band and goes on, so that the
/// rest of the body is still checked for syntax and a caller's key text can never pose as this refusal.
/// A level too deep is an error, and nothing inside it is decoded; [`read_value`] then names the refusal.
#[derive(Clone, Copy)]
pub(super) struct ValueSeed<'a, const MAX: usize> {
    duplicate: &'a RefCell<Option<String>>,
    /// The arrays and objects open around the value this seed decodes (0 at the top level).
    depth: usize,
}

impl<'a, const MAX: usize> ValueSeed<'a, MAX> {
    /// The seed of a top-level value.
    pub(super) fn new(duplicate: &'a RefCell<Option<String>>) -> Self {
        Self { duplicate, depth: 0 }
    }

    /// The seed of a value inside the array or object this seed opens; an error past `MAX`.
    pub(super) fn inner<E: de::Error>(self) -> Result<Self, E> {
        if self.depth >= MAX {
            return Err(E::custom("nested too deep"));
        }
        Ok(ValueSeed { depth: self.depth + 1, ..self })
    }

    /// Records `key` as the body's repeated key, unless an earlier repeat was recorded.
    pub(super) fn note_repeat(&self, key: &str) {
        let mut duplicate = self.duplicate.borrow_mut();
        if duplicate.is_none() {
            *duplicate = Some(key.to_owned());
        }
    }
}

impl<'de, const MAX: usize> DeserializeSeed<'de> for ValueSeed<'_, MAX> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, const MAX: usize> Visitor<'de> for ValueSeed<'_, MAX> {
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
        let inner = self.inner()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        // A growing Vec keeps room for more: `[[[0]]]` would cost four Values per one-element array.
        // Trimming bounds the decoded tree to one Value per JSON value.
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let inner = self.inner()?;
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            match map.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(access.next_value_seed(inner)?);
                }
                Entry::Occupied(entry) => {
                    // Remember the first repeat only, then decode the repeated entry's value as strictly
                    // as any other (a malformed value is a parse error, not a duplicate) and drop it.
                    self.note_repeat(entry.key());
                    let _repeated: Value = access.next_value_seed(inner)?;
                }
            }
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reader as it was when the depth was a pre-scan before the decode: the oracle of the order of
    /// refusals. Emptiness, then the scan, then a decode that counts no depth (`serde_json`'s own limit
    /// sits above the scan's), then duplicate keys.
    fn read_value_prescan(bytes: &[u8]) -> Result<Value, ReadError> {
        if bytes.iter().all(|&b| is_json_whitespace(b)) {
            return Err(ReadError::Empty);
        }
        if exceeds_depth(bytes, MAX_DEPTH) {
            return Err(ReadError::TooDeep);
        }
        let duplicate = RefCell::new(None);
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        let value = ValueSeed::<{ usize::MAX }>::new(&duplicate)
            .deserialize(&mut deserializer)
            .and_then(|value| deserializer.end().map(|()| value))
            .map_err(|_| ReadError::Parse)?;
        match duplicate.into_inner() {
            Some(key) => Err(ReadError::DuplicateKey(key)),
            None => Ok(value),
        }
    }

    /// `n` levels: arrays and objects by the bits of `shape`, the objects' key `k`.
    fn open(n: usize, shape: u64) -> String {
        (0..n).map(|i| if shape >> (i % 64) & 1 == 0 { "[" } else { r#"{"k":"# }).collect()
    }

    /// What closes `open(n, shape)`.
    fn close(n: usize, shape: u64) -> String {
        (0..n).rev().map(|i| if shape >> (i % 64) & 1 == 0 { "]" } else { "}" }).collect()
    }

    /// A piece of a body: JSON tokens, string tricks, syntax errors, and runs of brackets near the cap.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "[", "]", "{", "}", ",", ":", " ", "\n", "1", "-0.5", "true", "null", r#""k":"#, r#""s""#,
                r#""[{""#, r#""\\""#, r#""\"[""#, "\"", "\\", "1e400", "nul", "x", "\u{e9}",
            ])
            .prop_map(str::to_owned),
            (55usize..70, any::<u64>()).prop_map(|(n, shape)| open(n, shape)),
            (55usize..70, any::<u64>()).prop_map(|(n, shape)| close(n, shape)),
        ]
    }

    /// A body near the cap: a well-formed nesting of 60 to 68 levels with duplicate keys, values with
    /// brackets in strings and a syntax error here and there, or a soup of pieces.
    fn body() -> impl Strategy<Value = Vec<u8>> {
        let inside = prop_oneof![Just(Vec::new()), prop::collection::vec(piece(), 1..3)];
        let nested =
            (60usize..=68, any::<u64>(), inside, any::<bool>()).prop_map(|(n, shape, inside, repeat)| {
                let middle = if repeat { r#"{"d":1,"d":"[[["}"# } else { r#""]]""# };
                format!("{}{middle}{}{}", open(n, shape), inside.concat(), close(n, shape))
            });
        let soup = prop::collection::vec(piece(), 0..12).prop_map(|pieces| pieces.concat());
        (
            prop_oneof![3 => nested, 1 => soup],
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            0u8..6,
        )
            .prop_map(|(text, cut, at, mutation)| mangle(text.into_bytes(), cut, at, mutation))
    }

    /// `bytes` as `mutation` leaves them: 0 cut short at `cut`, 1 a byte that is not UTF-8 inserted at
    /// `at`, 2 a stray quote written at `at`, anything else as they are.
    pub(super) fn mangle(
        mut bytes: Vec<u8>,
        cut: prop::sample::Index,
        at: prop::sample::Index,
        mutation: u8,
    ) -> Vec<u8> {
        match mutation {
            0 if !bytes.is_empty() => bytes.truncate(cut.index(bytes.len())),
            1 => bytes.insert(at.index(bytes.len() + 1), b'\xff'),
            2 if !bytes.is_empty() => {
                let at = at.index(bytes.len());
                bytes[at] = b'"';
            }
            _ => {}
        }
        bytes
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]

        #[test]
        fn refusal_order_matches_the_prescan_oracle(bytes in body()) {
            prop_assert_eq!(read_value(&bytes), read_value_prescan(&bytes), "{}", String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn refusal_order_matches_the_prescan_oracle_on_the_edges() {
        let deep = |n| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let cases = [
            String::new(),
            " \t\r\n".to_owned(),
            deep(64),
            deep(65),
            format!(r#"{{"a":1,"a":2,"b":{}}}"#, deep(64)),
            format!(r#"{{"a":1,"a":2,"b":{}}}"#, deep(63)),
            format!(r#"{{"a":nul,"b":{}}}"#, deep(64)),
            format!(r#"["\\",{}]"#, deep(64)),
            format!(r#"["\"[",{}]"#, deep(63)),
            format!("{} x", deep(65)),
            format!("{}\u{ff}", "[".repeat(64)),
        ];
        for case in cases {
            assert_eq!(read_value(case.as_bytes()), read_value_prescan(case.as_bytes()), "{case}");
        }
    }

    #[test]
    fn depth_is_refused_before_a_later_syntax_error() {
        let body = format!(r#"{{"a":{},"b":nul}}"#, "[".repeat(70));
        assert_eq!(read_value(body.as_bytes()), Err(ReadError::TooDeep));
        let cut = format!(r#"{{"a":{}"#, "[".repeat(64));
        assert_eq!(read_value(cut.as_bytes()), Err(ReadError::TooDeep));
    }

    #[test]
    fn depth_is_refused_before_an_earlier_syntax_error() {
        // The decoder stops at `nul` and never reaches the deep part: the refusal is still the depth.
        let body = format!(r#"{{"a":nul,"b":{}{}}}"#, "[".repeat(64), "]".repeat(64));
        assert_eq!(read_value(body.as_bytes()), Err(ReadError::TooDeep));
        let body = format!(r#"{{"a":"\xff","b":{}{}}}"#, "[".repeat(64), "]".repeat(64));
        assert_eq!(read_value(body.as_bytes()), Err(ReadError::TooDeep));
    }

    #[test]
    fn depth_is_refused_before_a_duplicate_key() {
        let body = format!(r#"{{"a":1,"a":2,"b":{}{}}}"#, "[".repeat(64), "]".repeat(64));
        assert_eq!(read_value(body.as_bytes()), Err(ReadError::TooDeep));
    }

    #[test]
    fn the_decoder_counts_the_levels_and_stops_past_the_cap() {
        let decode = |depth: usize| {
            let body = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let duplicate = RefCell::new(None);
            let mut deserializer = serde_json::Deserializer::from_slice(body.as_bytes());
            ValueSeed::<MAX_DEPTH>::new(&duplicate).deserialize(&mut deserializer).is_ok()
        };
        assert!(decode(MAX_DEPTH));
        assert!(!decode(MAX_DEPTH + 1));
        // 100,000 levels stop at the 65th, far inside serde_json's own limit and the stack.
        assert!(!decode(100_000));
    }

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
