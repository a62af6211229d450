//! Rules of docs/connectome.md CD-1…CD-9 (mapped to Rust by CK-6…CK-9) through `connectome_graph::declared`:
//! the module-level fixture of CD-9, the catalog of CD-3, the fn and boundary levels of CD-6, the refusals
//! (CD-1) and determinism under shuffling (CD-2). The bound (CD-7, CK-9) is in `declared_bound.rs`.

use connectome_graph::{
    Algorithm, CallEdge, CallFacts, CatalogFault, CatalogSection, Declared, DeclaredBound, DeclaredBuilder,
    DeclaredCatalog, DeclaredError, DeclaredLevel, DeclaredTool, DynamicSite, EdgeKind, FactsFault, Graph,
    GroupSource, Labels, Level, NodeKind, Provenance, Sign, UnreadableEntry, Value,
};
use proptest::prelude::*;

use crate::declared_support::{RUSTC, call, fixture_facts, s, site, strings};

/// The CD-9 catalog: tools echo (read_only, class observe) and write (mutate), resource `r://a`, prompt
/// `greet`, and one resource the host could not read.
fn catalog() -> DeclaredCatalog {
    DeclaredCatalog {
        tools: vec![
            DeclaredTool::new("echo", "read_only").with_command_class("observe"),
            DeclaredTool::new("write", "mutate"),
        ],
        resources: strings(&["r://a"]),
        resource_templates: vec![],
        prompts: strings(&["greet"]),
        unreadable: vec![UnreadableEntry::new(CatalogSection::Resources, "opaque")],
    }
}

/// The fixture's call facts.
fn facts() -> CallFacts {
    fixture_facts()
}

fn fixture() -> DeclaredBuilder {
    Declared::builder("srv").catalog(catalog()).tool_module("echo", "fixture::alpha").facts(facts())
}

fn node_ids(graph: &Graph) -> Vec<&str> {
    graph.nodes().iter().map(|n| n.id()).collect()
}

fn edge_ends(graph: &Graph) -> Vec<(&str, &str)> {
    graph.edges().iter().map(|e| (e.from.as_str(), e.to.as_str())).collect()
}

fn labels(graph: &Graph, id: &str) -> Labels {
    graph.nodes().iter().find(|n| n.id() == id).map(|n| n.labels().clone()).unwrap()
}

fn str_labels(entries: &[(&str, &str)]) -> Labels {
    entries.iter().map(|(k, v)| (s(k), Value::Str(s(v)))).collect()
}

/// CD-2: every edge `invoke`, `declared`, sign unset, weight none.
fn assert_declared_edges(graph: &Graph) {
    for edge in graph.edges() {
        assert_eq!(edge.kind, EdgeKind::Invoke);
        assert_eq!(edge.provenance, Provenance::Declared);
        assert_eq!(edge.sign, Sign::Unset);
        assert_eq!(edge.weight, None);
    }
}

fn err(builder: DeclaredBuilder) -> DeclaredError {
    builder.build().unwrap_err()
}

// ---------------------------------------------------------------------------------------- CD-9 (module)

#[test]
fn cd9_module_level_fixture_exact_nodes_edges_and_bound() {
    let declared = fixture().build().unwrap();
    let graph = &declared.graph;
    assert_eq!(
        node_ids(graph),
        [
            "srv/module/fixture::alpha",
            "srv/module/fixture::beta",
            "srv/module/fixture::dynamic",
            "srv/prompt/greet",
            "srv/resource/r:%2F%2Fa",
            "srv/server",
            "srv/tool/echo",
            "srv/tool/write",
        ]
    );
    assert_eq!(
        edge_ends(graph),
        [
            ("srv/module/fixture::alpha", "srv/module/fixture::beta"),
            ("srv/server", "srv/tool/echo"),
            ("srv/server", "srv/tool/write"),
            ("srv/tool/echo", "srv/module/fixture::alpha"),
        ]
    );
    assert_declared_edges(graph);
    assert_eq!(
        labels(graph, "srv/tool/echo"),
        str_labels(&[("command_class", "observe"), ("mode", "read_only")])
    );
    assert_eq!(labels(graph, "srv/tool/write"), str_labels(&[("mode", "mutate")]));
    let modules: Vec<_> = graph.nodes().iter().filter(|n| n.id().starts_with("srv/module/")).collect();
    assert!(modules.iter().all(|n| n.kind() == NodeKind::Module && n.level() == Level::Module));
    assert_eq!(
        declared.bound,
        DeclaredBound {
            dynamic_dispatch_sites: vec![
                site("fixture::dynamic::apply_to", 1),
                site("fixture::dynamic::call", 1)
            ],
            allowlisted_calls: vec![],
            macro_expansion_calls: vec![],
            macro_expansion_crates: vec![],
            external_callees: vec![call("fixture::beta::helper", "alloc::vec::Vec.push")],
            crates_without_ir: vec![],
            unreadable_catalog_entries: vec![UnreadableEntry::new(CatalogSection::Resources, "opaque")],
            tools_without_module: strings(&["write"]),
            ungrouped_modules: vec![],
            ungrouped_calls: vec![],
            sources_used: strings(&["catalog", "host_declaration", "llvm_ir"]),
            rustc_version: Some(s(RUSTC)),
        }
    );
}

#[test]
fn cd3_resources_and_prompts_have_no_edges() {
    let declared = fixture().build().unwrap();
    let catalog_parts = ["srv/resource/r:%2F%2Fa", "srv/prompt/greet"];
    assert!(
        declared
            .graph
            .edges()
            .iter()
            .all(|e| !catalog_parts.contains(&e.from.as_str()) && !catalog_parts.contains(&e.to.as_str()))
    );
}

#[test]
fn cd3_a_mapped_resource_or_prompt_has_an_edge_to_its_module_and_none_from_the_server() {
    let catalog = DeclaredCatalog { resource_templates: strings(&["r://t/{id}"]), ..catalog() };
    let built = |level| {
        Declared::builder("srv")
            .catalog(catalog.clone())
            .resource_module("r://a", "app::read")
            .resource_module("r://t/{id}", "app::read")
            .prompt_module("greet", "app::prompts")
            .boundary("app::read", GroupSource::Application, "app")
            .level(level)
            .build()
            .unwrap()
    };
    let declared = built(DeclaredLevel::Module);
    let edges = edge_ends(&declared.graph);
    assert!(edges.contains(&("srv/resource/r:%2F%2Fa", "srv/module/app::read")), "{edges:?}");
    assert!(edges.contains(&("srv/resource/r:%2F%2Ft%2F{id}", "srv/module/app::read")), "{edges:?}");
    assert!(edges.contains(&("srv/prompt/greet", "srv/module/app::prompts")), "{edges:?}");
    assert!(edges.iter().all(|(from, to)| *from != "srv/server" || to.starts_with("srv/tool/")));
    assert!(declared.bound.sources_used.contains(&s("host_declaration")));
    // At boundary level a grouped module is its group; an ungrouped one gives no edge.
    let edges = edge_ends(&built(DeclaredLevel::Boundary).graph)
        .into_iter()
        .map(|(a, b)| (s(a), s(b)))
        .collect::<Vec<_>>();
    assert!(edges.contains(&(s("srv/resource/r:%2F%2Fa"), s("srv/boundary/application/app"))), "{edges:?}");
    assert!(edges.iter().all(|(from, _)| from != "srv/prompt/greet"), "{edges:?}");
    // At fn level, as for tools, there are no catalog → code edges.
    let fn_edges =
        edge_ends(&built(DeclaredLevel::Fn).graph).into_iter().map(|(a, _)| s(a)).collect::<Vec<_>>();
    assert!(fn_edges.iter().all(|from| from == "srv/server"), "{fn_edges:?}");
}

#[test]
fn cd3_a_reader_mapping_for_an_unknown_part_or_to_two_modules_is_refused() {
    let err = |b: DeclaredBuilder| b.build().unwrap_err();
    let srv = || Declared::builder("srv").catalog(catalog());
    assert_eq!(err(srv().resource_module("r://b", "a::b")), DeclaredError::UnknownResource(s("r://b")));
    assert_eq!(err(srv().prompt_module("r://a", "a::b")), DeclaredError::UnknownPrompt(s("r://a")));
    assert_eq!(
        err(Declared::builder("srv").prompt_module("greet", "a::b")),
        DeclaredError::UnknownPrompt(s("greet"))
    );
    assert_eq!(err(srv().prompt_module("greet", "a::")), DeclaredError::InvalidModule(s("a::")));
    let twice = srv().resource_module("r://a", "b::y").resource_module("r://a", "a::x");
    let conflict =
        DeclaredError::ConflictingReaderModule { reader: s("r://a"), first: s("a::x"), second: s("b::y") };
    assert_eq!(err(twice), conflict);
}

#[test]
fn cd3_templates_are_resource_nodes_labelled_template() {
    let catalog = DeclaredCatalog { resource_templates: strings(&["file:///{path}"]), ..catalog() };
    let declared = Declared::builder("srv").catalog(catalog).build().unwrap();
    let id = "srv/resource/file:%2F%2F%2F{path}";
    assert_eq!(labels(&declared.graph, id), Labels::from([(s("template"), Value::Bool(true))]));
    assert_eq!(labels(&declared.graph, "srv/resource/r:%2F%2Fa"), Labels::new());
    assert!(declared.graph.edges().iter().all(|e| e.to != id && e.from != id));
}

#[test]
fn cd3_empty_names_are_unreadable_not_refused() {
    let catalog = DeclaredCatalog {
        resources: strings(&["", "r://a", ""]),
        resource_templates: strings(&[""]),
        prompts: strings(&["", "greet"]),
        ..catalog()
    };
    let declared = Declared::builder("srv").catalog(catalog).build().unwrap();
    assert_eq!(
        declared.bound.unreadable_catalog_entries,
        [
            UnreadableEntry::new(CatalogSection::Prompts, ""),
            UnreadableEntry::new(CatalogSection::ResourceTemplates, ""),
            UnreadableEntry::new(CatalogSection::Resources, ""),
            UnreadableEntry::new(CatalogSection::Resources, "opaque"),
        ]
    );
    assert!(!node_ids(&declared.graph).contains(&"srv/resource/"));
}

// ----------------------------------------------------------------------------------------- CD-6 (fn)

#[test]
fn cd6_fn_level_nodes_only_for_called_functions_self_loops_kept_no_tool_edges() {
    let mut facts = facts();
    facts.edges.push(call("fixture::beta::helper", "fixture::beta::helper"));
    let declared = Declared::builder("srv")
        .catalog(catalog())
        .tool_module("echo", "fixture::alpha")
        .facts(facts)
        .level(DeclaredLevel::Fn)
        .build()
        .unwrap();
    let graph = &declared.graph;
    assert_eq!(
        node_ids(graph),
        [
            "srv/module/fixture::alpha/run",
            "srv/module/fixture::beta/helper",
            "srv/module/fixture::beta/step",
            "srv/prompt/greet",
            "srv/resource/r:%2F%2Fa",
            "srv/server",
            "srv/tool/echo",
            "srv/tool/write",
        ]
    );
    assert_eq!(
        edge_ends(graph),
        [
            ("srv/module/fixture::alpha/run", "srv/module/fixture::beta/step"),
            ("srv/module/fixture::beta/helper", "srv/module/fixture::beta/helper"),
            ("srv/module/fixture::beta/step", "srv/module/fixture::beta/helper"),
            ("srv/server", "srv/tool/echo"),
            ("srv/server", "srv/tool/write"),
        ]
    );
    assert_declared_edges(graph);
    let fns: Vec<_> = graph.nodes().iter().filter(|n| n.id().starts_with("srv/module/")).collect();
    assert!(fns.iter().all(|n| n.kind() == NodeKind::Module && n.level() == Level::Mfa));
    assert_eq!(declared.bound.tools_without_module, ["write"]);
    assert_eq!(declared.bound.sources_used, ["catalog", "host_declaration", "llvm_ir"]);
}

#[test]
fn cd6_fn_level_does_not_read_host_edges_or_boundaries() {
    let declared = Declared::builder("srv")
        .edge("a::x", "a::y")
        .boundary("a::x", GroupSource::Application, "a")
        .level(DeclaredLevel::Fn)
        .build()
        .unwrap();
    assert_eq!(node_ids(&declared.graph), ["srv/server"]);
    assert!(declared.bound.sources_used.is_empty());
}

// ----------------------------------------------------------------------------------- CD-6 (boundary)

fn boundary_fixture() -> DeclaredBuilder {
    fixture()
        .tool_module("write", "fixture::dynamic")
        .boundary("fixture::alpha", GroupSource::BoundaryModule, "fixture::api")
        .boundary("fixture::beta", GroupSource::BoundaryModule, "fixture::core")
        .edge("fixture::dynamic", "fixture::beta")
        .level(DeclaredLevel::Boundary)
}

#[test]
fn cd6_boundary_level_groups_from_declarations_and_bounds_ungrouped() {
    let declared = boundary_fixture().build().unwrap();
    let graph = &declared.graph;
    assert_eq!(
        node_ids(graph),
        [
            "srv/boundary/boundary_module/fixture::api",
            "srv/boundary/boundary_module/fixture::core",
            "srv/prompt/greet",
            "srv/resource/r:%2F%2Fa",
            "srv/server",
            "srv/tool/echo",
            "srv/tool/write",
        ]
    );
    assert_eq!(
        edge_ends(graph),
        [
            ("srv/boundary/boundary_module/fixture::api", "srv/boundary/boundary_module/fixture::core"),
            ("srv/server", "srv/tool/echo"),
            ("srv/server", "srv/tool/write"),
            ("srv/tool/echo", "srv/boundary/boundary_module/fixture::api"),
        ]
    );
    assert_declared_edges(graph);
    let groups: Vec<_> = graph.nodes().iter().filter(|n| n.id().starts_with("srv/boundary/")).collect();
    assert!(groups.iter().all(|n| n.kind() == NodeKind::Module && n.level() == Level::Boundary));
    assert_eq!(declared.bound.ungrouped_modules, ["fixture::dynamic"]);
    assert_eq!(declared.bound.ungrouped_calls, [call("fixture::dynamic", "fixture::beta")]);
    assert_eq!(declared.bound.tools_without_module, ["write"]);
    assert_eq!(declared.bound.sources_used, ["catalog", "host_declaration", "llvm_ir"]);
}

#[test]
fn cd6_boundary_level_ungrouped_calls_are_item_paths_never_guessed() {
    let declared = fixture()
        .boundary("fixture::alpha", GroupSource::Application, "fixture")
        .level(DeclaredLevel::Boundary)
        .build()
        .unwrap();
    assert_eq!(declared.bound.ungrouped_modules, ["fixture::beta", "fixture::dynamic"]);
    assert_eq!(
        declared.bound.ungrouped_calls,
        [
            call("fixture::alpha::run", "fixture::beta::step"),
            call("fixture::beta::step", "fixture::beta::helper")
        ]
    );
    assert_eq!(
        edge_ends(&declared.graph),
        [
            ("srv/server", "srv/tool/echo"),
            ("srv/server", "srv/tool/write"),
            ("srv/tool/echo", "srv/boundary/application/fixture"),
        ]
    );
}

#[test]
fn cd6_boundary_level_group_by_crate_uses_the_crate_map_and_drops_self_loops() {
    let declared = fixture()
        .edge("other::x", "fixture::alpha")
        .level(DeclaredLevel::Boundary)
        .group_by_crate(true)
        .build()
        .unwrap();
    assert_eq!(
        edge_ends(&declared.graph),
        [
            ("srv/boundary/application/other", "srv/boundary/application/fixture"),
            ("srv/server", "srv/tool/echo"),
            ("srv/server", "srv/tool/write"),
            ("srv/tool/echo", "srv/boundary/application/fixture"),
        ]
    );
    assert!(declared.bound.ungrouped_modules.is_empty() && declared.bound.ungrouped_calls.is_empty());
    assert_eq!(declared.bound.sources_used, ["catalog", "crate_map", "host_declaration", "llvm_ir"]);
}

#[test]
fn cd6_boundary_level_declared_group_wins_over_crate() {
    let declared = fixture()
        .boundary("fixture::alpha", GroupSource::BoundaryModule, "fixture::api")
        .level(DeclaredLevel::Boundary)
        .group_by_crate(true)
        .build()
        .unwrap();
    assert_eq!(
        node_ids(&declared.graph)[..2],
        ["srv/boundary/application/fixture", "srv/boundary/boundary_module/fixture::api"]
    );
    assert!(
        edge_ends(&declared.graph)
            .contains(&("srv/boundary/boundary_module/fixture::api", "srv/boundary/application/fixture"))
    );
}

// --------------------------------------------------------------------------------------------- CD-1

#[test]
fn cd1_refusals() {
    let srv = || Declared::builder("srv");
    let tools = |tools: Vec<DeclaredTool>| DeclaredCatalog { tools, ..DeclaredCatalog::default() };
    let bad_catalog = |c: DeclaredCatalog| err(srv().catalog(c));
    let cat = |f| DeclaredError::InvalidCatalog(f);

    assert_eq!(err(Declared::builder("")), DeclaredError::InvalidServer(s("")));
    assert_eq!(bad_catalog(tools(vec![DeclaredTool::new("", "m")])), cat(CatalogFault::EmptyToolName));
    assert_eq!(bad_catalog(tools(vec![DeclaredTool::new("t", "")])), cat(CatalogFault::EmptyMode(s("t"))));
    let twice = vec![DeclaredTool::new("t", "a"), DeclaredTool::new("t", "b")];
    assert_eq!(bad_catalog(tools(twice)), cat(CatalogFault::DuplicateTool(s("t"))));
    let same = vec![DeclaredTool::new("t", "a"), DeclaredTool::new("t", "a")];
    assert_eq!(bad_catalog(tools(same)), cat(CatalogFault::DuplicateTool(s("t"))));
    let resources = DeclaredCatalog { resources: strings(&["r", "r"]), ..DeclaredCatalog::default() };
    assert_eq!(bad_catalog(resources), cat(CatalogFault::DuplicateResource(s("r"))));
    let both = DeclaredCatalog {
        resources: strings(&["r"]),
        resource_templates: strings(&["r"]),
        ..DeclaredCatalog::default()
    };
    assert_eq!(bad_catalog(both), cat(CatalogFault::DuplicateResource(s("r"))));
    let prompts = DeclaredCatalog { prompts: strings(&["p", "p"]), ..DeclaredCatalog::default() };
    assert_eq!(bad_catalog(prompts), cat(CatalogFault::DuplicatePrompt(s("p"))));

    assert_eq!(err(srv().tool_module("echo", "a::b")), DeclaredError::UnknownTool(s("echo")));
    assert_eq!(err(fixture().tool_module("ghost", "a::b")), DeclaredError::UnknownTool(s("ghost")));
    assert_eq!(
        err(fixture().tool_module("echo", "b::y").tool_module("echo", "a::x")),
        DeclaredError::ConflictingToolModule { tool: s("echo"), first: s("a::x"), second: s("b::y") }
    );
    for bad in ["", "::a", "a::", "a::::b"] {
        assert_eq!(err(fixture().tool_module("write", bad)), DeclaredError::InvalidModule(s(bad)));
        let boundary = srv().boundary(bad, GroupSource::Application, "a");
        assert_eq!(err(boundary), DeclaredError::InvalidModule(s(bad)));
        assert_eq!(err(srv().edge("a::x", bad)), DeclaredError::InvalidModule(s(bad)));
    }
    for (source, name) in [
        (GroupSource::Application, ""),
        (GroupSource::Application, "a::b"),
        (GroupSource::BoundaryModule, "a::"),
    ] {
        assert_eq!(
            err(srv().boundary("a::x", source, name)),
            DeclaredError::InvalidGroup { module: s("a::x"), source, name: s(name) }
        );
    }
    let two_groups =
        srv().boundary("a::x", GroupSource::Application, "a").boundary("a::x", GroupSource::Application, "b");
    assert_eq!(err(two_groups), DeclaredError::ConflictingBoundary(s("a::x")));

    let mut format = facts();
    format.format = 2;
    assert_eq!(err(srv().facts(format)), DeclaredError::UnsupportedFacts(2));
    let facts_fault = |mutate: fn(&mut CallFacts)| {
        let mut f = facts();
        mutate(&mut f);
        err(srv().facts(f))
    };
    assert_eq!(
        facts_fault(|f| f.bound.sources_used.push(s("xref"))),
        DeclaredError::InvalidFacts(FactsFault::UnknownSource(s("xref")))
    );
    assert_eq!(
        facts_fault(|f| f.edges.push(call("fixture::alpha::run", "main"))),
        DeclaredError::InvalidFacts(FactsFault::NoModule(s("main")))
    );
    assert_eq!(
        facts_fault(|f| f.bound.dynamic_dispatch_sites.push(site("other::x::f", 1))),
        DeclaredError::InvalidFacts(FactsFault::OutOfScope(s("other::x::f")))
    );
}

#[test]
fn cd1_the_first_fault_in_sorted_order_is_reported_whatever_the_input_order() {
    let forward = fixture().tool_module("zeta", "a::b").tool_module("ghost", "a::b");
    let backward = fixture().tool_module("ghost", "a::b").tool_module("zeta", "a::b");
    assert_eq!(err(forward), DeclaredError::UnknownTool(s("ghost")));
    assert_eq!(err(backward), DeclaredError::UnknownTool(s("ghost")));
}

#[test]
fn cd1_refusals_display_without_panicking() {
    let e = err(fixture().tool_module("ghost", "a::b"));
    assert_eq!(e.to_string(), "tool_module for unknown tool \"ghost\"");
}

// --------------------------------------------------------------------------------------------- CD-2

/// The fixture's input, every list shuffled by the strategy.
#[derive(Debug, Clone)]
struct Shuffled {
    tools: Vec<DeclaredTool>,
    tool_modules: Vec<(&'static str, &'static str)>,
    boundaries: Vec<(&'static str, &'static str)>,
    edges: Vec<(&'static str, &'static str)>,
    calls: Vec<CallEdge>,
    sites: Vec<DynamicSite>,
}

fn base() -> Shuffled {
    let mut calls = facts().edges;
    calls.push(call("fixture::dynamic::call", "fixture::alpha::run"));
    calls.push(call("fixture::beta::helper", "fixture::beta::helper"));
    Shuffled {
        tools: catalog().tools.into_iter().chain([DeclaredTool::new("list", "read_only")]).collect(),
        tool_modules: vec![
            ("echo", "fixture::alpha"),
            ("write", "fixture::beta"),
            ("list", "fixture::alpha"),
        ],
        boundaries: vec![("fixture::alpha", "fixture::api"), ("fixture::beta", "fixture::core")],
        edges: vec![
            ("fixture::beta", "fixture::alpha"),
            ("fixture::dynamic", "fixture::beta"),
            ("x::y", "x::z"),
        ],
        calls,
        sites: facts().bound.dynamic_dispatch_sites,
    }
}

fn build(input: &Shuffled, level: DeclaredLevel) -> Declared {
    let mut facts = facts();
    facts.edges = input.calls.clone();
    facts.bound.dynamic_dispatch_sites = input.sites.clone();
    let catalog = DeclaredCatalog { tools: input.tools.clone(), ..catalog() };
    let mut builder = Declared::builder("srv").catalog(catalog).facts(facts).level(level);
    for (tool, module) in &input.tool_modules {
        builder = builder.tool_module(*tool, *module);
    }
    for (module, group) in &input.boundaries {
        builder = builder.boundary(*module, GroupSource::BoundaryModule, *group);
    }
    for (from, to) in &input.edges {
        builder = builder.edge(*from, *to);
    }
    builder.build().unwrap()
}

fn shuffled() -> impl Strategy<Value = Shuffled> {
    let b = base();
    (
        Just(b.tools).prop_shuffle(),
        Just(b.tool_modules).prop_shuffle(),
        Just(b.boundaries).prop_shuffle(),
        Just(b.edges).prop_shuffle(),
        Just(b.calls).prop_shuffle(),
        Just(b.sites).prop_shuffle(),
    )
        .prop_map(|(tools, tool_modules, boundaries, edges, calls, sites)| Shuffled {
            tools,
            tool_modules,
            boundaries,
            edges,
            calls,
            sites,
        })
}

#[test]
fn cd2_two_builds_are_equal() {
    for level in [DeclaredLevel::Module, DeclaredLevel::Fn, DeclaredLevel::Boundary] {
        let (a, b) = (build(&base(), level), build(&base(), level));
        assert_eq!(a, b);
        assert_eq!(
            a.graph.to_canonical_bytes(Algorithm::Sha256).unwrap(),
            b.graph.to_canonical_bytes(Algorithm::Sha256).unwrap()
        );
    }
}

proptest! {
    #[test]
    fn cd2_shuffled_input_gives_byte_equal_graphs_and_equal_bounds(input in shuffled()) {
        for level in [DeclaredLevel::Module, DeclaredLevel::Fn, DeclaredLevel::Boundary] {
            let reference = build(&base(), level);
            let other = build(&input, level);
            prop_assert_eq!(
                reference.graph.to_canonical_bytes(Algorithm::Sha256).unwrap(),
                other.graph.to_canonical_bytes(Algorithm::Sha256).unwrap()
            );
            prop_assert_eq!(&reference.bound, &other.bound);
        }
    }
}
