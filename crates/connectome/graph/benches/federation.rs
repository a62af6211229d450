//! Federation and effective connectivity at scale (docs/connectome.md §M, §W): lifting one 10,000-edge
//! observed export from its bytes, merging 16 such exports, and building the effective export of a
//! 10,000-edge declared graph against the merged observed side. Numbers are reported, never asserted.
#![allow(missing_docs)] // criterion's macros generate undocumented public functions

use std::collections::BTreeSet;

use connectome_graph::effective::Effective;
use connectome_graph::federation::{Federation, merge};
use connectome_graph::{
    Algorithm, Edge, EdgeKey, EdgeKind, Graph, Identity, Labels, Node, Provenance, Timing, Timings, Weight,
};
use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};

const TOOLS: usize = 2_000;
const EDGES: usize = 10_000;
const INSTANCES: usize = 16;
const KINDS: [EdgeKind; 4] = [EdgeKind::Invoke, EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise];

/// A deterministic generator (no extra dependency).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

fn tool(i: usize) -> Identity {
    Identity::Tool { server: "srv".into(), name: format!("tool_{i:04}") }
}

fn nodes() -> Vec<Node> {
    let mut nodes = vec![Node::from_identity(Identity::Server { server: "srv".into() }, Labels::new())];
    nodes.extend((0..TOOLS).map(|i| Node::from_identity(tool(i), Labels::new())));
    nodes
}

/// `EDGES` distinct (from, to, kind) triples drawn from a pool of twice as many: instances overlap.
fn triples(seed: u64) -> Vec<(String, String, EdgeKind)> {
    let mut rng = Lcg(seed);
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(EDGES);
    while out.len() < EDGES {
        let pick = rng.below(2 * EDGES);
        if seen.insert(pick) {
            let mut pool = Lcg(pick as u64);
            let (from, to, kind) = (pool.below(TOOLS), pool.below(TOOLS), pool.below(4));
            out.push((tool(from).id(), tool(to).id(), KINDS[kind]));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// One instance's observed export bytes: graph, sidecar, timing sidecar.
fn instance(seed: u64) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut rng = Lcg(seed ^ 0x9e37);
    let triples = triples(seed);
    let mut edges = Vec::with_capacity(triples.len());
    let mut times = Vec::with_capacity(triples.len());
    for (from, to, kind) in triples {
        let count = 1 + rng.below(1_000) as u64;
        let edge = Edge::new(from, to, kind, Provenance::Observed, Some(Weight::Int(count))).unwrap();
        let key: EdgeKey = edge.key();
        times.push((key, Timing { sum_ns: count * (1 + rng.below(50_000) as u64), max_ns: 50_000 }));
        edges.push(edge);
    }
    let graph = Graph::new(nodes(), edges).unwrap();
    let timings = Timings::new(times).unwrap();
    (
        graph.to_canonical_bytes(Algorithm::Sha256).unwrap(),
        graph.to_sidecar_bytes().unwrap(),
        timings.to_bytes().unwrap(),
    )
}

fn lift(i: usize, docs: &(Vec<u8>, Vec<u8>, Vec<u8>)) -> Federation {
    Federation::instance(&format!("instance-{i:02}"), "srv", &docs.0, &docs.1, Some(&docs.2)).unwrap()
}

fn declared() -> Graph {
    let edges = triples(7)
        .into_iter()
        .map(|(from, to, kind)| Edge::new(from, to, kind, Provenance::Declared, None).unwrap())
        .collect();
    Graph::new(nodes(), edges).unwrap()
}

fn bench_federation(c: &mut Criterion) {
    let docs: Vec<_> = (0..INSTANCES).map(|i| instance(i as u64 + 1)).collect();
    let parts: Vec<Federation> = docs.iter().enumerate().map(|(i, d)| lift(i, d)).collect();
    let merged = merge(&parts).unwrap();
    eprintln!(
        "federation: {INSTANCES} instances x {EDGES} edges -> {} merged edges; record {} bytes",
        merged.graph().edges().len(),
        merged.record_bytes().len()
    );
    let mut group = c.benchmark_group("federation");
    group.sample_size(10);
    group.throughput(Throughput::Elements((INSTANCES * EDGES) as u64));
    group.bench_function("merge_16_exports_of_10000_edges", |b| b.iter(|| merge(black_box(&parts)).unwrap()));
    group.throughput(Throughput::Elements(EDGES as u64));
    group
        .bench_function("lift_one_10000_edge_export_from_bytes", |b| b.iter(|| lift(0, black_box(&docs[0]))));
    group.bench_function("read_back_the_merged_federation", |b| {
        b.iter(|| {
            Federation::read(
                merged.export_bytes(),
                merged.sidecar_bytes(),
                merged.record_bytes(),
                merged.timing_bytes(),
            )
            .unwrap()
        })
    });
    group.finish();

    let declared = declared();
    let window = serde_json::json!({"started_at": "2026-09-14T00:00:00Z"});
    let mut group = c.benchmark_group("effective");
    group.sample_size(10);
    group.throughput(Throughput::Elements(EDGES as u64));
    group.bench_function("build_10000_declared_edges_against_the_merged_side", |b| {
        b.iter(|| {
            Effective::build(&declared, merged.graph(), merged.timings(), &window, Algorithm::Sha256).unwrap()
        })
    });
    let single = parts[0].graph();
    group.bench_function("build_10000_declared_edges_against_one_instance", |b| {
        b.iter(|| {
            Effective::build(&declared, single, parts[0].timings(), &window, Algorithm::Sha256).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_federation);
criterion_main!(benches);
