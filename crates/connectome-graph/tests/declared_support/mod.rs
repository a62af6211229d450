//! Builders shared by the declared-builder tests.
#![allow(dead_code)] // each test file uses part of it

use connectome_graph::{CallEdge, DynamicSite};

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
