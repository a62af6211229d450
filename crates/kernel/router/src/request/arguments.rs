//! The arguments handed to the host: only the keys the host's schema declares.
//!
//! Threat: a caller who sends thousands of distinct keys must not grow anything the process keeps, and
//! a host must never see a key it did not declare. Every key here is an `Arc<str>` cloned from the
//! compiled schema when the server was built; the caller's key strings are dropped with the request.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Up to this many declared keys and sent members, the keys are matched by comparison rather than by
/// hash: a handful of short comparisons costs less than hashing each declared key.
const SCANNED_KEYS: usize = 8;

/// The validated arguments of a call, keyed by the names the host's schema declares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arguments {
    entries: Vec<(Arc<str>, Value)>,
}

impl Arguments {
    /// Picks the declared keys out of a caller's map, moving their values. Undeclared keys are dropped.
    pub(crate) fn select(declared: &[Arc<str>], mut wire: Map<String, Value>) -> Self {
        let mut entries = Vec::with_capacity(declared.len().min(wire.len()));
        if declared.len() <= SCANNED_KEYS && wire.len() <= SCANNED_KEYS {
            // A few keys: compared member by member (no hashing), then put in schema order.
            let mut slots: [Option<Value>; SCANNED_KEYS] = Default::default();
            for (name, value) in wire {
                if let Some(at) = declared.iter().position(|key| **key == *name) {
                    slots[at] = Some(value);
                }
            }
            // Taken where they are: iterating the array by value would first copy it whole.
            for (key, slot) in declared.iter().zip(&mut slots) {
                if let Some(value) = slot.take() {
                    entries.push((Arc::clone(key), value));
                }
            }
            return Self { entries };
        }
        for key in declared {
            if let Some(value) = wire.remove(key.as_ref()) {
                entries.push((Arc::clone(key), value));
            }
        }
        Self { entries }
    }

    /// Arguments built by hand, for testing host code (the package builds them from a validated call).
    pub fn from_map(map: Map<String, Value>) -> Self {
        Self { entries: map.into_iter().map(|(k, v)| (Arc::from(k), v)).collect() }
    }

    /// The value of a declared key, if the caller sent it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k.as_ref() == key).map(|(_, v)| v)
    }

    /// The value of a declared key as a string slice, if it is a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// Moves the value of a declared key out, if the caller sent it (the key is then absent): a host
    /// that keeps a long string or a large array takes it without a copy, where [`get`](Self::get)
    /// would have it cloned.
    pub fn take(&mut self, key: &str) -> Option<Value> {
        let at = self.entries.iter().position(|(k, _)| k.as_ref() == key)?;
        Some(self.entries.remove(at).1)
    }

    /// Iterates the (declared key, value) pairs in schema order.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// How many declared keys the caller sent (and the host has not [taken](Self::take)).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no declared key is left: the caller sent none, or the host [took](Self::take) them.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The arguments as one JSON object (without the keys the host [took](Self::take)).
    pub fn to_value(&self) -> Value {
        Value::Object(self.entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    /// The arguments as one JSON object, their values moved rather than cloned.
    pub fn into_value(self) -> Value {
        Value::Object(self.entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// Deserializes the arguments into a host type (from a copy: [`into_value`](Self::into_value) and
    /// `serde_json::from_value` deserialize them without one).
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_value(self.to_value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_taken_value_is_moved_out_and_its_key_is_then_absent() {
        let declared: Vec<Arc<str>> = vec![Arc::from("text"), Arc::from("n")];
        let wire = json!({"text": "x".repeat(64), "n": 1}).as_object().cloned().unwrap();
        let mut args = Arguments::select(&declared, wire);
        let at = args.get_str("text").map(str::as_ptr);
        let Some(Value::String(text)) = args.take("text") else { panic!("the text is taken") };
        assert_eq!(Some(text.as_ptr()), at, "moved, not copied");
        assert_eq!(args.take("text"), None);
        assert_eq!(args.take("undeclared"), None);
        assert_eq!(args.into_value(), json!({"n": 1}));
    }

    #[test]
    fn keeps_only_declared_keys_with_the_schema_arcs() {
        let declared: Vec<Arc<str>> = vec![Arc::from("place"), Arc::from("unit")];
        let wire = json!({"place": "Oslo", "extra": 1}).as_object().cloned().unwrap();
        let args = Arguments::select(&declared, wire);
        assert_eq!(args.len(), 1);
        let (key, value) = args.iter().next().unwrap();
        assert!(Arc::ptr_eq(key, &declared[0]));
        assert_eq!(value, &json!("Oslo"));
        assert_eq!(args.get("extra"), None);
    }

    #[test]
    fn small_and_large_calls_pick_the_declared_keys_in_schema_order() {
        // At and below `SCANNED_KEYS` the keys are compared, above it looked up: the same picks either way.
        for count in [1, 3, SCANNED_KEYS, SCANNED_KEYS + 1, 40] {
            let declared: Vec<Arc<str>> = (0..count).rev().map(|i| Arc::from(format!("k{i}"))).collect();
            let mut wire = Map::new();
            for i in (0..count).step_by(2) {
                wire.insert(format!("k{i}"), json!(i));
            }
            wire.insert("undeclared".to_owned(), json!(true));
            let args = Arguments::select(&declared, wire);
            let picked: Vec<(String, Value)> = args.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            let expected: Vec<(String, Value)> = declared
                .iter()
                .filter_map(|k| {
                    k[1..].parse::<usize>().ok().filter(|i| i % 2 == 0).map(|i| (k.to_string(), json!(i)))
                })
                .collect();
            assert_eq!(picked, expected, "{count} declared keys");
        }
    }

    #[test]
    fn deserializes_into_a_host_struct() {
        #[derive(serde::Deserialize)]
        struct P {
            place: String,
        }
        let declared: Vec<Arc<str>> = vec![Arc::from("place")];
        let args = Arguments::select(&declared, json!({"place": "Lima"}).as_object().cloned().unwrap());
        assert_eq!(args.deserialize::<P>().unwrap().place, "Lima");
    }
}
