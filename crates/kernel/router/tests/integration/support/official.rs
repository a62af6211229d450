//! Validation against the official MCP `schema.json` of each revision (copied under `tests/data/`, with its licence).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

fn schema_document(revision: &str) -> Value {
    let path = format!("{}/tests/data/mcp-spec/{revision}/schema.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("schema.json is JSON")
}

type Cache = Mutex<HashMap<(String, String), std::sync::Arc<jsonschema::Validator>>>;

fn validator(revision: &str, definition: &str) -> std::sync::Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    static DOCS: OnceLock<Mutex<HashMap<String, Value>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (revision.to_owned(), definition.to_owned());
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return v.clone();
    }
    let docs = DOCS.get_or_init(Default::default);
    let mut doc =
        docs.lock().unwrap().entry(revision.to_owned()).or_insert_with(|| schema_document(revision)).clone();
    assert!(doc["$defs"].get(definition).is_some(), "{revision} has no definition {definition}");
    doc["$ref"] = Value::String(format!("#/$defs/{definition}"));
    let compiled = std::sync::Arc::new(
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&doc)
            .expect("official schema compiles"),
    );
    cache.lock().unwrap().insert(key, compiled.clone());
    compiled
}

/// True when `value` is valid against `#/$defs/<definition>` of the revision's official schema.
pub fn is_valid(revision: &str, definition: &str, value: &Value) -> bool {
    validator(revision, definition).is_valid(value)
}

/// Asserts `value` is valid against `#/$defs/<definition>` of the revision's official schema.
pub fn assert_valid(revision: &str, definition: &str, value: &Value) {
    let v = validator(revision, definition);
    let errors: Vec<String> =
        v.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{revision} {definition} rejects {value}:\n{}", errors.join("\n"));
}

/// Validates a whole response: the envelope, then the result or error definition.
pub fn assert_response(revision: &str, result_definition: &str, response: &Value) {
    if response.get("error").is_some() {
        assert_valid(revision, "JSONRPCErrorResponse", response);
        if revision == "2026-07-28" {
            let error_def = match response["error"]["code"].as_i64() {
                Some(-32700) => Some("ParseError"),
                Some(-32600) => Some("InvalidRequestError"),
                Some(-32601) => Some("MethodNotFoundError"),
                Some(-32602) => Some("InvalidParamsError"),
                Some(-32603) => Some("InternalError"),
                _ => None,
            };
            match (error_def, response["error"]["code"].as_i64()) {
                (Some(def), _) => assert_valid(revision, def, &response["error"]),
                (None, Some(-32022)) => assert_valid(revision, "UnsupportedProtocolVersionError", response),
                (None, Some(-32021)) => {
                    assert_valid(revision, "MissingRequiredClientCapabilityError", response)
                }
                (None, Some(-32020)) => assert_valid(revision, "HeaderMismatchError", response),
                (None, other) => panic!("unexpected modern error code {other:?}"),
            }
        }
    } else {
        assert_valid(revision, "JSONRPCResultResponse", response);
        assert_valid(revision, result_definition, &response["result"]);
    }
}
