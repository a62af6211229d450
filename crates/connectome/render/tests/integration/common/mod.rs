//! Fixtures shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

use connectome_render::{DiffRecord, Graph, Inputs, Role, Sidecar};
use serde_json::{Value, json};

/// The CC-16 golden graph (955 bytes).
pub const GOLDEN: &[u8] = include_bytes!("../../data/golden.json");
/// The CC-16 sidecar.
pub const GOLDEN_SIDECAR: &[u8] = include_bytes!("../../data/golden.sidecar.json");
/// The CF-7 diff record (800 bytes).
pub const CF7_DIFF: &[u8] = include_bytes!("../../data/f7.diff.json");

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

/// The ids of a generated host: one server, its tools, resources and prompts, then `modules`
/// modules grouped in crates (every tenth one a function of the module before it).
pub fn host_ids(modules: usize) -> (Vec<(String, &'static str)>, usize, usize) {
    let tools = (modules / 50).clamp(2, 40);
    let mut ids = vec![("big/server".to_owned(), "server")];
    ids.extend((0..tools).map(|t| (format!("big/tool/tool_{t}"), "tool")));
    ids.extend((0..tools / 2).map(|r| (format!("big/resource/big:%2F%2Fres%2F{r}"), "resource")));
    ids.extend((0..3).map(|p| (format!("big/prompt/prompt_{p}"), "prompt")));
    let first = ids.len();
    for i in 0..modules {
        let path = format!("crate_{}::area_{}::m{i}", i / 100, (i / 10) % 10);
        if i % 10 == 9 {
            let parent = format!("crate_{}::area_{}::m{}", (i - 1) / 100, ((i - 1) / 10) % 10, i - 1);
            ids.push((format!("big/module/{parent}/run_{i}"), "module"));
        } else {
            ids.push((format!("big/module/{path}"), "module"));
        }
    }
    (ids, first, tools)
}

/// A generated host graph export of `modules` modules and exactly `edges` edges (at least a few
/// hundred): server → tools, tools → entry modules and resources, then module → module calls, mostly
/// towards later modules (a deep call graph) with one in twenty-five going back (cycles), one in ten a
/// message. Deterministic: a fixed linear congruential sequence.
pub fn host_graph(modules: usize, edges: usize, provenance: &str) -> Vec<u8> {
    let (ids, first, tools) = host_ids(modules);
    let mut out: Vec<(usize, usize, &'static str)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut add = |out: &mut Vec<(usize, usize, &'static str)>, a: usize, b: usize, kind: &'static str| {
        if out.len() < edges && a != b && seen.insert((a, b, kind)) {
            out.push((a, b, kind));
        }
    };
    for t in 0..tools {
        add(&mut out, 0, 1 + t, "invoke");
        add(&mut out, 1 + t, first + t * modules / tools, "invoke");
        add(&mut out, 1 + t, 1 + tools + t / 2, "read");
    }
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    while out.len() < edges {
        let i = next() % modules;
        let r = next();
        let j = if r % 25 == 0 { next() % modules } else { i + 1 + r % 400 };
        if j >= modules {
            continue;
        }
        let kind = if r % 10 == 3 { "message" } else { "invoke" };
        add(&mut out, first + i, first + j, kind);
    }
    let nodes: Vec<Value> = ids.iter().map(|(id, kind)| node(id, kind)).collect();
    let edges: Vec<Value> =
        out.iter().map(|&(a, b, kind)| edge(&ids[a].0, &ids[b].0, kind, provenance)).collect();
    graph_bytes(nodes, edges)
}

/// The declared inputs of a generated host (see [`host_graph`]).
pub fn host_inputs(modules: usize, edges: usize) -> Inputs {
    let g = Graph::from_json(Role::Declared, &host_graph(modules, edges, "declared")).unwrap();
    Inputs::new(g, None, None, None).unwrap()
}

/// What one in-process run of the `render` command gave: its exit code and both streams.
pub struct Output {
    pub code: u8,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs the `render` command in-process, as the `connectome` program does.
pub fn run_cli<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    let args: Vec<std::ffi::OsString> = args.iter().map(|a| a.as_ref().to_owned()).collect();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = connectome_render::cli::main(&args, &mut stdout, &mut stderr);
    Output { code, stdout, stderr }
}

/// The path of a file of `tests/data/`.
pub fn data(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .to_string_lossy()
        .into_owned()
}
