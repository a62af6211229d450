//! Builders shared by the declared-builder tests.
#![allow(dead_code)] // each test file uses part of it

use connectome_graph::{CallEdge, CallFacts, DynamicSite, FACTS_FORMAT, FactsBound};

/// The rustc version the facts of these tests name.
pub const RUSTC: &str = "rustc 1.95.0 (59807616e 2026-04-14)";

/// An owned string.
pub fn s(x: &str) -> String {
    x.to_owned()
}

/// Owned strings.
pub fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|x| s(x)).collect()
}

/// A call fact.
pub fn call(caller: &str, callee: &str) -> CallEdge {
    CallEdge { caller: s(caller), callee: s(callee) }
}

/// The `n`th dynamic dispatch site of `caller`.
pub fn site(caller: &str, n: u64) -> DynamicSite {
    DynamicSite { caller: s(caller), site: n }
}

/// The fixture's call facts: alpha::run → beta::step → beta::helper, two dynamic sites in an otherwise
/// uncalled module, one external callee.
pub fn fixture_facts() -> CallFacts {
    CallFacts {
        format: FACTS_FORMAT,
        rustc_version: s(RUSTC),
        crates: strings(&["fixture"]),
        edges: vec![
            call("fixture::alpha::run", "fixture::beta::step"),
            call("fixture::beta::step", "fixture::beta::helper"),
        ],
        bound: FactsBound {
            dynamic_dispatch_sites: vec![
                site("fixture::dynamic::apply_to", 1),
                site("fixture::dynamic::call", 1),
            ],
            external_callees: vec![call("fixture::beta::helper", "alloc::vec::Vec.push")],
            sources_used: strings(&["llvm_ir"]),
            ..FactsBound::default()
        },
    }
}
