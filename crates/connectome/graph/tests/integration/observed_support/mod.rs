//! Builders shared by the reader, federation and effective-connectivity tests.
#![allow(dead_code)] // each test file uses part of it

use std::collections::BTreeSet;

use connectome_graph::{
    Edge, EdgeKey, EdgeKind, Graph, Identity, Labels, Node, Provenance, Timing, Timings, Weight,
};

/// The system every instance of these tests belongs to.
pub const SYSTEM: &str = "srv";

/// The id of node `name` of system `srv`: `server` is the server node, anything else a tool.
pub fn id(name: &str) -> String {
    identity(name).id()
}

/// The identity of node `name` (see [`id`]).
pub fn identity(name: &str) -> Identity {
    if name == "server" {
        Identity::Server { server: SYSTEM.to_owned() }
    } else {
        Identity::Tool { server: SYSTEM.to_owned(), name: name.to_owned() }
    }
}

/// One observed edge: from, to, count, total ns, longest ns (`invoke`).
pub type Call<'a> = (&'a str, &'a str, u64, u64, u64);

/// The nodes the edges name (and `extra`), labels empty.
fn nodes(ends: impl IntoIterator<Item = String>) -> Vec<Node> {
    let names: BTreeSet<String> = ends.into_iter().collect();
    names.iter().map(|n| Node::from_identity(identity(n), Labels::new())).collect()
}

/// An observed graph of `calls`, each edge weighed by its count.
pub fn observed(calls: &[Call<'_>]) -> Graph {
    let ends = calls.iter().flat_map(|c| [c.0.to_owned(), c.1.to_owned()]);
    let edges = calls
        .iter()
        .map(|&(from, to, count, _, _)| {
            Edge::new(id(from), id(to), EdgeKind::Invoke, Provenance::Observed, Some(Weight::Int(count)))
                .unwrap()
        })
        .collect();
    Graph::new(nodes(ends), edges).unwrap()
}

/// The timings of `calls`.
pub fn timings(calls: &[Call<'_>]) -> Timings {
    Timings::new(calls.iter().map(|&(from, to, _, sum_ns, max_ns)| {
        let key =
            EdgeKey { from: id(from), to: id(to), kind: EdgeKind::Invoke, provenance: Provenance::Observed };
        (key, Timing { sum_ns, max_ns })
    }))
    .unwrap()
}

/// A declared graph of `edges` (`invoke`), over their endpoints and `extra` nodes.
pub fn declared(edges: &[(&str, &str)], extra: &[&str]) -> Graph {
    let ends = edges
        .iter()
        .flat_map(|e| [e.0.to_owned(), e.1.to_owned()])
        .chain(extra.iter().map(|n| (*n).to_owned()));
    let edges = edges
        .iter()
        .map(|&(from, to)| Edge::new(id(from), id(to), EdgeKind::Invoke, Provenance::Declared, None).unwrap())
        .collect();
    Graph::new(nodes(ends), edges).unwrap()
}

/// The window of the worked examples (CF-7's).
pub fn window() -> serde_json::Value {
    serde_json::json!({"started_at": "2026-09-14T00:00:00Z", "ended_at": "2026-09-14T01:00:00Z"})
}

/// The text of `docs/connectome.md` (`tests/data/connectome.md` links to it, and the package carries it).
pub fn rule_book() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/connectome.md")).unwrap()
}
