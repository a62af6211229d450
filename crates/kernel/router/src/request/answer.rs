//! A method's answer before the era's decoration, and a typed wire result turned into one.

use serde::Serialize;
use serde_json::Value;

use mcp_kernel_wire::ErrorObject;

/// A method's answer before the era's decoration.
pub(crate) type Answer = Result<Value, ErrorObject>;

/// A method's answer as routed: a value still to decorate, or bytes already decorated for their era.
pub(crate) type Routed = Result<mcp_kernel_wire::Payload, ErrorObject>;

/// A typed wire result as the JSON object the era's decoration is then added to. The wire result types
/// hold only strings, numbers, booleans and JSON values, so this cannot fail; were it to, -32603.
pub(crate) fn encoded<T: Serialize>(result: &T) -> Answer {
    serde_json::to_value(result).map_err(|_| ErrorObject::internal())
}
