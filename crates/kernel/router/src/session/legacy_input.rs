//! A host's input request (written the `2026-07-28` way) in the form a `2025-11-25` client takes it, for
//! the bridge: the `params` of `elicitation/create`, `sampling/createMessage` or `roots/list`.
//!
//! The two revisions agree on almost everything these requests carry (compare the schemas'
//! `ElicitRequestFormParams`, `PrimitiveSchemaDefinition`, `CreateMessageRequestParams` and
//! `ListRootsRequest`): a form's restricted schema is the same in both — defaults (SEP-1034), titled
//! and untitled single-select enums, the legacy `enumNames`, multi-select arrays (SEP-1330) — and so
//! are sampling's messages and options. Where they differ:
//!
//! * URL-mode elicitation needs an `elicitationId` in `2025-11-25` (`2026-07-28` removed it, changelog
//!   minor change 11): the bridge mints one, 128 random bits, unique to the request.
//! * A tool offered to sampling needs an object `inputSchema` in both, and an object `outputSchema`
//!   (when present) in `2025-11-25` only.
//! * A sampling message's `tool_result` block carries an object `structuredContent` (when present) in
//!   `2025-11-25`; `2026-07-28` takes any value.
//!
//! Threat: a host's request the client's revision cannot express would reach the client malformed, and
//! the client would answer with an error of its own or, worse, misread it. Anything outside the shared
//! forms — a form property that is no primitive schema of `2025-11-25`, a sampling tool whose schemas
//! that revision cannot carry — is refused before anything is sent: a host fault, logged by names
//! only (never the host's text).

use serde_json::{Map, Value, json};

use mcp_kernel_wire::types::{
    ElicitRequestParams, InputRequest, SamplingContent, SamplingContentBlock, SamplingMessage,
};

/// Why a host's request cannot be sent to a `2025-11-25` client: a fixed description, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Inexpressible(pub(crate) &'static str);

/// The `params` of `request` as a `2025-11-25` client takes them.
pub(crate) fn legacy_params(request: &InputRequest) -> Result<Value, Inexpressible> {
    let encode = |value: Result<Value, serde_json::Error>| {
        value.map_err(|_| Inexpressible("the request does not encode as JSON"))
    };
    match request {
        InputRequest::Elicitation(ElicitRequestParams::Form(form)) => {
            if !restricted_form(&form.requested_schema) {
                return Err(Inexpressible(
                    "the elicitation form is not the restricted schema of 2025-11-25 (flat primitive properties)",
                ));
            }
            encode(serde_json::to_value(form))
        }
        InputRequest::Elicitation(ElicitRequestParams::Url(url)) => {
            let id = elicitation_id().ok_or(Inexpressible("the system's random source failed"))?;
            Ok(json!({"mode": "url", "message": url.message, "url": url.url, "elicitationId": id}))
        }
        InputRequest::Sampling(params) => {
            let tools = params.tools.as_deref().unwrap_or_default();
            let expressible = tools.iter().all(|tool| {
                object_schema(&tool.input_schema) && tool.output_schema.as_ref().is_none_or(object_schema)
            });
            if !expressible {
                return Err(Inexpressible(
                    "a sampling tool's inputSchema or outputSchema is not an object schema, as 2025-11-25 requires",
                ));
            }
            if !params.messages.iter().all(object_tool_results) {
                return Err(Inexpressible(
                    "a sampling tool_result's structuredContent is not an object, as 2025-11-25 requires",
                ));
            }
            encode(serde_json::to_value(params))
        }
        InputRequest::ListRoots(Some(params)) => encode(serde_json::to_value(params)),
        InputRequest::ListRoots(None) => Ok(Value::Object(Map::new())),
    }
}

/// A fresh URL-mode `elicitationId`: 128 random bits as 32 hex digits (`None` when the system's random
/// source fails).
fn elicitation_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// True when every `tool_result` block of `message` has no `structuredContent` or an object one.
fn object_tool_results(message: &SamplingMessage) -> bool {
    let blocks = match &message.content {
        SamplingContent::Single(block) => std::slice::from_ref(block),
        SamplingContent::Multiple(blocks) => blocks.as_slice(),
    };
    blocks.iter().all(|block| match block {
        SamplingContentBlock::ToolResult(result) => {
            result.structured_content.as_ref().is_none_or(Value::is_object)
        }
        _ => true,
    })
}

/// A 2025-11-25 tool schema: `{"type": "object", "properties"?: {name: object}, "required"?: [string]}`.
fn object_schema(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else { return false };
    map.get("type").and_then(Value::as_str) == Some("object")
        && optional(map, "$schema", Value::is_string)
        && optional(map, "properties", |p| p.as_object().is_some_and(|p| p.values().all(Value::is_object)))
        && optional(map, "required", strings)
}

/// `requestedSchema`: `{"type": "object", "properties": {name: PrimitiveSchemaDefinition}, "required"?:
/// [string], "$schema"?: string}`.
pub(crate) fn restricted_form(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else { return false };
    map.get("type").and_then(Value::as_str) == Some("object")
        && map.get("properties").and_then(Value::as_object).is_some_and(|p| p.values().all(primitive))
        && optional(map, "required", strings)
        && optional(map, "$schema", Value::is_string)
}

/// True when `key` is absent from `map` or its value passes `check`.
fn optional(map: &Map<String, Value>, key: &str, check: impl Fn(&Value) -> bool) -> bool {
    map.get(key).is_none_or(check)
}

fn strings(value: &Value) -> bool {
    value.as_array().is_some_and(|items| items.iter().all(Value::is_string))
}

/// A JSON Schema `integer`: a number with no fractional part.
fn integer(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
}

/// `[{"const": string, "title": string}, ..]`, the options of a titled enum.
fn titled_options(value: &Value) -> bool {
    value.as_array().is_some_and(|options| {
        options.iter().all(|option| {
            option.get("const").is_some_and(Value::is_string)
                && option.get("title").is_some_and(Value::is_string)
        })
    })
}

/// One `PrimitiveSchemaDefinition` of 2025-11-25 (the same in 2026-07-28): a string, number, integer or
/// boolean, or one of the enum forms. Each definition leaves other members open, as the schema does;
/// the members it names must have their types.
fn primitive(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else { return false };
    if !(optional(map, "title", Value::is_string) && optional(map, "description", Value::is_string)) {
        return false;
    }
    let default = |check: fn(&Value) -> bool| optional(map, "default", check);
    match map.get("type").and_then(Value::as_str) {
        Some("string") => {
            let plain = optional(map, "minLength", integer)
                && optional(map, "maxLength", integer)
                && optional(map, "format", |f| {
                    matches!(f.as_str(), Some("email" | "uri" | "date" | "date-time"))
                });
            let untitled = map.get("enum").is_some_and(strings);
            let titled = map.get("oneOf").is_some_and(titled_options);
            let legacy = untitled && optional(map, "enumNames", strings);
            default(Value::is_string) && (plain || untitled || titled || legacy)
        }
        Some("number" | "integer") => {
            let number = |v: &Value| v.is_number();
            optional(map, "minimum", number) && optional(map, "maximum", number) && default(number)
        }
        Some("boolean") => default(Value::is_boolean),
        Some("array") => {
            let items = map.get("items");
            let untitled = items.is_some_and(|items| {
                items.get("type").and_then(Value::as_str) == Some("string")
                    && items.get("enum").is_some_and(strings)
            });
            let titled = items.and_then(|items| items.get("anyOf")).is_some_and(titled_options);
            optional(map, "minItems", integer)
                && optional(map, "maxItems", integer)
                && default(strings)
                && (untitled || titled)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_kernel_wire::types::{
        CreateMessageRequestParams, ElicitFormParams, ElicitUrlParams, Role, SamplingMessage, Tool,
    };

    fn form(properties: Value) -> Value {
        json!({"type": "object", "properties": properties})
    }

    #[test]
    fn every_primitive_form_of_both_revisions_is_expressible() {
        let shared = form(json!({
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 50, "default": "Ann"},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
            "ratio": {"type": "number", "default": 0.5},
            "ok": {"type": "boolean", "default": true},
            "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
            "titled": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
            "legacy": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            "many": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1,
                     "default": ["a"]},
            "many_titled": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}
        }));
        assert!(restricted_form(&shared));
        assert!(restricted_form(&json!({"type": "object", "properties": {}, "required": ["x"]})));
    }

    #[test]
    fn what_2025_11_25_cannot_express_is_refused() {
        for property in [
            json!({"type": "object", "properties": {}}),
            json!({"type": "string", "default": 3}),
            json!({"type": "string", "format": "hostname"}),
            json!({"type": "integer", "default": "3"}),
            json!({"type": "boolean", "default": "yes"}),
            json!({"type": "array", "items": {"type": "number"}}),
            json!({"type": "array", "items": {"type": "string", "enum": [1]}}),
            json!({"type": "string", "minLength": 1.5}),
            json!({"type": "null"}),
            json!({"enum": ["a"]}),
            json!(true),
            json!({"type": "string", "title": 7}),
        ] {
            assert!(!restricted_form(&form(json!({"x": property.clone()}))), "{property}");
        }
        assert!(!restricted_form(&json!({"type": "object", "properties": {}, "required": "x"})));
        assert!(!restricted_form(&json!({"type": "object"})));
    }

    #[test]
    fn a_url_elicitation_gets_a_fresh_elicitation_id() {
        let request =
            InputRequest::Elicitation(ElicitRequestParams::Url(ElicitUrlParams::new("m", "https://x.test")));
        let first = legacy_params(&request).unwrap();
        let second = legacy_params(&request).unwrap();
        assert_eq!(first["mode"], "url");
        assert_eq!(first["elicitationId"].as_str().map(str::len), Some(32));
        assert_ne!(first["elicitationId"], second["elicitationId"]);
    }

    #[test]
    fn sampling_tools_need_object_schemas() {
        let mut params = CreateMessageRequestParams::new(vec![SamplingMessage::text(Role::User, "q")], 5);
        params.tools = Some(vec![Tool::new("t", json!({"type": "object"}))]);
        assert!(legacy_params(&InputRequest::Sampling(params.clone())).is_ok());
        let mut output = Tool::new("t", json!({"type": "object"}));
        output.output_schema = Some(json!({"type": "string"}));
        params.tools = Some(vec![output]);
        assert!(legacy_params(&InputRequest::Sampling(params.clone())).is_err());
        params.tools = Some(vec![Tool::new("t", json!(true))]);
        assert!(legacy_params(&InputRequest::Sampling(params)).is_err());
    }

    #[test]
    fn roots_without_params_are_sent_an_empty_object() {
        assert_eq!(legacy_params(&InputRequest::ListRoots(None)).unwrap(), json!({}));
        let form = ElicitFormParams::new("m", form(json!({})));
        let params = legacy_params(&InputRequest::Elicitation(ElicitRequestParams::Form(form))).unwrap();
        assert_eq!(
            params,
            json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}})
        );
    }
}
