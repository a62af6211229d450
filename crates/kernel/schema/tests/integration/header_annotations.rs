//! Rules for `x-mcp-header` (MCP 2026-07-28), all enforced at compile time.

use std::sync::Arc;

use mcp_kernel_schema::{HeaderParam, HeaderParamKind, SchemaError, compile};
use serde_json::{Value, json};

/// The `HeaderAnnotation` refusal for `schema`, as `(property_path, reason)`.
fn header_fault(schema: &Value) -> (String, String) {
    match compile(schema) {
        Err(SchemaError::HeaderAnnotation { property_path, reason }) => (property_path, reason),
        other => panic!("expected a HeaderAnnotation refusal for {schema}, got {other:?}"),
    }
}

fn one_property(annotation: Value, ty: Value) -> Value {
    json!({
        "type": "object",
        "properties": { "region": { "type": ty, "x-mcp-header": annotation } }
    })
}

#[test]
fn valid_annotation_produces_header_param() {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": { "type": "string" },
            "region": { "type": "string", "x-mcp-header": "Region" },
            "limit": { "type": "integer", "x-mcp-header": "Max-Results" },
            "dry_run": { "type": "boolean", "x-mcp-header": "dry.run" }
        }
    });
    let compiled = compile(&schema).expect("valid schema");
    let params = compiled.header_params();
    assert_eq!(
        params,
        &[
            HeaderParam {
                name: "Region".into(),
                header: "mcp-param-region".into(),
                path: vec![Arc::from("region")],
                kind: HeaderParamKind::String,
            },
            HeaderParam {
                name: "Max-Results".into(),
                header: "mcp-param-max-results".into(),
                path: vec![Arc::from("limit")],
                kind: HeaderParamKind::Integer,
            },
            HeaderParam {
                name: "dry.run".into(),
                header: "mcp-param-dry.run".into(),
                path: vec![Arc::from("dry_run")],
                kind: HeaderParamKind::Boolean,
            },
        ]
    );
    // A top-level parameter's path shares the declared key's allocation.
    let declared = compiled.declared_keys();
    assert!(Arc::ptr_eq(&params[0].path[0], &declared[1]));
}

#[test]
fn token_syntax_every_tchar_is_accepted() {
    let name = "!#$%&'*+-.^_`|~09AZaz";
    let compiled = compile(&one_property(json!(name), json!("string"))).expect("all tchars");
    assert_eq!(compiled.header_params()[0].name, name);
}

#[test]
fn token_syntax_non_tokens_are_refused() {
    for bad in ["", "Region Name", "Region:", "a/b", "(x)", "naïve", "tab\t", "q\"", "a,b"] {
        let (path, reason) = header_fault(&one_property(json!(bad), json!("string")));
        assert_eq!(path, "/properties/region", "{bad:?}");
        assert!(reason.contains("token") || reason.contains("empty"), "{bad:?}: {reason}");
    }
}

#[test]
fn token_syntax_non_string_value_is_refused() {
    for bad in [json!(1), json!(true), json!(null), json!(["a"]), json!({"name": "a"})] {
        let (_, reason) = header_fault(&one_property(bad.clone(), json!("string")));
        assert!(reason.contains("must be a string"), "{bad}: {reason}");
    }
}

#[test]
fn case_insensitive_duplicate_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "type": "string", "x-mcp-header": "Region" },
            "b": { "type": "object", "properties": {
                "c": { "type": "string", "x-mcp-header": "REGION" }
            } }
        }
    });
    let (path, reason) = header_fault(&schema);
    assert_eq!(path, "/properties/b/properties/c");
    assert!(reason.contains("/properties/a"), "{reason}");
    assert!(reason.contains("case-insensitive"), "{reason}");
}

#[test]
fn number_type_is_refused() {
    let (path, reason) = header_fault(&one_property(json!("Region"), json!("number")));
    assert_eq!(path, "/properties/region");
    assert!(reason.contains("\"number\""), "{reason}");
}

#[test]
fn other_single_types_are_refused() {
    for ty in ["object", "array", "null"] {
        let (_, reason) = header_fault(&one_property(json!("Region"), json!(ty)));
        assert!(reason.contains(ty), "{ty}: {reason}");
    }
}

#[test]
fn type_list_is_refused() {
    let (_, reason) = header_fault(&one_property(json!("Region"), json!(["string", "null"])));
    assert!(reason.contains("exactly one type"), "{reason}");
}

#[test]
fn untyped_property_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": { "region": { "x-mcp-header": "Region", "enum": ["eu", "us"] } }
    });
    let (path, reason) = header_fault(&schema);
    assert_eq!(path, "/properties/region");
    assert!(reason.contains("declares none"), "{reason}");
}

#[test]
fn nested_via_properties_is_admitted_with_path() {
    let schema = json!({
        "type": "object",
        "properties": {
            "target": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "object",
                        "properties": {
                            "zone": { "type": "string", "x-mcp-header": "Zone" }
                        }
                    }
                }
            }
        }
    });
    let compiled = compile(&schema).expect("nested through properties");
    let params = compiled.header_params();
    assert_eq!(params.len(), 1);
    let path: Vec<&str> = params[0].path.iter().map(|key| &**key).collect();
    assert_eq!(path, ["target", "location", "zone"]);
    assert_eq!(params[0].header, "mcp-param-zone");
}

#[test]
fn under_items_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": {
            "tags": { "type": "array", "items": { "type": "string", "x-mcp-header": "Tag" } }
        }
    });
    let (path, _) = header_fault(&schema);
    assert_eq!(path, "/properties/tags/items");
}

#[test]
fn under_prefix_items_is_refused() {
    let schema = json!({
        "type": "object",
        "properties": {
            "pair": { "type": "array", "prefixItems": [
                { "type": "string" },
                { "type": "string", "x-mcp-header": "Second" }
            ] }
        }
    });
    let (path, _) = header_fault(&schema);
    assert_eq!(path, "/properties/pair/prefixItems/1");
}

#[test]
fn under_one_of_is_refused() {
    let schema = json!({
        "type": "object",
        "oneOf": [
            { "properties": { "a": { "type": "string", "x-mcp-header": "A" } } },
            { "properties": { "b": { "type": "string" } } }
        ]
    });
    let (path, reason) = header_fault(&schema);
    assert_eq!(path, "/oneOf/0/properties/a");
    assert!(reason.contains("chain of \"properties\""), "{reason}");
}

#[test]
fn under_defs_is_refused_even_when_referenced() {
    let schema = json!({
        "type": "object",
        "properties": { "region": { "$ref": "#/$defs/region" } },
        "$defs": { "region": { "type": "string", "x-mcp-header": "Region" } }
    });
    let (path, _) = header_fault(&schema);
    assert_eq!(path, "/$defs/region");
}

#[test]
fn under_every_other_applicator_is_refused() {
    let annotated = json!({ "type": "string", "x-mcp-header": "X" });
    for (keyword, value, expected_path) in [
        ("additionalProperties", annotated.clone(), "/additionalProperties"),
        ("patternProperties", json!({ "^x": annotated }), "/patternProperties/^x"),
        ("not", annotated.clone(), "/not"),
        ("if", annotated.clone(), "/if"),
        ("then", annotated.clone(), "/then"),
        ("else", annotated.clone(), "/else"),
        ("allOf", json!([annotated]), "/allOf/0"),
        ("anyOf", json!([annotated]), "/anyOf/0"),
        ("dependentSchemas", json!({ "a": annotated }), "/dependentSchemas/a"),
        ("unevaluatedProperties", annotated.clone(), "/unevaluatedProperties"),
        ("propertyNames", annotated.clone(), "/propertyNames"),
        ("x-vendor", json!({ "nested": annotated }), "/x-vendor/nested"),
    ] {
        let schema = json!({ "type": "object", keyword: value });
        let (path, _) = header_fault(&schema);
        assert_eq!(path, expected_path, "{keyword}");
    }
}

#[test]
fn on_the_root_is_refused() {
    let (path, reason) = header_fault(&json!({ "type": "string", "x-mcp-header": "Root" }));
    assert_eq!(path, "");
    assert!(reason.contains("root"), "{reason}");
}

#[test]
fn property_named_x_mcp_header_is_a_property_not_an_annotation() {
    let schema = json!({
        "type": "object",
        "properties": { "x-mcp-header": { "type": "object" } },
        "default": { "x-mcp-header": 42 },
        "examples": [{ "x-mcp-header": {} }]
    });
    let compiled = compile(&schema).expect("no annotation here");
    assert!(compiled.header_params().is_empty());
    assert_eq!(&*compiled.declared_keys()[0], "x-mcp-header");
}

#[test]
fn display_names_the_location() {
    let error = compile(&one_property(json!("bad name"), json!("string"))).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("/properties/region"), "{text}");
    assert!(text.contains("x-mcp-header"), "{text}");
}

#[test]
fn a_deferred_header_fault_keeps_the_schema_and_mirrors_nothing() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"n": {"type": "number", "x-mcp-header": "N"}, "s": {"type": "string", "x-mcp-header": "S"}}
    });
    assert!(mcp_kernel_schema::compile(&schema).is_err());
    let compiled = mcp_kernel_schema::compile_deferring_header_faults(&schema).unwrap();
    assert!(matches!(compiled.header_fault(), Some(mcp_kernel_schema::SchemaError::HeaderAnnotation { .. })));
    assert!(compiled.header_params().is_empty());
    assert_eq!(compiled.schema(), &schema, "advertised as written");
    assert!(compiled.validate(&serde_json::json!({"n": "not a number"})).is_err(), "still enforced");
    let remote =
        serde_json::json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/x"}}});
    assert!(
        mcp_kernel_schema::compile_deferring_header_faults(&remote).is_err(),
        "other faults still refuse"
    );
}
