//! The typed refusals of the reach queries ([CG-4], [CG-5]).
//!
//! [CG-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CG-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

/// A refusal of a reach query ([CG-4], [CG-5]), named after the Elixir reasons it stands for.
///
/// The variants are checked in the [CG-5] order: options ([`ReachError::InvalidOption`], then
/// [`ReachError::UnknownNode`] for an entry id), the cap ([`ReachError::Cap`]), the graph check (vacuous in
/// Rust, see [`crate::reach`]), then the argument ids ([`ReachError::UnknownNode`], in argument order).
/// [`ReachError::Unreachable`] is a result of the dominance queries once every check has passed, and
/// [`ReachError::Refused`] is the only answer of [`crate::reach::all_paths`].
///
/// [CG-4]'s `{:unknown_option, k}` has no variant: each query takes its own option struct, so an option that
/// the query does not allow cannot be written.
///
/// [CG-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CG-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReachError {
    /// `{:invalid, k, v}`: an option has a value outside its domain.
    InvalidOption {
        /// The option's name: `"kinds"`, `"max_hops"` or `"entries"`.
        option: &'static str,
        /// Why the value is refused.
        reason: &'static str,
    },
    /// `{:unknown_node, id}`: an entry or argument id names no node of the graph.
    UnknownNode(String),
    /// `{:cap, :max_edges, n}`: the graph has more edges than `max_edges`; nothing was built.
    Cap {
        /// The cap given in the options.
        max_edges: usize,
        /// The graph's edge count (every kind counts).
        edges: usize,
    },
    /// `{:unreachable, t}`: the dominance target cannot be reached from the entry set.
    Unreachable(String),
    /// `{:refused, name}`: the query is refused by design (only `"all_paths"`).
    Refused(&'static str),
}

/// How many characters of an id a message shows before it is cut.
const SHOWN_CHARS: usize = 120;

/// Writes `id` quoted, cut after [`SHOWN_CHARS`] characters (with its byte length) so that a message
/// stays bounded whatever the caller passed.
fn write_id(f: &mut fmt::Formatter<'_>, id: &str) -> fmt::Result {
    match id.char_indices().nth(SHOWN_CHARS) {
        None => write!(f, "{id:?}"),
        Some((cut, _)) => write!(f, "{:?}… ({} bytes)", &id[..cut], id.len()),
    }
}

impl fmt::Display for ReachError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReachError::InvalidOption { option, reason } => write!(f, "invalid option {option}: {reason}"),
            ReachError::UnknownNode(id) => {
                f.write_str("unknown node ")?;
                write_id(f, id)
            }
            ReachError::Cap { max_edges, edges } => {
                write!(f, "graph has {edges} edges, above the cap max_edges = {max_edges}")
            }
            ReachError::Unreachable(id) => {
                f.write_str("target ")?;
                write_id(f, id)?;
                f.write_str(" is unreachable from the entry set")
            }
            ReachError::Refused(query) => {
                write!(f, "{query} is refused: the number of paths can be exponential in the graph size")
            }
        }
    }
}

impl std::error::Error for ReachError {}
