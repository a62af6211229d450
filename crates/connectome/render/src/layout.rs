//! The layered layout of a drawing (connectome [CJ-6]): deterministic, and bounded in work so a host of
//! thousands of modules and edges is laid out in milliseconds.
//!
//! 1. **Cycles.** The nodes are put in one sequence, greedily: the roots first; then, repeatedly, a
//!    node with no edge out left goes to the right end, else a node with no edge in left to the left
//!    end, else (a cycle) the node with the fewest edges in from nodes not yet placed, then the most
//!    from nodes placed, then the smallest index, to the left end: the sequence advances like a
//!    wavefront. Then up to [`REFINE_PASSES`] passes move each node to the place where the fewest of
//!    its own edges point backwards. Edges pointing backwards are set aside; what is left is acyclic.
//!    (Collapsing each cycle class into one layer would be simpler, but a call graph is often one
//!    large class, which would then stand in a single layer; ordering by out less in degree, as
//!    Eades, Lin and Smyth do, leaves four times as many edges backwards on such a graph.)
//! 2. **Layers.** Longest-path layering over that acyclic rest: a node sits one layer right of its
//!    furthest predecessor; a source that is not a root then moves right, next to its nearest
//!    successor. Nodes with no edge at all form a last layer.
//! 3. **Order.** Within a layer, nodes start in index (id) order, then [`SWEEPS`] barycenter sweeps
//!    (left to right, right to left, …) sort each layer by the mean height of its neighbours in the
//!    layers already swept; ties keep the previous order.
//! 4. **Columns.** A layer of more than [`MAX_ROWS`] nodes is dealt round-robin into as many columns
//!    as it needs, so a node's height still follows its order.
//!
//! Cost: the greedy sequence takes `O((V + E) log V)` (a heap with at most one entry per degree
//! change); each refining pass sorts every node's edges and the sequence, `O(E log E + V log V)`; the
//! layering is linear; each sweep reads every edge twice and sorts every layer. The whole is
//! `O((REFINE_PASSES + SWEEPS) · (E log E + V log V))`, with no step that grows faster.
//!
//! [CJ-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The most rows a column holds; a larger layer is dealt round-robin into several columns.
pub const MAX_ROWS: usize = 48;
/// How many ordering sweeps run: the cap on the ordering's work.
pub const SWEEPS: usize = 4;
/// How many passes move nodes of the sequence to better places: the cap on the cycle breaking's work.
pub const REFINE_PASSES: usize = 4;

/// Where every node of a drawing goes: its layer, its column and its row in that column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layers {
    /// The layer of every node (0 is leftmost).
    pub layer: Vec<usize>,
    /// The column of every node (a wrapped layer spans several consecutive columns).
    pub column: Vec<usize>,
    /// The row of every node within its column (0 is the top).
    pub row: Vec<usize>,
    /// The layer each column belongs to.
    pub column_layer: Vec<usize>,
    /// How many rows each column holds.
    pub rows: Vec<usize>,
    /// Which edges the cycle breaking set aside: they point backwards (index-aligned with the input).
    pub back: Vec<bool>,
}

/// Lays out `n` nodes joined by `edges` (from, to); nodes marked in `roots` stay in layer 0.
pub fn layered(n: usize, edges: &[(usize, usize)], roots: &[bool]) -> Layers {
    let mut out_adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    let mut in_adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    let mut linked = vec![false; n];
    for (e, &(a, b)) in edges.iter().enumerate() {
        linked[a] = true;
        linked[b] = true;
        if a != b {
            out_adj[a].push((b, e));
            in_adj[b].push((a, e));
        }
    }
    let is_root = |i: usize| roots.get(i).copied().unwrap_or(false);
    let mut order_of = sequence(n, &out_adj, &in_adj, &is_root);
    let fixed = (0..n).filter(|&v| is_root(v)).count();
    refine(&mut order_of, &out_adj, &in_adj, fixed);
    let mut position = vec![0usize; n];
    for (p, &v) in order_of.iter().enumerate() {
        position[v] = p;
    }
    let back: Vec<bool> = edges.iter().map(|&(a, b)| a != b && position[a] > position[b]).collect();

    // Longest path over the kept edges, in sequence order (a topological order of them).
    let mut layer = vec![0usize; n];
    let mut has_pred = vec![false; n];
    for &u in &order_of {
        for &(v, e) in &out_adj[u] {
            if !back[e] {
                layer[v] = layer[v].max(layer[u] + 1);
                has_pred[v] = true;
            }
        }
    }
    // Sources that are not roots move next to their nearest successor (successors are final first).
    for &u in order_of.iter().rev() {
        if has_pred[u] || is_root(u) {
            continue;
        }
        let nearest = out_adj[u].iter().filter(|&&(_, e)| !back[e]).map(|&(v, _)| layer[v]).min();
        if let Some(l) = nearest {
            layer[u] = l - 1;
        }
    }
    let last = (0..n).filter(|&i| linked[i]).map(|i| layer[i] + 1).max().unwrap_or(0);
    for i in (0..n).filter(|&i| !linked[i]) {
        layer[i] = last;
    }

    let layer_count = layer.iter().copied().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); layer_count];
    for (i, &l) in layer.iter().enumerate() {
        members[l].push(i);
    }
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges.iter().filter(|(a, b)| a != b) {
        neighbours[a].push(b);
        neighbours[b].push(a);
    }
    order(&mut members, &layer, &neighbours);

    let (mut column, mut row) = (vec![0usize; n], vec![0usize; n]);
    let (mut column_layer, mut rows) = (Vec::new(), Vec::new());
    for (l, nodes) in members.iter().enumerate() {
        let (spread, height) = shape(nodes.len());
        let base = column_layer.len();
        for c in 0..spread {
            column_layer.push(l);
            rows.push((nodes.len() + spread - 1 - c) / spread);
        }
        debug_assert!(rows[base..].iter().all(|&r| r <= height));
        for (rank, &i) in nodes.iter().enumerate() {
            column[i] = base + rank % spread;
            row[i] = rank / spread;
        }
    }
    Layers { layer, column, row, column_layer, rows, back }
}

/// The state of the greedy sequence: degrees among the nodes not yet placed, and the candidates.
struct Greedy<'a> {
    out_adj: &'a [Vec<(usize, usize)>],
    in_adj: &'a [Vec<(usize, usize)>],
    out_deg: Vec<i64>,
    in_deg: Vec<i64>,
    placed: Vec<bool>,
    sinks: BinaryHeap<Reverse<usize>>,
    sources: BinaryHeap<Reverse<usize>>,
    /// Fewest edges in from nodes not placed, then most from nodes placed, then the smallest index;
    /// stale entries are left in (checked when popped).
    best: BinaryHeap<(Reverse<i64>, i64, Reverse<usize>)>,
}

impl Greedy<'_> {
    /// A candidate's place in [`Greedy::best`].
    fn rank(&self, v: usize) -> (Reverse<i64>, i64, Reverse<usize>) {
        (Reverse(self.in_deg[v]), self.in_adj[v].len() as i64 - self.in_deg[v], Reverse(v))
    }

    /// Places `v`: its neighbours lose an edge and may become sinks or sources.
    fn take(&mut self, v: usize) {
        self.placed[v] = true;
        for &(w, _) in &self.out_adj[v] {
            if !self.placed[w] {
                self.in_deg[w] -= 1;
                if self.in_deg[w] == 0 {
                    self.sources.push(Reverse(w));
                }
                self.best.push(self.rank(w));
            }
        }
        for &(u, _) in &self.in_adj[v] {
            if !self.placed[u] {
                self.out_deg[u] -= 1;
                if self.out_deg[u] == 0 {
                    self.sinks.push(Reverse(u));
                }
            }
        }
    }

    /// The next node to place and whether it goes to the right end, or `None` when all are placed.
    fn next(&mut self) -> Option<(usize, bool)> {
        while let Some(Reverse(v)) = self.sinks.pop() {
            if !self.placed[v] {
                return Some((v, true));
            }
        }
        while let Some(Reverse(v)) = self.sources.pop() {
            if !self.placed[v] {
                return Some((v, false));
            }
        }
        while let Some((Reverse(inward), _, Reverse(v))) = self.best.pop() {
            if !self.placed[v] && inward == self.in_deg[v] {
                return Some((v, false));
            }
        }
        None
    }
}

/// The greedy sequence of the nodes (roots first), as a list of node indices.
fn sequence(
    n: usize,
    out_adj: &[Vec<(usize, usize)>],
    in_adj: &[Vec<(usize, usize)>],
    is_root: &dyn Fn(usize) -> bool,
) -> Vec<usize> {
    let out_deg: Vec<i64> = out_adj.iter().map(|a| a.len() as i64).collect();
    let in_deg: Vec<i64> = in_adj.iter().map(|a| a.len() as i64).collect();
    let mut g = Greedy {
        out_adj,
        in_adj,
        sinks: (0..n).filter(|&v| out_deg[v] == 0).map(Reverse).collect(),
        sources: (0..n).filter(|&v| out_deg[v] > 0 && in_deg[v] == 0).map(Reverse).collect(),
        best: (0..n).map(|v| (Reverse(in_deg[v]), 0, Reverse(v))).collect(),
        out_deg,
        in_deg,
        placed: vec![false; n],
    };
    let (mut left, mut right) = (Vec::with_capacity(n), Vec::new());
    for v in (0..n).filter(|&v| is_root(v)) {
        g.take(v);
        left.push(v);
    }
    while let Some((v, to_right)) = g.next() {
        g.take(v);
        if to_right { right.push(v) } else { left.push(v) }
    }
    left.extend(right.into_iter().rev());
    left
}

/// Moves each node after the first `fixed` of the sequence to the place where the fewest of its own
/// edges point backwards, when that is strictly fewer than where it is; at most [`REFINE_PASSES`]
/// passes, each `O(E log E + V log V)`.
fn refine(
    order: &mut [usize],
    out_adj: &[Vec<(usize, usize)>],
    in_adj: &[Vec<(usize, usize)>],
    fixed: usize,
) {
    let n = order.len();
    let mut key = vec![0f64; n];
    let mut events: Vec<(f64, i64)> = Vec::new();
    for _ in 0..REFINE_PASSES {
        for (p, &v) in order.iter().enumerate() {
            key[v] = p as f64;
        }
        let floor = fixed as f64 - 1.0;
        let mut moved = false;
        for &v in &order[fixed..] {
            // Placed at x, an edge u → v points back when u is after x, an edge v → w when w is before.
            events.clear();
            events.extend(in_adj[v].iter().map(|&(u, _)| (key[u], -1)));
            events.extend(out_adj[v].iter().map(|&(w, _)| (key[w], 1)));
            events.sort_by(|a, b| a.0.total_cmp(&b.0));
            let here = key[v];
            let current = in_adj[v].iter().filter(|&&(u, _)| key[u] > here).count() as i64
                + out_adj[v].iter().filter(|&&(w, _)| key[w] < here).count() as i64;
            let mut cost = in_adj[v].len() as i64;
            let mut i = 0;
            while i < events.len() && events[i].0 <= floor {
                cost += events[i].1;
                i += 1;
            }
            let (mut best, mut best_slot) = (current, None);
            let mut lower = floor;
            loop {
                let upper = events.get(i).map_or(lower + 1.0, |e| e.0);
                if cost < best {
                    best = cost;
                    best_slot = Some((lower + upper) / 2.0);
                }
                let Some(&(k, _)) = events.get(i) else { break };
                while i < events.len() && events[i].0 == k {
                    cost += events[i].1;
                    i += 1;
                }
                lower = k;
            }
            if let Some(x) = best_slot {
                key[v] = x;
                moved = true;
            }
        }
        if !moved {
            break;
        }
        order.sort_by(|&a, &b| key[a].total_cmp(&key[b]).then(a.cmp(&b)));
    }
}

/// How a layer of `k` nodes is dealt: into how many columns, and how many rows the tallest holds.
fn shape(k: usize) -> (usize, usize) {
    let spread = k.div_ceil(MAX_ROWS).max(1);
    (spread, k.div_ceil(spread))
}

/// The drawn height of the node at `rank` of a layer of `k` nodes, in rows, relative to the middle.
fn height(rank: usize, k: usize) -> f64 {
    let (spread, rows) = shape(k);
    (rank / spread) as f64 - (rows as f64 - 1.0) / 2.0
}

/// The barycenter sweeps: each layer sorted by the mean height of its neighbours in the layers on the
/// side already swept, [`SWEEPS`] times, alternating direction.
fn order(members: &mut [Vec<usize>], layer: &[usize], neighbours: &[Vec<usize>]) {
    let n = layer.len();
    let mut pos = vec![0f64; n];
    for nodes in members.iter() {
        for (rank, &i) in nodes.iter().enumerate() {
            pos[i] = height(rank, nodes.len());
        }
    }
    let layers = members.len();
    for sweep in 0..SWEEPS {
        let forward = sweep % 2 == 0;
        let sequence: Vec<usize> =
            if forward { (1..layers).collect() } else { (0..layers).rev().skip(1).collect() };
        for l in sequence {
            let nodes = &mut members[l];
            let mut keyed: Vec<(f64, usize, usize)> = nodes
                .iter()
                .enumerate()
                .map(|(rank, &v)| {
                    let (mut sum, mut count) = (0f64, 0usize);
                    for &u in &neighbours[v] {
                        if (forward && layer[u] < l) || (!forward && layer[u] > l) {
                            sum += pos[u];
                            count += 1;
                        }
                    }
                    let key = if count == 0 { pos[v] } else { sum / count as f64 };
                    (key, rank, v)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let k = keyed.len();
            for (rank, &(_, _, v)) in keyed.iter().enumerate() {
                nodes[rank] = v;
                pos[v] = height(rank, k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_deals_a_large_layer_into_columns() {
        assert_eq!(shape(0), (1, 0));
        assert_eq!(shape(MAX_ROWS), (1, MAX_ROWS));
        assert_eq!(shape(MAX_ROWS + 1), (2, MAX_ROWS / 2 + 1));
    }

    #[test]
    fn a_cycle_is_broken_once_and_laid_out_in_order() {
        // 0 → 1 → 2 → 0, root 0.
        let l = layered(3, &[(0, 1), (1, 2), (2, 0)], &[true, false, false]);
        assert_eq!(l.layer, [0, 1, 2]);
        assert_eq!(l.back, [false, false, true]);
    }

    #[test]
    fn a_source_moves_next_to_its_successor() {
        // root 0 → 1 → 2 → 3; 4 → 3 starts at layer 2, not 0.
        let l = layered(5, &[(0, 1), (1, 2), (2, 3), (4, 3)], &[true, false, false, false, false]);
        assert_eq!(l.layer, [0, 1, 2, 3, 2]);
    }
}
