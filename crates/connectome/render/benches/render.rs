//! Rendering a generated host of 2,000 modules and 10,000 edges (connectome CJ-6): the layout alone,
//! the HTML page of the declared graph, and the page of all three views (declared, observed, and a
//! diff whose 10,000 entries are all `declared_and_observed`). Prints each page's size; the times are
//! criterion's. Nothing here asserts a time.
#![allow(missing_docs)] // criterion's macros generate undocumented public functions

#[path = "../tests/integration/common/mod.rs"]
mod common;

use std::hint::black_box;

use connectome_render::view::ViewName;
use connectome_render::{DiffRecord, Format, Graph, Inputs, Role, render, svg};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const MODULES: usize = 2000;
const EDGES: usize = 10_000;

/// Declared and observed exports of the same host and a diff record saying every edge is in both.
fn all_views() -> Inputs {
    let declared = Graph::from_json(Role::Declared, &common::host_graph(MODULES, EDGES, "declared")).unwrap();
    let observed = Graph::from_json(Role::Observed, &common::host_graph(MODULES, EDGES, "observed")).unwrap();
    let entries: Vec<Value> =
        declared.edges.iter().map(|e| json!({"from": e.from, "kind": e.kind.name(), "to": e.to})).collect();
    let (n, m) = (declared.nodes.len(), declared.edges.len());
    let diff = json!({
        "algorithm": "sha256",
        "classes": {"changed_sign": [], "declared_and_observed": entries, "declared_never_observed": [],
                    "observed_but_undeclared": []},
        "coverage": {
            "declared_and_observed": m, "declared_edges": m, "declared_endpoint_covered": m, "declared_nodes": n,
            "declared_sign_only": 0, "nodes_in_both": n, "observed_edges": m, "observed_endpoint_declared": m,
            "observed_nodes": n, "observed_sign_only": 0
        },
        "schema_version": 3,
        "window": {"ended_at": "2026-09-14T01:00:00Z", "started_at": "2026-09-14T00:00:00Z"}
    });
    let diff = DiffRecord::from_json(&serde_json::to_vec(&diff).unwrap()).unwrap();
    Inputs::new(declared, Some(observed), None, Some(diff)).unwrap()
}

fn bench(c: &mut Criterion) {
    let declared = common::host_inputs(MODULES, EDGES);
    let view = declared.view(ViewName::Declared).unwrap();
    let all = all_views();
    for (what, inputs) in [("declared page", &declared), ("three-view page", &all)] {
        let page = render(inputs, Format::Html, None).unwrap();
        eprintln!("{what}: {} bytes ({:.1} MiB)", page.len(), page.len() as f64 / (1024.0 * 1024.0));
    }
    let mut group = c.benchmark_group("render_10k_edges");
    group.sample_size(10);
    group.bench_function("layout", |b| b.iter(|| svg::layout(black_box(&view))));
    group.bench_function("html_declared", |b| b.iter(|| render(black_box(&declared), Format::Html, None)));
    group.bench_function("html_three_views", |b| b.iter(|| render(black_box(&all), Format::Html, None)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
