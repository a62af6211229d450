//! Shared building blocks: `_meta` maps, implementation identity, icons, roles and annotations.

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// A `_meta` object: free-form JSON keyed by (often reverse-DNS) strings.
pub type Meta = serde_json::Map<String, Value>;

/// Any JSON object (capability objects, tool arguments, structured data).
pub type JsonObject = serde_json::Map<String, Value>;

/// The name and version of an MCP implementation (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Human-readable name for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The implementation's website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with only a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

/// The theme an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An icon a client may display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An HTTP(S) URL or a `data:` URI.
    pub src: String,
    /// MIME type override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon with only a source.
    pub fn new(src: impl Into<String>) -> Self {
        Self { src: src.into(), mime_type: None, sizes: None, theme: None }
    }
}

/// The sender or recipient of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints to the client about how to use or display an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the data is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most); kept as a JSON number so it round-trips exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Number>,
    /// ISO 8601 timestamp of the last modification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}
