//! The method handlers, one file per primitive.

mod completion;
mod list;
mod logging;
mod prompts;
mod resources;
pub(crate) mod round_trip;
mod source_list;
mod subscriptions;
mod tool_result;
pub(crate) mod tools;

use serde_json::{Map, Value};

use mcp_kernel_wire::ErrorObject;

use crate::request::cursor::{self, CursorError, CursorKind, Position};

pub(crate) use crate::request::answer::encoded;

/// `params` as an object: absent is empty, anything else (`null` included) is refused.
pub(crate) fn params_object(params: Option<&Value>) -> Result<Option<&Map<String, Value>>, ErrorObject> {
    match params {
        None => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(_) => Err(ErrorObject::invalid_params("params must be an object")),
    }
}

/// `params` as an owned object; absent is empty (the core refuses a non-object `params` before routing).
pub(crate) fn owned_params(params: Option<Value>) -> Map<String, Value> {
    match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// The position a list request's `cursor` names.
pub(crate) fn cursor_position(
    params: Option<&Value>,
    kind: CursorKind,
) -> Result<Option<String>, ErrorObject> {
    let Some(text) = cursor_text(params)? else { return Ok(None) };
    cursor::decode(kind, text).map_err(|e| ErrorObject::invalid_params(&e.detail()))
}

/// The position, phase included, a `resources/list` request's `cursor` names (a server with a
/// resource source).
pub(crate) fn resources_position(params: Option<&Value>) -> Result<Option<Position>, ErrorObject> {
    let Some(text) = cursor_text(params)? else { return Ok(None) };
    cursor::decode_position(CursorKind::Resources, text).map_err(|e| ErrorObject::invalid_params(&e.detail()))
}

/// A list request's `cursor`, which must be a string when present.
fn cursor_text(params: Option<&Value>) -> Result<Option<&str>, ErrorObject> {
    let Some(map) = params_object(params)? else { return Ok(None) };
    match map.get("cursor") {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(ErrorObject::invalid_params(&CursorError::Malformed.detail())),
    }
}
