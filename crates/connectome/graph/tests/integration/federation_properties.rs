//! The laws of merge (docs/connectome.md CM-6) on random instances: commutative and associative on the
//! canonical bytes, the empty federation its identity, and the merged graph diffs as the union would.

use std::collections::{BTreeMap, BTreeSet};

use connectome_graph::federation::{Federation, merge};
use connectome_graph::{
    Algorithm, Diff, Edge, EdgeKey, EdgeKind, Graph, Identity, Labels, Node, Provenance, Timing, Timings,
    Weight,
};
use proptest::prelude::*;

const KINDS: [EdgeKind; 4] = [EdgeKind::Invoke, EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise];
/// Node names: the server, then tools (one above U+FFFF, one past U+E000, so UTF-16 and byte order differ).
const NODES: [&str; 6] = ["server", "a", "b", "caf\u{e9}", "\u{1f600}", "\u{ff01}"];
/// Instance names, in no particular order.
const NAMES: [&str; 5] = ["us-1", "eu-1", "\u{1f600}-1", "\u{ff01}-1", "ap-1"];

/// One instance: its edges `(from, to, kind) → (count, sum_ns, max_ns)`.
type Raw = BTreeMap<(usize, usize, usize), (u64, u64, u64)>;

fn node(i: usize) -> Node {
    let identity = match NODES[i] {
        "server" => Identity::Server { server: "srv".into() },
        name => Identity::Tool { server: "srv".into(), name: name.into() },
    };
    Node::from_identity(identity, Labels::new())
}

fn graph_of(raw: &Raw, provenance: Provenance, weighed: bool) -> Graph {
    let ends: BTreeSet<usize> = raw.keys().flat_map(|&(a, b, _)| [a, b]).collect();
    let edges = raw
        .iter()
        .map(|(&(a, b, k), &(count, _, _))| {
            let weight = weighed.then_some(Weight::Int(count));
            Edge::new(node(a).id(), node(b).id(), KINDS[k], provenance, weight).unwrap()
        })
        .collect();
    Graph::new(ends.into_iter().map(node).collect(), edges).unwrap()
}

fn lift(name: &str, raw: &Raw, timed: bool) -> Federation {
    let graph = graph_of(raw, Provenance::Observed, true);
    let timings = Timings::new(raw.iter().map(|(&(a, b, k), &(_, sum_ns, max_ns))| {
        let key = EdgeKey {
            from: node(a).id().into(),
            to: node(b).id().into(),
            kind: KINDS[k],
            provenance: Provenance::Observed,
        };
        (key, Timing { sum_ns, max_ns })
    }))
    .unwrap();
    Federation::from_graph(name, "srv", &graph, Algorithm::Sha256, timed.then_some(&timings)).unwrap()
}

/// Every document of a federation.
fn bytes(f: &Federation) -> (Vec<u8>, Vec<u8>, Vec<u8>, Option<Vec<u8>>) {
    (
        f.export_bytes().to_vec(),
        f.sidecar_bytes().to_vec(),
        f.record_bytes().to_vec(),
        f.timing_bytes().map(<[u8]>::to_vec),
    )
}

fn raw() -> impl Strategy<Value = Raw> {
    proptest::collection::btree_map(
        (0..6usize, 1..6usize, 0..4usize),
        (1..1_000u64, 0..1_000_000u64, 0..1_000u64),
        0..8,
    )
}

fn parts(n: usize) -> impl Strategy<Value = (Vec<Raw>, bool)> {
    (proptest::collection::vec(raw(), n), any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn cm6_merge_is_commutative_on_canonical_bytes((raws, timed) in parts(4), order in Just((0..4).collect::<Vec<usize>>()).prop_shuffle()) {
        let lifted: Vec<Federation> = raws.iter().zip(NAMES).map(|(r, n)| lift(n, r, timed)).collect();
        let shuffled: Vec<Federation> = order.iter().map(|&i| lifted[i].clone()).collect();
        prop_assert_eq!(bytes(&merge(&lifted).unwrap()), bytes(&merge(&shuffled).unwrap()));
    }

    #[test]
    fn cm6_merge_is_associative_on_canonical_bytes((raws, timed) in parts(3)) {
        let [a, b, c] = [0, 1, 2].map(|i| lift(NAMES[i], &raws[i], timed));
        let left = merge(&[merge(&[a.clone(), b.clone()]).unwrap(), c.clone()]).unwrap();
        let right = merge(&[a.clone(), merge(&[b.clone(), c.clone()]).unwrap()]).unwrap();
        let flat = merge(&[a, b, c]).unwrap();
        prop_assert_eq!(bytes(&left), bytes(&right));
        prop_assert_eq!(bytes(&left), bytes(&flat));
        let read = Federation::read(left.export_bytes(), left.sidecar_bytes(), left.record_bytes(), left.timing_bytes()).unwrap();
        prop_assert_eq!(read, left);
    }

    #[test]
    fn cm6_the_empty_federation_is_the_identity(r in raw(), timed in any::<bool>()) {
        let a = lift("eu-1", &r, timed);
        let empty = Federation::empty("srv", Algorithm::Sha256).unwrap();
        prop_assert_eq!(bytes(&merge(&[a.clone(), empty.clone()]).unwrap()), bytes(&a));
        prop_assert_eq!(bytes(&merge(&[empty.clone(), a.clone()]).unwrap()), bytes(&a));
        prop_assert_eq!(bytes(&merge(std::slice::from_ref(&a)).unwrap()), bytes(&a));
        prop_assert_eq!(bytes(&merge(&[empty.clone(), empty.clone()]).unwrap()), bytes(&empty));
    }

    #[test]
    fn cm6_merged_graph_diffs_as_the_union_of_the_parts((raws, timed) in parts(3), d in raw()) {
        let lifted: Vec<Federation> = raws.iter().zip(NAMES).map(|(r, n)| lift(n, r, timed)).collect();
        let merged = merge(&lifted).unwrap();
        let mut union = Raw::new();
        for r in &raws {
            union.extend(r.iter().map(|(k, v)| (*k, *v)));
        }
        let union = graph_of(&union, Provenance::Observed, false);
        let declared = graph_of(&d, Provenance::Declared, false);
        let window = serde_json::json!({"window": "w"});
        let of_merge = Diff::run(&declared, merged.graph(), &window).unwrap();
        let of_union = Diff::run(&declared, &union, &window).unwrap();
        prop_assert_eq!(of_merge.encode(Algorithm::Sha256), of_union.encode(Algorithm::Sha256));
        let total: u64 = raws.iter().flat_map(|r| r.values().map(|v| v.0)).sum();
        let merged_total: u64 = merged.graph().edges().iter().map(|e| match e.weight { Some(Weight::Int(n)) => n, _ => 0 }).sum();
        prop_assert_eq!(total, merged_total, "every call is counted once");
    }
}
