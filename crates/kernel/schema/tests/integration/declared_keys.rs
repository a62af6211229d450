//! Rules for declared keys: taken from the host schema at compile time, in schema order,
//! shared as `Arc<str>`, and picked out of a caller's map without copying caller keys.

use std::sync::Arc;

use mcp_kernel_schema::compile;
use serde_json::{Map, Value, json};

fn weather() -> mcp_kernel_schema::CompiledSchema {
    compile(&json!({
        "type": "object",
        "properties": {
            "zeta": { "type": "string" },
            "alpha": { "type": "integer" },
            "mid": { "type": "boolean" }
        },
        "additionalProperties": true
    }))
    .expect("valid schema")
}

fn names(keys: &[Arc<str>]) -> Vec<&str> {
    keys.iter().map(|key| &**key).collect()
}

#[test]
fn declared_keys_follow_schema_order() {
    let compiled = weather();
    assert_eq!(names(compiled.declared_keys()), ["zeta", "alpha", "mid"]);
}

#[test]
fn no_properties_means_no_declared_keys() {
    for schema in [json!({ "type": "object" }), json!(true), json!({})] {
        assert!(compile(&schema).unwrap().declared_keys().is_empty(), "{schema}");
    }
}

#[test]
fn only_top_level_properties_are_declared() {
    let compiled = compile(&json!({
        "type": "object",
        "properties": { "outer": { "type": "object", "properties": { "inner": {} } } },
        "$defs": { "elsewhere": { "properties": { "hidden": {} } } }
    }))
    .unwrap();
    assert_eq!(names(compiled.declared_keys()), ["outer"]);
}

#[test]
fn select_declared_drops_undeclared_keys_in_schema_order() {
    let compiled = weather();
    let arguments = json!({ "mid": true, "extra": 1, "zeta": "z", "other": [] });
    let selected: Vec<(&str, &Value)> = compiled
        .select_declared(arguments.as_object().unwrap())
        .map(|(key, value)| (&**key, value))
        .collect();
    assert_eq!(selected, [("zeta", &json!("z")), ("mid", &json!(true))]);
}

#[test]
fn selected_keys_are_the_schemas_arcs() {
    let compiled = weather();
    let declared = compiled.declared_keys();
    for _ in 0..3 {
        let arguments = json!({ "alpha": 1, "zeta": "z", "mid": false });
        let selected: Vec<&Arc<str>> =
            compiled.select_declared(arguments.as_object().unwrap()).map(|(key, _)| key).collect();
        assert_eq!(selected.len(), 3);
        for key in selected {
            let original = declared.iter().find(|d| **d == *key).unwrap();
            assert!(Arc::ptr_eq(key, original), "{key} is a copy");
        }
    }
    // Stable across calls: the same allocation every time.
    let first = Arc::clone(&compiled.declared_keys()[0]);
    assert!(Arc::ptr_eq(&first, &compiled.declared_keys()[0]));
}

#[test]
fn ten_thousand_undeclared_keys_produce_no_declared_key() {
    let compiled = weather();
    let mut arguments = Map::new();
    for index in 0..10_000 {
        arguments.insert(format!("undeclared-{index}"), Value::from(index));
    }
    assert_eq!(compiled.select_declared(&arguments).count(), 0);
    // A declared key among them is still found, and only it.
    arguments.insert("alpha".to_owned(), json!(7));
    let selected: Vec<(&str, &Value)> =
        compiled.select_declared(&arguments).map(|(key, value)| (&**key, value)).collect();
    assert_eq!(selected, [("alpha", &json!(7))]);
}

#[test]
fn declared_keys_do_not_depend_on_caller_input() {
    let compiled = weather();
    let before: Vec<*const u8> = compiled.declared_keys().iter().map(|k| k.as_ptr()).collect();
    let arguments = json!({ "zeta": "x", "new": 1 });
    let _ = compiled.validate(&arguments);
    let _ = compiled.select_declared(arguments.as_object().unwrap()).count();
    let after: Vec<*const u8> = compiled.declared_keys().iter().map(|k| k.as_ptr()).collect();
    assert_eq!(before, after);
    assert_eq!(names(compiled.declared_keys()), ["zeta", "alpha", "mid"]);
}
