//! The refusals of the declared builder ([CD-1] mapped to Rust).
//!
//! [CD-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use connectome_canonical::Uncanonical;

use crate::error::GraphError;
use crate::identity::GroupSource;

/// Why the catalog was refused (`{:invalid, :catalog, r}`, [CD-3]). Names are compared after NFC, and a
/// duplicate is named in NFC.
///
/// [CD-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogFault {
    /// A tool has an empty name.
    EmptyToolName,
    /// The named tool has an empty mode.
    EmptyMode(String),
    /// A tool name appears twice (after NFC).
    DuplicateTool(String),
    /// A resource URI or template appears twice, or as both (after NFC).
    DuplicateResource(String),
    /// A prompt name appears twice (after NFC).
    DuplicatePrompt(String),
}

/// Why the call facts were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactsFault {
    /// `sources_used` names something other than `llvm_ir` or `crate_map`.
    UnknownSource(String),
    /// A path of a call, dynamic site or external callee's caller has no module (`crate::item` at least).
    NoModule(String),
    /// A path in the facts whose crate is not in `facts.crates` and whose module no host declaration names.
    OutOfScope(String),
    /// An external callee whose callee belongs to a crate of `facts.crates` (an in-scope call would hide
    /// in the bound); names the callee.
    CalleeInScope(String),
    /// A crate in both `crates` and `macro_expansion_crates`.
    CompileTimeCrateInScope(String),
    /// A `macro_expansion_calls` caller whose crate is not in `macro_expansion_crates` (a runtime call
    /// would hide in the bound); names the caller.
    NotCompileTime(String),
}

/// A refusal of [`crate::declared::DeclaredBuilder::build`], reported for the first fault in sorted input
/// order.
#[derive(Debug, Clone, PartialEq)]
pub enum DeclaredError {
    /// `{:invalid, :server, v}`: the server name is empty.
    InvalidServer(String),
    /// `{:invalid, :catalog, r}`.
    InvalidCatalog(CatalogFault),
    /// A `tool_module` names a tool the catalog does not (or no catalog was given).
    UnknownTool(String),
    /// A tool is mapped to two modules.
    ConflictingToolModule {
        /// The tool.
        tool: String,
        /// The first module in sorted order.
        first: String,
        /// The second module.
        second: String,
    },
    /// A `resource_module` names a resource or template the catalog does not (or no catalog was given).
    UnknownResource(String),
    /// A `prompt_module` names a prompt the catalog does not (or no catalog was given).
    UnknownPrompt(String),
    /// A resource, template or prompt is mapped to two modules.
    ConflictingReaderModule {
        /// The resource URI, template or prompt name.
        reader: String,
        /// The first module in sorted order.
        first: String,
        /// The second module.
        second: String,
    },
    /// A host-declared module path is not a Rust path (empty, or an empty `::` segment).
    InvalidModule(String),
    /// A boundary group name is malformed: empty, a crate name with `::`, or a root that is not a path.
    InvalidGroup {
        /// The module the boundary was declared for.
        module: String,
        /// The group's source.
        source: GroupSource,
        /// The group's name.
        name: String,
    },
    /// A module is declared in two groups.
    ConflictingBoundary(String),
    /// A `dynamic_allowlist` entry is not an item path (`crate::module::item`).
    InvalidAllowlistEntry(String),
    /// Two distinct module paths in scope (host-declared or from the facts) are equal after NFC; names the
    /// path in NFC.
    DuplicateModule(String),
    /// The facts have a format other than [`crate::facts::FACTS_FORMAT`].
    UnsupportedFacts(u32),
    /// The facts are inconsistent.
    InvalidFacts(FactsFault),
    /// The graph could not be built (not expected: ids are injective and every edge end is a node).
    Graph(GraphError),
    /// The graph would have no canonical bytes ([CC-14]), e.g. two group or function ids equal after NFC.
    ///
    /// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Uncanonical(Uncanonical),
}

impl fmt::Display for CatalogFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogFault::EmptyToolName => write!(f, "a tool has an empty name"),
            CatalogFault::EmptyMode(tool) => write!(f, "tool {tool:?} has an empty mode"),
            CatalogFault::DuplicateTool(tool) => write!(f, "duplicate tool {tool:?}"),
            CatalogFault::DuplicateResource(uri) => write!(f, "duplicate resource {uri:?}"),
            CatalogFault::DuplicatePrompt(name) => write!(f, "duplicate prompt {name:?}"),
        }
    }
}

impl fmt::Display for FactsFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FactsFault::UnknownSource(s) => write!(f, "unknown source {s:?}"),
            FactsFault::NoModule(path) => write!(f, "path {path:?} has no module"),
            FactsFault::OutOfScope(path) => write!(f, "path {path:?} is outside the scope"),
            FactsFault::CalleeInScope(path) => write!(f, "external callee {path:?} is inside the scope"),
            FactsFault::CompileTimeCrateInScope(name) => {
                write!(f, "crate {name:?} is both in scope and compile-time")
            }
            FactsFault::NotCompileTime(path) => {
                write!(f, "macro expansion caller {path:?} is not in a compile-time crate")
            }
        }
    }
}

impl fmt::Display for DeclaredError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclaredError::InvalidServer(s) => write!(f, "invalid server {s:?}"),
            DeclaredError::InvalidCatalog(fault) => write!(f, "invalid catalog: {fault}"),
            DeclaredError::UnknownTool(tool) => write!(f, "tool_module for unknown tool {tool:?}"),
            DeclaredError::ConflictingToolModule { tool, first, second } => {
                write!(f, "tool {tool:?} mapped to both {first:?} and {second:?}")
            }
            DeclaredError::UnknownResource(uri) => write!(f, "resource_module for unknown resource {uri:?}"),
            DeclaredError::UnknownPrompt(name) => write!(f, "prompt_module for unknown prompt {name:?}"),
            DeclaredError::ConflictingReaderModule { reader, first, second } => {
                write!(f, "{reader:?} mapped to both {first:?} and {second:?}")
            }
            DeclaredError::InvalidModule(path) => write!(f, "invalid module path {path:?}"),
            DeclaredError::InvalidGroup { module, source, name } => {
                write!(f, "invalid {} group {name:?} for module {module:?}", source.as_str())
            }
            DeclaredError::ConflictingBoundary(module) => write!(f, "module {module:?} is in two groups"),
            DeclaredError::InvalidAllowlistEntry(caller) => {
                write!(f, "dynamic_allowlist entry {caller:?} is not an item path")
            }
            DeclaredError::DuplicateModule(path) => write!(f, "module paths equal after NFC: {path:?}"),
            DeclaredError::UnsupportedFacts(n) => write!(f, "unsupported call facts format {n}"),
            DeclaredError::InvalidFacts(fault) => write!(f, "invalid call facts: {fault}"),
            DeclaredError::Graph(e) => write!(f, "declared graph: {e}"),
            DeclaredError::Uncanonical(e) => write!(f, "declared graph has no canonical bytes: {e}"),
        }
    }
}

impl std::error::Error for DeclaredError {}

impl From<Uncanonical> for DeclaredError {
    fn from(e: Uncanonical) -> DeclaredError {
        DeclaredError::Uncanonical(e)
    }
}

impl From<GraphError> for DeclaredError {
    fn from(e: GraphError) -> DeclaredError {
        DeclaredError::Graph(e)
    }
}
