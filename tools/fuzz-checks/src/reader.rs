//! Target `reader`: the bounded JSON reader (`read_value`, `read_message`, `read_envelope`).
//!
//! Laws: never panics; on input `serde_json` accepts, the reader either returns the same value or
//! refuses with exactly the bound that applies (depth past [`MAX_DEPTH`], then a repeated key); input
//! `serde_json` refuses is never accepted; `read_message` is `read_value` restricted to objects; and
//! `read_envelope` is `read_message` then `Envelope::from_object`, refusals included.

use std::collections::HashSet;
use std::fmt;

use mcp_kernel_wire::reader::{JsonKind, ReadError, read_envelope, read_message, read_value};
use mcp_kernel_wire::{Envelope, MAX_DEPTH, code};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Checks the reader's laws on `data`; panics when one is broken.
pub fn reader(data: &[u8]) {
    let ours = read_value(data);
    let reference: Option<Value> = serde_json::from_slice(data).ok();
    match (&ours, &reference) {
        (Ok(value), Some(expected)) => {
            assert_eq!(value, expected, "the reader and serde_json disagree on accepted input");
            assert!(depth(value) <= MAX_DEPTH, "accepted a value nested deeper than MAX_DEPTH");
        }
        (Ok(_), None) => panic!("the reader accepted input serde_json refuses"),
        (Err(ReadError::TooDeep), Some(expected)) => {
            assert!(depth(expected) > MAX_DEPTH, "refused as too deep a value within MAX_DEPTH");
        }
        (Err(ReadError::DuplicateKey(key)), Some(expected)) => {
            assert!(depth(expected) <= MAX_DEPTH, "a too-deep value must be refused as such first");
            let repeated = first_repeated_key(data);
            assert_eq!(repeated.as_ref(), Some(key), "refused a repeated key the oracle does not see");
        }
        (Err(error), Some(expected)) => {
            let repeated = first_repeated_key(data);
            panic!(
                "refused well-formed JSON as {error:?} (depth {}, repeated key {repeated:?})",
                depth(expected)
            );
        }
        (Err(ReadError::Empty), None) => {
            assert!(
                data.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')),
                "Empty for non-blank input"
            );
        }
        (Err(_), None) => {}
    }
    if ours.is_ok() {
        assert!(first_repeated_key(data).is_none(), "accepted an object that repeats a key");
    }
    if let Err(error) = &ours {
        let object = error.to_error_object();
        assert!(object.code == code::PARSE_ERROR || object.code == code::INVALID_REQUEST);
        assert_eq!(object.code, error.code());
        assert_eq!(error.http_status(), 400);
        let _ = error.to_string();
    }

    // read_envelope reads what read_message and from_object read, in one pass.
    let message = read_message(data);
    let (once, oracle) = (read_envelope(data), message.clone().map(Envelope::from_object));
    // A map's `==` ignores member order; the order `params` keeps is compared as written.
    let params = |read: &Result<Envelope, ReadError>| read.as_ref().ok().map(|e| format!("{:?}", e.params()));
    assert_eq!(params(&once), params(&oracle), "read_envelope orders params otherwise");
    assert_eq!(once, oracle, "read_envelope disagrees with read_message and Envelope::from_object");

    // read_message is read_value restricted to objects.
    match (message, ours) {
        (Ok(map), Ok(Value::Object(expected))) => assert_eq!(map, expected),
        (Err(ReadError::NotAnObject(kind)), Ok(value)) => assert_eq!(Some(kind), kind_of(&value)),
        (Err(a), Err(b)) => assert_eq!(a, b, "read_message and read_value refuse differently"),
        (got, expected) => panic!("read_message {got:?} disagrees with read_value {expected:?}"),
    }
}

/// The nesting depth of arrays and objects (a scalar is 0, `{}` is 1). Iterative, so never overflows.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, above)) = stack.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(above + 1);
                stack.extend(items.iter().map(|item| (item, above + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(above + 1);
                stack.extend(map.values().map(|item| (item, above + 1)));
            }
            _ => {}
        }
    }
    deepest
}

fn kind_of(value: &Value) -> Option<JsonKind> {
    match value {
        Value::Object(_) => None,
        Value::Array(_) => Some(JsonKind::Array),
        Value::String(_) => Some(JsonKind::String),
        Value::Number(_) => Some(JsonKind::Number),
        Value::Bool(_) => Some(JsonKind::Bool),
        Value::Null => Some(JsonKind::Null),
    }
}

/// The first key (in document order) an object repeats, found by an independent decoder; `None` when
/// no object repeats a key or the input is not JSON serde_json reads.
fn first_repeated_key(data: &[u8]) -> Option<String> {
    let mut deserializer = serde_json::Deserializer::from_slice(data);
    let found = Repeats::deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    found.0
}

/// The first repeated key of a JSON value, if any.
struct Repeats(Option<String>);

impl<'de> Deserialize<'de> for Repeats {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RepeatsVisitor)
    }
}

struct RepeatsVisitor;

impl<'de> Visitor<'de> for RepeatsVisitor {
    type Value = Repeats;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("JSON")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Repeats, E> {
        Ok(Repeats(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Repeats, E> {
        Ok(Repeats(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Repeats, E> {
        Ok(Repeats(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Repeats, E> {
        Ok(Repeats(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Repeats, E> {
        Ok(Repeats(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Repeats, E> {
        Ok(Repeats(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Repeats, A::Error> {
        let mut first = None;
        while let Some(Repeats(found)) = seq.next_element::<Repeats>()? {
            first = first.or(found);
        }
        Ok(Repeats(first))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Repeats, A::Error> {
        let mut seen = HashSet::new();
        let mut first = None;
        while let Some(key) = map.next_key::<String>()? {
            let Repeats(inner) = map.next_value::<Repeats>()?;
            // The reader reports the first repeat in document order: a key repeated here comes before
            // any repeat inside this entry's value only if the repeat is this key itself.
            if seen.contains(&key) {
                first = first.or(Some(key));
            } else {
                first = first.or(inner);
                seen.insert(key);
            }
        }
        Ok(Repeats(first))
    }
}
