//! The refusal type of [CC-14]: `{:uncanonical, r}` becomes `Err(Uncanonical::…)`.
//!
//! [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use crate::model::{EdgeKind, Provenance};

/// Why a graph (or a record) has no canonical bytes ([CC-14]). Variant names are the spec's reasons.
///
/// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum Uncanonical {
    /// Two node ids are equal after NFC ([CC-6]); names the NFC id.
    ///
    /// [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    DuplicateIdAfterNfc {
        /// The id after NFC.
        id: String,
    },
    /// A label value that [CC-9] refuses (in this model: a float from JSON); names the top-level label and
    /// its whole value.
    ///
    /// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    LabelValue {
        /// The node id (or `"record"` for [`crate::encode_value`]).
        id: String,
        /// The top-level label key.
        key: String,
        /// The whole top-level value.
        value: serde_json::Value,
    },
    /// A key that is neither an atom nor a string ([CC-5]). Rust keys are strings, so this writer never
    /// produces it; it is kept so the [CC-14] vocabulary is complete.
    ///
    /// [CC-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    LabelKey {
        /// The node id.
        id: String,
        /// A rendering of the offending key.
        key: String,
    },
    /// Two keys of one object are equal after NFC ([CC-6]); nothing is merged.
    ///
    /// [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    DuplicateLabelKey {
        /// The node id (or `"record"`).
        id: String,
        /// The key after NFC.
        key: String,
    },
    /// A field is not well-formed UTF-8 ([CC-7]).
    ///
    /// [CC-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    InvalidUtf8 {
        /// The node id (or what identifies the owner).
        id: String,
        /// The field name.
        field: String,
    },
    /// The graph fails its own check ([CB-3]).
    ///
    /// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    InvalidGraph(GraphReason),
    /// A label value nests arrays and objects deeper than [`crate::MAX_LABEL_DEPTH`] levels of the document. Not one of
    /// the specification's reasons: a bound this writer adds so that a value built in code cannot
    /// exhaust the stack.
    TooDeep {
        /// The node id (or `"record"`).
        id: String,
    },
    /// A character outside XML 1.0 `Char` in the GraphML export ([CB-8]); not produced by this crate.
    ///
    /// [CB-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    NotXml {
        /// The node id.
        id: String,
        /// The offending code point.
        cp: u32,
    },
}

/// The graph-check reason wrapped by [`Uncanonical::InvalidGraph`] ([CB-3], in check order).
///
/// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum GraphReason {
    /// Two nodes have the same raw id.
    DuplicateNode(String),
    /// Two edges have the same raw key.
    DuplicateEdge {
        /// Source id.
        from: String,
        /// Target id.
        to: String,
        /// Edge kind.
        kind: EdgeKind,
        /// Provenance.
        provenance: Provenance,
    },
    /// An edge endpoint names no node.
    DanglingEdge(String),
    /// A weight is a float that is NaN, infinite or below zero ([CB-2]).
    ///
    /// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    InvalidWeight {
        /// Source id.
        from: String,
        /// Target id.
        to: String,
        /// Edge kind.
        kind: EdgeKind,
        /// Provenance.
        provenance: Provenance,
    },
}

impl fmt::Display for GraphReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphReason::DuplicateNode(id) => write!(f, "duplicate_node {id:?}"),
            GraphReason::DuplicateEdge { from, to, kind, provenance } => {
                write!(f, "duplicate_edge {from:?} -> {to:?} {} {}", kind.as_str(), provenance.as_str())
            }
            GraphReason::DanglingEdge(id) => write!(f, "dangling_edge {id:?}"),
            GraphReason::InvalidWeight { from, to, kind, provenance } => {
                write!(f, "invalid weight on {from:?} -> {to:?} {} {}", kind.as_str(), provenance.as_str())
            }
        }
    }
}

impl fmt::Display for Uncanonical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("uncanonical: ")?;
        match self {
            Uncanonical::DuplicateIdAfterNfc { id } => write!(f, "duplicate_id_after_nfc {id:?}"),
            Uncanonical::LabelValue { id, key, value } => write!(f, "label_value {id:?} {key:?} {value}"),
            Uncanonical::LabelKey { id, key } => write!(f, "label_key {id:?} {key}"),
            Uncanonical::DuplicateLabelKey { id, key } => write!(f, "duplicate_label_key {id:?} {key:?}"),
            Uncanonical::InvalidUtf8 { id, field } => write!(f, "invalid_utf8 {id:?} {field}"),
            Uncanonical::InvalidGraph(reason) => write!(f, "invalid_graph {reason}"),
            Uncanonical::TooDeep { id } => {
                write!(
                    f,
                    "too_deep {id:?}: labels nest deeper than {} levels of the document",
                    crate::MAX_LABEL_DEPTH
                )
            }
            Uncanonical::NotXml { id, cp } => write!(f, "not_xml {id:?} U+{cp:04X}"),
        }
    }
}

impl std::error::Error for Uncanonical {}

/// A refusal of [`crate::hash_value`] ([CC-12]).
///
/// [CC-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum HashValueError {
    /// The record's own `"algorithm"` member disagrees with the algorithm asked for.
    AlgorithmMismatch {
        /// The algorithm asked for.
        requested: crate::Algorithm,
    },
    /// The record has no canonical bytes ([CC-10]).
    ///
    /// [CC-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Uncanonical(Uncanonical),
}

impl fmt::Display for HashValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HashValueError::AlgorithmMismatch { requested } => {
                write!(f, "the record's \"algorithm\" member is not {:?}", requested.name())
            }
            HashValueError::Uncanonical(reason) => reason.fmt(f),
        }
    }
}

impl std::error::Error for HashValueError {}
