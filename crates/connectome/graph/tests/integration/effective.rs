//! Effective connectivity (docs/connectome.md CW-1…CW-5): the observed counts and times on the declared
//! graph, the worked example byte for byte, the zero and flagged cases, determinism, and the refusals.

use std::collections::BTreeSet;

use crate::observed_support::*;
use connectome_graph::effective::{EFFECTIVE_SCHEMA_VERSION, Effective, EffectiveClass, EffectiveError};
use connectome_graph::federation::{Federation, merge};
use connectome_graph::read::{Canonicity, verify_record};
use connectome_graph::{
    Algorithm, Diff, Edge, EdgeKind, Graph, Identity, Labels, MeasureError, Node, Provenance, SideError,
    Timing, Uncanonical, Weight,
};
use proptest::prelude::*;

/// The CW-5 worked example's observed calls: server → a three times, server → c (undeclared) once.
const CALLS: [Call<'static>; 2] = [("server", "a", 3, 4500, 2000), ("server", "c", 1, 800, 800)];

/// The CW-5 worked example: declared server → a and server → b; observed [`CALLS`], timed.
fn worked() -> Effective {
    let declared = declared(&[("server", "a"), ("server", "b")], &[]);
    Effective::build(&declared, &observed(&CALLS), Some(&timings(&CALLS)), &window(), Algorithm::Sha256)
        .unwrap()
}

/// The CW-5 worked example's bytes: the effective export the renderer's fixture holds.
const CW5_BYTES: &[u8] = include_bytes!("../data/effective.json");

#[test]
fn cw5_worked_example_byte_for_byte_with_sha256() {
    let effective = worked();
    assert_eq!(effective.encode(), CW5_BYTES);
    assert_eq!(effective.encode().len(), 890);
    assert_eq!(effective.hash_hex(), "42d1d3666ff10ce734fc2392f8c970a00ca9826c12ee0684a05e1d1e409a78c5");
    let text = std::str::from_utf8(CW5_BYTES).unwrap();
    assert!(rule_book().contains(text), "the rule book shows the library's bytes");
}

#[test]
fn cw2_a_declared_edge_never_observed_is_at_zero() {
    let effective = worked();
    let never = &effective.edges()[1];
    assert_eq!(
        (never.to.as_str(), never.class, never.count),
        (id("b").as_str(), EffectiveClass::DeclaredNeverObserved, 0)
    );
    assert_eq!(never.timing, Some(Timing::default()), "timed: zero time");
    let declared = declared(&[("server", "a"), ("server", "b")], &[]);
    let untimed = Effective::build(&declared, &observed(&CALLS), None, &window(), Algorithm::Sha256).unwrap();
    assert!(untimed.edges().iter().all(|e| e.timing.is_none()), "untimed: no time at all");
    let text = String::from_utf8(untimed.encode().to_vec()).unwrap();
    assert!(text.contains(r#""class":"declared_never_observed","count":0,"from":"srv/server","kind":"invoke","max_ns":null,"sum_ns":null"#), "{text}");
}

#[test]
fn cw2_an_observed_edge_not_declared_is_flagged() {
    let effective = worked();
    let observed = &effective.edges()[0];
    assert_eq!((observed.class, observed.count), (EffectiveClass::DeclaredAndObserved, 3));
    assert_eq!(observed.timing, Some(Timing { sum_ns: 4500, max_ns: 2000 }));
    let drift = &effective.edges()[2];
    assert_eq!(
        (drift.to.as_str(), drift.class, drift.count),
        (id("c").as_str(), EffectiveClass::ObservedButUndeclared, 1)
    );
    let ids: Vec<&str> = effective.nodes().iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["srv/server", "srv/tool/a", "srv/tool/b", "srv/tool/c"], "the nodes of both graphs");
}

#[test]
fn cw3_export_holds_exactly_seven_members_and_verifies() {
    let effective = worked();
    let record = effective.to_record();
    let keys: Vec<&str> = record.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["algorithm", "declared_graph", "edges", "nodes", "observed_graph", "schema_version", "window"]
    );
    assert_eq!(EFFECTIVE_SCHEMA_VERSION, 3);
    assert_eq!(connectome_canonical::encode_value(&record).unwrap(), effective.encode());
    assert_eq!(connectome_canonical::hash_value(&record, Algorithm::Sha256).unwrap(), effective.hash());
    let verdict = verify_record(effective.encode()).unwrap();
    assert_eq!((verdict.canonical, verdict.hash_hex.clone()), (Canonicity::Canonical, effective.hash_hex()));
    assert!(
        connectome_canonical::verify(effective.encode(), &effective.hash_hex()).is_ok(),
        "the CC-13 verifier reads it"
    );
    let declared = declared(&[("server", "a"), ("server", "b")], &[]);
    let sha512 = Effective::build(&declared, &observed(&CALLS), None, &window(), Algorithm::Sha512).unwrap();
    assert_eq!(sha512.hash().len(), 64);
    assert!(
        String::from_utf8(sha512.encode().to_vec())
            .unwrap()
            .contains(&declared.hash_hex(Algorithm::Sha512).unwrap())
    );
}

#[test]
fn cw4_shuffled_inputs_and_a_merged_observed_side_give_the_same_bytes() {
    let declared = declared(&[("server", "b"), ("server", "a")], &["c"]);
    let reversed = |g: &Graph| {
        let (mut nodes, mut edges) = g.clone().into_parts();
        nodes.reverse();
        edges.reverse();
        Graph::new(nodes, edges).unwrap()
    };
    let seen = observed(&CALLS);
    let a = Effective::build(&declared, &seen, Some(&timings(&CALLS)), &window(), Algorithm::Sha256).unwrap();
    let b = Effective::build(
        &reversed(&declared),
        &reversed(&seen),
        Some(&timings(&CALLS)),
        &window(),
        Algorithm::Sha256,
    )
    .unwrap();
    assert_eq!(a.encode(), b.encode());
    let eu = Federation::from_graph(
        "eu-1",
        SYSTEM,
        &observed(&CALLS[..1]),
        Algorithm::Sha256,
        Some(&timings(&CALLS[..1])),
    )
    .unwrap();
    let us = Federation::from_graph(
        "us-1",
        SYSTEM,
        &observed(&CALLS[1..]),
        Algorithm::Sha256,
        Some(&timings(&CALLS[1..])),
    )
    .unwrap();
    let both = merge(&[eu, us]).unwrap();
    let c = Effective::build(&declared, both.graph(), both.timings(), &window(), Algorithm::Sha256).unwrap();
    assert_eq!(a.encode(), c.encode(), "a federation is an observed side like any other");
}

#[test]
fn cw1_refusal_order_declared_observed_counts_timings_window_nodes() {
    let good = declared(&[("server", "a")], &[]);
    let calls = [("server", "a", 1, 1, 1)];
    let build = |d: &Graph, o: &Graph, t: Option<&connectome_graph::Timings>, w: serde_json::Value| {
        Effective::build(d, o, t, &w, Algorithm::Sha256).unwrap_err()
    };
    let wrong_side = observed(&calls);
    assert_eq!(
        build(&wrong_side, &wrong_side, None, window()),
        EffectiveError::Declared(SideError::Provenance(Provenance::Observed))
    );
    assert_eq!(
        build(&good, &good, None, window()),
        EffectiveError::Observed(SideError::Provenance(Provenance::Declared))
    );
    let unweighed = Graph::new(
        observed(&calls).nodes().to_vec(),
        vec![Edge::new(id("server"), id("a"), EdgeKind::Invoke, Provenance::Observed, None).unwrap()],
    )
    .unwrap();
    assert!(matches!(
        build(&good, &unweighed, None, serde_json::json!(1)),
        EffectiveError::Measure(MeasureError::Unweighted(_))
    ));
    let other = timings(&[("server", "b", 1, 1, 1)]);
    assert!(matches!(
        build(&good, &observed(&calls), Some(&other), serde_json::json!(1)),
        EffectiveError::Measure(MeasureError::TimingEdge(_))
    ));
    assert!(matches!(
        build(&good, &observed(&calls), None, serde_json::json!({"x": 1.5})),
        EffectiveError::Window(Uncanonical::LabelValue { .. })
    ));
    // Ids are never parsed back (CA-13): a graph read from bytes may hold a tool id at kind `module`.
    let crafted = br#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"srv/tool/a","kind":"module","labels":{},"level":"module"}],"edges":[]}"#;
    let odd = connectome_graph::read_export(crafted).unwrap().graph;
    let refused = build(&odd, &observed(&calls), None, serde_json::json!([]));
    assert_eq!(
        refused,
        EffectiveError::Window(Uncanonical::LabelValue {
            id: "record".into(),
            key: "window".into(),
            value: serde_json::json!([])
        })
    );
    assert_eq!(build(&odd, &observed(&calls), None, window()), EffectiveError::ConflictingNode(id("a")));
    let refused = build(&good, &observed(&calls), None, serde_json::json!([]));
    assert_eq!(refused.to_string().lines().count(), 1);
}

#[test]
fn cw1_a_node_the_two_graphs_describe_differently_is_refused() {
    let tool = Identity::Tool { server: SYSTEM.into(), name: "a".into() };
    let declared = Graph::new(vec![Node::from_identity(tool.clone(), Labels::new())], vec![]).unwrap();
    let labelled = Node::from_identity(tool, Labels::from([("mode".to_owned(), "write".into())]));
    let observed = Graph::new(vec![labelled], vec![]).unwrap();
    assert!(
        Effective::build(&declared, &observed, None, &window(), Algorithm::Sha256).is_ok(),
        "labels are the declared export's"
    );
    let weighed = Graph::new(
        vec![
            Node::from_identity(identity("server"), Labels::new()),
            Node::from_identity(identity("a"), Labels::new()),
        ],
        vec![
            Edge::new(
                id("server"),
                id("a"),
                EdgeKind::Invoke,
                Provenance::Observed,
                Some(Weight::Float(1.0)),
            )
            .unwrap(),
        ],
    )
    .unwrap();
    let refused = Effective::build(&declared, &weighed, None, &window(), Algorithm::Sha256).unwrap_err();
    assert!(matches!(refused, EffectiveError::Measure(MeasureError::NotACount(_))), "{refused}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn cw2_classes_agree_with_the_diff(
        d in proptest::collection::btree_set((0..4usize, 1..4usize), 0..8),
        o in proptest::collection::btree_map((0..4usize, 1..4usize), 1..50u64, 0..8),
    ) {
        let names = ["server", "a", "b", "c"];
        let declared_edges: Vec<(&str, &str)> = d.iter().map(|&(a, b)| (names[a], names[b])).collect();
        let calls: Vec<Call<'_>> = o.iter().map(|(&(a, b), &n)| (names[a], names[b], n, n * 10, n)).collect();
        let declared = declared(&declared_edges, &names);
        let observed = observed(&calls);
        let effective = Effective::build(&declared, &observed, Some(&timings(&calls)), &window(), Algorithm::Sha256).unwrap();
        let diff = Diff::run(&declared, &observed, &window()).unwrap();
        let class = |c: EffectiveClass| -> BTreeSet<(String, String)> {
            effective.edges().iter().filter(|e| e.class == c).map(|e| (e.from.clone(), e.to.clone())).collect()
        };
        let labels = |ls: &[connectome_graph::Label]| -> BTreeSet<(String, String)> { ls.iter().map(|l| (l.from.clone(), l.to.clone())).collect() };
        let classes = diff.classes();
        prop_assert_eq!(class(EffectiveClass::DeclaredAndObserved), labels(&classes.declared_and_observed));
        prop_assert_eq!(class(EffectiveClass::DeclaredNeverObserved), labels(&classes.declared_never_observed));
        prop_assert_eq!(class(EffectiveClass::ObservedButUndeclared), labels(&classes.observed_but_undeclared));
        for e in effective.edges() {
            let expected = calls.iter().find(|c| id(c.0) == e.from && id(c.1) == e.to).map_or(0, |c| c.2);
            prop_assert_eq!(e.count, expected);
        }
    }
}
