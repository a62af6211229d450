//! `extract` on `crates/connectome/fixture`, this repository's fixture crate: the exact edges, the
//! dynamic dispatch sites, std in the external callees, and byte-identical facts from two runs.
//!
//! Offline and bounded: the fixture has no dependencies, and its IR build goes to the workspace's
//! `target/connectome-ir`.

use std::path::Path;
use std::time::{Duration, Instant};

use connectome_facts::{FactsRequest, Progress, extract};
use connectome_graph::{CallEdge, CallFacts, DynamicSite};

/// The facts of the fixture, the time they took and the progress reported.
fn run_facts() -> (Vec<u8>, Duration, Vec<Progress>) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let request = FactsRequest::new(["connectome-fixture"]).manifest_path(workspace.join("Cargo.toml"));
    let mut progress = Vec::new();
    let started = Instant::now();
    let facts = extract(&request, &mut |p| progress.push(p)).unwrap_or_else(|e| panic!("extract: {e}"));
    (facts.to_json(), started.elapsed(), progress)
}

fn edge(caller: &str, callee: &str) -> CallEdge {
    CallEdge {
        caller: format!("connectome_fixture::{caller}"),
        callee: format!("connectome_fixture::{callee}"),
    }
}

fn site(caller: &str, site: u64) -> DynamicSite {
    DynamicSite { caller: format!("connectome_fixture::{caller}"), site }
}

#[test]
fn fixture_facts_are_exact_and_reproducible() {
    let (bytes, took, progress) = run_facts();
    let (second, _, _) = run_facts();
    assert_eq!(bytes, second, "two runs differ");
    assert!(took < Duration::from_secs(300), "extraction took {took:?}");
    assert_eq!(
        progress,
        [Progress::Building { package: "connectome-fixture".to_owned(), index: 1, total: 1 }]
    );

    let facts = CallFacts::from_json(&bytes).expect("a valid facts file");
    assert_eq!(facts.to_json(), bytes, "the file is the normalized form");
    assert!(facts.rustc_version.starts_with("rustc "), "{}", facts.rustc_version);
    assert_eq!(facts.crates, ["connectome_fixture"]);
    assert_eq!(
        facts.edges,
        [
            edge("alpha::countdown", "alpha::countdown"),
            edge("alpha::run", "beta::step"),
            edge("beta::English.greet", "beta::English.word"),
            edge("beta::step", "alpha::leaf"),
            edge("tools::handle", "alpha::run"),
            edge("tools::leaves", "alpha::leaf"),
            edge("tools::sum_leaves", "alpha::leaf"),
        ]
    );
    assert_eq!(
        facts.bound.dynamic_dispatch_sites,
        [
            site("tools::apply", 1),
            site("tools::call_boxed", 1),
            site("tools::call_boxed", 2),
            site("tools::greet_with", 1),
        ]
    );
    let external = &facts.bound.external_callees;
    for (caller, callee) in [
        ("beta::English.greet", "alloc::string::String.push_str"),
        ("beta::English.greet", "alloc::vec::Vec.push"),
        ("tools::call_boxed", "alloc::boxed::Box.call"),
        ("tools::leaves", "core::iter::adapters::map::Map.collect"),
    ] {
        let want = CallEdge { caller: format!("connectome_fixture::{caller}"), callee: callee.to_owned() };
        assert!(external.contains(&want), "{want:?} missing from {external:#?}");
    }
    assert!(
        external.iter().all(|e| !e.callee.starts_with("connectome_fixture")),
        "an in-scope callee is external: {external:#?}"
    );
    assert!(facts.bound.crates_without_ir.is_empty());
    assert!(facts.bound.macro_expansion_crates.is_empty() && facts.bound.macro_expansion_calls.is_empty());
    assert_eq!(facts.bound.sources_used, ["crate_map", "llvm_ir"]);
}
