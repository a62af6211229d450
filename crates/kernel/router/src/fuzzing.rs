//! Not API: the cursor codec and the uri-template matcher, for the fuzz targets and property tests,
//! and the plain template scan the template index is measured and checked against.

pub use crate::catalog::template::{MAX_RESERVED_EXPRESSIONS, MAX_TEMPLATE_URI_BYTES, UriTemplate};
pub use crate::request::cursor::{CursorError, CursorKind, decode, encode, page};

/// `builder`, whose server tries every template in turn for a read instead of consulting the
/// template index: the baseline of the `catalog/resources_read` benches and the index's properties.
pub fn linear_template_scan(builder: crate::ServerBuilder) -> crate::ServerBuilder {
    builder.linear_template_scan()
}
