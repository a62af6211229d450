//! Content blocks (tool results, prompt messages) and resource contents.

use serde::{Deserialize, Serialize};

use super::meta::{Annotations, Meta};
use super::resource::Resource;

/// One piece of content, tagged by `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"`.
    Audio(AudioContent),
    /// `"type": "resource_link"`.
    ResourceLink(ResourceLink),
    /// `"type": "resource"`.
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block with no annotations.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), annotations: None, meta: None }
    }
}

/// Image content, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// MIME type of the image.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// An image from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), annotations: None, meta: None }
    }
}

/// Audio content, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// MIME type of the audio.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// Audio from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), annotations: None, meta: None }
    }
}

/// A link to a resource the server can read (not necessarily listed): a [`Resource`], field for
/// field, under `"type": "resource_link"` (the schema's `ResourceLink extends Resource`).
pub type ResourceLink = Resource;

/// A resource's contents embedded in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds contents with no annotations.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        Self { resource: resource.into(), annotations: None, meta: None }
    }
}

/// The contents of a resource: text or a base64 blob (told apart by the field present).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Contents with a `text` field.
    Text(TextResourceContents),
    /// Contents with a `blob` field.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text(TextResourceContents::new(uri, text))
    }

    /// Binary contents at `uri`: the bytes are sent base64-encoded (standard alphabet, padded).
    pub fn blob(uri: impl Into<String>, bytes: &[u8]) -> Self {
        use base64::Engine;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        ResourceContents::Blob(BlobResourceContents::new(uri, data))
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        match &mut self {
            ResourceContents::Text(t) => t.mime_type = Some(mime_type.into()),
            ResourceContents::Blob(b) => b.mime_type = Some(mime_type.into()),
        }
        self
    }

    /// The URI of these contents.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(c: TextResourceContents) -> Self {
        ResourceContents::Text(c)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(c: BlobResourceContents) -> Self {
        ResourceContents::Blob(c)
    }
}

#[cfg(test)]
mod constructor_tests {
    use super::*;

    #[test]
    fn blob_is_standard_padded_base64() {
        let c =
            ResourceContents::blob("test://b", &[0, 1, 2, 255]).with_mime_type("application/octet-stream");
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::json!({"uri":"test://b","mimeType":"application/octet-stream","blob":"AAEC/w=="})
        );
    }
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextResourceContents {
    /// Text contents with no MIME type.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self { uri: uri.into(), mime_type: None, text: text.into(), meta: None }
    }
}

/// Binary contents of a resource, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded data.
    pub blob: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl BlobResourceContents {
    /// Blob contents with no MIME type.
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        Self { uri: uri.into(), mime_type: None, blob: blob.into(), meta: None }
    }
}
