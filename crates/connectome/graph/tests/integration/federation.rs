//! Federation (docs/connectome.md CM-1…CM-5): lifting an instance, what merge computes, the merged
//! format and its worked example, and every refusal by name.

use crate::observed_support::*;
use connectome_graph::federation::{Federation, FederationError, merge};
use connectome_graph::read::{Canonicity, ReadFault, verify_record};
use connectome_graph::{
    Algorithm, Edge, EdgeKind, Graph, Identity, Labels, MeasureError, Node, Provenance, Sign, Timing, Value,
    Weight,
};

/// Instance `name` of `srv` with `calls`, timed.
fn timed(name: &str, calls: &[Call<'_>]) -> Federation {
    Federation::from_graph(name, SYSTEM, &observed(calls), Algorithm::Sha256, Some(&timings(calls))).unwrap()
}

/// Instance `name` of `srv` with `calls`, untimed.
fn untimed(name: &str, calls: &[Call<'_>]) -> Federation {
    Federation::from_graph(name, SYSTEM, &observed(calls), Algorithm::Sha256, None).unwrap()
}

/// The CM-5 worked example: two instances of `srv`.
fn worked() -> Federation {
    let eu = timed("eu-1", &[("server", "a", 3, 1000, 600)]);
    let us = timed("us-1", &[("server", "a", 4, 2000, 900), ("server", "b", 1, 300, 300)]);
    merge(&[eu, us]).unwrap()
}

/// The CM-5 worked example's federation record.
const CM5_RECORD: &str = r#"{"algorithm":"sha256","edges":[{"from":"srv/server","instances":["eu-1","us-1"],"kind":"invoke","to":"srv/tool/a"},{"from":"srv/server","instances":["us-1"],"kind":"invoke","to":"srv/tool/b"}],"graph":"GRAPH","instances":["eu-1","us-1"],"schema_version":3,"system":"srv"}"#;

#[test]
fn cm1_an_instance_is_lifted_from_its_export_and_sidecar() {
    let calls = [("server", "a", 3, 1000, 600), ("server", "b", 1, 5, 5)];
    let graph = observed(&calls);
    let export = graph.to_canonical_bytes(Algorithm::Sha384).unwrap();
    let sidecar = graph.to_sidecar_bytes().unwrap();
    let one = Federation::instance("eu-1", SYSTEM, &export, &sidecar, None).unwrap();
    assert_eq!(
        (one.system(), one.algorithm(), one.instances()),
        (SYSTEM, Algorithm::Sha384, &["eu-1".to_owned()][..])
    );
    assert_eq!(one.graph(), &graph);
    assert_eq!(
        (one.export_bytes(), one.sidecar_bytes()),
        (&export[..], &sidecar[..]),
        "its documents are its inputs"
    );
    assert_eq!(
        (one.observed_by(0), one.observed_by(1), one.observed_by(2)),
        (vec!["eu-1"], vec!["eu-1"], vec![])
    );
    assert_eq!((one.timings(), one.timing_bytes()), (None, None));
    let decomposed = Federation::from_graph("cafe\u{301}", SYSTEM, &graph, Algorithm::Sha256, None).unwrap();
    assert_eq!(decomposed.instances(), ["caf\u{e9}"], "names are compared after NFC");
}

#[test]
fn cm1_lifting_refusals_in_order() {
    let graph = observed(&[("server", "a", 3, 0, 0)]);
    let (export, sidecar) =
        (graph.to_canonical_bytes(Algorithm::Sha256).unwrap(), graph.to_sidecar_bytes().unwrap());
    let lift = |name: &str, system: &str, export: &[u8], sidecar: &[u8], timing: Option<&[u8]>| {
        Federation::instance(name, system, export, sidecar, timing).unwrap_err()
    };
    assert_eq!(lift("", "", b"", b"", None), FederationError::EmptyName { what: "instance" });
    assert_eq!(lift("a", "", b"", b"", None), FederationError::EmptyName { what: "system" });
    assert!(
        matches!(lift("a", SYSTEM, &export[..10], &sidecar, None), FederationError::Read(e) if matches!(e.fault, ReadFault::Json { .. }))
    );
    let declared = declared(&[("server", "a")], &[]);
    let declared_export = declared.to_canonical_bytes(Algorithm::Sha256).unwrap();
    let empty_sidecar = declared.to_sidecar_bytes().unwrap();
    assert!(matches!(
        lift("a", SYSTEM, &declared_export, &empty_sidecar, None),
        FederationError::NotObserved(_)
    ));
    let unweighed = br#"{"schema_version":3,"weights":[]}"#;
    assert!(matches!(
        lift("a", SYSTEM, &export, unweighed, None),
        FederationError::Measure(MeasureError::Unweighted(_))
    ));
    let (nodes, mut edges) = graph.clone().into_parts();
    edges[0].weight = Some(Weight::Float(3.0));
    let floated = Graph::new(nodes, edges).unwrap().to_sidecar_bytes().unwrap();
    assert!(matches!(
        lift("a", SYSTEM, &export, &floated, None),
        FederationError::Measure(MeasureError::NotACount(_))
    ));
    let other = timings(&[("server", "b", 1, 1, 1)]).to_bytes().unwrap();
    let refused = lift("a", SYSTEM, &export, &sidecar, Some(&other));
    assert!(
        matches!(&refused, FederationError::Measure(MeasureError::TimingEdge(key)) if key.to == id("a")),
        "{refused}"
    );
    assert_eq!(
        lift("a", "other", &export, &sidecar, None),
        FederationError::NotOfSystem { system: "other".to_owned(), server: id("server") }
    );
}

#[test]
fn cm2_timing_sidecar_golden_bytes() {
    let bytes = timings(&[("server", "b", 1, 800, 800), ("server", "a", 3, 4500, 2000)]).to_bytes().unwrap();
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        r#"{"schema_version":3,"timings":[{"from":"srv/server","kind":"invoke","max_ns":2000,"provenance":"observed","sum_ns":4500,"to":"srv/tool/a"},{"from":"srv/server","kind":"invoke","max_ns":800,"provenance":"observed","sum_ns":800,"to":"srv/tool/b"}]}"#
    );
}

#[test]
fn cm3_merge_refuses_no_inputs() {
    assert_eq!(merge(&[]), Err(FederationError::NoInputs));
}

#[test]
fn cm3_merge_refuses_another_system_naming_it() {
    let other = Graph::new(
        vec![Node::from_identity(Identity::Server { server: "db".into() }, Labels::new())],
        vec![],
    )
    .unwrap();
    let db = Federation::from_graph("db-1", "db", &other, Algorithm::Sha256, None).unwrap();
    let refused = merge(&[untimed("a", &[]), db]).unwrap_err();
    assert_eq!(
        refused,
        FederationError::DifferentSystem { index: 1, expected: "srv".to_owned(), found: "db".to_owned() }
    );
    assert_eq!(refused.to_string(), "part 1 is of system \"db\", part 0 of system \"srv\"");
}

#[test]
fn cm3_merge_refuses_another_algorithm_naming_both() {
    let sha512 = Federation::from_graph("b", SYSTEM, &observed(&[]), Algorithm::Sha512, None).unwrap();
    let refused = merge(&[untimed("a", &[]), sha512]).unwrap_err();
    assert_eq!(refused.to_string(), "part 1 names the algorithm sha512, part 0 names sha256");
}

#[test]
fn cm3_merge_refuses_an_instance_in_two_parts() {
    let calls = [("server", "a", 1, 0, 0)];
    let refused =
        merge(&[untimed("eu-1", &calls), untimed("us-1", &[]), untimed("eu-1", &calls)]).unwrap_err();
    assert_eq!(refused, FederationError::DuplicateInstance("eu-1".to_owned()));
    let both = merge(&[untimed("eu-1", &calls), untimed("us-1", &[])]).unwrap();
    assert!(
        matches!(merge(&[both, untimed("us-1", &[])]), Err(FederationError::DuplicateInstance(n)) if n == "us-1")
    );
}

#[test]
fn cm3_merge_refuses_timed_with_untimed_parts() {
    let refused = merge(&[timed("a", &[]), untimed("b", &[])]).unwrap_err();
    assert_eq!(refused, FederationError::TimingMismatch { index: 1 });
    let empty = Federation::empty(SYSTEM, Algorithm::Sha256).unwrap();
    assert!(merge(&[empty.clone(), timed("a", &[])]).is_ok(), "a part without instances is neither");
    assert!(merge(&[untimed("b", &[]), empty]).is_ok());
}

#[test]
fn cm3_merge_refuses_a_node_described_differently() {
    let labelled =
        Node::from_identity(identity("a"), Labels::from([("mode".to_owned(), Value::from("write"))]));
    let server = Node::from_identity(identity("server"), Labels::new());
    let edge = Edge::new(id("server"), id("a"), EdgeKind::Invoke, Provenance::Observed, Some(Weight::Int(1)))
        .unwrap();
    let graph = Graph::new(vec![server, labelled], vec![edge]).unwrap();
    let b = Federation::from_graph("b", SYSTEM, &graph, Algorithm::Sha256, None).unwrap();
    let refused = merge(&[untimed("a", &[("server", "a", 2, 0, 0)]), b]).unwrap_err();
    assert_eq!(refused, FederationError::ConflictingNode(id("a")));
}

#[test]
fn cm3_merge_refuses_an_edge_signed_differently() {
    let (nodes, mut edges) = observed(&[("server", "a", 1, 0, 0)]).into_parts();
    edges[0].sign = Sign::Hold;
    let held =
        Federation::from_graph("b", SYSTEM, &Graph::new(nodes, edges).unwrap(), Algorithm::Sha256, None)
            .unwrap();
    let refused = merge(&[untimed("a", &[("server", "a", 2, 0, 0)]), held.clone()]).unwrap_err();
    assert!(matches!(&refused, FederationError::ConflictingSign(key) if key.to == id("a")), "{refused}");
    let merged = merge(&[held.clone(), merge(&[held]).unwrap()]);
    assert!(
        matches!(merged, Err(FederationError::DuplicateInstance(_))),
        "one sign twice is no conflict, one name twice is"
    );
}

#[test]
fn cm3_refusals_display_as_one_line_naming_what_they_refuse() {
    let long = format!("x\n{}", "y".repeat(300));
    for refused in [
        FederationError::DuplicateInstance(long.clone()),
        FederationError::ConflictingNode(long.clone()),
        FederationError::DifferentSystem { index: 2, expected: long.clone(), found: "srv".to_owned() },
        FederationError::NotOfSystem { system: long.clone(), server: long },
    ] {
        let message = refused.to_string();
        assert!(!message.contains('\n') && message.len() < 200, "{message}");
    }
}

#[test]
fn cm4_counts_sum_times_sum_and_maxima_are_kept() {
    let merged = worked();
    let edges = merged.graph().edges();
    assert_eq!(
        edges.iter().map(|e| e.weight).collect::<Vec<_>>(),
        [Some(Weight::Int(7)), Some(Weight::Int(1))]
    );
    let times: Vec<Timing> = merged.timings().unwrap().entries().iter().map(|(_, t)| *t).collect();
    assert_eq!(times, [Timing { sum_ns: 3000, max_ns: 900 }, Timing { sum_ns: 300, max_ns: 300 }]);
    assert_eq!((merged.observed_by(0), merged.observed_by(1)), (vec!["eu-1", "us-1"], vec!["us-1"]));
    let full = merge(&[
        untimed("a", &[("server", "a", u64::MAX - 1, 0, 0)]),
        untimed("b", &[("server", "a", 5, 0, 0)]),
    ])
    .unwrap();
    assert_eq!(
        full.graph().edges()[0].weight,
        Some(Weight::Int(u64::MAX)),
        "sums saturate like the collector's"
    );
}

#[test]
fn cm5_worked_example_record_byte_for_byte() {
    let merged = worked();
    let graph_hex = merged.graph().hash_hex(Algorithm::Sha256).unwrap();
    assert_eq!(graph_hex, "f05664a44f19c6ca8b5073b41907037fa7340815f8953641b061591d38165ec5");
    let record = String::from_utf8(merged.record_bytes().to_vec()).unwrap();
    assert_eq!(record, CM5_RECORD.replace("GRAPH", &graph_hex));
    assert_eq!(record.len(), 330);
    assert_eq!(merged.record_hash_hex(), "865c941f4a42af27f30e706769865604c120b26871ed30d4ae50d4aa094ec05b");
    assert!(rule_book().contains(&record), "the rule book shows the library's bytes");
    assert_eq!(verify_record(merged.record_bytes()).unwrap().canonical, Canonicity::Canonical);
    assert_eq!(
        String::from_utf8(merged.sidecar_bytes().to_vec()).unwrap(),
        r#"{"schema_version":3,"weights":[{"from":"srv/server","kind":"invoke","provenance":"observed","to":"srv/tool/a","weight":7},{"from":"srv/server","kind":"invoke","provenance":"observed","to":"srv/tool/b","weight":1}]}"#
    );
}

#[test]
fn cm5_a_merged_result_reads_back_and_is_a_merge_input() {
    let merged = worked();
    let docs = (merged.export_bytes(), merged.sidecar_bytes(), merged.record_bytes(), merged.timing_bytes());
    let again = Federation::read(docs.0, docs.1, docs.2, docs.3).unwrap();
    assert_eq!(again, merged);
    let third = timed("ap-1", &[("server", "c", 2, 10, 6)]);
    let nested = merge(&[again, third.clone()]).unwrap();
    let flat = merge(&[
        timed("eu-1", &[("server", "a", 3, 1000, 600)]),
        timed("us-1", &[("server", "a", 4, 2000, 900), ("server", "b", 1, 300, 300)]),
        third,
    ])
    .unwrap();
    assert_eq!(nested, flat);
}

#[test]
fn cm5_reading_back_refuses_a_record_that_does_not_describe_its_graph() {
    let merged = worked();
    let (export, sidecar, timing) = (merged.export_bytes(), merged.sidecar_bytes(), merged.timing_bytes());
    let record = String::from_utf8(merged.record_bytes().to_vec()).unwrap();
    let read = |record: &str| Federation::read(export, sidecar, record.as_bytes(), timing).unwrap_err();
    let other_graph =
        record.replacen(&merged.graph().hash_hex(Algorithm::Sha256).unwrap(), &"0".repeat(64), 1);
    assert_eq!(read(&other_graph), FederationError::Record { what: "graph" });
    assert_eq!(read(&record.replacen("sha256", "sha384", 1)), FederationError::Record { what: "algorithm" });
    let lost =
        record.replacen(r#""instances":["eu-1","us-1"],"kind""#, r#""instances":["eu-1","ap-1"],"kind""#, 1);
    assert_eq!(read(&lost), FederationError::Record { what: "edges" });
    let unsorted =
        record.replacen(r#""instances":["eu-1","us-1"],"kind""#, r#""instances":["us-1","eu-1"],"kind""#, 1);
    assert!(
        matches!(read(&unsorted), FederationError::Read(e) if matches!(e.fault, ReadFault::NotCanonical { .. }))
    );
    assert!(matches!(
        read(&record.replacen("\"system\":\"srv\"", "\"system\":\"db\"", 1)),
        FederationError::NotOfSystem { .. }
    ));
    assert!(
        matches!(read(&record.replacen("}", ",\"extra\":1}", 1)), FederationError::Read(e) if matches!(e.fault, ReadFault::UnknownMember(_)))
    );
}

#[test]
fn cm6_merging_an_instance_that_saw_nothing_adds_only_its_name() {
    let merged = worked();
    let quiet = timed("zz-quiet", &[]);
    let with_quiet = merge(&[merged.clone(), quiet]).unwrap();
    assert_eq!(with_quiet.export_bytes(), merged.export_bytes());
    assert_eq!(with_quiet.sidecar_bytes(), merged.sidecar_bytes());
    assert_eq!(with_quiet.timing_bytes(), merged.timing_bytes());
    assert_eq!(with_quiet.instances(), ["eu-1", "us-1", "zz-quiet"]);
    assert_eq!(
        (with_quiet.observed_by(0), with_quiet.observed_by(1)),
        (merged.observed_by(0), merged.observed_by(1))
    );
}
