//! Reachability and dominance queries over a [`Graph`] (docs/connectome.md §G, [CK-5]).
//!
//! # Queries and results ([CG-1])
//!
//! | function | result |
//! |--|--|
//! | [`reachable`] | `Ok(bool)` |
//! | [`reachable_without`] | `Ok(None)` or `Ok(Some(Path))`, a witness |
//! | [`dominates`] | `Ok(bool)` |
//! | [`mandatory_pass`] | `Ok(BTreeSet<String>)` of node ids |
//! | [`all_paths`] | always `Err(ReachError::Refused("all_paths"))` |
//!
//! # Semantics ([CG-2])
//!
//! - Paths follow edge direction over the **admitted kinds** only; a node reaches itself with zero hops.
//! - Gates are crossed at the endpoints too: if `from` or `to` is a gate, [`reachable_without`] answers
//!   `None`.
//! - `max_hops`: a query whose shortest admitted path is longer than `max_hops` answers false / `None`.
//! - The dominance queries add a **virtual root** with an edge to each entry ([CA-11]: the entry set is the
//!   `server` nodes unless [`DominanceOptions::entries`] is given). `d` dominates `t` when every path from
//!   the root to `t` passes through `d`. The root itself is never reported. A sole entry therefore
//!   dominates everything reachable; with several entries, an entry dominates `t` only if every root path
//!   to `t` crosses it anyway (e.g. entries `[a, b]` with `b → a → t` and no other way in).
//! - [`dominates`]`(g, x, x)` is true when `x` is reachable from the root.
//! - If the target is unreachable from the root, both dominance queries answer
//!   `Err(ReachError::Unreachable(t))`, never true.
//! - Signs are never consulted; neither are weights, labels or provenance.
//!
//! # Witness ([CG-3], [CK-5])
//!
//! The witness of [`reachable_without`] is a **shortest** gate-free path over the admitted kinds: the one
//! a breadth-first search from `from` finds when it visits each node's out-edges in canonical graph edge
//! order (raw key `(from, to, kind name, provenance name)`, as [`Graph::edges`] stores them). For each step
//! the edge is the first edge in graph order between those two nodes with an admitted kind. It always
//! holds that `edges.len() == nodes.len() - 1`, that every edge is an element of [`Graph::edges`], that
//! `edges[i].from == nodes[i]` and `edges[i].to == nodes[i + 1]`, and that no gate appears. When
//! `from == to` (and it is no gate) the witness is the zero-hop path `nodes = [from]`, `edges = []`.
//!
//! The tie-break between shortest paths is fixed by the canonical order; Elixir's was whatever `:digraph`
//! did, so only the properties above and cases with a unique shortest path compare across the two.
//!
//! # Options ([CG-4])
//!
//! | option | field of | values |
//! |--|--|--|
//! | `kinds` | [`PathOptions`], [`DominanceOptions`] | `None` (all four) or a non-empty set |
//! | `max_hops` | [`PathOptions`] | `None` (infinity) or a positive count |
//! | `entries` | [`DominanceOptions`] | `None` (the server nodes; there must be one) or a non-empty list of known ids |
//! | `max_edges` | [`PathOptions`], [`DominanceOptions`] | default [`DEFAULT_MAX_EDGES`]; the graph's edge count (every kind) must not exceed it |
//!
//! Each query takes the option struct of its family, so an option the query does not allow ([CG-4]'s
//! `{:unknown_option, k}`) cannot be written: that refusal is impossible by type.
//!
//! # Refusal order ([CG-5])
//!
//! 1. options, in the order `kinds`, `max_hops` / `entries`: [`ReachError::InvalidOption`], then
//!    [`ReachError::UnknownNode`] for the first unknown entry id (in list order);
//! 2. the cap: [`ReachError::Cap`], before any adjacency is built;
//! 3. `Graph.check`: vacuous in Rust, since a [`Graph`] can only be obtained from [`Graph::new`], which
//!    checks it ([CB-3]), and it has no mutable access;
//! 4. argument ids, in argument order (`from`, `to`, then each gate; `gate`, then `target`):
//!    [`ReachError::UnknownNode`].
//!
//! # Algorithms and cost ([CG-6])
//!
//! Each query builds a private adjacency list over the admitted kinds (in canonical order, endpoint ids
//! resolved through a per-query map of borrowed ids, nothing cloned) and drops it on every exit; nothing
//! is cached. [`reachable`] and [`reachable_without`] are one breadth-first search, O(V + E).
//! [`dominates`] is the definition itself: one search from the root with the gate, one without, O(V + E).
//! [`mandatory_pass`] builds a `petgraph::Graph` (node `i` is `g.nodes()[i]`, plus the root) and finds
//! the target's dominators in O(V + E): they all lie on any one root→target path, and a path node
//! dominates exactly when nothing reachable before it, off the path, rejoins the path beyond it. Its
//! answer equals the removal definition that [`dominates`] uses (a property test holds them equal). A
//! whole-tree algorithm (petgraph's `simple_fast`) was measured quadratic on a long chain with many
//! joins — minutes just under the default edge cap — and is not used.
//!
//! [CA-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CG-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CG-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CG-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CG-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CG-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CG-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::BTreeSet;
use std::convert::Infallible;

use crate::graph::{Edge, Graph};
use crate::{EdgeKind, NodeKind};

mod error;
mod search;

pub use error::ReachError;

use search::{Adjacency, KindMask, bfs, kind_slot, node_index, strict_dominators};

/// The default of `max_edges` ([CG-4]): a graph with more edges is refused before anything is built.
///
/// [CG-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const DEFAULT_MAX_EDGES: usize = 1_000_000;

/// A witness path ([CG-3]): `nodes` are ids from `from` to `to`, `edges` the graph edges between them.
///
/// [CG-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    /// The node ids, from the source to the target; never empty.
    pub nodes: Vec<String>,
    /// The edges, `edges[i]` from `nodes[i]` to `nodes[i + 1]`; one fewer than the nodes.
    pub edges: Vec<Edge>,
}

/// The options of [`reachable`] and [`reachable_without`] ([CG-4]).
///
/// [CG-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathOptions {
    /// The admitted edge kinds; `None` admits all four, an empty set is refused.
    pub kinds: Option<BTreeSet<EdgeKind>>,
    /// The longest path accepted, in edges; `None` is infinity, `Some(0)` is refused.
    pub max_hops: Option<usize>,
    /// The largest graph (in edges, every kind) the query accepts.
    pub max_edges: usize,
}

impl Default for PathOptions {
    fn default() -> PathOptions {
        PathOptions { kinds: None, max_hops: None, max_edges: DEFAULT_MAX_EDGES }
    }
}

/// The options of [`dominates`] and [`mandatory_pass`] ([CG-4]).
///
/// [CG-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DominanceOptions {
    /// The admitted edge kinds; `None` admits all four, an empty set is refused.
    pub kinds: Option<BTreeSet<EdgeKind>>,
    /// The entry ids; `None` means the `server` nodes ([CA-11]); an empty list is refused.
    ///
    /// [CA-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub entries: Option<Vec<String>>,
    /// The largest graph (in edges, every kind) the query accepts.
    pub max_edges: usize,
}

impl Default for DominanceOptions {
    fn default() -> DominanceOptions {
        DominanceOptions { kinds: None, entries: None, max_edges: DEFAULT_MAX_EDGES }
    }
}

/// Whether `to` can be reached from `from` over the admitted kinds within `max_hops` ([CG-1], [CG-2]).
///
/// [CG-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CG-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn reachable(g: &Graph, from: &str, to: &str, o: &PathOptions) -> Result<bool, ReachError> {
    let admitted = path_options(o)?;
    check_cap(g, o.max_edges)?;
    let from = known(g, from)?;
    let to = known(g, to)?;
    let adj = Adjacency::new(g, &admitted);
    Ok(bfs(&adj, &[from], &[], o.max_hops, Some(to)).reached(to))
}

/// A shortest path from `from` to `to` that crosses no gate (endpoints included), or `None` ([CG-1]…[CG-3]).
///
/// [CG-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CG-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn reachable_without<S: AsRef<str>>(
    g: &Graph,
    from: &str,
    to: &str,
    gates: &[S],
    o: &PathOptions,
) -> Result<Option<Path>, ReachError> {
    let admitted = path_options(o)?;
    check_cap(g, o.max_edges)?;
    let from = known(g, from)?;
    let to = known(g, to)?;
    let mut blocked = vec![false; g.nodes().len()];
    for gate in gates {
        let gate = known(g, gate.as_ref())?;
        if let Some(slot) = blocked.get_mut(gate) {
            *slot = true;
        }
    }
    if blocked.get(from).copied().unwrap_or(true) || blocked.get(to).copied().unwrap_or(true) {
        return Ok(None);
    }
    let adj = Adjacency::new(g, &admitted);
    let Some((nodes, edges)) = bfs(&adj, &[from], &blocked, o.max_hops, Some(to)).path_to(to) else {
        return Ok(None);
    };
    let nodes = nodes.into_iter().filter_map(|i| g.nodes().get(i)).map(|n| n.id().to_owned()).collect();
    let edges = edges.into_iter().filter_map(|e| g.edges().get(e)).cloned().collect();
    Ok(Some(Path { nodes, edges }))
}

/// Whether every path from the entry set to `target` passes through `gate` ([CG-1], [CG-2]).
///
/// `gate == target` answers true. Otherwise this is the removal definition: `target` is reachable from
/// the virtual root, and is no longer once `gate` is removed (with the root's edge to it, if it is an
/// entry). An unreachable target is `Err(ReachError::Unreachable(target))`.
///
/// [CG-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CG-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn dominates(g: &Graph, gate: &str, target: &str, o: &DominanceOptions) -> Result<bool, ReachError> {
    let (admitted, entries) = dominance_options(g, o)?;
    let gate = known(g, gate)?;
    let target_index = known(g, target)?;
    let adj = Adjacency::new(g, &admitted);
    if !bfs(&adj, &entries, &[], None, Some(target_index)).reached(target_index) {
        return Err(ReachError::Unreachable(target.to_owned()));
    }
    if gate == target_index {
        return Ok(true);
    }
    let mut blocked = vec![false; g.nodes().len()];
    if let Some(slot) = blocked.get_mut(gate) {
        *slot = true;
    }
    Ok(!bfs(&adj, &entries, &blocked, None, Some(target_index)).reached(target_index))
}

/// The nodes every path from the entry set to `target` passes through, `target` excluded ([CG-1], [CG-6]).
///
/// This is the immediate-dominator chain of `target` under the virtual root, minus the root and
/// `target`. An unreachable target is `Err(ReachError::Unreachable(target))`.
///
/// [CG-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CG-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn mandatory_pass(g: &Graph, target: &str, o: &DominanceOptions) -> Result<BTreeSet<String>, ReachError> {
    let (admitted, entries) = dominance_options(g, o)?;
    let target_index = known(g, target)?;
    let adj = Adjacency::new(g, &admitted);
    let Some(chain) = strict_dominators(&adj, &entries, target_index) else {
        return Err(ReachError::Unreachable(target.to_owned()));
    };
    Ok(chain.into_iter().filter_map(|i| g.nodes().get(i)).map(|n| n.id().to_owned()).collect())
}

/// Always `Err(ReachError::Refused("all_paths"))` ([CG-1]): the simple paths between two nodes can number
/// exponentially many in the graph's size, so no bound on time or memory could be promised.
///
/// Nothing is checked, not even the ids. Ask [`reachable_without`] for one shortest witness instead, or
/// [`mandatory_pass`] for the nodes every path shares.
///
/// [CG-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn all_paths(_g: &Graph, _from: &str, _to: &str) -> Result<Infallible, ReachError> {
    Err(ReachError::Refused("all_paths"))
}

/// The admitted kinds as a mask, refusing an empty set.
fn kind_mask(kinds: Option<&BTreeSet<EdgeKind>>) -> Result<KindMask, ReachError> {
    match kinds {
        None => Ok([true; 4]),
        Some(set) if set.is_empty() => {
            Err(ReachError::InvalidOption { option: "kinds", reason: "the set of kinds is empty" })
        }
        Some(set) => {
            let mut admitted = [false; 4];
            for &kind in set {
                if let Some(slot) = admitted.get_mut(kind_slot(kind)) {
                    *slot = true;
                }
            }
            Ok(admitted)
        }
    }
}

/// [CG-5] step 1 for [`PathOptions`]: `kinds`, then `max_hops`.
///
/// [CG-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn path_options(o: &PathOptions) -> Result<KindMask, ReachError> {
    let admitted = kind_mask(o.kinds.as_ref())?;
    if o.max_hops == Some(0) {
        return Err(ReachError::InvalidOption { option: "max_hops", reason: "max_hops must be positive" });
    }
    Ok(admitted)
}

/// [CG-5] steps 1–2 for [`DominanceOptions`]: `kinds`, then `entries` (empty, unknown ids in list order, or
/// no server node to default to), then the cap. Returns the mask and the entry node indices.
///
/// [CG-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn dominance_options(g: &Graph, o: &DominanceOptions) -> Result<(KindMask, Vec<usize>), ReachError> {
    let admitted = kind_mask(o.kinds.as_ref())?;
    let entries = match &o.entries {
        Some(list) if list.is_empty() => {
            return Err(ReachError::InvalidOption { option: "entries", reason: "the entry list is empty" });
        }
        Some(list) => list.iter().map(|id| known(g, id)).collect::<Result<Vec<usize>, ReachError>>()?,
        None => {
            let servers: Vec<usize> = g
                .nodes()
                .iter()
                .enumerate()
                .filter(|(_, n)| n.kind() == NodeKind::Server)
                .map(|(i, _)| i)
                .collect();
            if servers.is_empty() {
                return Err(ReachError::InvalidOption {
                    option: "entries",
                    reason: "no entries given and the graph has no server node",
                });
            }
            servers
        }
    };
    check_cap(g, o.max_edges)?;
    Ok((admitted, entries))
}

/// [CG-5] step 2: refuses a graph with more edges than `max_edges`.
///
/// [CG-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn check_cap(g: &Graph, max_edges: usize) -> Result<(), ReachError> {
    let edges = g.edges().len();
    if edges > max_edges { Err(ReachError::Cap { max_edges, edges }) } else { Ok(()) }
}

/// The node index of `id`, or [`ReachError::UnknownNode`].
fn known(g: &Graph, id: &str) -> Result<usize, ReachError> {
    node_index(g, id).ok_or_else(|| ReachError::UnknownNode(id.to_owned()))
}
