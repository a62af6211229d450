//! `sampling/createMessage` parameters and results (deprecated in 2026-07-28, still an input request).

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use super::content::{AudioContent, ContentBlock, ImageContent, TextContent};
use super::meta::{JsonObject, Meta, Role};
use super::tool::Tool;

/// Parameters of a `sampling/createMessage` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation to continue.
    pub messages: Vec<SamplingMessage>,
    /// The server's model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt the server asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which MCP context to include (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Number>,
    /// The most tokens to sample.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

impl CreateMessageRequestParams {
    /// A request with only messages and a token limit.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
        }
    }
}

/// The client's answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who produced the message (normally `assistant`).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// One block or several.
    pub content: SamplingContent,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A single-block text message from a role.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: SamplingContent::Single(SamplingContentBlock::Text(TextContent::new(text))),
            meta: None,
        }
    }
}

/// The content of a sampling message: one block, or an array of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    Single(SamplingContentBlock),
    /// Several blocks.
    Multiple(Vec<SamplingContentBlock>),
}

/// A block of sampling content, tagged by `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"`.
    Audio(AudioContent),
    /// `"type": "tool_use"`.
    ToolUse(ToolUseContent),
    /// `"type": "tool_result"`.
    ToolResult(ToolResultContent),
}

/// The model's request to call a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Identifier matched by the corresponding tool result.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The tool arguments.
    pub input: JsonObject,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the tool use this answers.
    pub tool_use_id: String,
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The server's model preferences; priorities run from 0 to 1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<Number>,
    /// How much speed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<Number>,
    /// How much capability matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<Number>,
}

/// A hint naming a model (or a substring of one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// The (partial) model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// How the model may use the offered tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The tool-use mode (`auto` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// A tool-use mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use tools.
    None,
}

/// Which MCP context a sampling request asks the client to include (deprecated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context.
    None,
    /// Context from this server.
    ThisServer,
    /// Context from every connected server.
    AllServers,
}
