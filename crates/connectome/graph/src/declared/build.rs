//! The build: the whole input is checked first (in sorted order, so the first fault does not depend on
//! the input order), then the graph and the bound are assembled in ordered sets.

use std::collections::{BTreeMap, BTreeSet};

use connectome_canonical::{EdgeKind, Labels, Provenance, Value, nfc};

use super::error::{CatalogFault, DeclaredError, FactsFault};
use super::{
    CatalogSection, Declared, DeclaredBound, DeclaredBuilder, DeclaredCatalog, DeclaredLevel, DeclaredTool,
    ReaderKind, UnreadableEntry,
};
use crate::facts::{CallEdge, CallFacts, DynamicSite, FACTS_FORMAT};
use crate::graph::{Edge, Graph, Node};
use crate::identity::{GroupSource, Identity};

/// The source names of `sources_used`.
const CATALOG: &str = "catalog";
const CRATE_MAP: &str = "crate_map";
const HOST_DECLARATION: &str = "host_declaration";
const LLVM_IR: &str = "llvm_ir";

/// A catalog after its checks: every part keyed, sorted and unique (after NFC).
struct Catalog {
    tools: BTreeMap<String, DeclaredTool>,
    /// Each tool's name in NFC → its name as the catalog gives it.
    tool_names: BTreeMap<String, String>,
    resources: BTreeSet<String>,
    templates: BTreeSet<String>,
    prompts: BTreeSet<String>,
    unreadable: BTreeSet<UnreadableEntry>,
}

/// The whole input after its checks.
struct Checked {
    server: String,
    catalog: Option<Catalog>,
    tool_modules: BTreeMap<String, String>,
    /// Each mapped resource (or template) and prompt, as the catalog names it → its module.
    reader_modules: BTreeMap<(ReaderKind, String), String>,
    boundaries: BTreeMap<String, (GroupSource, String)>,
    edges: BTreeSet<(String, String)>,
    facts: Option<CallFacts>,
    /// The allowlisted callers, in NFC.
    dynamic_allowlist: BTreeSet<String>,
    level: DeclaredLevel,
    group_by_crate: bool,
}

/// The nodes and edges being assembled, keyed by identity.
#[derive(Default)]
struct Parts {
    nodes: BTreeMap<Identity, Labels>,
    edges: BTreeSet<(Identity, Identity)>,
}

impl Parts {
    fn node(&mut self, identity: Identity, labels: Labels) {
        self.nodes.insert(identity, labels);
    }

    /// An `invoke` edge; its ends become nodes (with no labels) unless they already are.
    fn edge(&mut self, from: Identity, to: Identity) {
        self.nodes.entry(from.clone()).or_default();
        self.nodes.entry(to.clone()).or_default();
        self.edges.insert((from, to));
    }

    fn into_graph(self) -> Result<Graph, DeclaredError> {
        let mut ids: BTreeMap<Identity, String> = BTreeMap::new();
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for (identity, labels) in self.nodes {
            let node = Node::from_identity(identity.clone(), labels);
            ids.insert(identity, node.id().to_owned());
            nodes.push(node);
        }
        let id = |identity: &Identity| ids.get(identity).cloned().unwrap_or_default();
        let edges = self
            .edges
            .iter()
            .map(|(from, to)| Edge::new(id(from), id(to), EdgeKind::Invoke, Provenance::Declared, None))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Graph::new(nodes, edges)?)
    }
}

/// Whether `path` is a Rust path: non-empty segments joined by `::`.
fn is_path(path: &str) -> bool {
    !path.is_empty() && path.split("::").all(|segment| !segment.is_empty())
}

/// An item path split into its module and its last segment.
fn split_item(path: &str) -> Option<(&str, &str)> {
    let (module, name) = path.rsplit_once("::")?;
    (is_path(module) && !name.is_empty()).then_some((module, name))
}

/// The module of an item path the checks have accepted.
fn module_of(path: &str) -> &str {
    split_item(path).map_or(path, |(module, _)| module)
}

/// The crate (first segment) of a module path.
fn crate_of(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// The crate of an item path as the facts write it: its first segment, up to `::` or `.`
/// (`alloc::vec::Vec.push` and `alloc.x` are `alloc`).
fn item_crate(path: &str) -> &str {
    let head = crate_of(path);
    head.split('.').next().unwrap_or(head)
}

/// Sorts and deduplicates a list.
fn sorted<T: Ord>(items: Vec<T>) -> Vec<T> {
    items.into_iter().collect::<BTreeSet<T>>().into_iter().collect()
}

fn check_catalog(catalog: DeclaredCatalog) -> Result<Catalog, DeclaredError> {
    let invalid = |fault| Err(DeclaredError::InvalidCatalog(fault));
    let mut tools = BTreeMap::new();
    let mut tool_names = BTreeMap::new();
    let mut listed = catalog.tools;
    listed.sort();
    for tool in listed {
        if tool.name.is_empty() {
            return invalid(CatalogFault::EmptyToolName);
        }
        if tool.mode.is_empty() {
            return invalid(CatalogFault::EmptyMode(tool.name));
        }
        let key = nfc(&tool.name).into_owned();
        if tool_names.contains_key(&key) {
            return invalid(CatalogFault::DuplicateTool(key));
        }
        tool_names.insert(key, tool.name.clone());
        tools.insert(tool.name.clone(), tool);
    }
    let mut unreadable: BTreeSet<UnreadableEntry> = catalog.unreadable.into_iter().collect();
    // The names kept (as given) and their NFC forms; a name equal after NFC to one in `seen` or to an
    // earlier one is a duplicate, named in NFC.
    let mut names = |mut list: Vec<String>, section, seen: &BTreeSet<String>| {
        list.sort();
        let (mut kept, mut keys) = (BTreeSet::new(), BTreeSet::new());
        for name in list {
            if name.is_empty() {
                unreadable.insert(UnreadableEntry::new(section, ""));
                continue;
            }
            let key = nfc(&name).into_owned();
            if seen.contains(&key) || !keys.insert(key.clone()) {
                return Err(key);
            }
            kept.insert(name);
        }
        Ok((kept, keys))
    };
    let duplicate_resource = |uri| DeclaredError::InvalidCatalog(CatalogFault::DuplicateResource(uri));
    let (resources, resource_keys) =
        names(catalog.resources, CatalogSection::Resources, &BTreeSet::new()).map_err(duplicate_resource)?;
    let (templates, _) = names(catalog.resource_templates, CatalogSection::ResourceTemplates, &resource_keys)
        .map_err(duplicate_resource)?;
    let (prompts, _) = names(catalog.prompts, CatalogSection::Prompts, &BTreeSet::new())
        .map_err(|name| DeclaredError::InvalidCatalog(CatalogFault::DuplicatePrompt(name)))?;
    Ok(Catalog { tools, tool_names, resources, templates, prompts, unreadable })
}

fn check_group(module: &str, source: GroupSource, name: &str) -> Result<(), DeclaredError> {
    let ok = match source {
        GroupSource::Application => !name.is_empty() && !name.contains("::"),
        GroupSource::BoundaryModule => is_path(name),
    };
    if ok {
        Ok(())
    } else {
        Err(DeclaredError::InvalidGroup { module: module.to_owned(), source, name: name.to_owned() })
    }
}

/// Checks the facts against the scope and returns them normalized.
fn check_facts(mut facts: CallFacts, host_modules: &BTreeSet<&str>) -> Result<CallFacts, DeclaredError> {
    if facts.format != FACTS_FORMAT {
        return Err(DeclaredError::UnsupportedFacts(facts.format));
    }
    facts.normalize();
    let invalid = |fault| Err(DeclaredError::InvalidFacts(fault));
    if let Some(source) =
        facts.bound.sources_used.iter().find(|s| ![LLVM_IR, CRATE_MAP].contains(&s.as_str()))
    {
        return invalid(FactsFault::UnknownSource(source.clone()));
    }
    let crates: BTreeSet<&str> = facts.crates.iter().map(String::as_str).collect();
    let paths = facts.edges.iter().flat_map(|e| [&e.caller, &e.callee]);
    let callers = facts.bound.dynamic_dispatch_sites.iter().map(|d| &d.caller);
    let external = facts.bound.external_callees.iter().map(|e| &e.caller);
    let all: BTreeSet<&String> = paths.chain(callers).chain(external).collect();
    for path in all {
        let Some((module, _)) = split_item(path) else {
            return invalid(FactsFault::NoModule(path.clone()));
        };
        if !crates.contains(crate_of(module)) && !host_modules.contains(module) {
            return invalid(FactsFault::OutOfScope(path.clone()));
        }
    }
    // An external callee of a scope crate is an in-scope call hidden in the bound. (A host-declared
    // module is not the facts' scope: the facts could not have read a call into it.)
    let external_callees = facts.bound.external_callees.iter().map(|e| &e.callee);
    if let Some(callee) =
        external_callees.collect::<BTreeSet<_>>().into_iter().find(|c| crates.contains(item_crate(c)))
    {
        return invalid(FactsFault::CalleeInScope(callee.clone()));
    }
    // Compile-time code is outside the runtime scope, and only compile-time code makes its calls.
    let compile_time: BTreeSet<&str> =
        facts.bound.macro_expansion_crates.iter().map(String::as_str).collect();
    if let Some(name) = compile_time.iter().find(|name| crates.contains(*name)) {
        return invalid(FactsFault::CompileTimeCrateInScope((*name).to_owned()));
    }
    let macro_callers: BTreeSet<&String> =
        facts.bound.macro_expansion_calls.iter().map(|c| &c.caller).collect();
    for caller in macro_callers {
        let Some((module, _)) = split_item(caller) else {
            return invalid(FactsFault::NoModule(caller.clone()));
        };
        if !compile_time.contains(crate_of(module)) {
            return invalid(FactsFault::NotCompileTime(caller.clone()));
        }
    }
    Ok(facts)
}

/// Checks the resource and prompt mappings: a module path, a part the catalog names (after NFC; kept as
/// the catalog names it), one module each.
fn check_readers(
    mappings: Vec<(ReaderKind, String, String)>,
    catalog: Option<&Catalog>,
) -> Result<BTreeMap<(ReaderKind, String), String>, DeclaredError> {
    let mut checked: BTreeMap<(ReaderKind, String), String> = BTreeMap::new();
    for (kind, part, module) in sorted(mappings) {
        if !is_path(&module) {
            return Err(DeclaredError::InvalidModule(module));
        }
        let key = nfc(&part);
        let named = catalog.and_then(|c| match kind {
            ReaderKind::Resource => c.resources.iter().chain(&c.templates).find(|u| nfc(u) == key),
            ReaderKind::Prompt => c.prompts.iter().find(|p| nfc(p) == key),
        });
        let Some(named) = named.cloned() else {
            return Err(match kind {
                ReaderKind::Resource => DeclaredError::UnknownResource(part),
                ReaderKind::Prompt => DeclaredError::UnknownPrompt(part),
            });
        };
        if let Some(first) = checked.get(&(kind, named.clone())) {
            let (reader, first) = (named, first.clone());
            return Err(DeclaredError::ConflictingReaderModule { reader, first, second: module });
        }
        checked.insert((kind, named), module);
    }
    Ok(checked)
}

fn check(builder: DeclaredBuilder) -> Result<Checked, DeclaredError> {
    if builder.server.is_empty() {
        return Err(DeclaredError::InvalidServer(builder.server));
    }
    let catalog = builder.catalog.map(check_catalog).transpose()?;
    let mut tool_modules: BTreeMap<String, String> = BTreeMap::new();
    for (tool, module) in sorted(builder.tool_modules) {
        if !is_path(&module) {
            return Err(DeclaredError::InvalidModule(module));
        }
        // The tool as the catalog names it (equal after NFC).
        let Some(tool) = catalog.as_ref().and_then(|c| c.tool_names.get(nfc(&tool).as_ref())).cloned() else {
            return Err(DeclaredError::UnknownTool(tool));
        };
        if let Some(first) = tool_modules.get(&tool) {
            return Err(DeclaredError::ConflictingToolModule { first: first.clone(), second: module, tool });
        }
        tool_modules.insert(tool, module);
    }
    let reader_modules = check_readers(builder.reader_modules, catalog.as_ref())?;
    let mut boundaries: BTreeMap<String, (GroupSource, String)> = BTreeMap::new();
    for (module, source, name) in sorted(builder.boundaries) {
        if !is_path(&module) {
            return Err(DeclaredError::InvalidModule(module));
        }
        check_group(&module, source, &name)?;
        if boundaries.contains_key(&module) {
            return Err(DeclaredError::ConflictingBoundary(module));
        }
        boundaries.insert(module, (source, name));
    }
    let edges: BTreeSet<(String, String)> = builder.edges.into_iter().collect();
    for (from, to) in &edges {
        if let Some(bad) = [from, to].into_iter().find(|m| !is_path(m)) {
            return Err(DeclaredError::InvalidModule(bad.clone()));
        }
    }
    let host_modules: BTreeSet<&str> = tool_modules
        .values()
        .chain(reader_modules.values())
        .chain(boundaries.keys())
        .chain(edges.iter().flat_map(|(from, to)| [from, to]))
        .map(String::as_str)
        .collect();
    let facts = builder.facts.map(|facts| check_facts(facts, &host_modules)).transpose()?;
    let mut dynamic_allowlist = BTreeSet::new();
    for caller in sorted(builder.dynamic_allowlist) {
        if split_item(&caller).is_none() {
            return Err(DeclaredError::InvalidAllowlistEntry(caller));
        }
        dynamic_allowlist.insert(nfc(&caller).into_owned());
    }
    let checked = Checked {
        server: builder.server,
        catalog,
        tool_modules,
        reader_modules,
        boundaries,
        edges,
        facts,
        dynamic_allowlist,
        level: builder.level,
        group_by_crate: builder.group_by_crate,
    };
    // Two module paths equal after NFC would be one id (CC-6): refused by name, at every level.
    let mut seen = BTreeSet::new();
    for module in modules(&checked) {
        let key = nfc(module);
        if !seen.insert(key.clone()) {
            return Err(DeclaredError::DuplicateModule(key.into_owned()));
        }
    }
    Ok(checked)
}

/// What a level adds to the bound and to `sources_used` besides the graph.
#[derive(Default)]
struct LevelBound {
    /// Tools with a mapping but no tool → code edge at this level.
    unlinked_tools: BTreeSet<String>,
    ungrouped_modules: Vec<String>,
    ungrouped_calls: Vec<CallEdge>,
    grouped_by_crate: bool,
}

pub(super) fn run(builder: DeclaredBuilder) -> Result<Declared, DeclaredError> {
    let input = check(builder)?;
    let mut parts = Parts::default();
    let mut sources: BTreeSet<&str> = BTreeSet::new();
    let mut bound = DeclaredBound::default();

    let server_node = Identity::Server { server: input.server.clone() };
    parts.node(server_node.clone(), Labels::new());
    if let Some(catalog) = &input.catalog {
        sources.insert(CATALOG);
        for tool in catalog_nodes(&input.server, catalog, &mut parts) {
            parts.edge(server_node.clone(), tool);
        }
        bound.unreadable_catalog_entries = catalog.unreadable.iter().cloned().collect();
    }
    let level = match input.level {
        DeclaredLevel::Module => module_level(&input, &mut parts),
        DeclaredLevel::Fn => fn_level(&input, &mut parts),
        DeclaredLevel::Boundary => boundary_level(&input, &mut parts),
    };
    let unmapped =
        input.catalog.iter().flat_map(|c| c.tools.keys()).filter(|t| !input.tool_modules.contains_key(*t));
    bound.tools_without_module =
        unmapped.cloned().chain(level.unlinked_tools).collect::<BTreeSet<_>>().into_iter().collect();
    bound.ungrouped_modules = level.ungrouped_modules;
    bound.ungrouped_calls = level.ungrouped_calls;
    if level.grouped_by_crate {
        sources.insert(CRATE_MAP);
    }
    let mapped = !(input.tool_modules.is_empty() && input.reader_modules.is_empty());
    let read_declarations = match input.level {
        DeclaredLevel::Fn => mapped,
        _ => mapped || !(input.boundaries.is_empty() && input.edges.is_empty()),
    };
    if read_declarations {
        sources.insert(HOST_DECLARATION);
    }
    let mut sources_used: BTreeSet<String> = sources.into_iter().map(str::to_owned).collect();
    if let Some(facts) = input.facts {
        // The facts' own sources, checked to be `llvm_ir` and `crate_map`.
        sources_used.extend(facts.bound.sources_used);
        let (allowlisted, dynamic): (Vec<DynamicSite>, Vec<DynamicSite>) = facts
            .bound
            .dynamic_dispatch_sites
            .into_iter()
            .partition(|site| input.dynamic_allowlist.contains(nfc(&site.caller).as_ref()));
        bound.dynamic_dispatch_sites = dynamic;
        bound.allowlisted_calls = allowlisted;
        bound.macro_expansion_calls = facts.bound.macro_expansion_calls;
        bound.macro_expansion_crates = facts.bound.macro_expansion_crates;
        bound.external_callees = facts.bound.external_callees;
        bound.crates_without_ir = facts.bound.crates_without_ir;
        bound.rustc_version = Some(facts.rustc_version);
    }
    bound.sources_used = sources_used.into_iter().collect();
    let graph = parts.into_graph()?;
    // Belt and braces: a build that succeeds has canonical bytes.
    connectome_canonical::check(&graph.to_canonical())?;
    Ok(Declared { graph, bound })
}

/// The calls of the facts (none without facts).
fn calls(input: &Checked) -> &[CallEdge] {
    input.facts.as_ref().map_or(&[], |f| &f.edges)
}

/// Module level: every module in scope; unique module edges without self-loops; tool → module edges.
fn module_level(input: &Checked, parts: &mut Parts) -> LevelBound {
    let module = |path: &str| Identity::Module { server: input.server.clone(), path: path.to_owned() };
    for path in modules(input) {
        parts.node(module(path), Labels::new());
    }
    for (part, path) in mapped_parts(input) {
        parts.edge(part, module(path));
    }
    let module_calls = calls(input).iter().map(|c| (module_of(&c.caller), module_of(&c.callee)));
    let host = input.edges.iter().map(|(from, to)| (from.as_str(), to.as_str()));
    for (from, to) in module_calls.chain(host).filter(|(from, to)| from != to) {
        parts.edge(module(from), module(to));
    }
    LevelBound::default()
}

/// Fn level: the functions of the calls, self-loops kept; no tool edges, no host edges.
fn fn_level(input: &Checked, parts: &mut Parts) -> LevelBound {
    let function = |path: &str| {
        let (module, name) = split_item(path).unwrap_or((path, ""));
        Identity::Fn { server: input.server.clone(), path: module.to_owned(), name: name.to_owned() }
    };
    for call in calls(input) {
        parts.edge(function(&call.caller), function(&call.callee));
    }
    LevelBound::default()
}

/// Boundary level: declared groups, else (when asked) crates; ungrouped modules and calls are bounded.
fn boundary_level(input: &Checked, parts: &mut Parts) -> LevelBound {
    let mut level = LevelBound::default();
    // The group of a module and whether it came from the crate map.
    let group = |path: &str| -> Option<(Identity, bool)> {
        let (source, name, by_crate) = match input.boundaries.get(path) {
            Some((source, name)) => (*source, name.clone(), false),
            None if input.group_by_crate => (GroupSource::Application, crate_of(path).to_owned(), true),
            None => return None,
        };
        Some((Identity::Boundary { server: input.server.clone(), source, name }, by_crate))
    };
    for path in modules(input) {
        match group(path) {
            Some((identity, by_crate)) => {
                level.grouped_by_crate |= by_crate;
                parts.node(identity, Labels::new());
            }
            None => level.ungrouped_modules.push(path.to_owned()),
        }
    }
    for (tool, path) in &input.tool_modules {
        match group(path) {
            Some((identity, _)) => parts.edge(tool_identity(&input.server, tool), identity),
            None => {
                level.unlinked_tools.insert(tool.clone());
            }
        }
    }
    for (part, path) in mapped_parts(input).skip(input.tool_modules.len()) {
        if let Some((identity, _)) = group(path) {
            parts.edge(part, identity);
        }
    }
    let item_calls = calls(input).iter().map(|c| (c.clone(), module_of(&c.caller), module_of(&c.callee)));
    let host = input.edges.iter().map(|(from, to)| {
        (CallEdge { caller: from.clone(), callee: to.clone() }, from.as_str(), to.as_str())
    });
    let mut ungrouped = BTreeSet::new();
    for (call, from, to) in item_calls.chain(host) {
        match (group(from), group(to)) {
            (Some((from, _)), Some((to, _))) if from != to => parts.edge(from, to),
            (Some(_), Some(_)) => {}
            _ => {
                ungrouped.insert(call);
            }
        }
    }
    level.ungrouped_calls = ungrouped.into_iter().collect();
    level
}

/// Every mapped catalog part with its module: the tools first, then the resources and prompts.
fn mapped_parts(input: &Checked) -> impl Iterator<Item = (Identity, &str)> {
    let server = &input.server;
    let tools = input.tool_modules.iter().map(|(tool, path)| (tool_identity(server, tool), path.as_str()));
    let readers = input.reader_modules.iter().map(|((kind, part), path)| {
        let identity = match kind {
            ReaderKind::Resource => Identity::Resource { server: server.clone(), uri: part.clone() },
            ReaderKind::Prompt => Identity::Prompt { server: server.clone(), name: part.clone() },
        };
        (identity, path.as_str())
    });
    tools.chain(readers)
}

fn tool_identity(server: &str, name: &str) -> Identity {
    Identity::Tool { server: server.to_owned(), name: name.to_owned() }
}

/// The catalog's nodes (tools labelled `mode` and `command_class`, templates `template: true`); returns the
/// tool identities.
fn catalog_nodes(server: &str, catalog: &Catalog, parts: &mut Parts) -> Vec<Identity> {
    let mut tools = Vec::new();
    for tool in catalog.tools.values() {
        let mut labels = Labels::new();
        labels.insert("mode".to_owned(), Value::Str(tool.mode.clone()));
        if let Some(class) = &tool.command_class {
            labels.insert("command_class".to_owned(), Value::Str(class.clone()));
        }
        let identity = tool_identity(server, &tool.name);
        parts.node(identity.clone(), labels);
        tools.push(identity);
    }
    for uri in &catalog.resources {
        parts.node(Identity::Resource { server: server.to_owned(), uri: uri.clone() }, Labels::new());
    }
    for uri in &catalog.templates {
        let labels = Labels::from([("template".to_owned(), Value::Bool(true))]);
        parts.node(Identity::Resource { server: server.to_owned(), uri: uri.clone() }, labels);
    }
    for name in &catalog.prompts {
        parts.node(Identity::Prompt { server: server.to_owned(), name: name.clone() }, Labels::new());
    }
    tools
}

/// Every module in scope: the modules the facts mention and every host-declared module.
fn modules(input: &Checked) -> BTreeSet<&str> {
    let mut modules: BTreeSet<&str> = input
        .tool_modules
        .values()
        .chain(input.reader_modules.values())
        .chain(input.boundaries.keys())
        .chain(input.edges.iter().flat_map(|(from, to)| [from, to]))
        .map(String::as_str)
        .collect();
    if let Some(facts) = &input.facts {
        let calls = facts.edges.iter().flat_map(|e| [&e.caller, &e.callee]);
        let sites = facts.bound.dynamic_dispatch_sites.iter().map(|d| &d.caller);
        let external = facts.bound.external_callees.iter().map(|e| &e.caller);
        modules.extend(calls.chain(sites).chain(external).map(|path| module_of(path)));
    }
    modules
}
