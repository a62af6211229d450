//! The shape of an answer on the 2025-11-25 path (`legacy.rs`): every JSON-RPC response 200 but a host
//! fault, and results without the 2026-07-28 cache hints. Kept apart from that path's checks so that
//! the shared tail (`dispatch/`) writes legacy answers without depending on the path that calls it.

use http::StatusCode;
use mcp_kernel_wire::{Payload, Response as JsonRpcResponse, code};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::response::body::ResponseBody;

/// 2025-11-25 results carry no cache hints ([S-64] item 8); the core writes them in both eras. A result
/// the core encoded to bytes (`tools/list`) has its top-level members read as raw JSON, never as a
/// [`Value`]: the members are copied as they are, whatever they nest (a `Value` read back is refused
/// past serde_json's recursion limit, 128), and the modern path pays nothing for it.
///
/// [S-64]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub(crate) fn strip_cache_hints(response: &mut JsonRpcResponse) {
    match &mut response.body {
        Ok(Payload::Value(Value::Object(result))) => {
            result.remove("ttlMs");
            result.remove("cacheScope");
        }
        // Only a member named so, or a string so, writes `"cacheScope"` unescaped.
        Ok(Payload::Encoded(encoded)) if encoded.get().contains("\"cacheScope\"") => {
            if let Some(stripped) = without_cache_hints(encoded.get()) {
                *encoded = stripped.into();
            }
        }
        _ => {}
    }
}

/// An encoded result object without its top-level `ttlMs` and `cacheScope`, the other members in
/// their order and byte for byte; `None` for anything but an object.
fn without_cache_hints(json: &str) -> Option<Box<RawValue>> {
    let Members(members) = serde_json::from_str(json).ok()?;
    let kept =
        Members(members.into_iter().filter(|(key, _)| key != "ttlMs" && key != "cacheScope").collect());
    serde_json::value::to_raw_value(&kept).ok()
}

/// The top-level members of an object, each value kept as raw JSON (read without recursion).
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

impl Serialize for Members<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A JSON-RPC response, 200 whatever its error (a host fault excepted, 500): a 2025-11-25 client
/// reads 404 as an ended session ([S-62]).
///
/// [S-62]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
///
/// A large result is sent from the buffer it was encoded into (`status::json_answer`).
pub(crate) fn answer(response: JsonRpcResponse) -> http::Response<ResponseBody> {
    crate::response::status::json_answer(response, |error| match error {
        error if error.retry_after().is_some() => StatusCode::SERVICE_UNAVAILABLE,
        error if error.code == code::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::OK,
    })
}
