//! Canonical bytes of the connectome graph, `schema_version` 3 (docs/connectome.md §C).
//!
//! The document is the contract: two graphs are the same exactly when their bytes are, and the hash is
//! the digest the bytes name, over exactly those bytes.
//!
//! - **Input.** [`CanonicalGraph`] (nodes, edges) with typed vocabulary and [`Value`] labels that have
//!   no float variant and integers of any size. The `connectome-graph` crate converts its graph into it.
//! - **Layout ([CC-1]).** UTF-8 JSON without insignificant whitespace; top level in the fixed order
//!   `schema_version`, `algorithm`, `nodes`, `edges`. Node objects hold `id`, `kind`, `labels`,
//!   `level`; edge objects `from`, `kind`, `provenance`, `sign`, `to`. No weight.
//! - **Order.** Nodes by the bytes of the NFC id ([CC-2]); edges by (NFC from, NFC to, kind, provenance)
//!   as bytes ([CC-3]); every other object by UTF-16 code units of its NFC keys ([CC-4]).
//! - **Text.** NFC on ids, endpoints, label keys and string values ([CC-6]); the [CC-8] escaping set:
//!   `\" \\ \b \t \n \f \r`, other controls as lowercase `\u00xx`, everything else literal UTF-8.
//! - **Refusals ([CC-14])** are [`Uncanonical`] variants: ids equal after NFC, keys equal after NFC in one
//!   object, floats in JSON labels ([`labels_from_json`]), ill-formed UTF-8 ([`text_from_bytes`]) and
//!   graph-check failures. Nothing is merged, dropped or corrected.
//! - **Digest ([CC-12]).** [`digest()`] is the one digest site: SHA-256 (default), SHA-384, SHA-512;
//!   [`hash_value`] hashes a record and refuses one whose own `"algorithm"` member disagrees.
//! - **Verifier ([CC-13]).** [`verify()`] checks held schema 1/2/3 bytes without re-encoding them.
//! - **Sidecar ([CB-5], [CC-11]).** [`encode_sidecar`] writes the unsigned weights; floats use
//!   [`format_float`].
//!
//! NFC uses the `unicode-normalization` tables, Unicode [`UNICODE_VERSION`].
//!
//! [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#![forbid(unsafe_code)]

pub mod digest;
pub mod error;
pub mod float;
pub mod model;
pub mod verify;
pub mod writer;

pub use digest::{Algorithm, UnknownAlgorithm, digest, to_hex};
pub use error::{GraphReason, HashValueError, Uncanonical};
pub use float::format_float;
pub use model::{
    CanonicalEdge, CanonicalGraph, CanonicalNode, EdgeKind, Integer, Labels, Level, NodeKind, Provenance,
    SCHEMA_VERSION, Sign, Value, Weight, labels_from_json, text_from_bytes,
};
pub use verify::{Verified, VerifyError, record_algorithm, sign_vocabulary, verify};
pub use writer::{
    MAX_LABEL_DEPTH, check, encode, encode_sidecar, encode_value, hash, hash_hex, hash_value, nfc, utf16_cmp,
};

/// The Unicode version of the NFC tables in use ([CC-6], [CK-4]).
///
/// [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CK-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const UNICODE_VERSION: (u8, u8, u8) = unicode_normalization::UNICODE_VERSION;

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
