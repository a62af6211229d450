//! Laws of the canonical writer (docs/connectome.md CC-2, CC-3, CC-18) on random graphs: the bytes do not
//! depend on the order nodes and edges are given in, nor on weights; the sidecar neither.

use connectome_canonical::{
    Algorithm, CanonicalEdge, CanonicalGraph, CanonicalNode, EdgeKind, Labels, Level, NodeKind, Provenance,
    Sign, Value, Weight, encode, encode_sidecar,
};
use proptest::prelude::*;

const KINDS: [EdgeKind; 4] = [EdgeKind::Invoke, EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise];
const SIGNS: [Sign; 5] = [Sign::Allow, Sign::Deny, Sign::Hold, Sign::Ungoverned, Sign::Unset];
/// Ids whose byte, code-point and UTF-16 orders disagree, and two that only NFC puts in order.
const IDS: [&str; 7] = ["s/a", "s/b", "s/\u{1f600}", "s/\u{ff01}", "s/cafe\u{301}b", "s/caf\u{e9} a", "s/Z"];

fn graph(edges: &[(usize, usize, usize, usize, Option<u64>)], label: &str) -> CanonicalGraph {
    let nodes = IDS
        .iter()
        .map(|id| CanonicalNode {
            id: (*id).to_owned(),
            kind: NodeKind::Tool,
            level: Level::Server,
            labels: Labels::from([
                (label.to_owned(), Value::from(*id)),
                ("\u{1f600}".to_owned(), Value::from(1)),
            ]),
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let edges = edges
        .iter()
        .filter(|(f, t, k, p, _)| seen.insert((*f, *t, *k, *p)))
        .map(|&(f, t, k, p, w)| CanonicalEdge {
            from: IDS[f].to_owned(),
            to: IDS[t].to_owned(),
            kind: KINDS[k],
            provenance: if p == 0 { Provenance::Declared } else { Provenance::Observed },
            sign: SIGNS[(f + t + k) % 5],
            weight: w.map(Weight::Int),
        })
        .collect();
    CanonicalGraph { nodes, edges }
}

fn edges() -> impl Strategy<Value = Vec<(usize, usize, usize, usize, Option<u64>)>> {
    proptest::collection::vec(
        (0..7usize, 0..7usize, 0..4usize, 0..2usize, proptest::option::of(0..1000u64)),
        0..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn canonical_bytes_do_not_depend_on_input_order(raw in edges(), node_seed in any::<u64>(), edge_seed in any::<u64>()) {
        let g = graph(&raw, "\u{ff01}");
        let mut shuffled = g.clone();
        shuffle(&mut shuffled.nodes, node_seed);
        shuffle(&mut shuffled.edges, edge_seed);
        for algorithm in Algorithm::ALL {
            prop_assert_eq!(encode(&g, algorithm).unwrap(), encode(&shuffled, algorithm).unwrap());
        }
        prop_assert_eq!(encode_sidecar(&g).unwrap(), encode_sidecar(&shuffled).unwrap());
    }

    #[test]
    fn canonical_bytes_do_not_depend_on_weights(raw in edges(), weight in proptest::option::of(0..u64::MAX)) {
        let g = graph(&raw, "k");
        let mut reweighted = g.clone();
        for e in &mut reweighted.edges {
            e.weight = weight.map(Weight::Int);
        }
        prop_assert_eq!(encode(&g, Algorithm::Sha256).unwrap(), encode(&reweighted, Algorithm::Sha256).unwrap());
    }
}

/// A Fisher–Yates shuffle driven by a small linear congruential generator (no extra dependency).
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let j = usize::try_from((seed >> 33) % (i as u64 + 1)).unwrap_or(0);
        items.swap(i, j);
    }
}
