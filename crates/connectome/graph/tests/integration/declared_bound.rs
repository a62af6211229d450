//! The bound of docs/connectome.md CD-7 (mapped to Rust by CK-6…CK-9) through `connectome_graph::declared`:
//! its JSON form, `tools_without_module`, the scope, `sources_used` per input combination (CK-9), the
//! dynamic allowlist (CD-1, CD-9), compile-time code (CD-5, CK-6), and the refusals that keep the bound and
//! the graph honest: facts that hide an in-scope call, and names equal after NFC (CC-6).

use connectome_graph::{
    Algorithm, CallFacts, CatalogFault, Declared, DeclaredBuilder, DeclaredCatalog, DeclaredError,
    DeclaredLevel, DeclaredTool, FactsFault, GroupSource, Uncanonical,
};

use crate::declared_support::{call, fixture_facts, s, site, strings};

/// The CD-9 catalog's tools: echo and write.
fn catalog() -> DeclaredCatalog {
    DeclaredCatalog {
        tools: vec![DeclaredTool::new("echo", "read_only"), DeclaredTool::new("write", "mutate")],
        ..DeclaredCatalog::default()
    }
}

/// The CD-9 facts: the fixture's, with the dynamic sites `{Dyn, apply_to|call|fun}` (`fun` twice).
fn facts() -> CallFacts {
    let mut facts = fixture_facts();
    facts
        .bound
        .dynamic_dispatch_sites
        .extend([site("fixture::dynamic::fun", 1), site("fixture::dynamic::fun", 2)]);
    facts
}

fn fixture() -> DeclaredBuilder {
    Declared::builder("srv").catalog(catalog()).tool_module("echo", "fixture::alpha").facts(facts())
}

fn err(builder: DeclaredBuilder) -> DeclaredError {
    builder.build().unwrap_err()
}

fn edge_ends(declared: &Declared) -> Vec<(&str, &str)> {
    declared.graph.edges().iter().map(|e| (e.from.as_str(), e.to.as_str())).collect()
}

fn node_ids(declared: &Declared) -> Vec<&str> {
    declared.graph.nodes().iter().map(|n| n.id()).collect()
}

/// The facts refusal `mutate` provokes on the fixture.
fn facts_fault(mutate: impl FnOnce(&mut CallFacts)) -> DeclaredError {
    let mut f = facts();
    mutate(&mut f);
    err(Declared::builder("srv").facts(f))
}

// --------------------------------------------------------------------------------------------- CD-7

#[test]
fn cd7_bound_serializes_as_json_lists() {
    let declared = fixture().allow_dynamic("fixture::dynamic::call").build().unwrap();
    let json = serde_json::to_string(&declared.bound).unwrap();
    assert_eq!(
        json,
        concat!(
            r#"{"dynamic_dispatch_sites":[{"caller":"fixture::dynamic::apply_to","site":1},"#,
            r#"{"caller":"fixture::dynamic::fun","site":1},{"caller":"fixture::dynamic::fun","site":2}],"#,
            r#""allowlisted_calls":[{"caller":"fixture::dynamic::call","site":1}],"#,
            r#""macro_expansion_calls":[],"macro_expansion_crates":[],"#,
            r#""external_callees":[{"caller":"fixture::beta::helper","callee":"alloc::vec::Vec.push"}],"#,
            r#""crates_without_ir":[],"unreadable_catalog_entries":[],"#,
            r#""tools_without_module":["write"],"ungrouped_modules":[],"ungrouped_calls":[],"#,
            r#""sources_used":["catalog","host_declaration","llvm_ir"],"#,
            r#""rustc_version":"rustc 1.95.0 (59807616e 2026-04-14)"}"#
        )
    );
}

#[test]
fn cd7_tools_without_module_lists_unmapped_tools() {
    let catalog = DeclaredCatalog {
        tools: vec![DeclaredTool::new("c", "m"), DeclaredTool::new("a", "m"), DeclaredTool::new("b", "m")],
        ..DeclaredCatalog::default()
    };
    let declared = Declared::builder("srv").catalog(catalog).tool_module("b", "x::y").build().unwrap();
    assert_eq!(declared.bound.tools_without_module, ["a", "c"]);
    assert!(edge_ends(&declared).contains(&("srv/tool/b", "srv/module/x::y")));
}

#[test]
fn cd7_host_declared_module_brings_its_own_path_into_scope() {
    let mut facts = facts();
    facts.edges.push(call("fixture::beta::step", "plugin::hooks::on_step"));
    let declared = fixture().facts(facts).edge("plugin::hooks", "fixture::alpha").build().unwrap();
    let edges = edge_ends(&declared);
    assert!(edges.contains(&("srv/module/fixture::beta", "srv/module/plugin::hooks")));
    assert!(edges.contains(&("srv/module/plugin::hooks", "srv/module/fixture::alpha")));
}

#[test]
fn cd7_module_level_keeps_uncalled_declared_modules() {
    let declared = Declared::builder("srv")
        .boundary("a::lonely", GroupSource::Application, "a")
        .edge("a::x", "a::x")
        .build()
        .unwrap();
    assert_eq!(node_ids(&declared), ["srv/module/a::lonely", "srv/module/a::x", "srv/server"]);
    assert!(declared.graph.edges().is_empty());
}

// ------------------------------------------------------------------------------------ CD-1, CD-9 allowlist

#[test]
fn cd9_unresolved_sites_are_exactly_the_dynamic_ones_and_the_allowlist_moves_one() {
    let plain = fixture().build().unwrap();
    let all = facts().bound.dynamic_dispatch_sites;
    assert_eq!(plain.bound.dynamic_dispatch_sites, all);
    assert!(plain.bound.allowlisted_calls.is_empty());

    let allowed = fixture().allow_dynamic("fixture::dynamic::call").build().unwrap();
    assert_eq!(
        allowed.bound.dynamic_dispatch_sites,
        [
            site("fixture::dynamic::apply_to", 1),
            site("fixture::dynamic::fun", 1),
            site("fixture::dynamic::fun", 2)
        ]
    );
    assert_eq!(allowed.bound.allowlisted_calls, [site("fixture::dynamic::call", 1)]);
    assert_eq!(allowed.graph, plain.graph, "the allowlist changes the bound, never the graph");
    assert_eq!(allowed.bound.sources_used, plain.bound.sources_used, "the allowlist is not a source");
}

#[test]
fn cd1_allowlist_moves_every_site_of_a_caller_sorted_and_ignores_callers_without_sites() {
    let declared = fixture()
        .allow_dynamic("fixture::dynamic::fun")
        .allow_dynamic("fixture::dynamic::apply_to")
        .allow_dynamic("fixture::nowhere::f")
        .allow_dynamic("fixture::dynamic::fun")
        .build()
        .unwrap();
    assert_eq!(declared.bound.dynamic_dispatch_sites, [site("fixture::dynamic::call", 1)]);
    assert_eq!(
        declared.bound.allowlisted_calls,
        [
            site("fixture::dynamic::apply_to", 1),
            site("fixture::dynamic::fun", 1),
            site("fixture::dynamic::fun", 2)
        ]
    );
    // Callers compare after NFC, like every name.
    let mut facts = facts();
    facts.bound.dynamic_dispatch_sites = vec![site("fixture::dynamic::caf\u{e9}", 1)];
    let declared = fixture().facts(facts).allow_dynamic("fixture::dynamic::cafe\u{301}").build().unwrap();
    assert_eq!(declared.bound.allowlisted_calls, [site("fixture::dynamic::caf\u{e9}", 1)]);
}

#[test]
fn cd1_allowlist_entries_must_be_item_paths() {
    for bad in ["", "main", "::f", "a::", "a::::f"] {
        assert_eq!(
            err(fixture().allow_dynamic(bad)),
            DeclaredError::InvalidAllowlistEntry(s(bad)),
            "{bad:?}"
        );
    }
}

// ---------------------------------------------------------------------------------- compile-time code

#[test]
fn cd5_compile_time_calls_and_crates_are_copied_never_edges() {
    let mut facts = facts();
    facts.bound.macro_expansion_crates = strings(&["fixture_macros"]);
    facts.bound.macro_expansion_calls = vec![
        call("fixture_macros::derive::expand", "syn::parse::Parser.parse"),
        call("fixture_macros::derive::expand", "fixture::alpha::run"),
    ];
    let declared = fixture().facts(facts).build().unwrap();
    assert_eq!(declared.bound.macro_expansion_crates, ["fixture_macros"]);
    assert_eq!(
        declared.bound.macro_expansion_calls,
        [
            call("fixture_macros::derive::expand", "fixture::alpha::run"),
            call("fixture_macros::derive::expand", "syn::parse::Parser.parse"),
        ]
    );
    assert!(node_ids(&declared).iter().all(|id| !id.contains("fixture_macros")));
    assert_eq!(edge_ends(&declared), edge_ends(&fixture().build().unwrap()));
}

#[test]
fn cd1_facts_that_hide_a_call_in_the_bound_are_refused() {
    let invalid = DeclaredError::InvalidFacts;
    // fx::a::f → fx::b::g is an edge, not an external callee.
    assert_eq!(
        facts_fault(|f| f.bound.external_callees.push(call("fixture::alpha::run", "fixture::beta::step"))),
        invalid(FactsFault::CalleeInScope(s("fixture::beta::step")))
    );
    assert_eq!(
        facts_fault(|f| f.bound.external_callees.push(call("fixture::alpha::run", "fixture::beta::T.m"))),
        invalid(FactsFault::CalleeInScope(s("fixture::beta::T.m")))
    );
    // A crate named like a scope crate's prefix is another crate.
    let mut other = facts();
    other.bound.external_callees.push(call("fixture::alpha::run", "fixture_util::x::f"));
    assert!(Declared::builder("srv").facts(other).build().is_ok());

    assert_eq!(
        facts_fault(|f| f.bound.macro_expansion_crates.push(s("fixture"))),
        invalid(FactsFault::CompileTimeCrateInScope(s("fixture")))
    );
    assert_eq!(
        facts_fault(|f| f
            .bound
            .macro_expansion_calls
            .push(call("fixture::alpha::run", "fixture::beta::step"))),
        invalid(FactsFault::NotCompileTime(s("fixture::alpha::run")))
    );
    assert_eq!(
        facts_fault(|f| {
            f.bound.macro_expansion_crates.push(s("m"));
            f.bound.macro_expansion_calls.push(call("m", "core::x::y"));
        }),
        invalid(FactsFault::NoModule(s("m")))
    );
}

// --------------------------------------------------------------------------------------------- CK-9

#[test]
fn ck9_sources_used_per_input_combination() {
    let used = |builder: DeclaredBuilder| builder.build().unwrap().bound.sources_used;
    let srv = || Declared::builder("srv");
    let with_sources = |sources: &[&str]| {
        let mut f = facts();
        f.bound.sources_used = strings(sources);
        f
    };
    let none: [&str; 0] = [];
    assert_eq!(used(srv()), none);
    assert_eq!(used(srv().catalog(DeclaredCatalog::default())), ["catalog"]);
    assert_eq!(used(srv().edge("a::x", "a::y")), ["host_declaration"]);
    assert_eq!(used(srv().boundary("a::x", GroupSource::Application, "a")), ["host_declaration"]);
    // The facts' sources are copied: `llvm_ir` only when IR was read, `crate_map` when cargo mapped it.
    assert_eq!(used(srv().facts(facts())), ["llvm_ir"]);
    assert_eq!(used(srv().facts(with_sources(&["crate_map", "llvm_ir"]))), ["crate_map", "llvm_ir"]);
    assert_eq!(used(srv().facts(with_sources(&["crate_map"]))), ["crate_map"]);
    assert_eq!(used(srv().facts(with_sources(&[]))), none);
    assert_eq!(used(srv().catalog(catalog()).facts(facts())), ["catalog", "llvm_ir"]);
    assert_eq!(used(fixture()), ["catalog", "host_declaration", "llvm_ir"]);
    // Grouping modules by their crate relies on the crate map too.
    let by_crate = srv().facts(facts()).level(DeclaredLevel::Boundary).group_by_crate(true);
    assert_eq!(used(by_crate), ["crate_map", "llvm_ir"]);
    assert_eq!(used(srv().level(DeclaredLevel::Boundary).group_by_crate(true)), none);
    let declared_groups = srv()
        .boundary("a::x", GroupSource::Application, "a")
        .level(DeclaredLevel::Boundary)
        .group_by_crate(true);
    assert_eq!(used(declared_groups), ["host_declaration"]);
}

#[test]
fn ck9_no_facts_host_declarations_only() {
    let declared = Declared::builder("srv")
        .catalog(catalog())
        .tool_module("echo", "fixture::alpha")
        .edge("fixture::alpha", "fixture::beta")
        .build()
        .unwrap();
    assert_eq!(declared.bound.sources_used, ["catalog", "host_declaration"]);
    assert_eq!(declared.bound.rustc_version, None);
    assert!(declared.bound.dynamic_dispatch_sites.is_empty() && declared.bound.external_callees.is_empty());
    assert_eq!(
        edge_ends(&declared),
        [
            ("srv/module/fixture::alpha", "srv/module/fixture::beta"),
            ("srv/server", "srv/tool/echo"),
            ("srv/server", "srv/tool/write"),
            ("srv/tool/echo", "srv/module/fixture::alpha"),
        ]
    );
}

// ------------------------------------------------------------------------------------- NFC (CC-6)

const COMPOSED: &str = "caf\u{e9}";
const DECOMPOSED: &str = "cafe\u{301}";

#[test]
fn cc6_catalog_names_equal_after_nfc_are_duplicates() {
    let srv = || Declared::builder("srv");
    let cat = DeclaredError::InvalidCatalog;
    let tools = DeclaredCatalog {
        tools: vec![DeclaredTool::new(COMPOSED, "m"), DeclaredTool::new(DECOMPOSED, "m")],
        ..DeclaredCatalog::default()
    };
    assert_eq!(err(srv().catalog(tools)), cat(CatalogFault::DuplicateTool(s(COMPOSED))));
    let resources =
        DeclaredCatalog { resources: strings(&[DECOMPOSED, COMPOSED]), ..DeclaredCatalog::default() };
    assert_eq!(err(srv().catalog(resources)), cat(CatalogFault::DuplicateResource(s(COMPOSED))));
    let both = DeclaredCatalog {
        resources: strings(&[COMPOSED]),
        resource_templates: strings(&[DECOMPOSED]),
        ..DeclaredCatalog::default()
    };
    assert_eq!(err(srv().catalog(both)), cat(CatalogFault::DuplicateResource(s(COMPOSED))));
    let prompts = DeclaredCatalog { prompts: strings(&[COMPOSED, DECOMPOSED]), ..DeclaredCatalog::default() };
    assert_eq!(err(srv().catalog(prompts)), cat(CatalogFault::DuplicatePrompt(s(COMPOSED))));
}

#[test]
fn cc6_a_tool_module_names_its_tool_after_nfc() {
    let catalog =
        DeclaredCatalog { tools: vec![DeclaredTool::new(COMPOSED, "m")], ..DeclaredCatalog::default() };
    let declared = Declared::builder("srv").catalog(catalog).tool_module(DECOMPOSED, "a::x").build().unwrap();
    assert!(declared.bound.tools_without_module.is_empty());
    assert!(edge_ends(&declared).contains(&("srv/tool/caf\u{e9}", "srv/module/a::x")));
    assert!(declared.graph.to_canonical_bytes(Algorithm::Sha256).is_ok());
}

#[test]
fn cc6_module_paths_equal_after_nfc_are_refused_by_name() {
    let composed = format!("{COMPOSED}::x");
    let decomposed = format!("{DECOMPOSED}::x");
    let two = Declared::builder("srv").edge(composed.clone(), "a::y").edge(decomposed.clone(), "a::y");
    assert_eq!(err(two), DeclaredError::DuplicateModule(composed.clone()));
    // One from the facts, one from a host declaration, at every level.
    for level in [DeclaredLevel::Module, DeclaredLevel::Fn, DeclaredLevel::Boundary] {
        let mut facts = facts();
        facts.crates.push(s(COMPOSED));
        facts.edges.push(call(&format!("{composed}::f"), "fixture::alpha::run"));
        let builder = fixture().facts(facts).edge(decomposed.clone(), "fixture::alpha").level(level);
        assert_eq!(err(builder), DeclaredError::DuplicateModule(composed.clone()), "{level:?}");
    }
}

#[test]
fn cc6_a_build_that_succeeds_has_canonical_bytes() {
    // Two groups equal after NFC: no earlier check names them, the canonical check does.
    let groups = Declared::builder("srv")
        .boundary("a::x", GroupSource::Application, COMPOSED)
        .boundary("a::y", GroupSource::Application, DECOMPOSED)
        .level(DeclaredLevel::Boundary);
    let id = format!("srv/boundary/application/{COMPOSED}");
    assert_eq!(err(groups), DeclaredError::Uncanonical(Uncanonical::DuplicateIdAfterNfc { id }));
    // Two functions of one module equal after NFC.
    let mut facts = facts();
    facts.edges.push(call(&format!("fixture::alpha::{COMPOSED}"), &format!("fixture::alpha::{DECOMPOSED}")));
    let fns = Declared::builder("srv").facts(facts).level(DeclaredLevel::Fn);
    let id = format!("srv/module/fixture::alpha/{COMPOSED}");
    assert_eq!(err(fns), DeclaredError::Uncanonical(Uncanonical::DuplicateIdAfterNfc { id }));
}
