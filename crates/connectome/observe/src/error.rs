//! The collector's refusals.
//!
//! "Not started" is a refusal, never an empty answer: "nothing watched" is a different claim from
//! "nothing ran" ([CE-4]), so no read of a collector that is not running returns an empty graph, list or map.
//!
//! [CE-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use connectome_graph::{GraphError, Uncanonical};

/// Why a collector read was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum ObserveError {
    /// The collector is not running: never started, or stopped (its rows went with it).
    NotStarted,
    /// The rows do not form a graph (cannot happen for rows this crate wrote; kept as a typed refusal).
    Graph(GraphError),
    /// The snapshot has no canonical form (e.g. two ids equal after NFC), so it has no sidecar either.
    Uncanonical(Uncanonical),
}

impl fmt::Display for ObserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObserveError::NotStarted => f.write_str("not_started: the collector is not running"),
            ObserveError::Graph(error) => write!(f, "the observed rows do not form a graph: {error}"),
            ObserveError::Uncanonical(reason) => {
                write!(f, "the observed graph has no canonical form: {reason}")
            }
        }
    }
}

impl std::error::Error for ObserveError {}

impl From<GraphError> for ObserveError {
    fn from(error: GraphError) -> Self {
        ObserveError::Graph(error)
    }
}

impl From<Uncanonical> for ObserveError {
    fn from(reason: Uncanonical) -> Self {
        ObserveError::Uncanonical(reason)
    }
}
