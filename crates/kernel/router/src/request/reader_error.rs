//! A reader's or the completer's refusal, or its request for the client's input.

use serde_json::Value;

use crate::request::input::InputRequired;

/// A reader's or the completer's refusal: carried to the client as data beside the not-found, prompt or
/// completion error. A reader may also answer "input required" through it ([`ReaderError::input_required`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ReaderError {
    reason: Value,
    input: Option<Box<InputRequired>>,
    /// Answered exactly as an item that is not listed, the reason left out (a [`crate::NoCaller`]).
    unlisted: bool,
}

impl ReaderError {
    /// A refusal with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self { reason: Value::String(message.into()), input: None, unlisted: false }
    }

    /// A refusal with a structured reason.
    pub fn structured(reason: Value) -> Self {
        Self { reason, input: None, unlisted: false }
    }

    /// Not a refusal: the reader needs the client's input first (an `InputRequiredResult` on
    /// `resources/read` and `prompts/get`; needs a request-state sealer and a `2026-07-28` request,
    /// otherwise -32603, as it always is from the completer). Its reason is `null`.
    pub fn input_required(required: InputRequired) -> Self {
        Self { reason: Value::Null, input: Some(Box::new(required)), unlisted: false }
    }

    /// A refusal answered exactly as an item that is not listed: `resources/read` as an unlisted uri,
    /// `prompts/get` as an unknown prompt; `reason` is never sent.
    pub(crate) fn unlisted(reason: &str) -> Self {
        Self { reason: Value::String(reason.to_owned()), input: None, unlisted: true }
    }

    /// Whether this refusal is answered as an item that is not listed ([`ReaderError::unlisted`]).
    pub(crate) fn answers_as_unlisted(&self) -> bool {
        self.unlisted
    }

    /// The reason.
    pub fn reason(&self) -> &Value {
        &self.reason
    }

    /// The input asked for, when this is [`ReaderError::input_required`].
    pub fn as_input_required(&self) -> Option<&InputRequired> {
        self.input.as_deref()
    }

    /// The input asked for, or the refusal itself.
    pub(crate) fn into_input_required(self) -> Result<InputRequired, Self> {
        match self.input {
            Some(input) => Ok(*input),
            None => Err(self),
        }
    }
}
