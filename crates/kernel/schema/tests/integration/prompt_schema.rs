//! Rules for the schemas the server writes itself: prompt arguments and the default tool schema.

use mcp_kernel_schema::{PromptArg, compile, default_input_schema, prompt_argument_schema};
use serde_json::json;

#[test]
fn prompt_argument_schema_matches_the_reference_shape() {
    let schema = prompt_argument_schema([
        PromptArg { name: "topic", description: Some("What to write about"), required: true },
        PromptArg { name: "tone", description: None, required: false },
        PromptArg { name: "audience", description: None, required: true },
    ]);
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "topic": { "type": "string", "description": "What to write about" },
                "tone": { "type": "string" },
                "audience": { "type": "string" }
            },
            "required": ["topic", "audience"],
            "additionalProperties": false
        })
    );
    // Property order is argument order (serde_json preserve_order).
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["topic", "tone", "audience"]);
}

#[test]
fn prompt_argument_schema_always_writes_required() {
    assert_eq!(
        prompt_argument_schema(std::iter::empty()),
        json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false })
    );
}

#[test]
fn prompt_argument_schema_compiles_and_enforces() {
    let compiled =
        compile(&prompt_argument_schema([PromptArg { name: "topic", description: None, required: true }]))
            .unwrap();
    assert_eq!(compiled.validate(&json!({ "topic": "rust" })), Ok(()));
    assert!(compiled.validate(&json!({})).is_err());
    assert!(compiled.validate(&json!({ "topic": 1 })).is_err());
    assert!(compiled.validate(&json!({ "topic": "a", "x": "b" })).is_err());
}

#[test]
fn default_input_schema_accepts_any_object() {
    assert_eq!(
        default_input_schema(),
        json!({ "type": "object", "properties": {}, "additionalProperties": true })
    );
    let compiled = compile(&default_input_schema()).unwrap();
    assert!(compiled.declared_keys().is_empty());
    assert_eq!(compiled.validate(&json!({ "anything": [1, 2] })), Ok(()));
    assert!(compiled.validate(&json!([1])).is_err());
}

#[test]
fn compiled_schema_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<mcp_kernel_schema::CompiledSchema>();
}
