//! The typed refusals of the constructors ([CB-1]…[CB-3]).
//!
//! [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use connectome_canonical::{Level, NodeKind};

use crate::graph::EdgeKey;
use crate::identity::Identity;

/// Why an identity does not fit the node being built ([CB-1] step 6), in check order.
///
/// [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityFault {
    /// The identity's tag is not the node kind (a boundary identity requires kind `module`).
    Kind,
    /// The level is inconsistent with the identity (function ⇔ `mfa`, module ⇔ `module`, boundary ⇔
    /// `boundary`, everything else ⇔ `server`).
    Level,
}

/// A refusal of [`crate::Node::new`], [`crate::Edge::new`] or [`crate::Graph::new`] ([CB-1]…[CB-3]).
///
/// [CB-1] steps 1–5 (argument shape, unknown and missing keys, bad kind or level names, labels that are not
/// a map) cannot occur in Rust: the types rule them out, and `Edge::new` has no sign parameter at all.
///
/// [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum GraphError {
    /// `{:invalid, :identity, v}`: the identity does not fit the kind or level given.
    InvalidIdentity {
        /// The node kind given.
        kind: NodeKind,
        /// The level given.
        level: Level,
        /// The identity given.
        identity: Identity,
        /// What does not fit.
        fault: IdentityFault,
    },
    /// `{:invalid, :weight, v}`: a float weight that is NaN, infinite or below zero (`-0.0` is accepted).
    InvalidWeight(EdgeKey),
    /// The graph's `schema_version` is not [`connectome_canonical::SCHEMA_VERSION`]; nothing is translated.
    InvalidVersion(u64),
    /// `{:duplicate_node, id}`: two nodes share a raw id.
    DuplicateNode(String),
    /// `{:duplicate_edge, key}`: two edges share a raw key.
    DuplicateEdge(EdgeKey),
    /// `{:dangling_edge, id}`: an edge endpoint names no node.
    DanglingEdge(String),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::InvalidIdentity { kind, level, identity, fault } => write!(
                f,
                "invalid identity {:?} for kind {} at level {} ({fault:?} mismatch)",
                identity.id(),
                kind.as_str(),
                level.as_str()
            ),
            GraphError::InvalidWeight(key) => write!(f, "invalid weight on {key}"),
            GraphError::InvalidVersion(v) => write!(f, "invalid schema_version {v}"),
            GraphError::DuplicateNode(id) => write!(f, "duplicate_node {id:?}"),
            GraphError::DuplicateEdge(key) => write!(f, "duplicate_edge {key}"),
            GraphError::DanglingEdge(id) => write!(f, "dangling_edge {id:?}"),
        }
    }
}

impl std::error::Error for GraphError {}
