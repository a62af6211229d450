//! Laws of the diff (docs/connectome.md CF-3…CF-5) on random graph pairs: the four classes partition the
//! labels, the counts keep their invariants, and the record does not depend on the order edges were given.

use std::collections::BTreeSet;

use connectome_graph::{Diff, Edge, EdgeKind, Graph, Identity, Labels, Node, Provenance, Sign};
use proptest::prelude::*;

const KINDS: [EdgeKind; 4] = [EdgeKind::Invoke, EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise];
const SIGNS: [Sign; 5] = [Sign::Allow, Sign::Deny, Sign::Hold, Sign::Ungoverned, Sign::Unset];
/// Two spellings of one name (NFC-equal) never share a graph; across graphs they must be one label.
const NAMES: [&str; 5] = ["a", "b", "c", "caf\u{e9}", "\u{1f600}"];
const OBSERVED_NAMES: [&str; 5] = ["a", "b", "d", "cafe\u{301}", "\u{ff01}"];

type RawEdge = (usize, usize, usize, usize);

fn build(names: &[&str], provenance: Provenance, raw: &[RawEdge], reverse: bool) -> Graph {
    let nodes: Vec<Node> = names
        .iter()
        .map(|n| Node::from_identity(Identity::Tool { server: "s".into(), name: (*n).into() }, Labels::new()))
        .collect();
    let mut seen = BTreeSet::new();
    let mut edges = Vec::new();
    for &(from, to, kind, sign) in raw {
        if !seen.insert((from, to, kind)) {
            continue;
        }
        let id = |i: usize| nodes[i].id().to_owned();
        let mut edge = Edge::new(id(from), id(to), KINDS[kind], provenance, None).unwrap();
        edge.sign = SIGNS[sign];
        edges.push(edge);
    }
    if reverse {
        edges.reverse();
    }
    Graph::new(nodes, edges).unwrap()
}

fn raw_edges() -> impl Strategy<Value = Vec<RawEdge>> {
    proptest::collection::vec((0..5usize, 0..5usize, 0..4usize, 0..5usize), 0..24)
}

fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfc().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn classes_partition_the_labels_and_counts_keep_their_invariants(d in raw_edges(), o in raw_edges()) {
        let declared = build(&NAMES, Provenance::Declared, &d, false);
        let observed = build(&OBSERVED_NAMES, Provenance::Observed, &o, false);
        let diff = Diff::run(&declared, &observed, &serde_json::json!({})).unwrap();
        let label = |e: &Edge| (nfc(&e.from), nfc(&e.to), e.kind);
        let dl: BTreeSet<_> = declared.edges().iter().map(label).collect();
        let ol: BTreeSet<_> = observed.edges().iter().map(label).collect();
        let c = diff.classes();
        let mut all = Vec::new();
        all.extend(c.changed_sign.iter().map(|s| &s.label));
        all.extend(&c.declared_and_observed);
        all.extend(&c.declared_never_observed);
        all.extend(&c.observed_but_undeclared);
        let as_set: BTreeSet<_> = all.iter().map(|l| (l.from.clone(), l.to.clone(), l.kind)).collect();
        prop_assert_eq!(as_set.len(), all.len(), "a label is in two classes");
        let union: BTreeSet<_> = dl.union(&ol).cloned().collect();
        prop_assert_eq!(as_set, union);

        let cov = diff.coverage();
        prop_assert_eq!(cov.declared_edges as usize, dl.len());
        prop_assert_eq!(cov.observed_edges as usize, ol.len());
        prop_assert_eq!(cov.declared_and_observed as usize, c.changed_sign.len() + c.declared_and_observed.len());
        prop_assert!(cov.declared_and_observed <= cov.declared_endpoint_covered);
        prop_assert!(cov.declared_endpoint_covered <= cov.declared_edges);
        prop_assert!(cov.declared_and_observed <= cov.observed_endpoint_declared);
        prop_assert!(cov.observed_endpoint_declared <= cov.observed_edges);
        prop_assert!(cov.declared_sign_only + cov.observed_sign_only <= cov.declared_and_observed);
    }

    #[test]
    fn record_does_not_depend_on_edge_input_order(d in raw_edges(), o in raw_edges()) {
        let window = serde_json::json!({"w": 1});
        let forward = Diff::run(
            &build(&NAMES, Provenance::Declared, &d, false),
            &build(&OBSERVED_NAMES, Provenance::Observed, &o, false),
            &window,
        ).unwrap();
        let backward = Diff::run(
            &build(&NAMES, Provenance::Declared, &d, true),
            &build(&OBSERVED_NAMES, Provenance::Observed, &o, true),
            &window,
        ).unwrap();
        prop_assert_eq!(forward.encode(connectome_graph::Algorithm::Sha256), backward.encode(connectome_graph::Algorithm::Sha256));
    }
}
