//! Call facts: what the compiled code says about calls, read offline from the LLVM IR rustc emits for
//! the crates in scope (docs/connectome.md [CD-5], [CD-7], [CK-6], [CK-9]), and embedded or loaded by the host.
//!
//! The facts file is JSON, produced by `cargo xtask connectome facts` and read by
//! [`CallFacts::from_json`]. Paths are demangled Rust paths with closures, async bodies and generic
//! instantiations folded into their enclosing item (`my_crate::tools::run`); a module is the path minus
//! its last segment. Every list is sorted and free of duplicates: the file for one set of sources is
//! byte-identical from run to run.
//!
//! ```json
//! {
//!   "format": 1,
//!   "rustc_version": "rustc 1.95.0 (59807616e 2026-04-14)",
//!   "crates": ["fixture"],
//!   "edges": [{"caller": "fixture::alpha::run", "callee": "fixture::beta::step"}],
//!   "bound": {
//!     "dynamic_dispatch_sites": [{"caller": "fixture::alpha::run", "site": 1}],
//!     "macro_expansion_calls": [],
//!     "macro_expansion_crates": ["fixture_macros"],
//!     "external_callees": [{"caller": "fixture::alpha::run", "callee": "alloc::vec::Vec.push"}],
//!     "crates_without_ir": [],
//!     "sources_used": ["crate_map", "llvm_ir"]
//!   }
//! }
//! ```
//!
//! An impl method is `<module of the self type>::<Type>.<method>` (`alloc::vec::Vec.push`); the crate
//! of a path is its first segment, up to `::` or `.`.
//!
//! # Sources
//!
//! `sources_used` ⊆ `crate_map`, `llvm_ir`. `crate_map` means that cargo mapped the crates: the xtask
//! found each scope crate's IR file through cargo's crate → artifact map (`cargo metadata` and its JSON
//! artifact messages), never by globbing a directory. `llvm_ir` means that at least one `.ll` file was
//! read. The declared builder copies both (and adds `crate_map` itself when it groups modules by crate).
//!
//! # Compile-time code
//!
//! Proc-macro crates and build scripts run in the compiler, never in the server: their calls are never
//! edges. `macro_expansion_crates` names the compile-time crates a facts producer was asked for (the
//! xtask lists a `--crate` that is a proc-macro package there, does not build it, and leaves it out of
//! `crates`); `macro_expansion_calls` lists calls made by such code, should a producer read them (the
//! xtask does not: it builds no compile-time code, so it writes `[]`). Both members were added to format
//! 1 and default to `[]`, so older files still read.
//!
//! [CD-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use serde::{Deserialize, Serialize};

/// The facts file format this crate reads and writes.
pub const FACTS_FORMAT: u32 = 1;

/// One facts file: direct calls between items of the crates in scope, and the completeness bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallFacts {
    /// Always [`FACTS_FORMAT`].
    pub format: u32,
    /// `rustc --version` of the toolchain that emitted the IR (textual IR depends on it).
    pub rustc_version: String,
    /// The crates in scope (crate names as rustc spells them, `-` as `_`), sorted.
    pub crates: Vec<String>,
    /// Direct calls with both ends in scope, sorted by caller then callee.
    pub edges: Vec<CallEdge>,
    /// What the facts could not resolve: enumerated, never counted away.
    pub bound: FactsBound,
}

/// A direct call between two items in scope.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallEdge {
    /// The calling item's path.
    pub caller: String,
    /// The called item's path.
    pub callee: String,
}

/// One indirect call site: a call through a fn pointer, a `dyn` vtable slot, a boxed closure or a boxed
/// future. Its target is not in the code, so it is never an edge; it is enumerated instead.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DynamicSite {
    /// The calling item's path.
    pub caller: String,
    /// The site's ordinal among the caller's indirect call instructions, from 1, in IR order (items that
    /// fold into one path — closures, async bodies, instantiations — are numbered in the order their
    /// definitions appear).
    pub site: u64,
}

/// The completeness bound of the facts ([CD-7] mapped to Rust): every field is a sorted list.
///
/// [CD-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactsBound {
    /// Indirect call sites per caller (the analogue of unresolved calls).
    pub dynamic_dispatch_sites: Vec<DynamicSite>,
    /// Calls made by compile-time code (a caller in a crate of `macro_expansion_crates`): never edges.
    #[serde(default)]
    pub macro_expansion_calls: Vec<CallEdge>,
    /// Compile-time crates (proc macros, build scripts) that were asked for and not read as runtime
    /// code; never in `crates`.
    #[serde(default)]
    pub macro_expansion_crates: Vec<String>,
    /// Calls from an item in scope to an item outside it (std, core, alloc, other crates).
    pub external_callees: Vec<CallEdge>,
    /// Crates in scope for which no IR was found.
    pub crates_without_ir: Vec<String>,
    /// The sources the facts were read from: `crate_map` (cargo mapped the crates to their IR files),
    /// `llvm_ir` (IR was read).
    pub sources_used: Vec<String>,
}

/// Why a facts file was refused.
#[derive(Debug)]
pub enum FactsError {
    /// The bytes are not a facts file (the parser's message; it quotes no input).
    Malformed(String),
    /// The file has another format number.
    UnsupportedFormat(u32),
}

impl fmt::Display for FactsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FactsError::Malformed(reason) => write!(f, "malformed call facts: {reason}"),
            FactsError::UnsupportedFormat(n) => write!(f, "unsupported call facts format {n}"),
        }
    }
}

impl std::error::Error for FactsError {}

impl CallFacts {
    /// Reads a facts file, refusing unknown members and any format but [`FACTS_FORMAT`].
    pub fn from_json(bytes: &[u8]) -> Result<CallFacts, FactsError> {
        let facts: CallFacts = serde_json::from_slice(bytes).map_err(|e| {
            FactsError::Malformed(format!("{} at line {} column {}", category(&e), e.line(), e.column()))
        })?;
        if facts.format != FACTS_FORMAT {
            return Err(FactsError::UnsupportedFormat(facts.format));
        }
        Ok(facts)
    }

    /// Writes the facts as pretty-printed JSON with a final newline, lists sorted and deduplicated.
    pub fn to_json(&self) -> Vec<u8> {
        let mut sorted = self.clone();
        sorted.normalize();
        let mut out = serde_json::to_vec_pretty(&sorted).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// Sorts and deduplicates every list (two runs over the same sources give the same file).
    pub fn normalize(&mut self) {
        fn tidy<T: Ord>(list: &mut Vec<T>) {
            list.sort();
            list.dedup();
        }
        tidy(&mut self.crates);
        tidy(&mut self.edges);
        tidy(&mut self.bound.dynamic_dispatch_sites);
        tidy(&mut self.bound.macro_expansion_calls);
        tidy(&mut self.bound.macro_expansion_crates);
        tidy(&mut self.bound.external_callees);
        tidy(&mut self.bound.crates_without_ir);
        tidy(&mut self.bound.sources_used);
    }
}

/// A parse error's category, without the offending text.
fn category(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Io => "read error",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "unexpected shape",
        serde_json::error::Category::Eof => "truncated",
    }
}

#[cfg(test)]
mod tests {
    use super::{CallEdge, CallFacts, FactsError};

    /// The JSON example of the module docs.
    fn doc_example() -> String {
        let source = include_str!("facts.rs");
        let start = source.find("//! ```json\n").expect("the example opens") + "//! ```json\n".len();
        let end = start + source[start..].find("//! ```\n").expect("the example closes");
        source[start..end].lines().map(|l| l.strip_prefix("//!").unwrap_or(l).trim_start()).collect()
    }

    #[test]
    fn the_doc_example_reads() {
        let facts = CallFacts::from_json(doc_example().as_bytes()).expect("the example is a facts file");
        assert_eq!(facts.bound.sources_used, ["crate_map", "llvm_ir"]);
        assert_eq!(facts.bound.macro_expansion_crates, ["fixture_macros"]);
        let push =
            CallEdge { caller: "fixture::alpha::run".to_owned(), callee: "alloc::vec::Vec.push".to_owned() };
        assert_eq!(facts.bound.external_callees, [push]);
    }

    #[test]
    fn a_format_1_file_without_the_compile_time_members_still_reads() {
        let old = br#"{"format":1,"rustc_version":"rustc 1.95.0","crates":["fx"],"edges":[],
            "bound":{"dynamic_dispatch_sites":[],"external_callees":[],"crates_without_ir":[],
            "sources_used":["crate_map","llvm_ir"]}}"#;
        let facts = CallFacts::from_json(old).expect("an older format-1 file");
        assert!(
            facts.bound.macro_expansion_calls.is_empty() && facts.bound.macro_expansion_crates.is_empty()
        );
        let unknown =
            br#"{"format":1,"rustc_version":"r","crates":[],"edges":[],"bound":{"dynamic_dispatch_sites":[],
            "external_callees":[],"crates_without_ir":[],"sources_used":[],"extra":[]}}"#;
        assert!(matches!(CallFacts::from_json(unknown), Err(FactsError::Malformed(_))));
    }
}
