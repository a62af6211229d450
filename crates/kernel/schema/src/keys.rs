//! Declared argument keys: the root schema's `properties`, interned once at compile time.
//!
//! Callers pick declared arguments out of a request by iterating these keys and looking
//! each one up in the caller's map, so no key string is ever allocated from caller input:
//! a request with ten thousand undeclared keys costs one lookup per *declared* key.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::CompiledSchema;

/// The keys of the root `properties` object, in schema order.
pub(crate) fn declared(schema: &Value) -> Vec<Arc<str>> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(|key| Arc::from(key.as_str())).collect())
        .unwrap_or_default()
}

impl CompiledSchema {
    /// The root schema's `properties` keys, in schema order, shared for the schema's lifetime.
    #[must_use]
    pub fn declared_keys(&self) -> &[Arc<str>] {
        &self.declared
    }

    /// The caller's declared arguments, in schema order, keyed by the schema's own `Arc`s.
    ///
    /// Undeclared keys in `arguments` are skipped without being read or copied.
    pub fn select_declared<'a, 'm>(
        &'a self,
        arguments: &'m Map<String, Value>,
    ) -> impl Iterator<Item = (&'a Arc<str>, &'m Value)> {
        self.declared.iter().filter_map(move |key| arguments.get(&**key).map(|value| (key, value)))
    }
}
