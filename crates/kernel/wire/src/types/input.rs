//! Multi round-trip input (2026-07-28): the requests an [`InputRequiredResult`] carries and the
//! responses a retried request brings back.
//!
//! [`InputRequiredResult`]: super::results::InputRequiredResult

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::meta::{JsonObject, Meta};
use super::method;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// Input requests keyed by a server-chosen name (the map is written with sorted keys).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// Input responses keyed by the names of the input requests they answer.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// One request for client input: `{"method", "params"}` without `jsonrpc` or `id`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicitation(ElicitRequestParams),
    /// `sampling/createMessage`.
    Sampling(CreateMessageRequestParams),
    /// `roots/list`; its params are optional.
    ListRoots(Option<ListRootsParams>),
}

impl InputRequest {
    /// The method name of this request.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicitation(_) => method::ELICITATION_CREATE,
            InputRequest::Sampling(_) => method::SAMPLING_CREATE_MESSAGE,
            InputRequest::ListRoots(_) => method::ROOTS_LIST,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("method", self.method())?;
        match self {
            InputRequest::Elicitation(params) => map.serialize_entry("params", params)?,
            InputRequest::Sampling(params) => map.serialize_entry("params", params)?,
            InputRequest::ListRoots(Some(params)) => map.serialize_entry("params", params)?,
            InputRequest::ListRoots(None) => {}
        }
        map.end()
    }
}

#[derive(Deserialize)]
struct RawInputRequest {
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawInputRequest::deserialize(deserializer)?;
        let required = |params: Option<Value>| params.ok_or_else(|| de::Error::missing_field("params"));
        match raw.method.as_str() {
            method::ELICITATION_CREATE => serde_json::from_value(required(raw.params)?)
                .map(InputRequest::Elicitation)
                .map_err(de::Error::custom),
            method::SAMPLING_CREATE_MESSAGE => serde_json::from_value(required(raw.params)?)
                .map(InputRequest::Sampling)
                .map_err(de::Error::custom),
            method::ROOTS_LIST => raw
                .params
                .map(serde_json::from_value)
                .transpose()
                .map(InputRequest::ListRoots)
                .map_err(de::Error::custom),
            other => Err(de::Error::unknown_variant(
                other,
                &[method::ELICITATION_CREATE, method::SAMPLING_CREATE_MESSAGE, method::ROOTS_LIST],
            )),
        }
    }
}

/// The client's answer to one [`InputRequest`], told apart by its fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// Answer to `sampling/createMessage` (has `role`, `content`, `model`).
    Sampling(CreateMessageResult),
    /// Answer to `roots/list` (has `roots`).
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create` (has `action`).
    Elicitation(ElicitResult),
}

/// Parameters of `elicitation/create`: a form, or a URL to visit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode (`mode` is `"form"` or absent).
    Form(ElicitFormParams),
    /// URL mode (`mode` is `"url"`).
    Url(ElicitUrlParams),
}

/// The `"form"` marker of form-mode elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ElicitFormMode {
    /// `"form"`.
    #[serde(rename = "form")]
    Form,
}

/// The `"url"` marker of URL-mode elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ElicitUrlMode {
    /// `"url"`.
    #[serde(rename = "url")]
    Url,
}

/// Form-mode elicitation: ask the user to fill in a flat form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitFormParams {
    /// `"form"`, or absent (form is the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitFormMode>,
    /// What is being asked, shown to the user.
    pub message: String,
    /// The restricted JSON Schema of the form (an object of primitive properties).
    pub requested_schema: Value,
}

impl ElicitFormParams {
    /// A form request with an explicit `"mode": "form"`.
    pub fn new(message: impl Into<String>, requested_schema: Value) -> Self {
        Self { mode: Some(ElicitFormMode::Form), message: message.into(), requested_schema }
    }
}

/// URL-mode elicitation: send the user to a URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitUrlParams {
    /// Always `"url"`.
    pub mode: ElicitUrlMode,
    /// Why the interaction is needed, shown to the user.
    pub message: String,
    /// The URL to visit.
    pub url: String,
}

impl ElicitUrlParams {
    /// A URL request.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self { mode: ElicitUrlMode::Url, message: message.into(), url: url.into() }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (or, in URL mode, consented).
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted form values (form mode, `accept` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Parameters of `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The client's answer to `roots/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsResult {
    /// The client's roots.
    pub roots: Vec<Root>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A directory or file the client exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
