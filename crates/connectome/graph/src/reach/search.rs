//! The per-query machinery of [`crate::reach`] ([CG-6], [CK-5]): an adjacency list in canonical edge order, a
//! breadth-first search over it, and the dominators of one target on a per-query `petgraph` graph.
//!
//! Nothing here is cached: every query builds its own [`Adjacency`] and drops it on every exit.
//!
//! [CG-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use petgraph::Directed;
use petgraph::graph::NodeIndex;

use crate::graph::Graph;

/// The admitted edge kinds as a mask indexed by [`kind_slot`].
pub(super) type KindMask = [bool; 4];

/// The slot of an edge kind in a [`KindMask`].
pub(super) fn kind_slot(kind: crate::EdgeKind) -> usize {
    match kind {
        crate::EdgeKind::Invoke => 0,
        crate::EdgeKind::Read => 1,
        crate::EdgeKind::Message => 2,
        crate::EdgeKind::Supervise => 3,
    }
}

/// The position of `id` in the graph's node list (sorted by raw id), by binary search.
pub(super) fn node_index(g: &Graph, id: &str) -> Option<usize> {
    g.nodes().binary_search_by(|n| n.id().cmp(id)).ok()
}

/// The rank of each node (by its index in `g.nodes()`) in canonical node order: the bytes of its NFC id
/// ([CC-2]). Raw ids equal after NFC keep their raw order.
///
/// [CC-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn canonical_rank(g: &Graph) -> Vec<usize> {
    let ids: Vec<_> = g.nodes().iter().map(|n| connectome_canonical::nfc(n.id())).collect();
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by(|&a, &b| ids[a].cmp(&ids[b]));
    let mut rank = vec![0; ids.len()];
    for (position, &node) in order.iter().enumerate() {
        rank[node] = position;
    }
    rank
}

/// Out-edges per node, over the admitted kinds only, each list in canonical edge order ([CK-5]).
///
/// Node `i` is `g.nodes()[i]`; an entry `(to, e)` is the target's node index and the edge's index in
/// `g.edges()`. Because the graph's edges are sorted by raw key `(from, to, kind, provenance)` and its
/// nodes by raw id, the out-edges of a node form one run; each run is then ordered as [CC-3] orders edges:
/// by the NFC target id, then kind name, then provenance name. The lists are stored flat, one range per
/// node.
///
/// [CC-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CK-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub(super) struct Adjacency {
    out: Vec<(usize, usize)>,
    ranges: Vec<Range<usize>>,
}

impl Adjacency {
    /// Builds the adjacency of `g` restricted to the `admitted` kinds.
    ///
    /// Endpoint ids are resolved through a map of borrowed ids built for this query (no id is cloned);
    /// `from` is looked up once per run of edges.
    pub(super) fn new(g: &Graph, admitted: &KindMask) -> Adjacency {
        let index: HashMap<&str, usize> = g.nodes().iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(g.edges().len());
        let mut ranges: Vec<Range<usize>> = vec![0..0; g.nodes().len()];
        let mut group: Option<(&str, usize)> = None;
        for (e, edge) in g.edges().iter().enumerate() {
            if !admitted[kind_slot(edge.kind)] {
                continue;
            }
            let from = match group {
                Some((id, from)) if id == edge.from => from,
                _ => {
                    let Some(&from) = index.get(edge.from.as_str()) else { continue };
                    if let Some(range) = ranges.get_mut(from) {
                        *range = out.len()..out.len();
                    }
                    group = Some((edge.from.as_str(), from));
                    from
                }
            };
            // A checked graph has no dangling endpoint; an unknown one is skipped rather than trusted.
            let Some(&to) = index.get(edge.to.as_str()) else { continue };
            out.push((to, e));
            if let Some(range) = ranges.get_mut(from) {
                range.end = out.len();
            }
        }
        // Raw order is canonical order only while every id is already NFC: sort each run by the NFC
        // target (its rank among the NFC ids), then kind and provenance name, as CC-3 orders edges. A run
        // that is already in order (every ASCII graph) costs one pass.
        let rank = canonical_rank(g);
        let edges = g.edges();
        for range in &ranges {
            if let Some(run) = out.get_mut(range.clone()) {
                run.sort_by(|a, b| {
                    let key = |(to, e): (usize, usize)| {
                        (rank[to], edges[e].kind.as_str(), edges[e].provenance.as_str())
                    };
                    key(*a).cmp(&key(*b))
                });
            }
        }
        Adjacency { out, ranges }
    }

    /// The number of nodes.
    pub(super) fn len(&self) -> usize {
        self.ranges.len()
    }

    /// The number of admitted edges.
    fn edge_count(&self) -> usize {
        self.out.len()
    }

    /// The admitted out-edges of `node`, in canonical order.
    fn out(&self, node: usize) -> &[(usize, usize)] {
        self.ranges.get(node).and_then(|r| self.out.get(r.clone())).unwrap_or(&[])
    }
}

/// The result of one breadth-first search: which nodes were reached and the tree edge into each.
pub(super) struct Bfs {
    /// `Some(None)` for a source, `Some(Some((parent, edge)))` for a node reached over `edge`.
    parent: Vec<Option<Option<(usize, usize)>>>,
}

impl Bfs {
    /// Whether `node` was reached.
    pub(super) fn reached(&self, node: usize) -> bool {
        matches!(self.parent.get(node), Some(Some(_)))
    }

    /// The tree path from a source to `node`, as node indices and edge indices (`edges.len() ==
    /// nodes.len() - 1`), or `None` when `node` was not reached.
    pub(super) fn path_to(&self, node: usize) -> Option<(Vec<usize>, Vec<usize>)> {
        let mut nodes = vec![node];
        let mut edges = Vec::new();
        let mut at = node;
        // A tree path has at most one step per node; the bound keeps a corrupt tree from looping.
        for _ in 0..self.parent.len() {
            match self.parent.get(at)? {
                None => return None,
                Some(None) => {
                    nodes.reverse();
                    edges.reverse();
                    return Some((nodes, edges));
                }
                Some(Some((parent, edge))) => {
                    nodes.push(*parent);
                    edges.push(*edge);
                    at = *parent;
                }
            }
        }
        None
    }
}

/// A breadth-first search from `sources` over `adj`, never entering a node `i` with `blocked[i]` (a
/// shorter `blocked` blocks nothing past its end), taking at most `max_hops` steps (`None` = unbounded),
/// and stopping as soon as `stop_at` is reached.
///
/// Out-edges are visited in canonical order, so a node's tree edge is the first admitted edge in graph
/// order from the first-discovered parent, and the tree path to any node is a shortest one ([CG-3], [CK-5]).
///
/// [CG-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CK-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub(super) fn bfs(
    adj: &Adjacency,
    sources: &[usize],
    blocked: &[bool],
    max_hops: Option<usize>,
    stop_at: Option<usize>,
) -> Bfs {
    let mut parent: Vec<Option<Option<(usize, usize)>>> = vec![None; adj.len()];
    let mut queue: VecDeque<(usize, usize)> = VecDeque::new();
    let is_blocked = |i: usize| blocked.get(i).copied().unwrap_or(false);
    for &s in sources {
        if is_blocked(s) {
            continue;
        }
        if let Some(slot @ None) = parent.get_mut(s) {
            *slot = Some(None);
            queue.push_back((s, 0));
        }
    }
    if stop_at.is_some_and(|t| matches!(parent.get(t), Some(Some(_)))) {
        return Bfs { parent };
    }
    while let Some((u, depth)) = queue.pop_front() {
        if max_hops.is_some_and(|m| depth >= m) {
            continue;
        }
        for &(v, e) in adj.out(u) {
            if is_blocked(v) {
                continue;
            }
            if let Some(slot @ None) = parent.get_mut(v) {
                *slot = Some(Some((u, e)));
                if stop_at == Some(v) {
                    return Bfs { parent };
                }
                queue.push_back((v, depth + 1));
            }
        }
    }
    Bfs { parent }
}

/// The strict dominators of `target` in the admitted graph extended with a virtual root that has an edge
/// to each of `entries`, minus the virtual root; `None` when `target` is unreachable from the root.
///
/// Built on a `petgraph::Graph` for this query (node `i` is `g.nodes()[i]`, the root is the last node),
/// with a single-target algorithm linear in the graph's size: every dominator of `target` lies on any
/// one root→target path `P = p0 … pk`, and `pj` dominates `target` exactly when nothing reachable from
/// `p0 … p(j−1)` without entering the path again reaches a path node beyond `pj`. The region only grows,
/// so each node and edge is visited once. (petgraph's `simple_fast` computes the whole dominator tree
/// and is quadratic on long chains with many joins; the dominator *set* is the same either way, [CK-5].)
///
/// [CK-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub(super) fn strict_dominators(adj: &Adjacency, entries: &[usize], target: usize) -> Option<Vec<usize>> {
    let n = adj.len();
    if target >= n {
        return None;
    }
    let edge_count = adj.edge_count() + entries.len();
    // `usize` indices: the node count can never overflow the index type.
    let mut pg: petgraph::Graph<(), (), Directed, usize> = petgraph::Graph::with_capacity(n + 1, edge_count);
    for _ in 0..n {
        pg.add_node(());
    }
    let root = pg.add_node(());
    for &e in entries {
        if e < n {
            pg.add_edge(root, NodeIndex::new(e), ());
        }
    }
    for u in 0..n {
        for &(v, _) in adj.out(u) {
            pg.add_edge(NodeIndex::new(u), NodeIndex::new(v), ());
        }
    }
    let path = root_path(&pg, root, NodeIndex::new(target))?;

    const OFF_PATH: usize = usize::MAX;
    let mut position = vec![OFF_PATH; n + 1];
    for (i, node) in path.iter().enumerate() {
        position[node.index()] = i;
    }
    let mut seen = vec![false; n + 1];
    let mut stack = Vec::new();
    let mut furthest = 0;
    let mut dominators = Vec::new();
    for (j, &node) in path.iter().enumerate() {
        if j > 0 && j + 1 < path.len() && furthest <= j {
            dominators.push(node.index());
        }
        // Grow the region by everything `node` reaches off the path, noting the furthest path node hit.
        stack.push(node);
        while let Some(u) = stack.pop() {
            for v in pg.neighbors(u) {
                match position[v.index()] {
                    OFF_PATH if !seen[v.index()] => {
                        seen[v.index()] = true;
                        stack.push(v);
                    }
                    OFF_PATH => {}
                    at => furthest = furthest.max(at),
                }
            }
        }
    }
    Some(dominators)
}

/// One path from `root` to `target` in `pg` (by breadth-first search), or `None` when there is none.
fn root_path(
    pg: &petgraph::Graph<(), (), Directed, usize>,
    root: NodeIndex<usize>,
    target: NodeIndex<usize>,
) -> Option<Vec<NodeIndex<usize>>> {
    let mut parent: Vec<Option<NodeIndex<usize>>> = vec![None; pg.node_count()];
    let mut queue = VecDeque::from([root]);
    parent[root.index()] = Some(root);
    while let Some(u) = queue.pop_front() {
        if u == target {
            break;
        }
        for v in pg.neighbors(u) {
            if parent[v.index()].is_none() {
                parent[v.index()] = Some(u);
                queue.push_back(v);
            }
        }
    }
    let mut path = vec![target];
    let mut at = target;
    // A tree path has at most one step per node; the bound keeps the walk finite whatever happens.
    for _ in 0..pg.node_count() {
        if at == root {
            path.reverse();
            return Some(path);
        }
        at = parent[at.index()]?;
        path.push(at);
    }
    None
}
