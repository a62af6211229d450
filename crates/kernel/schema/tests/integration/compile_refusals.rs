//! Rules for what `compile` refuses: remote references, other dialects, regexes the
//! linear-time engine cannot run, and schemas that are not valid 2020-12.

use mcp_kernel_schema::{SchemaError, compile};
use serde_json::json;

#[test]
fn remote_ref_is_refused_naming_the_reference() {
    let schema = json!({
        "type": "object",
        "properties": { "a": { "$ref": "https://example.com/schemas/a.json" } }
    });
    let error = compile(&schema).unwrap_err();
    assert_eq!(
        error,
        SchemaError::RemoteReference { reference: "https://example.com/schemas/a.json".to_owned() }
    );
    assert!(error.to_string().contains("https://example.com/schemas/a.json"));
}

#[test]
fn remote_ref_with_fragment_is_refused() {
    let schema = json!({ "$ref": "http://169.254.169.254/latest/meta-data#/x" });
    assert!(matches!(
        compile(&schema),
        Err(SchemaError::RemoteReference { reference }) if reference.starts_with("http://169.254.169.254/latest/meta-data")
    ));
}

#[test]
fn relative_ref_to_another_document_is_refused() {
    let schema = json!({ "$id": "https://tools.example/root.json", "$ref": "other.json" });
    assert_eq!(
        compile(&schema).unwrap_err(),
        SchemaError::RemoteReference { reference: "https://tools.example/other.json".to_owned() }
    );
}

#[test]
fn file_ref_is_refused() {
    let schema = json!({ "$ref": "file:///etc/passwd" });
    assert!(matches!(compile(&schema), Err(SchemaError::RemoteReference { .. })));
}

#[test]
fn remote_dynamic_ref_is_refused() {
    let schema = json!({ "$dynamicRef": "https://example.com/tree.json#node" });
    assert!(matches!(compile(&schema), Err(SchemaError::RemoteReference { .. })));
}

#[test]
fn local_refs_are_admitted() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "$ref": "#/$defs/positive" },
            "b": { "$ref": "#named" }
        },
        "$defs": {
            "positive": { "type": "integer", "minimum": 1 },
            "named": { "$anchor": "named", "type": "string" }
        }
    });
    let compiled = compile(&schema).expect("local refs resolve");
    assert!(compiled.validate(&json!({ "a": 1, "b": "x" })).is_ok());
    assert!(compiled.validate(&json!({ "a": 0 })).is_err());
}

#[test]
fn bundled_meta_schema_ref_is_admitted_without_retrieval() {
    // The 2020-12 meta-schemas ship inside `jsonschema`; resolving them touches no network.
    let compiled = compile(&json!({ "$ref": "https://json-schema.org/draft/2020-12/schema" }))
        .expect("bundled meta-schema");
    assert!(compiled.validate_value(&json!({ "minLength": 1 })).is_ok());
    assert!(compiled.validate_value(&json!({ "minLength": -1 })).is_err());
}

#[test]
fn dangling_local_ref_is_invalid() {
    let schema = json!({ "$ref": "#/$defs/missing" });
    assert!(matches!(compile(&schema), Err(SchemaError::Invalid { .. })));
}

#[test]
fn draft_2020_12_dialect_is_admitted_with_or_without_fragment() {
    for dialect in
        ["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"]
    {
        compile(&json!({ "$schema": dialect, "type": "object" })).expect(dialect);
    }
}

#[test]
fn unknown_schema_dialect_is_refused() {
    for dialect in [
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft/2020-12/schema",
        "draft-2020-12",
    ] {
        assert_eq!(
            compile(&json!({ "$schema": dialect, "type": "object" })).unwrap_err(),
            SchemaError::UnsupportedDialect { dialect: dialect.to_owned() },
            "{dialect}"
        );
    }
}

#[test]
fn custom_meta_schema_is_a_remote_reference() {
    let dialect = "https://example.com/my-meta-schema";
    assert_eq!(
        compile(&json!({ "$schema": dialect })).unwrap_err(),
        SchemaError::RemoteReference { reference: dialect.to_owned() }
    );
}

#[test]
fn embedded_resource_with_other_dialect_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {
                "$id": "https://tools.example/a",
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "string"
            }
        }
    });
    assert!(matches!(compile(&schema), Err(SchemaError::UnsupportedDialect { .. })));
}

#[test]
fn non_string_schema_keyword_is_invalid() {
    assert!(matches!(compile(&json!({ "$schema": 2020 })), Err(SchemaError::Invalid { .. })));
}

#[test]
fn backreference_is_refused_at_compile_time() {
    let error = compile(&json!({ "type": "string", "pattern": "(a)\\1" })).unwrap_err();
    match error {
        SchemaError::UnsupportedPattern { pattern, reason } => {
            assert_eq!(pattern, "(a)\\1");
            assert!(reason.contains("backreference"), "{reason}");
        }
        other => panic!("expected UnsupportedPattern, got {other:?}"),
    }
}

#[test]
fn lookahead_is_refused_at_compile_time() {
    let error = compile(&json!({ "type": "string", "pattern": "(?=a)a" })).unwrap_err();
    match error {
        SchemaError::UnsupportedPattern { pattern, reason } => {
            assert_eq!(pattern, "(?=a)a");
            assert!(reason.contains("look-around"), "{reason}");
        }
        other => panic!("expected UnsupportedPattern, got {other:?}"),
    }
}

#[test]
fn lookbehind_in_pattern_properties_is_refused_at_compile_time() {
    let schema = json!({
        "type": "object",
        "patternProperties": { "(?<!x)y": { "type": "string" } }
    });
    assert_eq!(
        compile(&schema).unwrap_err(),
        SchemaError::UnsupportedPattern {
            pattern: "(?<!x)y".to_owned(),
            reason: "look-around is not supported by the linear-time regex engine".to_owned(),
        }
    );
}

#[test]
fn unsupported_pattern_deep_in_the_schema_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": {
            "list": { "type": "array", "items": { "type": "string", "pattern": "^(\\w+)\\s\\1$" } }
        }
    });
    assert!(matches!(compile(&schema), Err(SchemaError::UnsupportedPattern { .. })));
}

#[test]
fn unsupported_pattern_in_referenced_defs_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": { "a": { "$ref": "#/$defs/word" } },
        "$defs": { "word": { "type": "string", "pattern": "(?!bad)\\w+" } }
    });
    assert!(matches!(compile(&schema), Err(SchemaError::UnsupportedPattern { .. })));
}

#[test]
fn unsupported_pattern_in_unreferenced_defs_is_refused() {
    // The validator never compiles an unreferenced subschema; the document still advertises it.
    for schema in [
        json!({ "type": "object", "$defs": { "unused": { "pattern": "(a)\\1" } } }),
        json!({ "type": "object", "$defs": { "unused": { "patternProperties": { "(?=a)": true } } } }),
    ] {
        assert!(matches!(compile(&schema), Err(SchemaError::UnsupportedPattern { .. })), "{schema}");
    }
}

#[test]
fn invalid_regex_syntax_is_refused() {
    assert!(matches!(
        compile(&json!({ "type": "string", "pattern": "[unclosed" })),
        Err(SchemaError::UnsupportedPattern { .. })
    ));
}

#[test]
fn linear_time_patterns_are_admitted() {
    let compiled = compile(&json!({
        "type": "object",
        "properties": { "id": { "type": "string", "pattern": "^[a-z][a-z0-9_-]{0,31}$" } },
        "patternProperties": { "^x-": { "type": "string" } }
    }))
    .expect("linear-time patterns");
    assert!(compiled.validate(&json!({ "id": "abc" })).is_ok());
    assert!(compiled.validate(&json!({ "id": "9abc" })).is_err());
}

#[test]
fn invalid_schema_is_refused() {
    let error = compile(&json!({ "type": 12 })).unwrap_err();
    assert!(matches!(error, SchemaError::Invalid { .. }), "{error:?}");
    assert!(error.to_string().starts_with("schema is not valid JSON Schema 2020-12"), "{error}");
}

#[test]
fn other_invalid_schemas_are_refused() {
    for schema in [
        json!({ "type": "strin" }),
        json!({ "properties": [] }),
        json!({ "minLength": -1 }),
        json!({ "required": "a" }),
        json!(42),
    ] {
        assert!(matches!(compile(&schema), Err(SchemaError::Invalid { .. })), "{schema}");
    }
}

#[test]
fn invalid_reason_is_bounded() {
    let huge = "x".repeat(10_000);
    let error = compile(&json!({ "type": huge })).unwrap_err();
    let SchemaError::Invalid { reason } = &error else {
        panic!("expected Invalid, got {error:?}");
    };
    assert!(reason.len() <= 200, "{}", reason.len());
}

#[test]
fn display_reads_after_the_name_of_what_the_schema_is() {
    let error = compile(&json!({ "$ref": "https://example.com/x" })).unwrap_err();
    let line = format!("tool weather: input {error}");
    assert!(line.starts_with("tool weather: input schema references"), "{line}");
    let line = format!("tool weather: output {error}");
    assert!(line.starts_with("tool weather: output schema references"), "{line}");
}
