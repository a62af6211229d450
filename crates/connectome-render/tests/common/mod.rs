//! Fixtures shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

use connectome_render::{DiffRecord, Graph, Inputs, Role, Sidecar};
use serde_json::{Value, json};

/// The C-16 golden graph (955 bytes).
pub const GOLDEN: &[u8] = include_bytes!("../data/golden.json");
/// The C-16 sidecar.
pub const GOLDEN_SIDECAR: &[u8] = include_bytes!("../data/golden.sidecar.json");
/// The F-7 diff record (800 bytes).
pub const F7_DIFF: &[u8] = include_bytes!("../data/f7.diff.json");

/// The golden graph as the declared export, weighed by its sidecar.
pub fn golden_inputs() -> Inputs {
    let g = Graph::from_json(Role::Declared, GOLDEN).unwrap();
    Inputs::new(g, None, Some(Sidecar::from_json(GOLDEN_SIDECAR).unwrap()), None).unwrap()
}

/// A node object.
pub fn node(id: &str, kind: &str) -> Value {
    json!({"id": id, "kind": kind, "labels": {}, "level": if kind == "module" { "module" } else { "server" }})
}

/// An edge object.
pub fn edge(from: &str, to: &str, kind: &str, provenance: &str) -> Value {
    json!({"from": from, "kind": kind, "provenance": provenance, "sign": "unset", "to": to})
}

/// A graph export's bytes.
pub fn graph_bytes(nodes: Vec<Value>, edges: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({"schema_version": 3, "algorithm": "sha256", "nodes": nodes, "edges": edges}))
        .unwrap()
}

/// A declared/observed pair with a one-side node on each side, and the diff between them:
/// declared s→a, s→b; observed s→a, s→probe.
pub fn sided_inputs() -> Inputs {
    let declared = graph_bytes(
        vec![node("s/server", "server"), node("s/tool/a", "tool"), node("s/tool/b", "tool")],
        vec![
            edge("s/server", "s/tool/a", "invoke", "declared"),
            edge("s/server", "s/tool/b", "invoke", "declared"),
        ],
    );
    let observed = graph_bytes(
        vec![node("s/server", "server"), node("s/tool/a", "tool"), node("s/tool/probe", "tool")],
        vec![
            edge("s/server", "s/tool/a", "invoke", "observed"),
            edge("s/server", "s/tool/probe", "invoke", "observed"),
        ],
    );
    let label = |to: &str| json!({"from": "s/server", "kind": "invoke", "to": to});
    let diff = json!({
        "algorithm": "sha256",
        "classes": {
            "changed_sign": [],
            "declared_and_observed": [label("s/tool/a")],
            "declared_never_observed": [label("s/tool/b")],
            "observed_but_undeclared": [label("s/tool/probe")]
        },
        "coverage": {
            "declared_and_observed": 1, "declared_edges": 2, "declared_endpoint_covered": 1,
            "declared_nodes": 3, "declared_sign_only": 0, "nodes_in_both": 2, "observed_edges": 2,
            "observed_endpoint_declared": 1, "observed_nodes": 3, "observed_sign_only": 0
        },
        "schema_version": 3,
        "window": {"ended_at": "2026-09-14T01:00:00Z", "started_at": "2026-09-14T00:00:00Z"}
    });
    Inputs::new(
        Graph::from_json(Role::Declared, &declared).unwrap(),
        Some(Graph::from_json(Role::Observed, &observed).unwrap()),
        None,
        Some(DiffRecord::from_json(&serde_json::to_vec(&diff).unwrap()).unwrap()),
    )
    .unwrap()
}
