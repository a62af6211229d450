//! Which client capabilities a request declared, and which of a host's input requests it may be sent.
//!
//! Threat: a server that relies on a capability the client never declared (MCP [S-3], [S-48]) — a tool
//! that needs one, or an input request the client cannot answer. The request's own `_meta`
//! `clientCapabilities` is the only source (nothing is remembered across requests); an input request
//! for a capability it does not declare is never sent.
//!
//! [S-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-48]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use mcp_kernel_wire::types::{ElicitRequestParams, IncludeContext, InputRequest};

/// True when `declared` holds every key of `required`, recursively through objects.
pub(crate) fn declares(declared: &Value, required: &Value) -> bool {
    match (declared, required) {
        (Value::Object(have), Value::Object(need)) => {
            need.iter().all(|(key, sub)| have.get(key).is_some_and(|have| declares(have, sub)))
        }
        (_, Value::Object(need)) => need.is_empty(),
        _ => true,
    }
}

/// The capabilities an input request needs, as a `ClientCapabilities` fragment.
fn needs(request: &InputRequest) -> Value {
    match request {
        InputRequest::Elicitation(ElicitRequestParams::Form(_)) => json!({"elicitation": {"form": {}}}),
        InputRequest::Elicitation(ElicitRequestParams::Url(_)) => json!({"elicitation": {"url": {}}}),
        InputRequest::Sampling(params) => {
            let mut sampling = Map::new();
            if params.tools.is_some() || params.tool_choice.is_some() {
                sampling.insert("tools".into(), json!({}));
            }
            if matches!(params.include_context, Some(IncludeContext::ThisServer | IncludeContext::AllServers))
            {
                sampling.insert("context".into(), json!({}));
            }
            json!({"sampling": sampling})
        }
        InputRequest::ListRoots(_) => json!({"roots": {}}),
    }
}

/// True when the client declared what `request` needs; an empty `elicitation` object means form only.
fn allows(declared: &Value, request: &InputRequest) -> bool {
    match request {
        InputRequest::Elicitation(ElicitRequestParams::Form(_)) => match declared.get("elicitation") {
            Some(Value::Object(modes)) => modes.is_empty() || modes.contains_key("form"),
            _ => false,
        },
        other => declares(declared, &needs(other)),
    }
}

/// Adds `fragment`'s keys into `into`, recursively.
fn merge(into: &mut Map<String, Value>, fragment: Value) {
    let Value::Object(fragment) = fragment else { return };
    for (key, value) in fragment {
        match into.get_mut(&key) {
            Some(Value::Object(existing)) => merge(existing, value),
            _ => {
                into.insert(key, value);
            }
        }
    }
}

/// The requests the client can answer. When the host asked for some and none remain, the error is
/// the `requiredCapabilities` of what was left out (for -32021).
pub(crate) fn askable(
    requests: BTreeMap<String, InputRequest>,
    declared: &Value,
) -> Result<BTreeMap<String, InputRequest>, Value> {
    let asked = requests.len();
    let mut missing = Map::new();
    let kept: BTreeMap<_, _> = requests
        .into_iter()
        .filter(|(_, request)| {
            let ok = allows(declared, request);
            if !ok {
                merge(&mut missing, needs(request));
            }
            ok
        })
        .collect();
    if asked > 0 && kept.is_empty() { Err(Value::Object(missing)) } else { Ok(kept) }
}

/// True when a host's request can be sent as the schema requires: a form's `requestedSchema` is an
/// object schema with `properties`.
pub(crate) fn well_formed(request: &InputRequest) -> bool {
    match request {
        InputRequest::Elicitation(ElicitRequestParams::Form(form)) => {
            let schema = &form.requested_schema;
            schema.get("type").and_then(Value::as_str) == Some("object")
                && schema.get("properties").is_some_and(Value::is_object)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_kernel_wire::types::{
        CreateMessageRequestParams, ElicitFormParams, ElicitUrlParams, Role, SamplingMessage,
    };

    fn form() -> InputRequest {
        let schema = json!({"type": "object", "properties": {}});
        InputRequest::Elicitation(ElicitRequestParams::Form(ElicitFormParams::new("m", schema)))
    }

    fn url() -> InputRequest {
        InputRequest::Elicitation(ElicitRequestParams::Url(ElicitUrlParams::new("m", "https://x.test")))
    }

    fn sampling() -> CreateMessageRequestParams {
        CreateMessageRequestParams::new(vec![SamplingMessage::text(Role::User, "q")], 10)
    }

    #[test]
    fn declares_requires_every_nested_key() {
        assert!(declares(&json!({"elicitation": {"form": {}}}), &json!({"elicitation": {}})));
        assert!(!declares(&json!({"sampling": {}}), &json!({"elicitation": {}})));
        assert!(!declares(&json!({"elicitation": {}}), &json!({"elicitation": {"url": {}}})));
        assert!(!declares(&Value::Null, &json!({"roots": {}})));
        assert!(declares(&Value::Null, &json!({})));
    }

    #[test]
    fn an_empty_elicitation_object_means_form_only() {
        assert!(allows(&json!({"elicitation": {}}), &form()));
        assert!(!allows(&json!({"elicitation": {}}), &url()));
        assert!(allows(&json!({"elicitation": {"url": {}}}), &url()));
        assert!(!allows(&json!({"elicitation": {"url": {}}}), &form()));
        assert!(allows(&json!({"elicitation": {"form": {}, "url": {}}}), &form()));
    }

    #[test]
    fn sampling_with_tools_or_context_needs_those_sub_capabilities() {
        let mut with_tools = sampling();
        with_tools.tools = Some(vec![]);
        assert!(allows(&json!({"sampling": {}}), &InputRequest::Sampling(sampling())));
        assert!(!allows(&json!({"sampling": {}}), &InputRequest::Sampling(with_tools.clone())));
        assert!(allows(&json!({"sampling": {"tools": {}}}), &InputRequest::Sampling(with_tools)));
        let mut with_context = sampling();
        with_context.include_context = Some(IncludeContext::ThisServer);
        assert!(!allows(&json!({"sampling": {}}), &InputRequest::Sampling(with_context)));
    }

    #[test]
    fn undeclared_requests_are_dropped_and_all_dropped_names_what_is_missing() {
        let requests = BTreeMap::from([
            ("a".to_owned(), form()),
            ("b".to_owned(), InputRequest::Sampling(sampling())),
            ("c".to_owned(), InputRequest::ListRoots(None)),
        ]);
        let kept = askable(requests.clone(), &json!({"sampling": {}})).unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["b"]);
        let missing = askable(requests, &json!({})).unwrap_err();
        assert_eq!(missing, json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}));
        assert_eq!(askable(BTreeMap::new(), &json!({})).unwrap(), BTreeMap::new());
    }

    #[test]
    fn a_form_needs_an_object_schema_with_properties() {
        assert!(well_formed(&form()));
        let bad = ElicitFormParams::new("m", json!({"type": "string"}));
        assert!(!well_formed(&InputRequest::Elicitation(ElicitRequestParams::Form(bad))));
    }
}
