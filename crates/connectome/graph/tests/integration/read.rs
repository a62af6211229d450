//! Reading exports back (docs/connectome.md CR-1…CR-6): every export the library writes reads back to
//! the same graph and the same bytes; anything else is refused in order, by name, in one line.

use crate::observed_support::*;
use connectome_canonical::{GraphReason, Integer, digest, to_hex};
use connectome_graph::read::{
    Canonicity, Document, ReadFault, read_export, read_observed, read_sidecar, read_timing, verify_export,
    verify_record, weigh,
};
use connectome_graph::{
    Algorithm, Diff, Edge, EdgeKey, EdgeKind, Graph, GraphError, Identity, Labels, Node, Provenance, Sign,
    Uncanonical, Value, Weight,
};
use proptest::prelude::*;

/// A graph that exercises the encoding: labels of every kind (an integer beyond 64 bits, nested
/// objects, text that needs escapes), a supplied sign, every edge kind, weights of both kinds.
fn rich() -> Graph {
    let big = Value::Int(Integer::parse("-123456789012345678901234567890").unwrap());
    let labels = Labels::from([
        ("big".to_owned(), big),
        (
            "nested".to_owned(),
            Value::Object(Labels::from([("list".to_owned(), Value::Array(vec![Value::Null, true.into()]))])),
        ),
        ("text".to_owned(), Value::from("caf\u{e9} \"quoted\" \\ tab\t\u{1}")),
    ]);
    let server = Node::from_identity(Identity::Server { server: "srv".into() }, Labels::new());
    let tool = Node::from_identity(Identity::Tool { server: "srv".into(), name: "\u{e9}cho".into() }, labels);
    let module = Node::from_identity(
        Identity::Module { server: "srv".into(), path: "my_crate::tools".into() },
        Labels::new(),
    );
    let (s, t, m) = (server.id().to_owned(), tool.id().to_owned(), module.id().to_owned());
    let mut signed = Edge::new(&s, &t, EdgeKind::Invoke, Provenance::Observed, Some(Weight::Int(7))).unwrap();
    signed.sign = Sign::Deny;
    let edges = vec![
        signed,
        Edge::new(&t, &m, EdgeKind::Read, Provenance::Observed, Some(Weight::Float(0.5))).unwrap(),
        Edge::new(&m, &t, EdgeKind::Message, Provenance::Observed, Some(Weight::Float(1.0e21))).unwrap(),
        Edge::new(&m, &m, EdgeKind::Supervise, Provenance::Observed, None).unwrap(),
    ];
    Graph::new(vec![server, tool, module], edges).unwrap()
}

/// The fault of a refused export.
fn fault(bytes: &[u8]) -> ReadFault {
    read_export(bytes).unwrap_err().fault
}

#[test]
fn cr1_every_library_export_reads_back_to_the_same_bytes() {
    let graph = rich();
    for algorithm in Algorithm::ALL {
        let bytes = graph.to_canonical_bytes(algorithm).unwrap();
        let export = read_export(&bytes).unwrap();
        assert_eq!(export.algorithm, algorithm);
        assert_eq!(export.graph.to_canonical_bytes(algorithm).unwrap(), bytes);
        let sidecar = graph.to_sidecar_bytes().unwrap();
        let observed = read_observed(&bytes, &sidecar).unwrap();
        assert_eq!(observed.graph, graph, "nodes, edges, signs and weights as built");
    }
}

#[test]
fn cr1_refusal_order_json_object_version_members_types_graph_form_bytes() {
    let top = |rest: &str| format!(r#"{{"schema_version":3,"algorithm":"sha256",{rest}}}"#);
    assert!(matches!(fault(br#"{"schema_version":3,"#), ReadFault::Json { offset: 20, .. }));
    assert_eq!(fault(b"[]"), ReadFault::Type { expected: "an object", found: "an array" });
    // The version is read before the members: a version 2 document with an unknown member.
    assert_eq!(fault(br#"{"schema_version":2,"extra":1}"#), ReadFault::SchemaVersion("2".to_owned()));
    assert_eq!(fault(br#"{"schema_version":3.0}"#), ReadFault::SchemaVersion("3.0".to_owned()));
    // A missing member is found before an unknown one.
    assert_eq!(
        fault(br#"{"schema_version":3,"nodes":[],"edges":[],"extra":1}"#),
        ReadFault::MissingMember("algorithm")
    );
    assert_eq!(
        fault(top(r#""nodes":[],"edges":[],"weight":1"#).as_bytes()),
        ReadFault::UnknownMember("weight".to_owned())
    );
    let node = |kind: &str| format!(r#"{{"id":"srv/x","kind":"{kind}","labels":{{}},"level":"server"}}"#);
    let refused =
        read_export(top(&format!(r#""nodes":[{}],"edges":[]"#, node("gadget"))).as_bytes()).unwrap_err();
    assert_eq!(refused.at, "nodes[0].kind");
    assert_eq!(refused.fault, ReadFault::Vocabulary { what: "node kind", found: "gadget".to_owned() });
    let dangling = top(&format!(
        r#""nodes":[{}],"edges":[{{"from":"srv/x","kind":"invoke","provenance":"declared","sign":"unset","to":"srv/y"}}]"#,
        node("tool")
    ));
    assert_eq!(
        fault(dangling.as_bytes()),
        ReadFault::Graph(Box::new(GraphError::DanglingEdge("srv/y".to_owned())))
    );
    let twins = top(
        r#""nodes":[{"id":"caf\u00e9","kind":"tool","labels":{},"level":"server"},{"id":"cafe\u0301","kind":"tool","labels":{},"level":"server"}],"edges":[]"#,
    );
    assert_eq!(
        fault(twins.as_bytes()),
        ReadFault::Uncanonical(Box::new(Uncanonical::DuplicateIdAfterNfc { id: "caf\u{e9}".to_owned() }))
    );
    assert_eq!(fault(top(r#""nodes":[], "edges":[]"#).as_bytes()), ReadFault::NotCanonical { offset: 52 });
}

#[test]
fn cr1_every_truncation_of_an_export_is_refused_as_not_json() {
    let bytes = rich().to_canonical_bytes(Algorithm::Sha256).unwrap();
    for end in 0..bytes.len() {
        let refused = read_export(&bytes[..end]).unwrap_err();
        assert!(matches!(refused.fault, ReadFault::Json { .. }), "prefix of {end} bytes: {refused}");
    }
}

#[test]
fn cr2_whitespace_order_and_escapes_are_not_canonical() {
    let graph = declared(&[("server", "a")], &[]);
    let held = String::from_utf8(graph.to_canonical_bytes(Algorithm::Sha256).unwrap()).unwrap();
    let cases = [
        held.replacen(r#""nodes":"#, r#""nodes": "#, 1),
        held.replacen(
            r#"{"schema_version":3,"algorithm":"sha256","#,
            r#"{"algorithm":"sha256","schema_version":3,"#,
            1,
        ),
        held.replacen("srv/tool/a", "srv\\/tool/a", 1),
        held.replacen("srv/tool/a", "srv/tool/\\u0061", 1),
        held.replacen(r#""kind":"tool","labels":{}"#, r#""kind":"tool","labels":{ }"#, 1),
    ];
    for case in cases {
        let refused = read_export(case.as_bytes()).unwrap_err();
        let ReadFault::NotCanonical { offset } = refused.fault else { panic!("{case}: {refused}") };
        assert_eq!(case.as_bytes()[..offset], held.as_bytes()[..offset], "the first difference is named");
    }
    let reordered =
        Graph::new(graph.nodes().iter().rev().cloned().collect(), graph.edges().to_vec()).unwrap();
    assert_eq!(
        reordered.to_canonical_bytes(Algorithm::Sha256).unwrap(),
        held.as_bytes(),
        "order is the writer's"
    );
    let decomposed = held.replacen("srv/tool/a", "srv/tool/e\u{301}", 2);
    assert!(matches!(fault(decomposed.as_bytes()), ReadFault::NotCanonical { .. }), "an id not in NFC");
}

#[test]
fn cr3_read_nodes_keep_their_ids_kind_level_and_labels() {
    let graph = rich();
    let export = read_export(&graph.to_canonical_bytes(Algorithm::Sha512).unwrap()).unwrap();
    for (read, built) in export.graph.nodes().iter().zip(graph.nodes()) {
        assert_eq!(read, built);
    }
    let signed = export.graph.edges().iter().find(|e| e.kind == EdgeKind::Invoke).unwrap();
    assert_eq!(signed.sign, Sign::Deny, "a supplied sign reads back as supplied");
    assert!(export.graph.edges().iter().all(|e| e.weight.is_none()), "weights come only from a sidecar");
}

#[test]
fn cr4_sidecar_reads_back_and_weighs_its_graph() {
    let graph = rich();
    let sidecar = graph.to_sidecar_bytes().unwrap();
    let weights = read_sidecar(&sidecar).unwrap();
    assert_eq!(weights.len(), 3, "one entry per weighted edge");
    assert_eq!(weights[0].1, Weight::Float(1.0e21));
    let (nodes, mut edges) = graph.clone().into_parts();
    edges.iter_mut().for_each(|e| e.weight = None);
    let weighed = weigh(Graph::new(nodes, edges).unwrap(), &weights).unwrap();
    assert_eq!(weighed, graph);
    assert_eq!(weighed.to_sidecar_bytes().unwrap(), sidecar);
    let negative_zero = br#"{"schema_version":3,"weights":[{"from":"a","kind":"invoke","provenance":"observed","to":"b","weight":-0.0}]}"#;
    assert_eq!(read_sidecar(negative_zero).unwrap()[0].1, Weight::Float(-0.0));
}

#[test]
fn cr4_a_weight_naming_no_edge_is_refused() {
    let graph = declared(&[("server", "a")], &[]);
    let key = |to: &str| EdgeKey {
        from: id("server"),
        to: id(to),
        kind: EdgeKind::Invoke,
        provenance: Provenance::Declared,
    };
    let refused = weigh(graph.clone(), &[(key("b"), Weight::Int(1))]).unwrap_err();
    assert_eq!((refused.document, refused.at.as_str()), (Document::Sidecar, "weights[0]"));
    assert!(matches!(refused.fault, ReadFault::UnknownEdge(_)), "{refused}");
    let twice = weigh(graph, &[(key("a"), Weight::Int(1)), (key("a"), Weight::Int(2))]).unwrap_err();
    assert!(matches!(twice.fault, ReadFault::DuplicateEdge(_)), "{twice}");
    let entry = |weight: &str| {
        format!(
            r#"{{"schema_version":3,"weights":[{{"from":"a","kind":"invoke","provenance":"observed","to":"b","weight":{weight}}}]}}"#
        )
    };
    for bad in ["-1", "-0.5", "18446744073709551616", "1e400", "\"1\""] {
        assert!(read_sidecar(entry(bad).as_bytes()).is_err(), "{bad}");
    }
    for not_canonical in ["1.50", "1000.0", "1E3", "0.10"] {
        let refused = read_sidecar(entry(not_canonical).as_bytes()).unwrap_err();
        assert!(matches!(refused.fault, ReadFault::NotCanonical { .. }), "{not_canonical}: {refused}");
    }
    assert_eq!(read_sidecar(entry("1.0e3").as_bytes()).unwrap()[0].1, Weight::Float(1000.0));
    let duplicate = br#"{"schema_version":3,"weights":[{"from":"a","kind":"invoke","provenance":"observed","to":"b","weight":1},{"from":"a","kind":"invoke","provenance":"observed","to":"b","weight":2}]}"#;
    let ReadFault::Uncanonical(reason) = read_sidecar(duplicate).unwrap_err().fault else {
        panic!("no canonical form")
    };
    assert!(matches!(*reason, Uncanonical::InvalidGraph(GraphReason::DuplicateEdge { .. })), "{reason}");
}

#[test]
fn cr4_timing_sidecar_reads_back_strictly() {
    let calls = [("server", "a", 3, 4500, 2000), ("server", "b", 1, 800, 800)];
    let bytes = timings(&calls).to_bytes().unwrap();
    assert_eq!(read_timing(&bytes).unwrap(), timings(&calls));
    let text = String::from_utf8(bytes).unwrap();
    let swapped = text.replacen(
        r#""max_ns":2000,"provenance":"observed","sum_ns":4500"#,
        r#""sum_ns":4500,"provenance":"observed","max_ns":2000"#,
        1,
    );
    assert!(matches!(read_timing(swapped.as_bytes()).unwrap_err().fault, ReadFault::NotCanonical { .. }));
    let negative = text.replacen("4500", "-4500", 1);
    assert_eq!(read_timing(negative.as_bytes()).unwrap_err().fault, ReadFault::Number("-4500".to_owned()));
}

#[test]
fn cr5_every_refusal_displays_as_one_short_line() {
    let long = format!("line\nbreak\u{202e}{}", "x".repeat(500));
    let member = format!(
        r#"{{"schema_version":3,"algorithm":"sha256","nodes":[],"edges":[],{}:1}}"#,
        serde_json::json!(long)
    );
    let kind = format!(
        r#"{{"schema_version":3,"algorithm":"sha256","nodes":[{{"id":"a","kind":{},"labels":{{}},"level":"server"}}],"edges":[]}}"#,
        serde_json::json!(long)
    );
    let dangling = format!(
        r#"{{"schema_version":3,"algorithm":"sha256","nodes":[],"edges":[{{"from":{},"kind":"invoke","provenance":"declared","sign":"unset","to":"b"}}]}}"#,
        serde_json::json!(long)
    );
    for bytes in [member.as_bytes(), kind.as_bytes(), dangling.as_bytes(), b"{\"a\":\n", b"\xff"] {
        let message = read_export(bytes).unwrap_err().to_string();
        assert!(!message.contains('\n'), "{message}");
        assert!(message.len() < 240, "{message}");
        assert!(message.starts_with("graph export: "), "{message}");
    }
    let message = read_export(member.as_bytes()).unwrap_err().to_string();
    assert!(message.is_ascii() && message.ends_with("...\""), "{message}");
}

#[test]
fn cr6_verify_reports_canonical_and_non_canonical_bytes() {
    let graph = rich();
    let bytes = graph.to_canonical_bytes(Algorithm::Sha384).unwrap();
    let verdict = verify_export(&bytes).unwrap();
    assert_eq!((verdict.schema_version, verdict.algorithm), (3, Algorithm::Sha384));
    assert_eq!(verdict.hash_hex, graph.hash_hex(Algorithm::Sha384).unwrap());
    assert_eq!(verdict.canonical, Canonicity::Canonical);
    let text = String::from_utf8(bytes).unwrap();
    let spaced = text.replacen(r#","nodes":"#, r#", "nodes": "#, 1);
    let verdict = verify_export(spaced.as_bytes()).unwrap();
    assert_eq!(verdict.hash_hex, to_hex(&digest(Algorithm::Sha384, spaced.as_bytes())), "the bytes as held");
    let Canonicity::Differs { offset, canonical_hex } = verdict.canonical else { panic!("not canonical") };
    let at = text.find(r#","nodes":"#).unwrap() + 1;
    assert_eq!((offset, canonical_hex), (at, graph.hash_hex(Algorithm::Sha384).unwrap()));
    let v2 = br#"{"schema_version":2,"nodes":[],"edges":[]}"#;
    let verdict = verify_export(v2).unwrap();
    assert_eq!(
        (verdict.schema_version, verdict.algorithm, verdict.canonical),
        (2, Algorithm::Sha256, Canonicity::Held)
    );
    assert_eq!(verdict.hash_hex, to_hex(&digest(Algorithm::Sha256, v2)));
    assert!(
        verify_export(br#"{"schema_version":3,"algorithm":"sha256","nodes":[]}"#).is_err(),
        "still a graph export"
    );
}

#[test]
fn cr6_verify_record_judges_a_diff_record() {
    let observed = observed(&[("server", "a", 2, 0, 0)]);
    let diff = Diff::run(&declared(&[("server", "a")], &[]), &observed, &window()).unwrap();
    let record = diff.encode(Algorithm::Sha256);
    let verdict = verify_record(&record).unwrap();
    assert_eq!(
        (verdict.canonical, verdict.hash_hex),
        (Canonicity::Canonical, diff.hash_hex(Algorithm::Sha256))
    );
    let at = record.iter().position(|&b| b == b',').unwrap() + 1;
    let spaced = String::from_utf8(record).unwrap().replacen(',', ", ", 1);
    let verdict = verify_record(spaced.as_bytes()).unwrap();
    assert!(matches!(verdict.canonical, Canonicity::Differs { offset, .. } if offset == at), "{verdict:?}");
    let float = br#"{"algorithm":"sha256","schema_version":3,"x":1.5}"#;
    assert_eq!(verify_record(float).unwrap_err().fault, ReadFault::Number("1.5".to_owned()));
}

/// A label value of bounded depth.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z\u{e9}\u{301}\"\\\\\n\u{1}\u{1f600}]{0,6}".prop_map(Value::Str),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[a-c]{1,2}", inner, 0..3).prop_map(Value::Object),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn cr1_random_graphs_read_back_byte_for_byte(
        labels in proptest::collection::vec(proptest::collection::btree_map("[a-z\u{e9}]{1,3}", value(), 0..3), 1..5),
        raw in proptest::collection::btree_set((0..5usize, 0..5usize, 0..4usize), 0..12),
    ) {
        const KINDS: [EdgeKind; 4] = [EdgeKind::Invoke, EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise];
        let nodes: Vec<Node> = labels
            .iter()
            .enumerate()
            .map(|(i, l)| Node::from_identity(Identity::Tool { server: "s".into(), name: format!("t{i}") }, l.clone()))
            .collect();
        let edges = raw
            .iter()
            .filter(|(a, b, _)| *a < nodes.len() && *b < nodes.len())
            .map(|&(a, b, k)| Edge::new(nodes[a].id(), nodes[b].id(), KINDS[k], Provenance::Declared, None).unwrap())
            .collect();
        let graph = Graph::new(nodes, edges).unwrap();
        let Ok(bytes) = graph.to_canonical_bytes(Algorithm::Sha256) else { return Ok(()) };
        let export = read_export(&bytes).unwrap();
        prop_assert_eq!(export.graph.to_canonical_bytes(Algorithm::Sha256).unwrap(), bytes);
    }
}
