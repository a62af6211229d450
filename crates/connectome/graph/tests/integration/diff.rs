//! The diff of docs/connectome.md §F and its record (CB-7): the CF-7 worked example byte for byte, the
//! classes, the ten counts, NFC labels and the refusal order of CF-2.

use connectome_graph::{
    Algorithm, Diff, DiffError, Edge, EdgeKind, Graph, Identity, Label, Labels, Node, Provenance, SideError,
    Sign, Uncanonical, Value,
};
use serde_json::json;

const SIGNS: [Sign; 5] = [Sign::Allow, Sign::Deny, Sign::Hold, Sign::Ungoverned, Sign::Unset];

fn tool(name: &str) -> Node {
    Node::from_identity(Identity::Tool { server: "srv".into(), name: name.into() }, Labels::new())
}

fn server() -> Node {
    Node::from_identity(Identity::Server { server: "srv".into() }, Labels::new())
}

fn id(name: &str) -> String {
    format!("srv/tool/{name}")
}

/// A graph of the server and tools `names`, with `edges` (from, to, sign) as invokes of `provenance`.
fn graph(names: &[&str], provenance: Provenance, edges: &[(&str, &str, Sign)]) -> Graph {
    let mut nodes = vec![server()];
    nodes.extend(names.iter().map(|n| tool(n)));
    let edges = edges
        .iter()
        .map(|(from, to, sign)| {
            let mut edge = Edge::new(id(from), id(to), EdgeKind::Invoke, provenance, None).unwrap();
            edge.sign = *sign;
            edge
        })
        .collect();
    Graph::new(nodes, edges).unwrap()
}

fn window() -> serde_json::Value {
    json!({"started_at": "2026-09-14T00:00:00Z", "ended_at": "2026-09-14T01:00:00Z"})
}

fn f7() -> Diff {
    use Sign::{Allow, Deny, Unset};
    let declared = graph(
        &["a", "b", "c"],
        Provenance::Declared,
        &[("a", "b", Unset), ("a", "c", Unset), ("c", "a", Allow), ("b", "a", Allow)],
    );
    let observed = graph(
        &["a", "b", "c"],
        Provenance::Observed,
        &[("a", "b", Unset), ("b", "c", Unset), ("c", "a", Deny), ("b", "a", Unset)],
    );
    Diff::run(&declared, &observed, &window()).unwrap()
}

const CF7_RECORD: &str = r#"{"algorithm":"sha256","classes":{"changed_sign":[{"declared_sign":"allow","from":"srv/tool/c","kind":"invoke","observed_sign":"deny","to":"srv/tool/a"}],"declared_and_observed":[{"from":"srv/tool/a","kind":"invoke","to":"srv/tool/b"},{"from":"srv/tool/b","kind":"invoke","to":"srv/tool/a"}],"declared_never_observed":[{"from":"srv/tool/a","kind":"invoke","to":"srv/tool/c"}],"observed_but_undeclared":[{"from":"srv/tool/b","kind":"invoke","to":"srv/tool/c"}]},"coverage":{"declared_and_observed":3,"declared_edges":4,"declared_endpoint_covered":4,"declared_nodes":4,"declared_sign_only":1,"nodes_in_both":4,"observed_edges":4,"observed_endpoint_declared":4,"observed_nodes":4,"observed_sign_only":0},"schema_version":3,"window":{"ended_at":"2026-09-14T01:00:00Z","started_at":"2026-09-14T00:00:00Z"}}"#;

#[test]
fn cf7_worked_example_byte_for_byte_with_sha256_and_sha384() {
    let diff = f7();
    let bytes = diff.encode(Algorithm::Sha256);
    assert_eq!(std::str::from_utf8(&bytes).unwrap(), CF7_RECORD);
    assert_eq!(bytes.len(), 800);
    assert_eq!(
        diff.hash_hex(Algorithm::Sha256),
        "a8a4206fb65febc83ed099be8b7408b6938795efc8a92f7cac1f53781c4312e1"
    );
    assert_eq!(
        diff.hash_hex(Algorithm::Sha384),
        "2efccb9b6852b3d4088b170987fd7e51c52d474a81522e3203d9420eda199fd2d872aebbd1e60e44b5c9b2b1e0b0090e"
    );
    let sha384 = diff.encode(Algorithm::Sha384);
    assert_eq!(sha384, CF7_RECORD.replacen("sha256", "sha384", 1).into_bytes());
    assert_eq!(diff.hash(Algorithm::Sha512).len(), 64);
}

#[test]
fn encode_is_encode_value_of_the_record_with_its_algorithm() {
    let diff = f7();
    for algorithm in Algorithm::ALL {
        let record = diff.to_record(algorithm);
        assert_eq!(connectome_canonical::encode_value(&record).unwrap(), diff.encode(algorithm));
        assert_eq!(connectome_canonical::hash_value(&record, algorithm).unwrap(), diff.hash(algorithm));
    }
}

#[test]
fn record_holds_exactly_five_members() {
    let record = f7().to_record(Algorithm::Sha256);
    let keys: Vec<&str> = record.keys().map(String::as_str).collect();
    assert_eq!(keys, ["algorithm", "classes", "coverage", "schema_version", "window"]);
}

#[test]
fn crafted_pair_puts_one_edge_in_each_class() {
    let diff = f7();
    let c = diff.classes();
    let label = |from: &str, to: &str| Label { from: id(from), to: id(to), kind: EdgeKind::Invoke };
    assert_eq!(c.changed_sign.len(), 1);
    assert_eq!(c.changed_sign[0].label, label("c", "a"));
    assert_eq!((c.changed_sign[0].declared_sign, c.changed_sign[0].observed_sign), (Sign::Allow, Sign::Deny));
    assert_eq!(c.declared_and_observed, [label("a", "b"), label("b", "a")]);
    assert_eq!(c.declared_never_observed, [label("a", "c")]);
    assert_eq!(c.observed_but_undeclared, [label("b", "c")]);
}

#[test]
fn kind_is_part_of_the_label() {
    let declared = graph(&["a", "b"], Provenance::Declared, &[("a", "b", Sign::Unset)]);
    let nodes = vec![server(), tool("a"), tool("b")];
    let read = Edge::new(id("a"), id("b"), EdgeKind::Read, Provenance::Observed, None).unwrap();
    let observed = Graph::new(nodes, vec![read]).unwrap();
    let diff = Diff::run(&declared, &observed, &window()).unwrap();
    assert!(diff.classes().declared_and_observed.is_empty());
    assert_eq!(diff.classes().declared_never_observed[0].kind, EdgeKind::Invoke);
    assert_eq!(diff.classes().observed_but_undeclared[0].kind, EdgeKind::Read);
    assert_eq!(diff.coverage().declared_and_observed, 0);
}

#[test]
fn window_is_copied_verbatim() {
    let window = json!({"z": [1, "x", null, {"k": true}], "a": -9007199254740993_i64, "m": {}});
    let diff =
        Diff::run(&graph(&[], Provenance::Declared, &[]), &graph(&[], Provenance::Observed, &[]), &window)
            .unwrap();
    let text = String::from_utf8(diff.encode(Algorithm::Sha256)).unwrap();
    assert!(
        text.ends_with(r#""window":{"a":-9007199254740993,"m":{},"z":[1,"x",null,{"k":true}]}}"#),
        "{text}"
    );
    assert_eq!(diff.window().get("m"), Some(&Value::Object(Default::default())));
}

#[test]
fn empty_classes_are_empty_arrays() {
    let diff =
        Diff::run(&graph(&[], Provenance::Declared, &[]), &graph(&[], Provenance::Observed, &[]), &window())
            .unwrap();
    let text = String::from_utf8(diff.encode(Algorithm::Sha256)).unwrap();
    assert!(text.contains(
        r#""classes":{"changed_sign":[],"declared_and_observed":[],"declared_never_observed":[],"observed_but_undeclared":[]}"#
    ));
}

#[test]
fn nfc_equal_ids_across_the_two_graphs_are_one_label() {
    let declared = graph(&["caf\u{e9}", "b"], Provenance::Declared, &[("caf\u{e9}", "b", Sign::Unset)]);
    let observed = graph(&["cafe\u{301}", "b"], Provenance::Observed, &[("cafe\u{301}", "b", Sign::Unset)]);
    let diff = Diff::run(&declared, &observed, &window()).unwrap();
    assert_eq!(diff.classes().declared_and_observed.len(), 1);
    assert_eq!(diff.classes().declared_and_observed[0].from, id("caf\u{e9}"));
    assert!(diff.classes().observed_but_undeclared.is_empty());
    assert_eq!(diff.coverage().nodes_in_both, 3);
    assert_eq!(diff.coverage().declared_endpoint_covered, 1);
}

#[test]
fn one_sided_sign_counts_over_all_25_sign_pairs() {
    for d in SIGNS {
        for o in SIGNS {
            let declared = graph(&["a", "b"], Provenance::Declared, &[("a", "b", d)]);
            let observed = graph(&["a", "b"], Provenance::Observed, &[("a", "b", o)]);
            let diff = Diff::run(&declared, &observed, &window()).unwrap();
            let cov = diff.coverage();
            let changed = d != Sign::Unset && o != Sign::Unset && d != o;
            assert_eq!(diff.classes().changed_sign.len(), usize::from(changed), "{d:?} {o:?}");
            assert_eq!(diff.classes().declared_and_observed.len(), usize::from(!changed), "{d:?} {o:?}");
            assert_eq!(cov.declared_and_observed, 1, "a sign never moves a label out of 'in both'");
            assert_eq!(
                cov.declared_sign_only,
                u64::from(d != Sign::Unset && o == Sign::Unset),
                "{d:?} {o:?}"
            );
            assert_eq!(
                cov.observed_sign_only,
                u64::from(d == Sign::Unset && o != Sign::Unset),
                "{d:?} {o:?}"
            );
        }
    }
}

#[test]
fn completeness_roles_count_three_four_five() {
    let declared = graph(
        &["a", "b", "c"],
        Provenance::Declared,
        &[("a", "b", Sign::Unset), ("a", "c", Sign::Unset), ("b", "c", Sign::Unset)],
    );
    let observed =
        graph(&["a", "b", "c"], Provenance::Observed, &[("a", "b", Sign::Unset), ("c", "b", Sign::Unset)]);
    let cov = *Diff::run(&declared, &observed, &window()).unwrap().coverage();
    assert_eq!(
        (cov.declared_and_observed, cov.declared_endpoint_covered, cov.observed_endpoint_declared),
        (1, 3, 2)
    );
}

#[test]
fn endpoint_counts_need_both_ends() {
    // Observed knows only a and b: the declared a→c has one end unobserved.
    let declared =
        graph(&["a", "b", "c"], Provenance::Declared, &[("a", "b", Sign::Unset), ("a", "c", Sign::Unset)]);
    let observed =
        graph(&["a", "b", "d"], Provenance::Observed, &[("a", "b", Sign::Unset), ("a", "d", Sign::Unset)]);
    let cov = *Diff::run(&declared, &observed, &window()).unwrap().coverage();
    assert_eq!(cov.declared_endpoint_covered, 1);
    assert_eq!(cov.observed_endpoint_declared, 1);
    assert_eq!((cov.declared_nodes, cov.observed_nodes, cov.nodes_in_both), (4, 4, 3));
    assert!(cov.declared_and_observed <= cov.declared_endpoint_covered);
    assert!(cov.declared_endpoint_covered <= cov.declared_edges);
}

#[test]
fn class_arrays_sort_by_utf16_not_bytes() {
    // U+1F600 sorts before U+FF01 as UTF-16 code units and after it as bytes.
    let names = ["\u{1f600}", "\u{ff01}", "z"];
    let declared = graph(
        &names,
        Provenance::Declared,
        &[("\u{ff01}", "z", Sign::Unset), ("\u{1f600}", "z", Sign::Unset)],
    );
    let observed = graph(&names, Provenance::Observed, &[]);
    let diff = Diff::run(&declared, &observed, &window()).unwrap();
    let froms: Vec<&str> = diff.classes().declared_never_observed.iter().map(|l| l.from.as_str()).collect();
    assert_eq!(froms, [id("\u{1f600}"), id("\u{ff01}")]);
}

// ----------------------------------------------------------------------------------------- refusals

fn observed_edge_in(provenance: Provenance) -> Graph {
    graph(&["a", "b"], provenance, &[("a", "b", Sign::Unset)])
}

fn uncanonical_graph(provenance: Provenance) -> Graph {
    // Two raw ids that are equal after NFC.
    graph(&["caf\u{e9}", "cafe\u{301}"], provenance, &[])
}

#[test]
fn refuses_observed_edges_in_the_declared_graph() {
    let err = Diff::run(
        &observed_edge_in(Provenance::Observed),
        &observed_edge_in(Provenance::Observed),
        &window(),
    );
    assert_eq!(err, Err(DiffError::Declared(SideError::Provenance(Provenance::Observed))));
}

#[test]
fn refuses_declared_edges_in_the_observed_graph() {
    let err = Diff::run(
        &observed_edge_in(Provenance::Declared),
        &observed_edge_in(Provenance::Declared),
        &window(),
    );
    assert_eq!(err, Err(DiffError::Observed(SideError::Provenance(Provenance::Declared))));
}

#[test]
fn refuses_an_uncanonical_side_before_its_provenance() {
    let nodes = vec![tool("caf\u{e9}"), tool("cafe\u{301}")];
    let edge =
        Edge::new(id("caf\u{e9}"), id("cafe\u{301}"), EdgeKind::Invoke, Provenance::Observed, None).unwrap();
    let both_wrong = Graph::new(nodes, vec![edge]).unwrap();
    let err = Diff::run(&both_wrong, &observed_edge_in(Provenance::Observed), &window());
    assert_eq!(
        err,
        Err(DiffError::Declared(SideError::Uncanonical(Uncanonical::DuplicateIdAfterNfc {
            id: id("caf\u{e9}")
        })))
    );
}

#[test]
fn refusal_order_declared_then_observed_then_window() {
    let bad_window = json!({"ratio": 0.5});
    let declared_bad = uncanonical_graph(Provenance::Declared);
    let observed_bad = uncanonical_graph(Provenance::Observed);
    let declared_ok = graph(&["a"], Provenance::Declared, &[]);
    let observed_ok = graph(&["a"], Provenance::Observed, &[]);
    assert!(matches!(Diff::run(&declared_bad, &observed_bad, &bad_window), Err(DiffError::Declared(_))));
    assert!(matches!(Diff::run(&declared_ok, &observed_bad, &bad_window), Err(DiffError::Observed(_))));
    assert_eq!(
        Diff::run(&declared_ok, &observed_ok, &bad_window),
        Err(DiffError::Window(Uncanonical::LabelValue {
            id: "record".into(),
            key: "window".into(),
            value: bad_window.clone()
        }))
    );
}

#[test]
fn refuses_a_window_with_no_canonical_form() {
    let declared = graph(&[], Provenance::Declared, &[]);
    let observed = graph(&[], Provenance::Observed, &[]);
    for window in [
        json!(null),
        json!([]),
        json!("2026-09-14"),
        json!({"nested": {"f": 1.5}}),
        json!({"\u{212b}": 1, "\u{c5}": 2}),
    ] {
        match Diff::run(&declared, &observed, &window) {
            Err(DiffError::Window(Uncanonical::LabelValue { id, key, value })) => {
                assert_eq!((id.as_str(), key.as_str()), ("record", "window"));
                assert_eq!(value, window);
            }
            other => panic!("{window}: {other:?}"),
        }
    }
}

#[test]
fn typed_window_carries_integers_beyond_64_bits() {
    let big = connectome_graph::Integer::parse("18446744073709551616").unwrap();
    let window = Labels::from([("n".to_owned(), Value::Int(big))]);
    let diff = Diff::run_with_window(
        &graph(&[], Provenance::Declared, &[]),
        &graph(&[], Provenance::Observed, &[]),
        window,
    )
    .unwrap();
    let text = String::from_utf8(diff.encode(Algorithm::Sha256)).unwrap();
    assert!(text.ends_with(r#""window":{"n":18446744073709551616}}"#), "{text}");
}

#[test]
fn typed_window_refuses_keys_equal_after_nfc_after_both_sides() {
    let window =
        Labels::from([("\u{212b}".to_owned(), Value::from(1)), ("\u{c5}".to_owned(), Value::from(2))]);
    let declared = graph(&[], Provenance::Declared, &[]);
    assert!(matches!(
        Diff::run_with_window(&declared, &observed_edge_in(Provenance::Declared), window.clone()),
        Err(DiffError::Observed(_))
    ));
    assert_eq!(
        Diff::run_with_window(&declared, &graph(&[], Provenance::Observed, &[]), window),
        Err(DiffError::Window(Uncanonical::DuplicateLabelKey { id: "record".into(), key: "\u{c5}".into() }))
    );
}

#[test]
fn json_window_with_an_integer_beyond_64_bits_is_refused_not_rounded() {
    let window: serde_json::Value = serde_json::from_str(r#"{"n":18446744073709551616}"#).unwrap();
    let err =
        Diff::run(&graph(&[], Provenance::Declared, &[]), &graph(&[], Provenance::Observed, &[]), &window);
    assert!(matches!(err, Err(DiffError::Window(Uncanonical::LabelValue { .. }))));
}
