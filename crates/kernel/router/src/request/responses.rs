//! The shape of a retry's `inputResponses` (MCP [S-49]): each entry must be the result of the request it
//! answers — `ElicitResult`, `CreateMessageResult` or `ListRootsResult`.
//!
//! Threat: the responses are written by the client and handed to the host, which acts on them. A host
//! must never see a number where it asked for a form, or a form whose values are nested objects the
//! schema does not allow: a malformed response is a JSON-RPC error (-32602) before dispatch, with a
//! fixed message that repeats nothing the client sent.
//!
//! [S-49]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::types::method::{ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE};
use mcp_kernel_wire::types::{ElicitResult, InputResponse};

/// The message of every malformed response.
const MALFORMED: &str = "an inputResponses entry is not a valid result of the input request it answers";

/// An `ElicitResult` whose form values are strings, numbers, booleans or arrays of strings.
fn elicitation(value: Value) -> Option<ElicitResult> {
    let result: ElicitResult = serde_json::from_value(value).ok()?;
    let primitive = |v: &Value| match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => true,
        Value::Array(items) => items.iter().all(Value::is_string),
        _ => false,
    };
    result.content.as_ref().is_none_or(|content| content.values().all(primitive)).then_some(result)
}

/// The response to a request of `method`, if `value` has its shape (a retry's entry, or a
/// `2025-11-25` client's answer to the bridge's request).
pub(crate) fn for_method(method: &str, value: Value) -> Option<InputResponse> {
    if !value.is_object() {
        return None;
    }
    match method {
        ELICITATION_CREATE => elicitation(value).map(InputResponse::Elicitation),
        SAMPLING_CREATE_MESSAGE => serde_json::from_value(value).ok().map(InputResponse::Sampling),
        ROOTS_LIST => serde_json::from_value(value).ok().map(InputResponse::ListRoots),
        _ => None,
    }
}

/// A response to a request of unknown method, told apart by its required field: `action`
/// (elicitation), `roots`, or otherwise sampling.
fn any(value: Value) -> Option<InputResponse> {
    let method = match &value {
        Value::Object(map) if map.contains_key("action") => ELICITATION_CREATE,
        Value::Object(map) if map.contains_key("roots") => ROOTS_LIST,
        _ => SAMPLING_CREATE_MESSAGE,
    };
    for_method(method, value)
}

/// The responses to the keys a sealed state says were asked for, each checked against its method;
/// other keys are ignored ([S-49]: SHOULD ignore unrecognized entries).
///
/// [S-49]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub(crate) fn asked(
    mut responses: Map<String, Value>,
    keys: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, InputResponse>, ErrorObject> {
    let mut checked = BTreeMap::new();
    for (key, method) in keys {
        if let Some(value) = responses.remove(key) {
            let response = for_method(method, value).ok_or_else(|| ErrorObject::invalid_params(MALFORMED))?;
            checked.insert(key.clone(), response);
        }
    }
    Ok(checked)
}

/// Responses with no sealed state to say what was asked: every entry must be one of the three results.
pub(crate) fn unasked(responses: Map<String, Value>) -> Result<BTreeMap<String, InputResponse>, ErrorObject> {
    responses
        .into_iter()
        .map(|(key, value)| {
            any(value).map(|r| (key, r)).ok_or_else(|| ErrorObject::invalid_params(MALFORMED))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    const ELICIT: &str = ELICITATION_CREATE;

    #[test]
    fn each_response_must_have_the_shape_of_its_request() {
        let keys = BTreeMap::from([
            ("e".to_owned(), ELICIT.to_owned()),
            ("s".to_owned(), SAMPLING_CREATE_MESSAGE.to_owned()),
            ("r".to_owned(), ROOTS_LIST.to_owned()),
        ]);
        let good = json!({
            "e": {"action": "accept", "content": {"name": "A", "n": 1, "ok": true, "tags": ["x"]}},
            "s": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
            "r": {"roots": [{"uri": "file:///r", "name": "R"}]},
            "extra": 12345
        });
        let checked = asked(map(good), &keys).unwrap();
        assert_eq!(checked.keys().collect::<Vec<_>>(), ["e", "r", "s"]);
        for bad in [
            json!({"e": 12345}),
            json!({"e": {"action": "maybe"}}),
            json!({"e": {"action": "accept", "content": {"nested": {"a": 1}}}}),
            json!({"e": {"roots": []}}),
            json!({"s": {"role": "assistant", "content": {"type": "text", "text": "x"}}}),
            json!({"r": {"roots": "none"}}),
            json!({"r": [[]]}),
        ] {
            assert!(asked(map(bad.clone()), &keys).is_err(), "{bad}");
        }
    }

    #[test]
    fn without_a_state_every_entry_must_be_some_result() {
        let ok = json!({
            "a": {"action": "decline"},
            "b": {"roots": []},
            "c": {"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m"}
        });
        assert_eq!(unasked(map(ok)).unwrap().len(), 3);
        for bad in [json!({"a": 12345}), json!({"a": {}}), json!({"a": null}), json!({"a": "accept"})] {
            let error = unasked(map(bad.clone())).unwrap_err();
            assert_eq!(error, ErrorObject::invalid_params(MALFORMED), "{bad}");
        }
    }
}
