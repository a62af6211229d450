//! Schemas the server writes itself: prompt arguments and the default tool input schema.

use serde_json::{Map, Value, json};

/// One prompt argument, as declared by the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptArg<'a> {
    /// The argument name (a property key of the generated schema).
    pub name: &'a str,
    /// Human-readable description, copied into the property schema when present.
    pub description: Option<&'a str>,
    /// Whether the argument must be supplied.
    pub required: bool,
}

/// The input schema for a prompt's arguments: every argument is a string.
///
/// Shape: `{"type":"object","properties":{<name>:{"type":"string"[,"description":…]}},
/// "required":[…],"additionalProperties":false}`. The `required` list (names flagged
/// `required`, in argument order) is always written, empty or not, as the reference does;
/// `"required": []` is valid 2020-12 and states the absence of required arguments plainly.
/// A repeated name keeps its first position; its last declaration wins.
pub fn prompt_argument_schema<'a>(args: impl IntoIterator<Item = PromptArg<'a>>) -> Value {
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for arg in args {
        let mut property = Map::new();
        property.insert("type".to_owned(), Value::from("string"));
        if let Some(description) = arg.description {
            property.insert("description".to_owned(), Value::from(description));
        }
        properties.insert(arg.name.to_owned(), Value::Object(property));
        required.retain(|name| name != arg.name);
        if arg.required {
            required.push(Value::from(arg.name));
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The input schema advertised for a tool declared without one: any object.
///
/// `{"type":"object","properties":{},"additionalProperties":true}`.
#[must_use]
pub fn default_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {},
        "additionalProperties": true,
    })
}
