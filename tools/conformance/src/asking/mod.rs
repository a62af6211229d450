//! The tools that ask the client: `test_sampling`, `test_elicitation`,
//! `test_elicitation_sep1034_defaults` and `test_elicitation_sep1330_enums` (`conformance-suite.md`
//! §3c, §6), written once, the `2026-07-28` way.
//!
//! Each answers a first call with `input_required` carrying the exact request the suite checks
//! (`sampling/createMessage` or `elicitation/create`), and a retry with the content of the client's
//! answer, read from `RequestContext::retry_input()`. A missing answer is asked for again (S-49). The
//! tool never looks at the era: a `2026-07-28` client answers through `inputResponses`; a `2025-11-25`
//! client is asked by the kernel itself where it keeps a way to reach it (stdio, or an HTTP legacy
//! session), and the tool is retried with the answer. Requests for a capability the client did not
//! declare are left out by the core, which then answers -32021.

use mcp_kernel::router::{InputRequired, RetryInput};
use mcp_kernel::wire::types::{
    CreateMessageRequestParams, InputRequest, Role, SamplingContent, SamplingContentBlock, SamplingMessage,
};
use mcp_kernel::{Mode, ToolCall, ToolOutput, ToolSpec};
use serde_json::{Value, json};

/// `test_sampling`: asks the client's model the `prompt` argument.
pub const SAMPLING: &str = "test_sampling";
/// `test_elicitation`: asks the user, with the `message` argument, for a username and an email.
pub const ELICITATION: &str = "test_elicitation";
/// `test_elicitation_sep1034_defaults`: a form whose every primitive field has a default (SEP-1034).
pub const SEP1034_DEFAULTS: &str = "test_elicitation_sep1034_defaults";
/// `test_elicitation_sep1330_enums`: a form with the five enum shapes (SEP-1330).
pub const SEP1330_ENUMS: &str = "test_elicitation_sep1330_enums";

/// The key each tool asks under (the host's own names; the client echoes them back).
const SAMPLING_KEY: &str = "llm_response";
const ELICITATION_KEY: &str = "user_response";
const SEP1034_KEY: &str = "sep1034_defaults";
const SEP1330_KEY: &str = "sep1330_enums";

/// Whether `name` is one of these tools.
pub fn is_asking(name: &str) -> bool {
    [SAMPLING, ELICITATION, SEP1034_DEFAULTS, SEP1330_ENUMS].contains(&name)
}

/// The four tools, to list.
pub fn tools() -> Vec<ToolSpec> {
    let one_string = |name: &str, what: &str| {
        json!({"type": "object", "properties": {name: {"type": "string", "description": what}},
               "required": [name]})
    };
    let no_arguments = json!({"type": "object", "properties": {}});
    vec![
        ToolSpec::new(SAMPLING, Mode::ReadOnly)
            .description("Asks the client's model the prompt (sampling), then returns its answer.")
            .input_schema(one_string("prompt", "What to ask the model.")),
        ToolSpec::new(ELICITATION, Mode::ReadOnly)
            .description("Asks the user for a username and an email (elicitation), then returns them.")
            .input_schema(one_string("message", "What to tell the user.")),
        ToolSpec::new(SEP1034_DEFAULTS, Mode::ReadOnly)
            .description("Asks the user to fill a form whose every field has a default (SEP-1034).")
            .input_schema(no_arguments.clone()),
        ToolSpec::new(SEP1330_ENUMS, Mode::ReadOnly)
            .description("Asks the user to fill a form with every enum shape (SEP-1330).")
            .input_schema(no_arguments),
    ]
}

/// Answers one of the four tools (see [`is_asking`]): asks, or, on the retry, returns the answer.
pub fn dispatch(call: &ToolCall) -> ToolOutput {
    let input = call.context.retry_input().cloned().unwrap_or_default();
    let argument = |name: &str| call.arguments.get_str(name).unwrap_or_default().to_owned();
    match &*call.name {
        SAMPLING => match sampled(&input) {
            Some(answer) => ToolOutput::text(format!("LLM response: {answer}")),
            None => ToolOutput::input_required(
                InputRequired::new().request(SAMPLING_KEY, sampling(&argument("prompt"))),
            ),
        },
        ELICITATION => answered(&input, ELICITATION_KEY, "User response", || {
            InputRequired::new().elicit(ELICITATION_KEY, argument("message"), user_form())
        }),
        SEP1034_DEFAULTS => answered(&input, SEP1034_KEY, "Elicitation completed", || {
            InputRequired::new().elicit(SEP1034_KEY, "Please review these defaults.", defaults_form())
        }),
        SEP1330_ENUMS => answered(&input, SEP1330_KEY, "Elicitation completed", || {
            InputRequired::new().elicit(SEP1330_KEY, "Please choose from these options.", enums_form())
        }),
        _ => ToolOutput::text("not a tool that asks the client"),
    }
}

/// The elicitation result under `key` as `"<label>: {action, content}"`, or the question again.
fn answered(input: &RetryInput, key: &str, label: &str, ask: impl FnOnce() -> InputRequired) -> ToolOutput {
    match input.elicitation(key) {
        Some(result) => {
            let mut answer = json!({"action": result.action});
            if let Some(content) = &result.content {
                answer["content"] = Value::Object(content.clone());
            }
            ToolOutput::text(format!("{label}: {answer}"))
        }
        None => ToolOutput::input_required(ask()),
    }
}

/// `sampling/createMessage` of one user message, `maxTokens` 100.
fn sampling(prompt: &str) -> InputRequest {
    let messages = vec![SamplingMessage::text(Role::User, prompt)];
    InputRequest::Sampling(CreateMessageRequestParams::new(messages, 100))
}

/// The text of the sampling answer, if the retry carries one.
fn sampled(input: &RetryInput) -> Option<String> {
    match &input.sampling(SAMPLING_KEY)?.content {
        SamplingContent::Single(SamplingContentBlock::Text(block)) => Some(block.text.clone()),
        _ => Some("(non-text content)".to_owned()),
    }
}

/// `test_elicitation`'s form: a username and an email, both required.
fn user_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    })
}

/// SEP-1034: a default for each primitive type, an enum's among its members.
fn defaults_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    })
}

/// SEP-1330: untitled and titled single choice, the legacy `enumNames`, untitled and titled multiple
/// choice. The two revisions agree on all five (`2026-07-28` keeps `LegacyTitledEnumSchema`).
fn enums_form() -> Value {
    let titled = json!([
        {"const": "value1", "title": "First Option"},
        {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"}
    ]);
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Choose one option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Choose one titled option", "oneOf": titled},
            "legacyEnum": {"type": "string", "description": "Choose one option (legacy titles)",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Choose several options",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Choose several titled options",
                            "items": {"anyOf": titled}}
        }
    })
}

#[cfg(test)]
mod tests;
