//! The collector's rules (CE-2…CE-5, CK-10): not started is an error, one call is one edge with the
//! identity ids, every attempt counts, N calls weigh N, concurrent calls sum, weights are never hashed.

use std::time::Duration;

use crate::support::*;
use connectome_graph::{Algorithm, EdgeKind, Identity, Level, NodeKind, Provenance, Sign, Weight};
use connectome_observe::{Collector, DispatchEvent, DispatchObserver, DispatchOutcome, ObserveError};
use proptest::prelude::*;
use serde_json::json;

fn server_id() -> Identity {
    Identity::Server { server: SERVER.to_owned() }
}

fn tool_id(name: &str) -> Identity {
    Identity::Tool { server: SERVER.to_owned(), name: name.to_owned() }
}

fn started() -> Collector {
    let collector = Collector::new();
    collector.start();
    collector
}

/// The weight of the edge server → `tool`, if there is one.
fn weight(collector: &Collector, tool: &str) -> Option<Weight> {
    let graph = collector.snapshot().expect("running");
    let (from, to) = (server_id().id(), tool_id(tool).id());
    graph.edges().iter().find(|e| e.from == from && e.to == to).and_then(|e| e.weight)
}

#[test]
fn not_started_is_an_error_never_an_empty_graph() {
    let collector = Collector::new();
    assert!(!collector.is_running());
    assert_eq!(collector.snapshot(), Err(ObserveError::NotStarted));
    assert_eq!(collector.rows(), Err(ObserveError::NotStarted));
    assert_eq!(collector.size(), Err(ObserveError::NotStarted));
    assert_eq!(collector.latency(), Err(ObserveError::NotStarted));
    assert_eq!(collector.sidecar_bytes(), Err(ObserveError::NotStarted));

    collector.start();
    let empty = collector.snapshot().expect("a running collector answers");
    assert!(empty.nodes().is_empty() && empty.edges().is_empty(), "watched, nothing ran");
    assert_eq!(collector.size(), Ok(0));
    assert_eq!(collector.rows(), Ok(vec![]));

    collector.stop();
    assert_eq!(collector.snapshot(), Err(ObserveError::NotStarted));
}

#[test]
fn a_collector_not_running_records_nothing_and_a_restart_begins_with_zero_rows() {
    let collector = Collector::new();
    let server = server(&collector, &DispatchLog::default());
    send(&server, call(1, "noop", json!({})));
    collector.start();
    assert_eq!(collector.size(), Ok(0), "a call before start is not counted");
    send(&server, call(2, "noop", json!({})));
    assert_eq!(collector.size(), Ok(1));
    collector.start();
    assert_eq!(collector.size(), Ok(1), "start on a running collector keeps its rows");
    collector.stop();
    send(&server, call(3, "noop", json!({})));
    collector.start();
    assert_eq!(collector.size(), Ok(0), "a restart begins with zero rows");
}

#[test]
fn one_call_gives_one_edge_whose_ids_are_the_identity_ids() {
    let collector = started();
    let server = server(&collector, &DispatchLog::default());
    send(&server, call(1, "noop", json!({})));
    let graph = collector.snapshot().unwrap();

    let ids: Vec<&str> = graph.nodes().iter().map(|n| n.id()).collect();
    assert_eq!(ids, [server_id().id(), tool_id("noop").id()]);
    assert_eq!(ids, ["obs/server", "obs/tool/noop"]);
    let kinds: Vec<NodeKind> = graph.nodes().iter().map(|n| n.kind()).collect();
    assert_eq!(kinds, [NodeKind::Server, NodeKind::Tool]);
    assert!(graph.nodes().iter().all(|n| n.level() == Level::Server && n.labels().is_empty()));

    let [edge] = graph.edges() else { panic!("one edge: {:?}", graph.edges()) };
    assert_eq!((edge.from.as_str(), edge.to.as_str()), ("obs/server", "obs/tool/noop"));
    assert_eq!(
        (edge.kind, edge.provenance, edge.sign),
        (EdgeKind::Invoke, Provenance::Observed, Sign::Unset)
    );
    assert_eq!(edge.weight, Some(Weight::Int(1)));
}

#[test]
fn a_failed_and_a_panicking_call_still_give_an_edge() {
    let collector = started();
    let server = server(&collector, &DispatchLog::default());
    let failed = send(&server, call(1, "fail", json!({"reason": "no"})));
    assert_eq!(failed["result"]["isError"], true);
    let panicked = send(&server, call(2, "boom", json!({"message": "bug"})));
    assert_eq!(panicked["error"]["code"], -32603);
    assert_eq!(weight(&collector, "fail"), Some(Weight::Int(1)));
    assert_eq!(weight(&collector, "boom"), Some(Weight::Int(1)));
}

#[test]
fn a_call_refused_by_the_schema_gives_no_edge() {
    let collector = started();
    let server = server(&collector, &DispatchLog::default());
    let refused = send(&server, call(1, "strict", json!({"n": "not a number"})));
    assert_eq!(refused["result"]["isError"], true);
    send(&server, call(2, "unknown", json!({})));
    assert_eq!(collector.size(), Ok(0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn n_calls_give_weight_n(n in 1u64..60) {
        let collector = started();
        let server = server(&collector, &DispatchLog::default());
        for id in 0..n {
            send(&server, call(i64::try_from(id).unwrap(), "noop", json!({})));
        }
        prop_assert_eq!(weight(&collector, "noop"), Some(Weight::Int(n)));
        let sidecar = String::from_utf8(collector.sidecar_bytes().unwrap()).unwrap();
        let needle = format!("\"weight\":{n}");
        prop_assert!(sidecar.contains(&needle), "{}", sidecar);
    }
}

#[test]
fn concurrent_calls_from_several_threads_sum_correctly() {
    const THREADS: u64 = 8;
    const CALLS: u64 = 2_000;
    let collector = started();
    let server = server(&collector, &DispatchLog::default());
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (server, collector) = (&server, &collector);
            scope.spawn(move || {
                for i in 0..CALLS {
                    // Half through the core, half straight into the observer, over two tools.
                    let tool = if (t + i) % 2 == 0 { "noop" } else { "echo" };
                    if i % 2 == 0 {
                        send(server, call(1, tool, json!({})));
                    } else {
                        let event = DispatchEvent {
                            server: SERVER,
                            tool,
                            elapsed: Duration::from_nanos(i),
                            outcome: DispatchOutcome::Ok,
                        };
                        collector.dispatched(&event);
                    }
                }
            });
        }
    });
    let total = THREADS * CALLS;
    assert_eq!(weight(&collector, "noop"), Some(Weight::Int(total / 2)));
    assert_eq!(weight(&collector, "echo"), Some(Weight::Int(total / 2)));
    let rows = collector.rows().unwrap();
    assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), total);
    assert!(rows.iter().all(|r| r.max_ns >= CALLS - 1), "fetch_max kept the largest: {rows:?}");
}

#[test]
fn observe_records_host_edges_at_their_levels() {
    let collector = started();
    let module = |path: &str| Identity::Module { server: SERVER.to_owned(), path: path.to_owned() };
    let resource = Identity::Resource { server: SERVER.to_owned(), uri: "r://a/b".to_owned() };
    collector.observe(module("host::api"), module("host::store"), EdgeKind::Invoke, Duration::ZERO);
    collector.observe(module("host::api"), module("host::store"), EdgeKind::Invoke, Duration::ZERO);
    collector.observe(server_id(), resource.clone(), EdgeKind::Read, Duration::from_micros(3));
    let graph = collector.snapshot().unwrap();
    let levels: Vec<(&str, Level)> = graph.nodes().iter().map(|n| (n.id(), n.level())).collect();
    assert_eq!(
        levels,
        [
            ("obs/module/host::api", Level::Module),
            ("obs/module/host::store", Level::Module),
            ("obs/resource/r:%2F%2Fa%2Fb", Level::Server),
            ("obs/server", Level::Server),
        ]
    );
    let weights: Vec<_> = graph.edges().iter().map(|e| (e.kind, e.weight)).collect();
    assert_eq!(weights, [(EdgeKind::Invoke, Some(Weight::Int(2))), (EdgeKind::Read, Some(Weight::Int(1)))]);
    let rows = collector.rows().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[1].from.clone(), rows[1].to.clone(), rows[1].sum_ns),
        (module("host::api"), module("host::store"), 0)
    );
    assert_eq!((rows[0].to.clone(), rows[0].kind, rows[0].sum_ns), (resource, EdgeKind::Read, 3_000));
}

#[test]
fn latency_summarises_count_mean_and_max_per_edge() {
    let collector = started();
    for us in [10, 20, 60] {
        let event = DispatchEvent {
            server: SERVER,
            tool: "t",
            elapsed: Duration::from_micros(us),
            outcome: DispatchOutcome::Ok,
        };
        collector.dispatched(&event);
    }
    let latency = collector.latency().unwrap();
    let [(edge, summary)] = latency.iter().collect::<Vec<_>>()[..] else { panic!("{latency:?}") };
    assert_eq!(
        (edge.from.as_str(), edge.to.as_str(), edge.kind),
        ("obs/server", "obs/tool/t", EdgeKind::Invoke)
    );
    assert_eq!(edge.edge_key(), collector.snapshot().unwrap().edges()[0].key());
    assert_eq!(summary.count, 3);
    assert!((summary.mean_us - 30.0).abs() < 1e-9 && (summary.max_us - 60.0).abs() < 1e-9, "{summary:?}");
}

#[test]
fn weights_are_never_hashed_only_written_in_the_sidecar() {
    let collector = started();
    let server = server(&collector, &DispatchLog::default());
    send(&server, call(1, "noop", json!({})));
    let once = collector.snapshot().unwrap();
    send(&server, call(2, "noop", json!({})));
    let twice = collector.snapshot().unwrap();
    assert_eq!(once.to_canonical_bytes(Algorithm::Sha256), twice.to_canonical_bytes(Algorithm::Sha256));
    assert_ne!(once.to_sidecar_bytes().unwrap(), twice.to_sidecar_bytes().unwrap());
    let sidecar = String::from_utf8(collector.sidecar_bytes().unwrap()).unwrap();
    assert!(sidecar.contains("\"weight\":2") && sidecar.contains("\"provenance\":\"observed\""), "{sidecar}");
}

#[test]
fn clones_share_one_collector() {
    let collector = Collector::new();
    let clone = collector.clone();
    clone.start();
    assert!(collector.is_running());
    collector.observe(server_id(), tool_id("x"), EdgeKind::Invoke, Duration::ZERO);
    assert_eq!(clone.size(), Ok(1));
}

#[test]
fn durations_saturate_instead_of_wrapping() {
    let collector = started();
    for elapsed in [Duration::MAX, Duration::MAX, Duration::from_nanos(5)] {
        collector.observe(server_id(), tool_id("slow"), EdgeKind::Invoke, elapsed);
    }
    let rows = collector.rows().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].count, rows[0].sum_ns, rows[0].max_ns), (3, u64::MAX, u64::MAX));
}
