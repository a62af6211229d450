//! The declared builder (docs/connectome.md [CD-1]…[CD-9] mapped to Rust, [CK-6]…[CK-9]): what *can* happen in a
//! composed server, read from the catalog, host declarations and the offline call facts.
//!
//! # Input
//!
//! [`Declared::builder`] takes the server name; the builder then takes, all optional:
//!
//! - [`DeclaredBuilder::catalog`]: a [`DeclaredCatalog`] the host copies out of its own catalog (this crate
//!   depends on no protocol crate): tools with their `mode` and optional `command_class`, resource URIs,
//!   resource templates, prompt names, and the entries the host could not read;
//! - host declarations ([CK-8], a *claim*, not a reading): [`DeclaredBuilder::tool_module`] (tool → module),
//!   [`DeclaredBuilder::resource_module`] and [`DeclaredBuilder::prompt_module`] (resource or prompt → module),
//!   [`DeclaredBuilder::boundary`] (module → group) and [`DeclaredBuilder::edge`] (module → module);
//! - [`DeclaredBuilder::facts`]: the [`CallFacts`] read offline from the LLVM IR rustc emitted ([CK-6]);
//! - [`DeclaredBuilder::allow_dynamic`] (`dynamic_allowlist`): callers whose dynamic dispatch sites the
//!   host vouches for;
//! - [`DeclaredBuilder::level`] ([`DeclaredLevel::Module`] by default) and
//!   [`DeclaredBuilder::group_by_crate`] (boundary level only).
//!
//! Module paths are Rust paths (`my_crate::tools`); a call path's module is the path minus its last
//! segment. [`DeclaredBuilder::build`] checks the whole input before it builds anything and refuses with
//! a [`DeclaredError`] ([CD-1] mapped): an empty server name, a catalog that names a tool without a name or
//! mode, or names a tool, resource (template) or prompt twice, a `tool_module` for a tool the catalog does
//! not name (refused, not bounded: a mapping for a tool that does not exist is a host mistake), one tool
//! or one module mapped twice differently, a malformed path or group, an allowlisted caller that is not
//! an item path, two module paths equal after NFC, and facts of another format, naming an unknown source,
//! naming a path outside the scope, an external callee inside it, or compile-time code that is not. Names
//! are compared after NFC ([CC-6]), as the canonical writer compares ids: `café` and `cafe\u{301}` are one
//! tool. When several faults exist, the first in sorted input order is reported, so a shuffled input is
//! refused the same way. Last, a build whose graph would have no canonical bytes (two ids equal after
//! NFC that no earlier check names, e.g. two such groups or functions) is refused with
//! [`DeclaredError::Uncanonical`]: a successful build always has canonical bytes.
//!
//! # Result ([CD-2], [CD-3])
//!
//! A [`Declared`] holds the [`Graph`] and its [`DeclaredBound`]. Every edge is `invoke`, `declared`, with
//! sign `unset` and no weight; ids come only from [`crate::Identity::id`]. The server node and one node
//! per catalog part are at level `server`. Tools are labelled `mode` and, when given, `command_class`,
//! and have an `invoke` edge server → tool at every level. Resources, resource templates and prompts have
//! no edge from the server (a declared resource is not a read); one mapped to a module has an edge to it,
//! as a tool does. A resource template is a resource node
//! keyed by its `uriTemplate` and labelled `template: true` (spec [CD-3] and [CU-3] leave templates open; they
//! are declared, so they are nodes). An entry with an empty name is bounded as unreadable, never refused.
//!
//! # Levels and scope ([CD-6], [CA-12])
//!
//! The scope is the crates the facts name (`facts.crates`) plus every module a host declaration names: a
//! module is in scope when its first segment is a crate in scope or the host declared it. The scope holds
//! every module the facts mention (the ends of calls, callers of dynamic sites and of external callees)
//! and every host-declared module.
//!
//! - **Module** (default): a node for every module in scope, even if uncalled; calls and host edges become
//!   unique module → module edges, self-loops dropped; a tool mapped to a module has an edge tool → module.
//! - **Fn**: a node only for each function that appears in a call of the facts, self-loops kept; no tool
//!   edges (as at level `mfa`). Host edges and boundaries are module-level claims and are not read.
//! - **Boundary**: a module's group comes from [`DeclaredBuilder::boundary`] (exact path only), else — with
//!   [`DeclaredBuilder::group_by_crate`] — from its crate (a crate stands where an OTP application stood,
//!   source `application`); Rust has no runtime application lookup, so nothing else is consulted. A module
//!   with no group goes to `ungrouped_modules` and each of its calls to `ungrouped_calls`: never guessed.
//!   Group nodes are kind `module` at level `boundary`; self-loops are dropped; a tool mapped to a grouped
//!   module has an edge tool → group.
//!
//! # The bound ([CD-7])
//!
//! [`DeclaredBound`] enumerates what the graph does not show, each field a sorted, deduplicated list,
//! never a count: the facts' dynamic dispatch sites, split into those of allowlisted callers
//! (`allowlisted_calls`) and the rest; the facts' compile-time calls and crates, external callees and
//! crates without IR; unreadable catalog entries; tools without a module edge; ungrouped modules and
//! calls; the sources used; and the facts' `rustc_version`.
//!
//! `sources_used` ⊆ `catalog`, `crate_map`, `host_declaration`, `llvm_ir`: `catalog` when a catalog was
//! given; `host_declaration` when a host declaration was read at this level; the facts' own
//! `sources_used` copied (`crate_map`: cargo mapped the crates to their IR files; `llvm_ir`: IR was
//! read); and `crate_map` when a module was grouped by its crate. `crate_map` thus always means that
//! cargo's crate map was relied on. The allowlist is not a source: it adds no node or edge, and what it
//! vouches for stays listed in `allowlisted_calls`.
//!
//! # Blind spots ([CD-8] adapted)
//!
//! - A module passed *as data* to library code — a trait object stored in a struct, a callback handed to
//!   a runtime, a `tokio::spawn` target — is neither an edge nor in the bound, except as the dynamic
//!   dispatch site where it is finally called.
//! - `#[inline(always)]` callees can vanish from the IR even at opt-level 0, and their calls with them.
//! - Async code makes much of a server indirect (`dyn Future`, boxed closures): the dynamic dispatch
//!   sites will be many, and the edges behind them are not read.
//! - Host declarations are claims: the build checks their shape, not their truth; only the diff with the
//!   observed side catches a wrong one. `sources_used` says whether a build read or was told.
//! - Macro-expanded and generic code is read as compiled, but build scripts and proc macros run at
//!   compile time and are never edges: they appear only as the facts' `macro_expansion_crates` and
//!   `macro_expansion_calls`, and only when the facts producer was asked for them.
//!
//! [CA-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CD-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CU-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

mod build;
mod error;

use serde::Serialize;

pub use error::{CatalogFault, DeclaredError, FactsFault};

use crate::facts::{CallEdge, CallFacts, DynamicSite};
use crate::graph::Graph;
use crate::identity::GroupSource;
use connectome_canonical::Level;

/// A catalog tool as the host declares it ([CD-3]).
///
/// [CD-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeclaredTool {
    /// The tool name (required, non-empty).
    pub name: String,
    /// The tool's mode, e.g. `read_only` or `mutate` (required, non-empty); written as label `mode`.
    pub mode: String,
    /// The command class, written as label `command_class` only when given.
    pub command_class: Option<String>,
}

impl DeclaredTool {
    /// A tool with a name and a mode and no command class.
    pub fn new(name: impl Into<String>, mode: impl Into<String>) -> DeclaredTool {
        DeclaredTool { name: name.into(), mode: mode.into(), command_class: None }
    }

    /// The same tool with a command class.
    pub fn with_command_class(mut self, command_class: impl Into<String>) -> DeclaredTool {
        self.command_class = Some(command_class.into());
        self
    }
}

/// A section of the catalog; variants are in the order of their written names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CatalogSection {
    /// `prompts`.
    Prompts,
    /// `resource_templates`.
    ResourceTemplates,
    /// `resources`.
    Resources,
    /// `tools`.
    Tools,
}

/// A catalog entry with no usable name ([CD-3]): `{section, entry}`.
///
/// [CD-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct UnreadableEntry {
    /// The section the entry was in.
    pub section: CatalogSection,
    /// What the host can say of the entry (e.g. `opaque`); the empty string for an empty name.
    pub entry: String,
}

impl UnreadableEntry {
    /// An unreadable entry of `section`.
    pub fn new(section: CatalogSection, entry: impl Into<String>) -> UnreadableEntry {
        UnreadableEntry { section, entry: entry.into() }
    }
}

/// The catalog as the host copies it for the builder, independent of the protocol crates ([CD-3]).
///
/// [CD-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeclaredCatalog {
    /// The tools; each name at most once.
    pub tools: Vec<DeclaredTool>,
    /// The resource URIs; each at most once (empty → unreadable).
    pub resources: Vec<String>,
    /// The resource templates' `uriTemplate`s; each at most once and never also a resource URI.
    pub resource_templates: Vec<String>,
    /// The prompt names; each at most once (empty → unreadable).
    pub prompts: Vec<String>,
    /// The entries the host found but could not name.
    pub unreadable: Vec<UnreadableEntry>,
}

/// What a reader mapping names: a resource (or template) or a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum ReaderKind {
    /// A resource URI or a resource template.
    Resource,
    /// A prompt name.
    Prompt,
}

/// The level a declared graph is built at ([CD-6]).
///
/// [CD-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum DeclaredLevel {
    /// Module nodes and module → module edges (the default).
    #[default]
    Module,
    /// Function nodes (level `mfa`) and function → function edges; no tool edges.
    Fn,
    /// Group nodes (level `boundary`) and group → group edges.
    Boundary,
}

impl DeclaredLevel {
    /// The graph level of this build's code nodes.
    pub fn level(self) -> Level {
        match self {
            DeclaredLevel::Module => Level::Module,
            DeclaredLevel::Fn => Level::Mfa,
            DeclaredLevel::Boundary => Level::Boundary,
        }
    }
}

/// The completeness bound of a declared build ([CD-7] mapped to Rust): every list sorted and deduplicated,
/// never a count. Serializes as a JSON object with these member names.
///
/// [CD-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct DeclaredBound {
    /// Indirect call sites per caller, from the facts (the analogue of unresolved calls), except those of
    /// allowlisted callers.
    pub dynamic_dispatch_sites: Vec<DynamicSite>,
    /// The facts' indirect call sites whose caller the host allowlisted ([`DeclaredBuilder::allow_dynamic`]).
    pub allowlisted_calls: Vec<DynamicSite>,
    /// Calls made by compile-time code (proc macros, build scripts), from the facts: never edges.
    pub macro_expansion_calls: Vec<CallEdge>,
    /// Compile-time crates the facts name and did not read as runtime code.
    pub macro_expansion_crates: Vec<String>,
    /// Calls from an item in scope to an item outside it, from the facts.
    pub external_callees: Vec<CallEdge>,
    /// Crates in scope with no IR, from the facts.
    pub crates_without_ir: Vec<String>,
    /// Catalog entries with no usable name: the host's, plus empty names.
    pub unreadable_catalog_entries: Vec<UnreadableEntry>,
    /// Catalog tools with no tool → code edge: no `tool_module` (any level), or, at boundary level, one
    /// naming an ungrouped module. The fn level has no tool edges by rule, so it lists unmapped tools.
    pub tools_without_module: Vec<String>,
    /// Boundary level: modules in scope with no group.
    pub ungrouped_modules: Vec<String>,
    /// Boundary level: calls with an end in an ungrouped module — item paths for calls of the facts,
    /// module paths for host-declared edges.
    pub ungrouped_calls: Vec<CallEdge>,
    /// The sources this build read, ⊆ `catalog`, `crate_map`, `host_declaration`, `llvm_ir` (module
    /// docs): the facts' sources are copied, and `crate_map` is added when modules were grouped by crate.
    pub sources_used: Vec<String>,
    /// `rustc --version` of the toolchain that emitted the IR, when facts were given.
    pub rustc_version: Option<String>,
}

/// A declared build: the graph and what it does not show ([CD-2]).
///
/// [CD-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    /// The declared graph: every edge `invoke`, `declared`, sign unset, no weight.
    pub graph: Graph,
    /// The completeness bound.
    pub bound: DeclaredBound,
}

impl Declared {
    /// Starts a build for `server` ([CD-1]); see the module docs for the options.
    ///
    /// [CD-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn builder(server: impl Into<String>) -> DeclaredBuilder {
        DeclaredBuilder { server: server.into(), ..DeclaredBuilder::default() }
    }
}

/// The options of a declared build ([CD-1]); [`DeclaredBuilder::build`] checks and builds.
///
/// [CD-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Default)]
pub struct DeclaredBuilder {
    server: String,
    catalog: Option<DeclaredCatalog>,
    tool_modules: Vec<(String, String)>,
    reader_modules: Vec<(ReaderKind, String, String)>,
    boundaries: Vec<(String, GroupSource, String)>,
    edges: Vec<(String, String)>,
    facts: Option<CallFacts>,
    dynamic_allowlist: Vec<String>,
    level: DeclaredLevel,
    group_by_crate: bool,
}

impl DeclaredBuilder {
    /// Sets the catalog (a later call replaces an earlier one); source `catalog`.
    pub fn catalog(mut self, catalog: DeclaredCatalog) -> DeclaredBuilder {
        self.catalog = Some(catalog);
        self
    }

    /// Declares that `tool` is served by `module` (a Rust path); source `host_declaration`.
    pub fn tool_module(mut self, tool: impl Into<String>, module: impl Into<String>) -> DeclaredBuilder {
        self.tool_modules.push((tool.into(), module.into()));
        self
    }

    /// Declares that the resource or resource template `uri` is read by `module` (a Rust path): an edge
    /// resource → module ([CD-3]); source `host_declaration`.
    ///
    /// [CD-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn resource_module(mut self, uri: impl Into<String>, module: impl Into<String>) -> DeclaredBuilder {
        self.reader_modules.push((ReaderKind::Resource, uri.into(), module.into()));
        self
    }

    /// Declares that the prompt `name` is rendered by `module` (a Rust path): an edge prompt → module
    /// ([CD-3]); source `host_declaration`.
    ///
    /// [CD-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn prompt_module(mut self, name: impl Into<String>, module: impl Into<String>) -> DeclaredBuilder {
        self.reader_modules.push((ReaderKind::Prompt, name.into(), module.into()));
        self
    }

    /// Declares that `module` belongs to the group `(source, name)`; source `host_declaration`.
    pub fn boundary(
        mut self,
        module: impl Into<String>,
        source: GroupSource,
        name: impl Into<String>,
    ) -> DeclaredBuilder {
        self.boundaries.push((module.into(), source, name.into()));
        self
    }

    /// Declares a module → module call; source `host_declaration`.
    pub fn edge(mut self, from: impl Into<String>, to: impl Into<String>) -> DeclaredBuilder {
        self.edges.push((from.into(), to.into()));
        self
    }

    /// Sets the call facts (a later call replaces an earlier one); their `sources_used` are copied.
    pub fn facts(mut self, facts: CallFacts) -> DeclaredBuilder {
        self.facts = Some(facts);
        self
    }

    /// Vouches for the dynamic dispatch sites of `caller`, an item path (`my_crate::tools::run`, as the
    /// facts name it): they move from `dynamic_dispatch_sites` to `allowlisted_calls` (`dynamic_allowlist`,
    /// [CD-1]). A caller with no site changes nothing.
    ///
    /// [CD-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn allow_dynamic(mut self, caller: impl Into<String>) -> DeclaredBuilder {
        self.dynamic_allowlist.push(caller.into());
        self
    }

    /// Sets the level ([`DeclaredLevel::Module`] by default).
    pub fn level(mut self, level: DeclaredLevel) -> DeclaredBuilder {
        self.level = level;
        self
    }

    /// At boundary level, groups a module no boundary names by its crate: cargo's crate map stands for
    /// the OTP application (source `crate_map`).
    pub fn group_by_crate(mut self, on: bool) -> DeclaredBuilder {
        self.group_by_crate = on;
        self
    }

    /// Checks the input and builds the graph and its bound ([CD-2]…[CD-7]).
    ///
    /// [CD-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CD-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn build(self) -> Result<Declared, DeclaredError> {
        build::run(self)
    }
}
