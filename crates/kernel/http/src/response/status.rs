//! The HTTP status of a core answer (`protocol.md` [D-20], [D-22]; MCP [S-24]).
//!
//! [D-20]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-22]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [S-24]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use http::StatusCode;
use mcp_kernel_wire::{ErrorObject, code};

/// The status for a JSON-RPC error the core returned: 404 for a method not found, 400 for the errors
/// MCP gives a 400 (unsupported version, missing client capability), 500 for a host fault, and 200
/// for every other error (an unknown tool, a resource not found, "Invalid Request").
pub(crate) fn for_error(error: &ErrorObject) -> StatusCode {
    match error.code {
        code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        code::UNSUPPORTED_PROTOCOL_VERSION
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        code::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
