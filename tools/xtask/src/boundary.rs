//! `cargo xtask boundary`: the dependency direction of the design, read from `cargo metadata` (and,
//! for the features of hyper and hyper-util, from `cargo tree`).
//!
//! The wire, schema and router crates are sans-I/O: none of tokio, axum or hyper may appear among their
//! normal (non-dev) dependencies, directly or through another crate. No library crate may pull in an
//! HTTP client, nor enable the client half of hyper or hyper-util in its normal build. A transport
//! never depends on another transport. A stdio-only host (`mcp-kernel-router` with `mcp-kernel-stdio`)
//! pulls in no HTTP stack; the call-facts reader (`connectome-facts`, which runs the toolchain) pulls in
//! neither an HTTP stack nor an async runtime, and neither does the `connectome` command line
//! (`connectome-cli`, which calls it). Only the two hash/MAC sites (`connectome-canonical`,
//! `mcp-kernel-router`) depend directly on a hash, MAC or crypto crate. Every workspace crate is
//! classified, as a library (publishable, and read by `cargo xtask census`) or as not one
//! (`publish = false`), so a new crate cannot escape the rules by not being listed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

use mcp_kernel_workspace as workspace;
use serde_json::Value;

/// Crates that stay free of async runtimes and HTTP stacks.
const SANS_IO: &[&str] = &[
    "mcp-kernel-wire",
    "mcp-kernel-schema",
    "mcp-kernel-router",
    "connectome-canonical",
    "connectome-graph",
    "connectome-observe",
];
/// Async runtimes and HTTP stacks, banned from [`SANS_IO`].
const RUNTIMES: &[&str] = &["tokio", "axum", "hyper", "axum-core", "tokio-util", "hyper-util", "h2"];
/// HTTP client crates (the same list `deny.toml` bans). hyper and hyper-util are servers here; their
/// client halves are features, checked by [`client_feature_violations`].
const HTTP_CLIENTS: &[&str] = &[
    "reqwest",
    "ureq",
    "isahc",
    "surf",
    "attohttpc",
    "awc",
    "curl",
    "curl-sys",
    "minreq",
    "http-req",
    "hyper-tls",
    "hyper-rustls",
];
/// Crates whose client half is a feature: every feature whose name starts with `client` is one
/// (`client`, `client-legacy`, `client-proxy`, `client-pool`, ...).
const CLIENT_HALVES: &[&str] = &["hyper", "hyper-util"];
/// The published crates of the package (the libraries and the `connectome` command line), read by
/// `cargo xtask census`.
pub const LIBRARIES: &[&str] = &[
    "mcp-kernel-wire",
    "mcp-kernel-schema",
    "mcp-kernel-router",
    "mcp-kernel-stdio",
    "mcp-kernel-http",
    "mcp-kernel-redis",
    "mcp-kernel",
    "connectome-canonical",
    "connectome-graph",
    "connectome-observe",
    "connectome-render",
    "connectome-facts",
    "connectome-cli",
];
/// Workspace crates that are not libraries of the package: tasks, harnesses, test support, fixtures.
/// Each must be `publish = false`.
pub const NOT_LIBRARIES: &[&str] = &[
    "xtask",
    "mcp-kernel-workspace",
    "mcp-kernel-bench",
    "mcp-kernel-conformance",
    "mcp-kernel-rmcp-tests",
    "mcp-kernel-fuzz-checks",
    "mcp-kernel-test-support",
    "connectome-fixture",
];
/// The transports, which never reach each other.
const TRANSPORTS: &[&str] = &["mcp-kernel-stdio", "mcp-kernel-http"];
/// The crates of a stdio-only host: together they pull in no HTTP stack.
const STDIO_HOST: &[&str] = &["mcp-kernel-router", "mcp-kernel-stdio"];
/// An HTTP stack: servers, protocol types and bodies.
const HTTP_STACK: &[&str] = &[
    "hyper",
    "hyper-util",
    "axum",
    "axum-core",
    "h2",
    "h3",
    "http",
    "http-body",
    "http-body-util",
    "tower-http",
];
/// Hash, MAC and crypto crates (H-2, H-3): only [`CRYPTO_HOMES`] may depend on them directly.
const CRYPTO_CRATES: &[&str] = &[
    "sha1",
    "sha2",
    "sha3",
    "md-5",
    "md5",
    "blake2",
    "blake3",
    "hmac",
    "hkdf",
    "digest",
    "ring",
    "aws-lc-rs",
    "aws-lc-sys",
    "openssl",
    "openssl-sys",
    "sha256",
];
/// The crates holding the pinned hash/MAC sites (`cargo xtask census` pins their files).
const CRYPTO_HOMES: &[&str] = &["connectome-canonical", "mcp-kernel-router"];
/// Libraries that run the toolchain (cargo, rustc) and read what it writes: they reach no async runtime
/// ([`RUNTIMES`]) and no HTTP stack ([`HTTP_STACK`]).
const TOOLCHAIN_RUNNERS: &[&str] = &["connectome-facts", "connectome-cli"];
/// Consumers of the exported bytes only: they never link a crate of the package.
const BYTES_ONLY: &[&str] = &["connectome-render"];

/// The normal-dependency graph: package name → names of its normal dependencies.
type Graph = HashMap<String, BTreeSet<String>>;

/// A workspace member: its name and whether it may be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The package name.
    pub name: String,
    /// False for `publish = false`.
    pub publishable: bool,
}

/// The normal-dependency graph of the workspace (package name → names of its normal dependencies)
/// and the workspace members.
fn normal_graph() -> Result<(Graph, Vec<Member>), String> {
    let meta = workspace::metadata(["--locked", "--all-features"])?;
    let names: HashMap<&str, &str> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let member_ids: BTreeSet<&str> =
        meta["workspace_members"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let members = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["id"].as_str().is_some_and(|id| member_ids.contains(id)))
        .filter_map(|p| {
            // `publish = false` reads as an empty registry list; absent (null) means crates.io.
            let publishable = !p["publish"].as_array().is_some_and(Vec::is_empty);
            Some(Member { name: p["name"].as_str()?.to_owned(), publishable })
        })
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
    Ok((graph, members))
}

/// The features of hyper and hyper-util in the normal build of `krate` with all its features, as
/// `cargo tree` resolves them for that crate alone (dev-dependencies, which enable the client halves
/// for the tests, are not part of it).
fn client_half_features(krate: &str) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let out = Command::new(workspace::cargo_program())
        .args(["tree", "--locked", "--all-features", "--target", "all", "-e", "normal", "--prefix", "none"])
        .args(["-p", krate, "-f", "{p}|{f}"])
        .output()
        .map_err(|e| format!("cargo tree: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo tree -p {krate} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(tree_features(&String::from_utf8_lossy(&out.stdout)))
}

/// Reads `cargo tree -f '{p}|{f}' --prefix none` output: the enabled features of each package among
/// [`CLIENT_HALVES`].
fn tree_features(output: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in output.lines().take(100_000) {
        let Some((package, enabled)) = line.rsplit_once('|') else { continue };
        let Some(name) = package.split_whitespace().next() else { continue };
        if !CLIENT_HALVES.contains(&name) {
            continue;
        }
        let enabled = enabled.trim().trim_end_matches("(*)").trim();
        let entry = features.entry(name.to_owned()).or_default();
        entry.extend(enabled.split(',').map(str::trim).filter(|f| !f.is_empty()).map(str::to_owned));
    }
    features
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
    for runner in TOOLCHAIN_RUNNERS {
        let banned = |d: &&String| RUNTIMES.contains(&d.as_str()) || HTTP_STACK.contains(&d.as_str());
        for stack in closure(graph, runner).iter().filter(banned) {
            found.push(format!(
                "{runner} depends on {stack}; it runs the toolchain and reaches no runtime or HTTP stack"
            ));
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
    let host: BTreeSet<String> = STDIO_HOST.iter().flat_map(|k| closure(graph, k)).collect();
    for stack in HTTP_STACK.iter().filter(|s| host.contains(**s)) {
        found.push(format!(
            "{} reach {stack}; a stdio-only host pulls in no HTTP stack",
            STDIO_HOST.join(" + ")
        ));
    }
    found
}

/// The workspace crates other than [`CRYPTO_HOMES`] with a direct normal dependency on a crate of
/// [`CRYPTO_CRATES`] (by package name, so a renamed dependency is found too).
pub fn crypto_violations(graph: &Graph, members: &[Member]) -> Vec<String> {
    let mut found = Vec::new();
    for member in members.iter().filter(|m| !CRYPTO_HOMES.contains(&m.name.as_str())) {
        for dep in
            graph.get(&member.name).into_iter().flatten().filter(|d| CRYPTO_CRATES.contains(&d.as_str()))
        {
            found.push(format!(
                "{} depends on {dep}; only {} hash or MAC (H-2, H-3)",
                member.name,
                CRYPTO_HOMES.join(" and ")
            ));
        }
    }
    found
}

/// The library crates that enable a client half: `features` maps a library crate to the features of
/// hyper and hyper-util in its normal build.
pub fn client_feature_violations(
    features: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
) -> Vec<String> {
    let mut found = Vec::new();
    for (krate, packages) in features {
        for (package, enabled) in packages {
            for feature in enabled.iter().filter(|f| f.starts_with("client")) {
                found.push(format!(
                    "{krate} enables the client feature {package}/{feature}; the package is never a client"
                ));
            }
        }
    }
    found
}

/// The workspace crates that are not classified (or are classified wrongly), and the rule lists that
/// name a crate the workspace does not have.
pub fn classification_violations(members: &[Member]) -> Vec<String> {
    let mut found = Vec::new();
    for member in members {
        let name = member.name.as_str();
        match (LIBRARIES.contains(&name), NOT_LIBRARIES.contains(&name)) {
            (true, true) => found.push(format!("{name} is listed both as a library and as not one")),
            (false, false) => found.push(format!(
                "{name} is not classified: add it to LIBRARIES (and the rules it falls under) or, if it is \
                 not published (publish = false), to NOT_LIBRARIES in tools/xtask/src/boundary.rs"
            )),
            (true, false) if !member.publishable => found.push(format!(
                "{name} is a library but says publish = false; libraries are published and read by the census"
            )),
            (false, true) if member.publishable => found.push(format!(
                "{name} is classified as not a library but can be published; set publish = false or list it \
                 in LIBRARIES"
            )),
            _ => {}
        }
    }
    let lists: [(&str, &[&str]); 8] = [
        ("LIBRARIES", LIBRARIES),
        ("NOT_LIBRARIES", NOT_LIBRARIES),
        ("SANS_IO", SANS_IO),
        ("TRANSPORTS", TRANSPORTS),
        ("TOOLCHAIN_RUNNERS", TOOLCHAIN_RUNNERS),
        ("BYTES_ONLY", BYTES_ONLY),
        ("STDIO_HOST", STDIO_HOST),
        ("CRYPTO_HOMES", CRYPTO_HOMES),
    ];
    for (list, names) in lists {
        for name in names.iter().filter(|n| !members.iter().any(|m| m.name == **n)) {
            found.push(format!("{list} names {name}, which is not a workspace crate"));
        }
    }
    let subsets: [(&str, &[&str]); 6] = [
        ("SANS_IO", SANS_IO),
        ("TRANSPORTS", TRANSPORTS),
        ("TOOLCHAIN_RUNNERS", TOOLCHAIN_RUNNERS),
        ("BYTES_ONLY", BYTES_ONLY),
        ("STDIO_HOST", STDIO_HOST),
        ("CRYPTO_HOMES", CRYPTO_HOMES),
    ];
    for (list, names) in subsets {
        for name in names.iter().filter(|n| !LIBRARIES.contains(n)) {
            found.push(format!("{list} names {name}, which LIBRARIES does not"));
        }
    }
    found
}

/// Runs the check on this workspace.
pub fn check() -> Result<(), String> {
    let (graph, members) = normal_graph()?;
    if !SANS_IO.iter().all(|k| graph.contains_key(*k)) {
        return Err("cargo metadata did not list the sans-I/O crates".into());
    }
    let mut found = classification_violations(&members);
    found.extend(violations(&graph));
    found.extend(crypto_violations(&graph, &members));
    // Only a crate whose normal dependencies reach hyper or hyper-util can enable their client halves.
    let mut features = BTreeMap::new();
    for krate in LIBRARIES {
        let reach = closure(&graph, krate);
        if CLIENT_HALVES.iter().any(|c| reach.contains(*c)) {
            features.insert((*krate).to_owned(), client_half_features(krate)?);
        }
    }
    found.extend(client_feature_violations(&features));
    if found.is_empty() {
        eprintln!(
            "xtask: boundary holds ({} workspace crates classified, {} library crates checked, {} reaching hyper, \
             stdio host free of HTTP, {} free of HTTP and runtimes, hash/MAC crates only in {})",
            members.len(),
            LIBRARIES.len(),
            features.len(),
            TOOLCHAIN_RUNNERS.join(" and "),
            CRYPTO_HOMES.join(" and ")
        );
        Ok(())
    } else {
        Err(found.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph with the given edges.
    fn graph(edges: &[(&str, &str)]) -> HashMap<String, BTreeSet<String>> {
        let mut g: HashMap<String, BTreeSet<String>> = HashMap::new();
        for (from, to) in edges {
            g.entry(from.to_string()).or_default().insert(to.to_string());
        }
        g
    }

    /// A runtime reached through another crate is found.
    #[test]
    fn finds_a_runtime_reached_through_another_crate() {
        let g = graph(&[("mcp-kernel-router", "helper"), ("helper", "tokio")]);
        assert_eq!(violations(&g).len(), 1);
    }

    /// An HTTP client and a transport reaching another are found.
    #[test]
    fn finds_an_http_client_and_a_transport_reaching_another() {
        let g = graph(&[("mcp-kernel-stdio", "mcp-kernel-http"), ("mcp-kernel", "reqwest")]);
        let v = violations(&g);
        assert!(v.iter().any(|m| m.contains("reqwest")));
        assert!(v.iter().any(|m| m.contains("transports never")));
    }

    /// The renderer linking a package crate is found.
    #[test]
    fn finds_the_renderer_linking_a_package_crate() {
        let g = graph(&[("connectome-render", "serde_json"), ("serde_json", "connectome-graph")]);
        let v = violations(&g);
        assert_eq!(v.len(), 1);
        assert!(v[0].contains("links no package crate"));
    }

    /// A runtime reached by each sans-I/O crate is found.
    #[test]
    fn finds_a_runtime_reached_by_each_sans_io_crate() {
        for krate in SANS_IO {
            for runtime in ["tokio", "axum", "hyper"] {
                let g = graph(&[(krate, "helper"), ("helper", runtime)]);
                let v: Vec<String> =
                    violations(&g).into_iter().filter(|m| m.contains("must stay free")).collect();
                assert_eq!(v.len(), 1, "{krate} -> {runtime}: {v:?}");
                assert!(v[0].contains(krate) && v[0].contains(runtime), "{v:?}");
            }
        }
    }

    /// Every known HTTP client reached by any library crate is found.
    #[test]
    fn finds_every_known_http_client_reached_by_any_library_crate() {
        let known = [
            "reqwest",
            "ureq",
            "isahc",
            "surf",
            "attohttpc",
            "hyper-tls",
            "hyper-rustls",
            "awc",
            "curl",
            "minreq",
            "http-req",
        ];
        for krate in LIBRARIES {
            for client in known {
                // Through another crate, so a client reached indirectly is found too.
                let g = graph(&[(krate, "some-sdk"), ("some-sdk", client)]);
                let v = violations(&g);
                assert!(
                    v.iter().any(|m| m.contains(krate) && m.contains(&format!("HTTP client {client}"))),
                    "{krate} -> {client}: {v:?}"
                );
            }
        }
    }

    /// Each transport reaching the other is found.
    #[test]
    fn finds_each_transport_reaching_the_other() {
        let g = graph(&[("mcp-kernel-http", "glue"), ("glue", "mcp-kernel-stdio")]);
        let v = violations(&g);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("mcp-kernel-http depends on mcp-kernel-stdio"), "{v:?}");
    }

    /// The client half of hyper enabled in a library is found.
    #[test]
    fn finds_the_client_half_of_hyper_enabled_in_a_library() {
        let output = "\
mcp-kernel-http v0.1.0 (/work/crates/mcp-kernel-http)|fuzzing
hyper v1.12.0|client,default,http1,http2,server
hyper-util v0.1.21|client-legacy,http1,server,tokio
hyper v1.12.0|client,default,http1,http2,server (*)
h2 v0.4.20|
";
        let parsed = tree_features(output);
        assert_eq!(parsed.len(), 2, "only hyper and hyper-util are read: {parsed:?}");
        let features = BTreeMap::from([("mcp-kernel-http".to_owned(), parsed)]);
        let v = client_feature_violations(&features);
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(v.iter().any(|m| m.contains("hyper/client;")), "{v:?}");
        assert!(v.iter().any(|m| m.contains("hyper-util/client-legacy")), "{v:?}");
    }

    /// The server halves of hyper are no violation.
    #[test]
    fn the_server_halves_of_hyper_are_no_violation() {
        let output =
            "hyper v1.12.0|default,http1,http2,server\nhyper-util v0.1.21|server,server-auto,tokio (*)\n";
        let features = BTreeMap::from([("mcp-kernel-http".to_owned(), tree_features(output))]);
        assert!(client_feature_violations(&features).is_empty());
    }

    /// Members named `names`, publishable unless in [`NOT_LIBRARIES`].
    fn members(names: &[&str]) -> Vec<Member> {
        names
            .iter()
            .map(|n| Member { name: (*n).to_owned(), publishable: !NOT_LIBRARIES.contains(n) })
            .collect()
    }

    /// Every classified crate.
    fn all_classified() -> Vec<&'static str> {
        LIBRARIES.iter().chain(NOT_LIBRARIES).copied().collect()
    }

    /// A workspace crate that is not classified is found.
    #[test]
    fn finds_a_workspace_crate_that_is_not_classified() {
        let mut names = all_classified();
        assert!(classification_violations(&members(&names)).is_empty());
        names.push("mcp-kernel-websocket");
        let v = classification_violations(&members(&names));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("mcp-kernel-websocket is not classified"), "{v:?}");
    }

    /// The one classification violation of the classified workspace once `name` says `publishable`.
    fn the_violation_when_publishable(name: &str, publishable: bool) -> String {
        let mut list = members(&all_classified());
        list.iter_mut().filter(|m| m.name == name).for_each(|m| m.publishable = publishable);
        let v = classification_violations(&list);
        assert_eq!(v.len(), 1, "{v:?}");
        v[0].clone()
    }

    /// A publishable crate classified as not a library is found.
    #[test]
    fn finds_a_publishable_crate_classified_as_not_a_library() {
        let v = the_violation_when_publishable("mcp-kernel-fuzz-checks", true);
        assert!(v.contains("mcp-kernel-fuzz-checks is classified as not a library"), "{v:?}");
    }

    /// A rule naming a crate the workspace lacks is found.
    #[test]
    fn finds_a_rule_naming_a_crate_the_workspace_lacks() {
        let names: Vec<&str> = all_classified().into_iter().filter(|n| *n != "mcp-kernel-router").collect();
        let v = classification_violations(&members(&names));
        assert!(
            v.iter().any(|m| m == "LIBRARIES names mcp-kernel-router, which is not a workspace crate"),
            "{v:?}"
        );
        assert!(
            v.iter().any(|m| m == "SANS_IO names mcp-kernel-router, which is not a workspace crate"),
            "{v:?}"
        );
    }

    /// A clean graph has no violation.
    #[test]
    fn a_clean_graph_has_no_violation() {
        let g = graph(&[("mcp-kernel-router", "serde_json"), ("mcp-kernel-stdio", "tokio")]);
        assert!(violations(&g).is_empty());
    }

    /// A library that says `publish = false` is found: the census would not read it as library code.
    #[test]
    fn finds_a_library_that_says_publish_false() {
        let v = the_violation_when_publishable("mcp-kernel-router", false);
        assert!(v.starts_with("mcp-kernel-router is a library but says publish = false"), "{v:?}");
    }

    /// An HTTP stack reached by the stdio-only host (router + stdio) is found.
    #[test]
    fn finds_an_http_stack_reached_by_a_stdio_only_host() {
        for stack in HTTP_STACK {
            let g = graph(&[("mcp-kernel-stdio", "tokio"), ("mcp-kernel-stdio", "glue"), ("glue", stack)]);
            let v = violations(&g);
            assert!(v.iter().any(|m| m.contains(&format!("reach {stack};"))), "{stack}: {v:?}");
        }
        let g = graph(&[("mcp-kernel-router", "http")]);
        assert!(violations(&g).iter().any(|m| m.contains("stdio-only host")));
    }

    /// A runtime or an HTTP stack reached by the call-facts reader, which runs the toolchain, is found.
    #[test]
    fn finds_a_runtime_or_an_http_stack_reached_by_a_toolchain_runner() {
        for stack in RUNTIMES.iter().chain(HTTP_STACK) {
            let v = violations(&graph(&[("connectome-facts", "glue"), ("glue", stack)]));
            assert_eq!(v.len(), 1, "{stack}: {v:?}");
            assert!(v[0].starts_with(&format!("connectome-facts depends on {stack}; it runs")), "{v:?}");
        }
    }

    /// A direct hash, MAC or crypto dependency outside the two pinned sites is found.
    #[test]
    fn finds_a_direct_crypto_dependency_outside_the_two_sites() {
        let list = members(&all_classified());
        let clean = graph(&[
            ("connectome-canonical", "sha2"),
            ("mcp-kernel-router", "hmac"),
            ("mcp-kernel-router", "sha2"),
            ("sha2", "digest"),
            ("mcp-kernel-stdio", "mcp-kernel-router"),
        ]);
        assert!(crypto_violations(&clean, &list).is_empty());
        for planted in CRYPTO_CRATES {
            let g = graph(&[("mcp-kernel-http", planted)]);
            let v = crypto_violations(&g, &list);
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with(&format!("mcp-kernel-http depends on {planted};")), "{v:?}");
        }
    }
}
