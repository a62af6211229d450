//! A `CallToolResult`, encoded straight to bytes.
//!
//! A tool's answer is written once and dropped, so the core does not build it as a [`Value`] first:
//! building the map, decorating it and freeing it cost about a fifth of a whole `tools/call`. The
//! bytes are the ones the map would have written — members in the order `content`,
//! `structuredContent`, `isError`, then the era's decoration — which `wire_order` pins.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use mcp_kernel_wire::types::ContentBlock;
use mcp_kernel_wire::{Encoded, ErrorObject, Payload};

use crate::contract::Era;
use crate::request::decoration::Decoration;

/// The `content` of a result: one text block, or the host's blocks.
pub(crate) enum Content<'a> {
    /// `[{"type":"text","text":…}]`.
    Text(&'a str),
    /// The blocks as the host gave them.
    Blocks(&'a [ContentBlock]),
}

/// One `CallToolResult`, borrowed from what the tool returned.
pub(crate) struct ToolResult<'a> {
    pub(crate) content: Content<'a>,
    pub(crate) structured: Option<&'a Value>,
    pub(crate) is_error: bool,
}

impl ToolResult<'_> {
    /// The result's bytes for a request of `era`: legacy results carry structured content only when it
    /// is an object, and only modern ones are decorated.
    pub(crate) fn encode(&self, era: Era, decoration: &Decoration) -> Result<Payload, ErrorObject> {
        let wire = Wire { result: self, modern: era.is_modern(), decoration };
        Encoded::to_json(&wire, self.expected_bytes())
            .map(Payload::Encoded)
            .map_err(|_| ErrorObject::internal())
    }

    /// About how long the encoded result is: its texts and binary data, as long again for structured
    /// content (whose JSON is the text of `ToolOutput::json`), and room for the rest. A text needing
    /// many escapes outgrows it, and the buffer doubles (then is shrunk: see [`Encoded`]); a megabyte
    /// text does not, and is written into one allocation.
    fn expected_bytes(&self) -> usize {
        let content: usize = match &self.content {
            Content::Text(text) => text.len(),
            Content::Blocks(blocks) => blocks.iter().map(block_bytes).sum(),
        };
        let structured = if self.structured.is_some() { content } else { 0 };
        content.saturating_add(structured).saturating_add(RESULT_ROOM)
    }
}

/// The room an encoded result takes beyond its texts: the members' names, the era's decoration.
const RESULT_ROOM: usize = 512;

/// The bytes of a block's text or data (its other members are in [`RESULT_ROOM`]).
fn block_bytes(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(text) => text.text.len(),
        ContentBlock::Image(image) => image.data.len(),
        ContentBlock::Audio(audio) => audio.data.len(),
        ContentBlock::ResourceLink(_) | ContentBlock::Resource(_) => 0,
    }
}

struct Wire<'a> {
    result: &'a ToolResult<'a>,
    modern: bool,
    decoration: &'a Decoration,
}

impl Serialize for Wire<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let result = self.result;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &result.content)?;
        if let Some(structured) = result.structured
            && (self.modern || structured.is_object())
        {
            map.serialize_entry("structuredContent", structured)?;
        }
        map.serialize_entry("isError", &result.is_error)?;
        if self.modern {
            self.decoration.append(&mut map)?;
        }
        map.end()
    }
}

impl Serialize for Content<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(text) => {
                let mut seq = serializer.serialize_seq(Some(1))?;
                seq.serialize_element(&TextBlock(text))?;
                seq.end()
            }
            Content::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

/// `{"type":"text","text":…}`, as `ContentBlock::Text` writes a block with no annotations.
struct TextBlock<'a>(&'a str);

impl Serialize for TextBlock<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "text")?;
        map.serialize_entry("text", self.0)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_kernel_wire::ProtocolVersion;
    use proptest::prelude::*;
    use serde_json::{Map, json};

    /// The map the core built before it encoded results straight to bytes: the oracle.
    fn as_map(result: &ToolResult<'_>, era: Era, decoration: &Decoration) -> Value {
        let mut map = Map::new();
        let content = match result.content {
            Content::Text(text) => json!([{"type": "text", "text": text}]),
            Content::Blocks(blocks) => serde_json::to_value(blocks).unwrap(),
        };
        map.insert("content".into(), content);
        if let Some(structured) = result.structured
            && (era.is_modern() || structured.is_object())
        {
            map.insert("structuredContent".into(), structured.clone());
        }
        map.insert("isError".into(), Value::Bool(result.is_error));
        let value = Value::Object(map);
        if era.is_modern() { decoration.apply(value) } else { value }
    }

    fn eras() -> [Era; 2] {
        [Era::Declared(ProtocolVersion::V2026_07_28), Era::Declared(ProtocolVersion::V2025_11_25)]
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            "[ -~é\u{1F600}\"\\\\\n]{0,12}".prop_map(Value::from),
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z_]{1,6}", inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn encoded_bytes_are_the_maps_bytes(
            text in "[ -~é\u{1F600}\"\\\\\n]{0,40}",
            structured in prop::option::of(json_value()),
            blocks in prop::bool::ANY,
            is_error in prop::bool::ANY,
        ) {
            let decoration = Decoration::new(json!({"name": "n", "version": "1"}));
            let owned = [ContentBlock::text(text.clone()), ContentBlock::text("second")];
            let content = if blocks { Content::Blocks(&owned) } else { Content::Text(&text) };
            let result = ToolResult { content, structured: structured.as_ref(), is_error };
            for era in eras() {
                let encoded = result.encode(era, &decoration).unwrap();
                let expected = as_map(&result, era, &decoration).to_string();
                prop_assert_eq!(encoded.as_encoded(), Some(expected.as_str()));
            }
        }
    }
}
