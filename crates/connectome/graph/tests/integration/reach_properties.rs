//! Property tests of docs/connectome.md CG-2, CG-3, CG-6 and CK-5 on random graphs (up to 12 nodes and 30
//! edges of random kinds and provenances, self-loops and parallel edges included), each held against an
//! oracle written here independently of the crate: Floyd–Warshall distances over `Graph::edges`.

use std::collections::{BTreeSet, HashMap};

use connectome_graph::{
    DominanceOptions, Edge, EdgeKind, Graph, Identity, Labels, Node, NodeKind, PathOptions, Provenance,
    ReachError, dominates, mandatory_pass, reachable, reachable_without,
};
use proptest::collection::vec;
use proptest::prelude::*;

const KINDS: [EdgeKind; 4] = [EdgeKind::Invoke, EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise];

/// A random graph: node `i` is a server or a tool by `servers[i]`; edges are `(from, to, kind, observed)`.
#[derive(Debug, Clone)]
struct Spec {
    servers: Vec<bool>,
    edges: Vec<(usize, usize, usize, bool)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (1usize..=12).prop_flat_map(|n| {
        (vec(any::<bool>(), n), vec((0..n, 0..n, 0..4usize, any::<bool>()), 0..=30))
            .prop_map(|(servers, edges)| Spec { servers, edges })
    })
}

/// The identity of node `i`; names are scrambled so that id order differs from index order.
fn identity(spec: &Spec, i: usize) -> Identity {
    let name = format!("{:02}", (i * 7) % 13);
    if spec.servers[i] {
        Identity::Server { server: name }
    } else {
        Identity::Tool { server: "t".to_owned(), name }
    }
}

/// The node id of index `i`.
fn id(spec: &Spec, i: usize) -> String {
    identity(spec, i).id()
}

fn build(spec: &Spec) -> Graph {
    let nodes =
        (0..spec.servers.len()).map(|i| Node::from_identity(identity(spec, i), Labels::new())).collect();
    let keys: BTreeSet<(usize, usize, usize, bool)> = spec.edges.iter().copied().collect();
    let edges = keys
        .into_iter()
        .map(|(f, t, k, observed)| {
            let provenance = if observed { Provenance::Observed } else { Provenance::Declared };
            Edge::new(id(spec, f), id(spec, t), KINDS[k], provenance, None).unwrap()
        })
        .collect();
    Graph::new(nodes, edges).unwrap()
}

/// A non-empty kind set from a 4-bit mask (0 is read as all four).
fn kind_set(mask: u8) -> BTreeSet<EdgeKind> {
    let set: BTreeSet<EdgeKind> =
        KINDS.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, k)| *k).collect();
    if set.is_empty() { KINDS.iter().copied().collect() } else { set }
}

/// The oracle: all-pairs shortest hop counts over the admitted kinds with `removed` nodes deleted
/// (Floyd–Warshall), keyed by id. A node that is not removed is at distance 0 from itself.
struct Oracle {
    index: HashMap<String, usize>,
    dist: Vec<Vec<Option<usize>>>,
}

impl Oracle {
    fn new(g: &Graph, kinds: &BTreeSet<EdgeKind>, removed: &BTreeSet<String>) -> Oracle {
        let index: HashMap<String, usize> =
            g.nodes().iter().enumerate().map(|(i, n)| (n.id().to_owned(), i)).collect();
        let n = index.len();
        let mut dist = vec![vec![None; n]; n];
        for (id, &i) in &index {
            if !removed.contains(id) {
                dist[i][i] = Some(0);
            }
        }
        for e in g.edges() {
            if kinds.contains(&e.kind) && !removed.contains(&e.from) && !removed.contains(&e.to) {
                let (f, t) = (index[&e.from], index[&e.to]);
                if f != t {
                    dist[f][t] = Some(1);
                }
            }
        }
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    if let (Some(a), Some(b)) = (dist[i][k], dist[k][j])
                        && dist[i][j].is_none_or(|d| a + b < d)
                    {
                        dist[i][j] = Some(a + b);
                    }
                }
            }
        }
        Oracle { index, dist }
    }

    fn distance(&self, from: &str, to: &str) -> Option<usize> {
        self.dist[self.index[from]][self.index[to]]
    }

    /// Whether some entry reaches `to` (the virtual-root definition).
    fn reached_from(&self, entries: &[String], to: &str) -> bool {
        entries.iter().any(|e| self.distance(e, to).is_some())
    }
}

fn within(d: Option<usize>, max_hops: Option<usize>) -> bool {
    d.is_some_and(|d| max_hops.is_none_or(|m| d <= m))
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: 512, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    /// CG-3, CK-5: a witness is a shortest gate-free path of graph edges with admitted kinds, each step the
    /// first such edge in graph order; `None` exactly when the oracle finds no gate-free path in range.
    #[test]
    fn witness_is_a_shortest_gate_free_path_of_graph_edges(
        spec in spec(),
        from in any::<prop::sample::Index>(),
        to in any::<prop::sample::Index>(),
        gate_mask in vec(any::<bool>(), 12),
        kind_mask in any::<u8>(),
        max_hops in prop::option::of(1usize..=6),
    ) {
        let g = build(&spec);
        let n = spec.servers.len();
        let (from, to) = (id(&spec, from.index(n)), id(&spec, to.index(n)));
        let gates: Vec<String> = (0..n).filter(|&i| gate_mask[i]).map(|i| id(&spec, i)).collect();
        let kinds = kind_set(kind_mask);
        let o = PathOptions { kinds: Some(kinds.clone()), max_hops, ..PathOptions::default() };
        let got = reachable_without(&g, &from, &to, &gates, &o).unwrap();

        let removed: BTreeSet<String> = gates.iter().cloned().collect();
        let oracle = Oracle::new(&g, &kinds, &removed);
        let expected = if removed.contains(&from) || removed.contains(&to) {
            None
        } else {
            oracle.distance(&from, &to).filter(|_| within(oracle.distance(&from, &to), max_hops))
        };
        prop_assert_eq!(got.as_ref().map(|p| p.edges.len()), expected);

        if let Some(path) = got {
            prop_assert_eq!(path.edges.len() + 1, path.nodes.len());
            prop_assert_eq!(path.nodes.first(), Some(&from));
            prop_assert_eq!(path.nodes.last(), Some(&to));
            for id in &path.nodes {
                prop_assert!(!removed.contains(id), "gate {} on the witness", id);
            }
            for (i, e) in path.edges.iter().enumerate() {
                prop_assert!(g.edges().contains(e));
                prop_assert!(kinds.contains(&e.kind));
                prop_assert_eq!(&e.from, &path.nodes[i]);
                prop_assert_eq!(&e.to, &path.nodes[i + 1]);
                let first = g.edges().iter().find(|x| x.from == e.from && x.to == e.to && kinds.contains(&x.kind));
                prop_assert_eq!(Some(e), first);
            }
        }
    }

    /// CG-2: `reachable` holds exactly when the oracle's shortest admitted path is within `max_hops`.
    #[test]
    fn reachable_agrees_with_the_shortest_path_oracle(
        spec in spec(),
        kind_mask in any::<u8>(),
        max_hops in prop::option::of(1usize..=6),
    ) {
        let g = build(&spec);
        let kinds = kind_set(kind_mask);
        let o = PathOptions { kinds: Some(kinds.clone()), max_hops, ..PathOptions::default() };
        let oracle = Oracle::new(&g, &kinds, &BTreeSet::new());
        for a in g.nodes() {
            for b in g.nodes() {
                let expected = within(oracle.distance(a.id(), b.id()), max_hops);
                prop_assert_eq!(reachable(&g, a.id(), b.id(), &o), Ok(expected), "{} -> {}", a.id(), b.id());
            }
        }
    }

    /// CG-6, CK-5: `mandatory_pass(t)` and `dominates(v, t)` both equal the removal definition — `v ≠ t` is
    /// mandatory for `t` iff `t` is unreachable from the entries once `v` is removed — for every reachable
    /// target; an unreachable target is refused by both.
    #[test]
    fn mandatory_pass_and_dominates_agree_with_the_removal_definition(
        spec in spec(),
        kind_mask in any::<u8>(),
        use_default in any::<bool>(),
        entry_mask in vec(any::<bool>(), 12),
    ) {
        let g = build(&spec);
        let n = spec.servers.len();
        let kinds = kind_set(kind_mask);
        let servers: Vec<String> =
            g.nodes().iter().filter(|x| x.kind() == NodeKind::Server).map(|x| x.id().to_owned()).collect();
        let (entries, option) = if use_default && !servers.is_empty() {
            (servers, None)
        } else {
            let mut picked: Vec<String> = (0..n).filter(|&i| entry_mask[i]).map(|i| id(&spec, i)).collect();
            if picked.is_empty() {
                picked.push(id(&spec, 0));
            }
            (picked.clone(), Some(picked))
        };
        let o = DominanceOptions { kinds: Some(kinds.clone()), entries: option, ..DominanceOptions::default() };

        let whole = Oracle::new(&g, &kinds, &BTreeSet::new());
        let without: Vec<(String, Oracle)> = g
            .nodes()
            .iter()
            .map(|v| (v.id().to_owned(), Oracle::new(&g, &kinds, &BTreeSet::from([v.id().to_owned()]))))
            .collect();
        for t in g.nodes().iter().map(Node::id) {
            let got = mandatory_pass(&g, t, &o);
            if !whole.reached_from(&entries, t) {
                let unreachable = ReachError::Unreachable(t.to_owned());
                prop_assert_eq!(got, Err(unreachable.clone()));
                for (v, _) in &without {
                    prop_assert_eq!(dominates(&g, v, t, &o), Err(unreachable.clone()));
                }
                continue;
            }
            let got = got.unwrap();
            prop_assert!(!got.contains(t));
            prop_assert_eq!(dominates(&g, t, t, &o), Ok(true));
            for (v, oracle) in without.iter().filter(|(v, _)| v != t) {
                let mandatory = !oracle.reached_from(&entries, t);
                prop_assert_eq!(got.contains(v), mandatory, "{} for target {}", v, t);
                prop_assert_eq!(dominates(&g, v, t, &o), Ok(mandatory), "{} dominates {}", v, t);
            }
        }
    }

    /// CG-5: any id that names no node is refused as `UnknownNode`, never answered and never a panic.
    #[test]
    fn unknown_ids_are_refused_not_answered(spec in spec(), stray in "\\PC{0,12}") {
        let g = build(&spec);
        let known = g.nodes()[0].id().to_owned();
        let is_known = g.nodes().iter().any(|x| x.id() == stray);
        let r = reachable(&g, &stray, &known, &PathOptions::default());
        prop_assert_eq!(r.is_ok(), is_known);
        let r = reachable_without(&g, &known, &known, &[stray.as_str()], &PathOptions::default());
        prop_assert_eq!(r.is_ok(), is_known);
        let o = DominanceOptions { entries: Some(vec![known.clone()]), ..DominanceOptions::default() };
        match mandatory_pass(&g, &stray, &o) {
            Err(ReachError::UnknownNode(id)) => prop_assert!(!is_known && id == stray),
            other => prop_assert!(is_known, "{:?}", other),
        }
    }
}
