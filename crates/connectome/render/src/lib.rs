//! Renders connectome JSON exports (docs/connectome.md §J, adapted to a command line) as Mermaid,
//! DOT or one self-contained HTML page.
//!
//! - **Inputs** are only the bytes of the exports: the graph export ([CB-4], declared or observed),
//!   the weight sidecar ([CB-5]) and the diff record ([CB-7]), all `schema_version` 3. This crate depends
//!   on no connectome or kernel crate; it is a consumer of the bytes.
//! - **Strict reading.** A wrong `schema_version`, a missing or unexpected member, a value outside
//!   the vocabularies (kinds, levels, provenance, signs, algorithm), a duplicate node or edge, an
//!   edge whose endpoint is not a node, or a sidecar weight naming no edge is refused with a short
//!   [`Error`]; nothing is corrected, guessed or inferred.
//! - **Views** ([`view`]): declared, observed (with sidecar weights), and the diff over the union of
//!   nodes coloured by class. Aliases `n0…` follow id order; output is byte-identical across runs.
//!
//! [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

#![forbid(unsafe_code)]

pub mod cli;
pub mod diff;
pub mod dot;
pub mod effective;
pub mod error;
pub mod escape;
pub mod html;
mod json;
pub mod label;
pub mod layout;
pub mod mermaid;
pub mod model;
pub mod svg;
pub mod view;
pub mod vocab;

pub use cli::{Command, Format, Options, load, parse, render};
pub use diff::{Coverage, DiffEntry, DiffRecord, Ratio};
pub use effective::{EffectiveExport, EffectiveFormat, EffectiveOptions};
pub use error::{Error, Role};
pub use model::{Edge, Graph, Node, Sidecar};
pub use view::{Inputs, View, ViewName};

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
