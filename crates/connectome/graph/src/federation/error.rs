//! The refusals of a federation ([CM-1], [CM-3], [CM-5]): lifting an instance, reading a federation back,
//! merging. Each names what it refuses; its `Display` is one line.
//!
//! [CM-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use connectome_canonical::{Algorithm, Uncanonical};

use crate::error::GraphError;
use crate::graph::EdgeKey;
use crate::read::shape::edge_name;
use crate::read::{ReadError, excerpt};
use crate::timing::MeasureError;

/// Why an instance could not be lifted, a federation read back, or parts merged.
#[derive(Debug, Clone, PartialEq)]
pub enum FederationError {
    /// An instance name or a system name is empty (`what` says which).
    EmptyName {
        /// `"instance"` or `"system"`.
        what: &'static str,
    },
    /// A document does not read (§R).
    Read(ReadError),
    /// An edge of an instance is not `observed` (an observed export holds only observed edges).
    NotObserved(EdgeKey),
    /// An edge lacks its call count, or its timing ([CM-1]).
    ///
    /// [CM-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Measure(MeasureError),
    /// A `server` node is not the system's server node.
    NotOfSystem {
        /// The system the parts were said to belong to.
        system: String,
        /// The id of the other server node.
        server: String,
    },
    /// A federation record does not describe its graph: `what` names the member that disagrees.
    Record {
        /// `"algorithm"`, `"graph"`, `"instances"` or `"edges"`.
        what: &'static str,
    },
    /// `merge` was given no part.
    NoInputs,
    /// Part `index` is of another system than part 0.
    DifferentSystem {
        /// The part's position in the input.
        index: usize,
        /// Part 0's system.
        expected: String,
        /// This part's system.
        found: String,
    },
    /// Part `index` names another digest than part 0.
    DifferentAlgorithm {
        /// The part's position in the input.
        index: usize,
        /// Part 0's algorithm.
        expected: Algorithm,
        /// This part's algorithm.
        found: Algorithm,
    },
    /// One instance name is in two parts: its counts would be added twice.
    DuplicateInstance(String),
    /// Part `index` carries timings and an earlier part with instances does not, or the reverse.
    TimingMismatch {
        /// The part's position in the input.
        index: usize,
    },
    /// Two parts hold a node with this id but a different kind, level or labels.
    ConflictingNode(String),
    /// Two parts sign one edge differently.
    ConflictingSign(EdgeKey),
    /// The merged parts do not form a graph ([CB-3]); parts that passed their own checks never do this.
    ///
    /// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Graph(GraphError),
    /// The merged documents have no canonical form ([CC-14]).
    ///
    /// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Uncanonical(Uncanonical),
}

impl fmt::Display for FederationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let edge = |key: &EdgeKey| edge_name(&key.from, &key.to, key.kind.as_str());
        match self {
            FederationError::EmptyName { what } => write!(f, "the {what} name is empty"),
            FederationError::Read(error) => error.fmt(f),
            FederationError::NotObserved(key) => {
                write!(f, "the edge {} is {}, not observed", edge(key), key.provenance.as_str())
            }
            FederationError::Measure(error) => error.fmt(f),
            FederationError::NotOfSystem { system, server } => {
                write!(
                    f,
                    "the server node {} is not the server of system {}",
                    excerpt(server),
                    excerpt(system)
                )
            }
            FederationError::Record { what } => {
                write!(f, "federation record: its \"{what}\" does not describe the graph export")
            }
            FederationError::NoInputs => f.write_str("nothing to merge: no part was given"),
            FederationError::DifferentSystem { index, expected, found } => write!(
                f,
                "part {index} is of system {}, part 0 of system {}",
                excerpt(found),
                excerpt(expected)
            ),
            FederationError::DifferentAlgorithm { index, expected, found } => write!(
                f,
                "part {index} names the algorithm {}, part 0 names {}",
                found.name(),
                expected.name()
            ),
            FederationError::DuplicateInstance(name) => {
                write!(f, "the instance {} is in two parts", excerpt(name))
            }
            FederationError::TimingMismatch { index } => {
                write!(f, "part {index} disagrees with an earlier part on carrying timings")
            }
            FederationError::ConflictingNode(id) => {
                write!(f, "two parts hold the node {} with a different kind, level or labels", excerpt(id))
            }
            FederationError::ConflictingSign(key) => {
                write!(f, "two parts sign the edge {} differently", edge(key))
            }
            FederationError::Graph(error) => write!(f, "the merged parts do not form a graph: {error}"),
            FederationError::Uncanonical(reason) => write!(f, "no canonical form: {reason}"),
        }
    }
}

impl std::error::Error for FederationError {}

impl From<ReadError> for FederationError {
    fn from(error: ReadError) -> Self {
        FederationError::Read(error)
    }
}

impl From<MeasureError> for FederationError {
    fn from(error: MeasureError) -> Self {
        FederationError::Measure(error)
    }
}

impl From<Uncanonical> for FederationError {
    fn from(reason: Uncanonical) -> Self {
        FederationError::Uncanonical(reason)
    }
}
