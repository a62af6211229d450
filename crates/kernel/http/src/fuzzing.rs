//! Not API: a window on the internal header-value decoding for the fuzz targets (`tools/fuzz/`), behind the
//! `fuzzing` feature. Nothing here is covered by semver; do not use it outside fuzzing and its corpus replay.

use std::borrow::Cow;

use serde_json::Number;

/// The text a `Mcp-Name` / `Mcp-Param-*` value stands for: decoded when it is canonical base64 ([D-18]).
///
/// [D-18]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
pub fn decoded(raw: &str) -> Cow<'_, str> {
    crate::mirror::header_value::decoded(raw)
}

/// True for a value shaped like the base64 sentinel that does not decode canonically to UTF-8.
pub fn is_malformed_sentinel(raw: &str) -> bool {
    crate::mirror::header_value::is_malformed_sentinel(raw)
}

/// Whether an integer header value names the same integer as the body number ([D-19]).
///
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
pub fn integer_matches(header: &str, body: &Number) -> bool {
    crate::mirror::header_value::integer_matches(header, body)
}
