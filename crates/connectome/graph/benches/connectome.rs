//! The connectome on a 501-node, 10,000-edge fixture: canonical encoding (against plain `serde_json`
//! writing the same document), `Diff::run` (against encoding both graphs, which the diff must do to check
//! them), and each reach query (against building the query's private petgraph graph alone).
#![allow(missing_docs)] // criterion's macros generate undocumented public functions

use std::collections::BTreeSet;

use connectome_graph::reach::{self, DominanceOptions, PathOptions};
use connectome_graph::{
    Algorithm, Diff, Edge, EdgeKind, Graph, Identity, Labels, Node, Provenance, Sign, Value,
};
use criterion::{BenchmarkId, Criterion, Throughput, black_box, criterion_group, criterion_main};

const TOOLS: usize = 500;
const EDGES: usize = 10_000;
const KINDS: [EdgeKind; 4] = [EdgeKind::Invoke, EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise];

/// A deterministic generator (no extra dependency).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

fn tool_id(i: usize) -> String {
    Identity::Tool { server: "srv".into(), name: format!("tool_{i:03}") }.id()
}

fn nodes() -> Vec<Node> {
    let mut nodes = vec![Node::from_identity(Identity::Server { server: "srv".into() }, Labels::new())];
    nodes.extend((0..TOOLS).map(|i| {
        let labels = Labels::from([
            ("mode".to_owned(), Value::from(if i % 3 == 0 { "read_only" } else { "write" })),
            ("n".to_owned(), Value::from(i)),
            ("title".to_owned(), Value::from(format!("Tool n\u{b0} {i} \u{2014} caf\u{e9}"))),
        ]);
        Node::from_identity(Identity::Tool { server: "srv".into(), name: format!("tool_{i:03}") }, labels)
    }));
    nodes
}

/// `count` distinct (from, to, kind) triples over the tools, plus the server's edge to ten entry tools.
fn triples(seed: u64, count: usize) -> Vec<(String, String, EdgeKind)> {
    let mut rng = Lcg(seed);
    let mut seen = BTreeSet::new();
    let mut out: Vec<(String, String, EdgeKind)> =
        (0..10).map(|i| ("srv/server".to_owned(), tool_id(i * 7), EdgeKind::Invoke)).collect();
    while out.len() < count {
        let (from, to, kind) = (rng.below(TOOLS), rng.below(TOOLS), rng.below(4));
        if seen.insert((from, to, kind)) {
            out.push((tool_id(from), tool_id(to), KINDS[kind]));
        }
    }
    out
}

fn graph(triples: &[(String, String, EdgeKind)], provenance: Provenance) -> Graph {
    let edges = triples
        .iter()
        .map(|(from, to, kind)| Edge::new(from.clone(), to.clone(), *kind, provenance, None).expect("edge"))
        .collect();
    Graph::new(nodes(), edges).expect("fixture graph")
}

/// Every tenth edge carries a supplied sign, as a consumer would assign it.
fn declared() -> Graph {
    let (nodes, mut edges) = graph(&triples(7, EDGES), Provenance::Declared).into_parts();
    for edge in edges.iter_mut().step_by(10) {
        edge.sign = Sign::Allow;
    }
    Graph::new(nodes, edges).expect("declared fixture")
}

/// Shares about four in five labels with [`declared`]; every fifth edge carries a supplied sign.
fn observed() -> Graph {
    let mut shared = triples(7, EDGES);
    shared.truncate(EDGES * 4 / 5);
    let mut extra = triples(11, EDGES);
    extra.retain(|t| !shared.contains(t));
    shared.extend(extra.into_iter().take(EDGES / 5));
    let (nodes, mut edges) = graph(&shared, Provenance::Observed).into_parts();
    for (i, edge) in edges.iter_mut().enumerate().filter(|(i, _)| i % 5 == 0) {
        edge.sign = if i % 10 == 0 { Sign::Deny } else { Sign::Ungoverned };
    }
    Graph::new(nodes, edges).expect("observed fixture")
}

/// The same document as the canonical bytes, built as a `serde_json` tree (keys inserted in the
/// canonical order, so `preserve_order` writes them alike) and written by `serde_json` alone.
fn as_json(graph: &Graph) -> serde_json::Value {
    use serde_json::{Map, Value as J, json};
    fn value(v: &Value) -> J {
        match v {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(n) => n.as_str().parse::<i64>().map(J::from).unwrap_or(J::Null),
            Value::Str(s) => J::String(s.clone()),
            Value::Array(items) => J::Array(items.iter().map(value).collect()),
            Value::Object(map) => {
                J::Object(map.iter().map(|(k, v)| (k.clone(), value(v))).collect::<Map<_, _>>())
            }
        }
    }
    let nodes: Vec<J> = graph
        .nodes()
        .iter()
        .map(|n| json!({"id": n.id(), "kind": n.kind().as_str(), "labels": value(&Value::Object(n.labels().clone())), "level": n.level().as_str()}))
        .collect();
    let edges: Vec<J> = graph
        .edges()
        .iter()
        .map(|e| json!({"from": e.from, "kind": e.kind.as_str(), "provenance": e.provenance.as_str(), "sign": e.sign.as_str(), "to": e.to}))
        .collect();
    json!({"schema_version": 3, "algorithm": "sha256", "nodes": nodes, "edges": edges})
}

fn bench_canonical(c: &mut Criterion) {
    let graph = declared();
    let bytes = graph.to_canonical_bytes(Algorithm::Sha256).expect("canonical");
    let json = as_json(&graph);
    assert_eq!(
        serde_json::to_vec(&json).expect("json").len(),
        bytes.len(),
        "the baseline writes the same bytes"
    );
    let canonical = graph.to_canonical();
    let mut group = c.benchmark_group("canonical");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("encode_501_nodes_10000_edges", |b| {
        b.iter(|| connectome_canonical::encode(black_box(&canonical), Algorithm::Sha256).expect("encode"))
    });
    group.bench_function("hash_sha256", |b| {
        b.iter(|| connectome_canonical::hash(black_box(&canonical), Algorithm::Sha256).expect("hash"))
    });
    group.bench_function("baseline_serde_json_to_vec", |b| {
        b.iter(|| serde_json::to_vec(black_box(&json)).expect("json"))
    });
    group.finish();
}

fn bench_diff(c: &mut Criterion) {
    let (declared, observed) = (declared(), observed());
    let window =
        serde_json::json!({"started_at": "2026-09-14T00:00:00Z", "ended_at": "2026-09-14T01:00:00Z"});
    let diff = Diff::run(&declared, &observed, &window).expect("diff");
    assert!(diff.coverage().declared_and_observed > 0 && !diff.classes().changed_sign.is_empty());
    let mut group = c.benchmark_group("diff");
    group.bench_function("run_501_nodes_10000_edges", |b| {
        b.iter(|| Diff::run(black_box(&declared), black_box(&observed), &window).expect("diff"))
    });
    group.bench_function("run_and_encode", |b| {
        b.iter(|| {
            Diff::run(black_box(&declared), black_box(&observed), &window)
                .expect("diff")
                .encode(Algorithm::Sha256)
        })
    });
    group.bench_function("baseline_encode_both_graphs", |b| {
        b.iter(|| {
            let d = black_box(&declared).to_canonical_bytes(Algorithm::Sha256).expect("d");
            let o = black_box(&observed).to_canonical_bytes(Algorithm::Sha256).expect("o");
            (d, o)
        })
    });
    group.finish();
}

/// The fixture as a petgraph graph built once, outside the timing: the floor of a query that could
/// reuse a cached graph (each reach query builds its own, by design).
fn petgraph_of(graph: &Graph) -> (petgraph::Graph<(), ()>, Vec<petgraph::graph::NodeIndex>) {
    let mut g = petgraph::Graph::with_capacity(graph.nodes().len() + 1, graph.edges().len());
    let index: Vec<_> = graph.nodes().iter().map(|_| g.add_node(())).collect();
    let position = |id: &str| graph.nodes().binary_search_by(|n| n.id().cmp(id)).expect("known id");
    for e in graph.edges() {
        g.add_edge(index[position(&e.from)], index[position(&e.to)], ());
    }
    (g, index)
}

fn bench_reach(c: &mut Criterion) {
    let graph = declared();
    let (server, far, gate) = ("srv/server".to_owned(), tool_id(499), tool_id(7));
    let path = PathOptions::default();
    let dominance = DominanceOptions::default();
    assert!(reach::reachable(&graph, &server, &far, &path).expect("reachable"));
    let mut group = c.benchmark_group("reach");
    group.bench_function(BenchmarkId::new("reachable", "501x10000"), |b| {
        b.iter(|| reach::reachable(black_box(&graph), &server, &far, &path).expect("query"))
    });
    group.bench_function(BenchmarkId::new("reachable_without", "501x10000"), |b| {
        b.iter(|| {
            reach::reachable_without(black_box(&graph), &server, &far, &[gate.as_str()], &path)
                .expect("query")
        })
    });
    group.bench_function(BenchmarkId::new("dominates", "501x10000"), |b| {
        b.iter(|| reach::dominates(black_box(&graph), &gate, &far, &dominance).expect("query"))
    });
    group.bench_function(BenchmarkId::new("mandatory_pass", "501x10000"), |b| {
        b.iter(|| reach::mandatory_pass(black_box(&graph), &far, &dominance).expect("query"))
    });
    let (prebuilt, index) = petgraph_of(&graph);
    let position = |id: &str| index[graph.nodes().binary_search_by(|n| n.id().cmp(id)).expect("known id")];
    let (server_at, far_at) = (position(&server), position(&far));
    group.bench_function(BenchmarkId::new("baseline_prebuilt_has_path_connecting", "501x10000"), |b| {
        b.iter(|| petgraph::algo::has_path_connecting(black_box(&prebuilt), server_at, far_at, None))
    });
    group.bench_function(BenchmarkId::new("baseline_prebuilt_dominators", "501x10000"), |b| {
        b.iter(|| petgraph::algo::dominators::simple_fast(black_box(&prebuilt), server_at))
    });
    group.finish();
}

/// A chain srv → c0 → … → c(n−1) with `n` sinks, each entered from both ends of the chain: the shape on
/// which a whole-tree dominator algorithm climbs the chain once per sink.
fn chain_of_joins(n: usize) -> Graph {
    let id = |prefix: &str, i: usize| {
        Identity::Tool { server: "srv".into(), name: format!("{prefix}{i:05}") }.id()
    };
    let mut nodes = vec![Node::from_identity(Identity::Server { server: "srv".into() }, Labels::new())];
    let mut edges = vec![
        Edge::new("srv/server", id("c", 0), EdgeKind::Invoke, Provenance::Declared, None).expect("edge"),
    ];
    for i in 0..n {
        for prefix in ["c", "s"] {
            nodes.push(Node::from_identity(
                Identity::Tool { server: "srv".into(), name: format!("{prefix}{i:05}") },
                Labels::new(),
            ));
        }
        if i + 1 < n {
            edges.push(
                Edge::new(id("c", i), id("c", i + 1), EdgeKind::Invoke, Provenance::Declared, None)
                    .expect("edge"),
            );
        }
        for end in [0, n - 1] {
            edges.push(
                Edge::new(id("c", end), id("s", i), EdgeKind::Invoke, Provenance::Declared, None)
                    .expect("edge"),
            );
        }
    }
    Graph::new(nodes, edges).expect("chain fixture")
}

fn bench_reach_worst_case(c: &mut Criterion) {
    let n = 5_000;
    let graph = chain_of_joins(n);
    let sink = Identity::Tool { server: "srv".into(), name: "s00000".into() }.id();
    let dominance = DominanceOptions::default();
    let mut group = c.benchmark_group("reach_chain_of_joins");
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("mandatory_pass", "10001x15000"), |b| {
        b.iter(|| reach::mandatory_pass(black_box(&graph), &sink, &dominance).expect("query"))
    });
    let (prebuilt, index) = petgraph_of(&graph);
    let root = index[graph.nodes().binary_search_by(|node| node.id().cmp("srv/server")).expect("server")];
    group.bench_function(BenchmarkId::new("baseline_prebuilt_simple_fast", "10001x15000"), |b| {
        b.iter(|| petgraph::algo::dominators::simple_fast(black_box(&prebuilt), root))
    });
    group.finish();
}

criterion_group!(benches, bench_canonical, bench_diff, bench_reach, bench_reach_worst_case);
criterion_main!(benches);
