//! The method handlers, one file per primitive.

mod completion;
mod list;
mod logging;
mod prompts;
mod resources;
mod round_trip;
mod subscriptions;
mod tool_result;
mod tools;

use serde_json::{Map, Value};

use mcp_kernel_wire::ErrorObject;

use crate::request::cursor::{self, CursorError, CursorKind};

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
    let Some(map) = params_object(params)? else { return Ok(None) };
    match map.get("cursor") {
        None => Ok(None),
        Some(Value::String(text)) => {
            cursor::decode(kind, text).map_err(|e| ErrorObject::invalid_params(&e.detail()))
        }
        Some(_) => Err(ErrorObject::invalid_params(&CursorError::Malformed.detail())),
    }
}
