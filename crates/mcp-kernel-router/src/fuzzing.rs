//! Not API: the cursor codec and the uri-template matcher, for the fuzz targets and property tests.

pub use crate::cursor::{CursorError, CursorKind, decode, encode, page};
pub use crate::template::{MAX_RESERVED_EXPRESSIONS, MAX_TEMPLATE_URI_BYTES, UriTemplate};
