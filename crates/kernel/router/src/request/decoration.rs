//! [B-5]: what a `2026-07-28` result carries besides its own members — `resultType` (`complete`, unless
//! the handler wrote `input_required`) and the server's identity in `_meta`.
//!
//! Written once, in two forms: [`Decoration::apply`] for a result held as a [`Value`], and
//! [`Decoration::append`] for a result the core encodes straight to bytes. The identity is encoded when
//! the server is built, so neither form builds it per request.
//!
//! [B-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

use serde::ser::SerializeMap;
use serde_json::map::Entry;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use mcp_kernel_wire::version::META_SERVER_INFO;

/// The decoration of one server, built once.
pub(crate) struct Decoration {
    /// The server's `Implementation` object.
    server_info: Value,
    /// `{"io.modelcontextprotocol/serverInfo": server_info}`.
    result_meta: Value,
    /// The same `_meta` object, encoded.
    result_meta_bytes: Box<RawValue>,
}

impl Decoration {
    /// The decoration for a server with this identity (an encoded `Implementation`).
    pub(crate) fn new(server_info: Value) -> Self {
        let result_meta = json!({ META_SERVER_INFO: server_info.clone() });
        // A Value always encodes: its keys are strings.
        let result_meta_bytes = serde_json::value::to_raw_value(&result_meta)
            .unwrap_or_else(|_| RawValue::from_string("{}".to_owned()).expect("`{}` is JSON"));
        Self { server_info, result_meta, result_meta_bytes }
    }

    /// The decoration added to a result object (anything else is left as it is). A handler's own
    /// `_meta` object keeps its members and gains the identity; a `_meta` that is not an object is
    /// replaced.
    pub(crate) fn apply(&self, mut result: Value) -> Value {
        if let Value::Object(map) = &mut result {
            // Entries, not a look-up then an insert: each key is hashed once.
            map.entry("resultType").or_insert_with(|| Value::from("complete"));
            match map.entry("_meta") {
                Entry::Occupied(mut slot) => match slot.get_mut() {
                    Value::Object(meta) => {
                        meta.insert(META_SERVER_INFO.into(), self.server_info.clone());
                    }
                    other => *other = self.result_meta.clone(),
                },
                Entry::Vacant(slot) => {
                    slot.insert(self.result_meta.clone());
                }
            }
        }
        result
    }

    /// The decoration's members, written after a complete result's own (which hold neither
    /// `resultType` nor `_meta`): the bytes [`Decoration::apply`] would give that result.
    pub(crate) fn append<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("resultType", "complete")?;
        map.serialize_entry("_meta", &*self.result_meta_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use serde::Serializer;

    struct Appended<'a>(&'a Decoration);

    impl Serialize for Appended<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("content", &[] as &[Value])?;
            self.0.append(&mut map)?;
            map.end()
        }
    }

    #[test]
    fn appended_bytes_are_the_applied_value() {
        let decoration = Decoration::new(json!({"name": "n", "version": "1"}));
        let applied = decoration.apply(json!({"content": []}));
        assert_eq!(serde_json::to_string(&Appended(&decoration)).unwrap(), applied.to_string());
    }

    #[test]
    fn a_handlers_meta_object_keeps_its_members() {
        let decoration = Decoration::new(json!({"name": "n", "version": "1"}));
        let applied = decoration.apply(json!({"_meta": {"k": 1}, "resultType": "input_required"}));
        assert_eq!(
            applied,
            json!({"_meta": {"k": 1, META_SERVER_INFO: {"name": "n", "version": "1"}}, "resultType": "input_required"})
        );
        let replaced = decoration.apply(json!({"_meta": 3}));
        assert_eq!(replaced["_meta"], json!({ META_SERVER_INFO: {"name": "n", "version": "1"} }));
    }
}
