//! `cargo xtask boundary`: the dependency direction of the design, read from `cargo metadata`.
//!
//! The wire, schema and router crates are sans-I/O: none of tokio, axum or hyper may appear among their
//! normal (non-dev) dependencies, directly or through another crate. No library crate may pull in an
//! HTTP client. A transport never depends on another transport.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use serde_json::Value;

const SANS_IO: &[&str] = &[
    "mcp-kernel-wire",
    "mcp-kernel-schema",
    "mcp-kernel-router",
    "connectome-canonical",
    "connectome-graph",
    "connectome-observe",
];
const RUNTIMES: &[&str] = &["tokio", "axum", "hyper", "axum-core", "tokio-util"];
/// HTTP client crates. (hyper and hyper-util are servers here; their client halves are features the
/// library crates do not enable, which `deny.toml` and review keep so.)
const HTTP_CLIENTS: &[&str] = &["reqwest", "ureq", "isahc", "surf", "attohttpc"];
const LIBRARIES: &[&str] = &[
    "mcp-kernel-wire",
    "mcp-kernel-schema",
    "mcp-kernel-router",
    "mcp-kernel-stdio",
    "mcp-kernel-http",
    "mcp-kernel",
    "connectome-canonical",
    "connectome-graph",
    "connectome-observe",
    "connectome-render",
];
const TRANSPORTS: &[&str] = &["mcp-kernel-stdio", "mcp-kernel-http"];
/// Consumers of the exported bytes only: they never link a crate of the package.
const BYTES_ONLY: &[&str] = &["connectome-render"];

/// The normal-dependency graph of the workspace: package name → names of its normal dependencies.
fn normal_graph() -> Result<HashMap<String, BTreeSet<String>>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--all-features"])
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let names: HashMap<&str, &str> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let mut graph = HashMap::new();
    for node in meta["resolve"]["nodes"].as_array().into_iter().flatten() {
        let Some(name) = node["id"].as_str().and_then(|id| names.get(id)) else { continue };
        let deps = node["deps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["dep_kinds"].as_array().into_iter().flatten().any(|k| k["kind"].is_null()))
            .filter_map(|d| d["pkg"].as_str().and_then(|id| names.get(id)).map(|n| n.to_string()))
            .collect::<BTreeSet<_>>();
        graph.entry(name.to_string()).or_insert_with(BTreeSet::new).extend(deps);
    }
    Ok(graph)
}

/// Every crate reachable from `root` through normal dependencies.
fn closure(graph: &HashMap<String, BTreeSet<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(next) = stack.pop() {
        for dep in graph.get(&next).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

/// The violations of the dependency rules in `graph`.
pub fn violations(graph: &HashMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for krate in SANS_IO {
        let reach = closure(graph, krate);
        for banned in RUNTIMES.iter().filter(|b| reach.contains(**b)) {
            found.push(format!(
                "{krate} depends on {banned}; it must stay free of async runtimes and HTTP stacks"
            ));
        }
    }
    for krate in LIBRARIES {
        let reach = closure(graph, krate);
        for client in HTTP_CLIENTS.iter().filter(|c| reach.contains(**c)) {
            found.push(format!("{krate} depends on the HTTP client {client}; the package is never a client"));
        }
    }
    for reader in BYTES_ONLY {
        let reach = closure(graph, reader);
        for linked in reach.iter().filter(|d| d.starts_with("mcp-kernel") || d.starts_with("connectome-")) {
            found.push(format!(
                "{reader} depends on {linked}; it reads the JSON exports and links no package crate"
            ));
        }
    }
    for transport in TRANSPORTS {
        let reach = closure(graph, transport);
        for other in TRANSPORTS.iter().filter(|o| *o != transport && reach.contains(**o)) {
            found.push(format!("{transport} depends on {other}; transports never reach into each other"));
        }
    }
    found
}

/// Runs the check on this workspace.
pub fn check() -> Result<(), String> {
    let graph = normal_graph()?;
    if !SANS_IO.iter().all(|k| graph.contains_key(*k)) {
        return Err("cargo metadata did not list the sans-I/O crates".into());
    }
    let found = violations(&graph);
    if found.is_empty() {
        eprintln!("xtask: boundary holds ({} library crates checked)", LIBRARIES.len());
        Ok(())
    } else {
        Err(found.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> HashMap<String, BTreeSet<String>> {
        let mut g: HashMap<String, BTreeSet<String>> = HashMap::new();
        for (from, to) in edges {
            g.entry(from.to_string()).or_default().insert(to.to_string());
        }
        g
    }

    #[test]
    fn finds_a_runtime_reached_through_another_crate() {
        let g = graph(&[("mcp-kernel-router", "helper"), ("helper", "tokio")]);
        assert_eq!(violations(&g).len(), 1);
    }

    #[test]
    fn finds_an_http_client_and_a_transport_reaching_another() {
        let g = graph(&[("mcp-kernel-stdio", "mcp-kernel-http"), ("mcp-kernel", "reqwest")]);
        let v = violations(&g);
        assert!(v.iter().any(|m| m.contains("reqwest")));
        assert!(v.iter().any(|m| m.contains("transports never")));
    }

    #[test]
    fn finds_the_renderer_linking_a_package_crate() {
        let g = graph(&[("connectome-render", "serde_json"), ("serde_json", "connectome-graph")]);
        let v = violations(&g);
        assert_eq!(v.len(), 1);
        assert!(v[0].contains("links no package crate"));
    }

    #[test]
    fn a_clean_graph_has_no_violation() {
        let g = graph(&[("mcp-kernel-router", "serde_json"), ("mcp-kernel-stdio", "tokio")]);
        assert!(violations(&g).is_empty());
    }
}
