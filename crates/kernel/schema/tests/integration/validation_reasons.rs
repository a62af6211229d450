//! Rules for `Violation` reasons: they name the path and the rule, stay within
//! `MAX_REASON_LEN` bytes, and never quote the caller's values.

use mcp_kernel_schema::{MAX_REASON_LEN, compile};
use serde_json::{Value, json};

fn reason(schema: &Value, arguments: &Value) -> String {
    let compiled = compile(schema).expect("valid schema");
    let violation = compiled.validate(arguments).expect_err("arguments should be refused");
    assert_eq!(violation.to_string(), violation.reason());
    let reason = violation.into_reason();
    assert!(reason.len() <= MAX_REASON_LEN, "{} bytes: {reason}", reason.len());
    reason
}

fn place_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "place": { "type": "string", "maxLength": 10, "pattern": "^[a-z]+$" },
            "days": { "type": "integer", "minimum": 1, "maximum": 14 },
            "tags": { "type": "array", "items": { "type": "string" } },
            "unit": { "enum": ["c", "f"] }
        },
        "required": ["place"],
        "additionalProperties": false
    })
}

#[test]
fn non_object_arguments_are_refused() {
    let compiled = compile(&place_schema()).unwrap();
    for arguments in [json!(null), json!([]), json!("place"), json!(3), json!(true)] {
        assert_eq!(compiled.validate(&arguments).unwrap_err().reason(), "arguments must be an object");
    }
}

#[test]
fn reason_names_the_path_and_the_type() {
    assert_eq!(reason(&place_schema(), &json!({ "place": 12 })), "arguments.place must be of type string");
}

#[test]
fn reason_names_array_indices() {
    assert_eq!(
        reason(&place_schema(), &json!({ "place": "x", "tags": ["a", 3] })),
        "arguments.tags[1] must be of type string"
    );
}

#[test]
fn reason_names_the_missing_required_property() {
    assert_eq!(reason(&place_schema(), &json!({})), "arguments.place is required");
}

#[test]
fn reason_names_an_unexpected_property_but_not_its_value() {
    let secret = "s3cr3t-".repeat(100);
    let reason = reason(&place_schema(), &json!({ "place": "x", "token": secret }));
    assert_eq!(reason, "arguments.token is not allowed (additional property)");
}

#[test]
fn reason_states_the_schema_limit() {
    assert_eq!(reason(&place_schema(), &json!({ "place": "x", "days": 40 })), "arguments.days must be <= 14");
    assert_eq!(
        reason(&place_schema(), &json!({ "place": "x", "unit": "k" })),
        "arguments.unit must be one of [\"c\",\"f\"]"
    );
}

#[test]
fn reason_never_contains_a_long_caller_string() {
    let long = "A".repeat(5_000);
    for arguments in [
        json!({ "place": long }),               // maxLength
        json!({ "place": format!("{long}!") }), // pattern + maxLength
        json!({ "place": "x", "unit": long }),  // enum
        json!({ "place": "x", "days": long }),  // type
        json!({ "place": "x", "tags": [long, 1] }),
    ] {
        let reason = reason(&place_schema(), &arguments);
        assert!(!reason.contains("AAAAAAAA"), "{reason}");
        assert!(reason.starts_with("arguments."), "{reason}");
    }
}

#[test]
fn reason_with_a_huge_caller_key_is_bounded() {
    let schema = json!({
        "type": "object",
        "additionalProperties": { "type": "object", "additionalProperties": { "type": "integer" } }
    });
    let key = "K".repeat(10_000);
    let arguments = json!({ key.clone(): { key.clone(): "not an integer" } });
    let reason = reason(&schema, &arguments);
    assert!(!reason.contains(&"K".repeat(40)), "{reason}");
    assert!(reason.ends_with("must be of type integer"), "{reason}");
}

#[test]
fn reason_for_a_deep_path_is_bounded_and_keeps_the_end() {
    let mut schema = json!({ "type": "integer" });
    let mut arguments = json!("deep");
    for level in (0..60).rev() {
        let key = format!("level_{level:02}");
        schema = json!({ "type": "object", "properties": { key.clone(): schema } });
        arguments = json!({ key: arguments });
    }
    let reason = reason(&schema, &arguments);
    assert!(reason.starts_with("arguments…"), "{reason}");
    assert!(reason.ends_with(".level_59 must be of type integer"), "{reason}");
}

#[test]
fn reason_quotes_odd_keys_safely() {
    let schema = json!({
        "type": "object",
        "properties": { "odd key\n\"x\"": { "type": "string" } }
    });
    assert_eq!(
        reason(&schema, &json!({ "odd key\n\"x\"": 1 })),
        "arguments[\"odd key\\n\\\"x\\\"\"] must be of type string"
    );
}

#[test]
fn valid_arguments_pass() {
    let compiled = compile(&place_schema()).unwrap();
    assert_eq!(
        compiled.validate(&json!({ "place": "paris", "days": 3, "tags": ["a"], "unit": "c" })),
        Ok(())
    );
}

#[test]
fn format_is_an_annotation_only() {
    let compiled = compile(&json!({
        "type": "object",
        "properties": { "when": { "type": "string", "format": "date-time" } }
    }))
    .unwrap();
    assert_eq!(compiled.validate(&json!({ "when": "not a date" })), Ok(()));
}
