//! The HTTP status of a core answer (`protocol.md` [D-20], [D-22]; MCP [S-24]).
//!
//! [D-20]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-22]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [S-24]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use http::StatusCode;
use mcp_kernel_wire::{ErrorObject, Response as JsonRpcResponse, code};

use crate::response::body::{COPY_BELOW, ResponseBody};
use crate::response::refusal::json_response;

/// A core answer as JSON: a result 200, sent from the buffer it was encoded into when it is large
/// ([`COPY_BELOW`]); an error with the status `status_of` gives it, and its `retry-after`.
pub(crate) fn json_answer(
    response: JsonRpcResponse,
    status_of: impl FnOnce(&ErrorObject) -> StatusCode,
) -> http::Response<ResponseBody> {
    let Some(error) = response.as_error() else {
        return json_response(StatusCode::OK, response.into_pieces(COPY_BELOW));
    };
    let mut answer = json_response(status_of(error), response.to_bytes());
    retry_after(error, &mut answer);
    answer
}

/// The status for a JSON-RPC error the core returned: 404 for a method not found, 400 for the errors
/// MCP gives a 400 (unsupported version, missing client capability), 503 for a retryable
/// [`ErrorObject::unavailable`] (a shared store unreachable: see [`retry_after`]), 500 for a host
/// fault, and 200 for every other error (an unknown tool, a resource not found, "Invalid Request").
pub(crate) fn for_error(error: &ErrorObject) -> StatusCode {
    if error.retry_after().is_some() {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    match error.code {
        code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        code::UNSUPPORTED_PROTOCOL_VERSION
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        code::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::OK,
    }
}

/// Adds `retry-after` to the answer of a retryable error (`ErrorObject::unavailable`): the client
/// is told when to try again, over HTTP as in the error's `data`.
fn retry_after(error: &ErrorObject, response: &mut http::Response<ResponseBody>) {
    if let Some(seconds) = error.retry_after() {
        response.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_store_is_answered_503_not_500() {
        assert_eq!(for_error(&ErrorObject::unavailable(1)), StatusCode::SERVICE_UNAVAILABLE);
    }

    #[test]
    fn maps_the_core_errors() {
        assert_eq!(for_error(&ErrorObject::method_not_found()), StatusCode::NOT_FOUND);
        assert_eq!(for_error(&ErrorObject::unknown_tool()), StatusCode::OK);
        assert_eq!(for_error(&ErrorObject::invalid_request()), StatusCode::OK);
        assert_eq!(for_error(&ErrorObject::internal()), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            for_error(&ErrorObject::missing_capability(serde_json::json!({}))),
            StatusCode::BAD_REQUEST
        );
    }
}
