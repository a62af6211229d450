//! The connectome on the wire (feature `connectome`; docs/connectome.md §H).
//!
//! The connectome is not an MCP capability and none is claimed: the package serves it only when the host
//! lists it. A host that wants it
//!
//! 1. lists [`resources()`] in its catalog (three read-only `application/json` resources, sorted by uri:
//!    `connectome://declared`, `connectome://diff`, `connectome://observed`) and answers a read of one
//!    of them with [`Surface::read`] from its resource reader;
//! 2. optionally lists the copyable [`tool_spec()`] (the package ships no tool of its own; this is the
//!    spec a host copies) and answers it with [`Surface::call`] from its dispatch.
//!
//! A read answers the canonical bytes, byte-identical to the file exports
//! ([`Graph::to_canonical_bytes`], [`Diff::encode`]); a call answers `{"graph", "bytes", "<algorithm>":
//! "<hex>"}` as structured content, the bytes verbatim and the hash keyed by the algorithm's name.
//! Neither changes any state: a read is not a dispatch, so a running collector does not record it; a
//! call *through dispatch* is a dispatch like any other, so the collector records that call (the
//! observed graph stops changing after the first call, its sidecar weight keeps growing).
//!
//! [`declared_catalog`] turns the host's [`Listing`] into the declared builder's input.

use std::sync::Arc;

pub use connectome_canonical as canonical;
pub use connectome_graph as graph;
pub use connectome_observe as observe;

use connectome_graph::declared::{DeclaredCatalog, DeclaredTool};
use connectome_graph::{Algorithm, Diff, DiffError, Graph, Uncanonical};
use connectome_observe::{Collector, ObserveError};
use mcp_kernel_router::resources::{ResourceEntry, ResourceSpec};
use mcp_kernel_router::{Arguments, Listing, Mode, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_wire::types::ResourceContents;
use serde_json::json;

/// The declared graph's resource uri.
pub const DECLARED_URI: &str = "connectome://declared";
/// The diff record's resource uri.
pub const DIFF_URI: &str = "connectome://diff";
/// The observed graph's resource uri.
pub const OBSERVED_URI: &str = "connectome://observed";
/// The MIME type of every connectome resource.
pub const MIME_TYPE: &str = "application/json";
/// The name of the copyable tool.
pub const TOOL_NAME: &str = "connectome";

/// One of the three connectome documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Which {
    /// The declared graph.
    Declared,
    /// The observed graph.
    Observed,
    /// The diff record.
    Diff,
}

impl Which {
    /// The name used by the tool's `graph` argument.
    pub fn name(self) -> &'static str {
        match self {
            Which::Declared => "declared",
            Which::Observed => "observed",
            Which::Diff => "diff",
        }
    }

    /// The resource uri.
    pub fn uri(self) -> &'static str {
        match self {
            Which::Declared => DECLARED_URI,
            Which::Observed => OBSERVED_URI,
            Which::Diff => DIFF_URI,
        }
    }

    /// The document a uri names, if it is one of the three.
    pub fn from_uri(uri: &str) -> Option<Which> {
        [Which::Declared, Which::Diff, Which::Observed].into_iter().find(|w| w.uri() == uri)
    }

    /// The document a tool argument names, if it is one of the three.
    pub fn from_name(name: &str) -> Option<Which> {
        [Which::Declared, Which::Diff, Which::Observed].into_iter().find(|w| w.name() == name)
    }
}

/// The three resources, sorted by uri, for the host's catalog ([CH-1]).
///
/// [CH-1]: crate::manual::connectome
pub fn resources() -> Vec<ResourceEntry> {
    [
        (DECLARED_URI, "connectome-declared", "Declared connectome"),
        (DIFF_URI, "connectome-diff", "Connectome diff"),
        (OBSERVED_URI, "connectome-observed", "Observed connectome"),
    ]
    .into_iter()
    .map(|(uri, name, title)| ResourceSpec::new(uri, name).title(title).mime_type(MIME_TYPE).into())
    .collect()
}

/// The copyable tool spec ([CH-3]): `connectome`, command class `observe`, read-only, one required `graph`
/// argument from `declared` / `observed` / `diff`; any other value is refused before dispatch.
///
/// [CH-3]: crate::manual::connectome
pub fn tool_spec() -> ToolSpec {
    ToolSpec::new(TOOL_NAME, Mode::ReadOnly)
        .command_class("observe")
        .description("Read a connectome graph as canonical JSON.")
        .input_schema(json!({
            "type": "object",
            "properties": {"graph": {"type": "string", "enum": ["declared", "observed", "diff"]}},
            "required": ["graph"],
            "additionalProperties": false
        }))
}

/// The declared builder's catalog input for the host's capabilities: tools with their mode
/// (`read_only` / `proposal`) and command class, resources, templates and prompts by name.
pub fn declared_catalog(capabilities: &Listing) -> DeclaredCatalog {
    let mut catalog = DeclaredCatalog::default();
    for tool in &capabilities.tools {
        let mode = match tool.mode() {
            Mode::ReadOnly => "read_only",
            Mode::Proposal => "proposal",
        };
        let mut declared = DeclaredTool::new(tool.name(), mode);
        if let Some(class) = tool.get_command_class() {
            declared = declared.with_command_class(class);
        }
        catalog.tools.push(declared);
    }
    for entry in &capabilities.resources {
        match entry {
            ResourceEntry::Resource(spec) => catalog.resources.push(spec.uri().to_owned()),
            ResourceEntry::Template(spec) => catalog.resource_templates.push(spec.uri_template().to_owned()),
        }
    }
    catalog.prompts.extend(capabilities.prompts.iter().map(|p| p.name().to_owned()));
    catalog
}

/// Why a document could not be produced ([CH-2], [CH-4]); errors of the parts pass through unchanged.
///
/// [CH-2]: crate::manual::connectome
/// [CH-4]: crate::manual::connectome
#[derive(Debug)]
pub enum SurfaceError {
    /// The surface was built without the part this document needs (`"declared"`, `"observed"`,
    /// `"window"`).
    Missing(&'static str),
    /// The declared graph has no canonical bytes.
    Declared(Box<Uncanonical>),
    /// The collector refused (not started, or no canonical form).
    Observed(Box<ObserveError>),
    /// The diff refused its inputs.
    Diff(Box<DiffError>),
}

impl std::fmt::Display for SurfaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SurfaceError::Missing(part) => write!(f, "missing {part}"),
            SurfaceError::Declared(e) => write!(f, "declared graph: {e}"),
            SurfaceError::Observed(e) => write!(f, "observed graph: {e}"),
            SurfaceError::Diff(e) => write!(f, "diff: {e}"),
        }
    }
}

impl std::error::Error for SurfaceError {}

type WindowFn = Arc<dyn Fn() -> serde_json::Value + Send + Sync>;

/// The host's connectome sources, read-only: a declared graph, a collector and the diff's window.
///
/// Cheap to clone (the parts are shared). Every part is optional; a document whose part is missing is
/// refused with [`SurfaceError::Missing`].
#[derive(Clone, Default)]
pub struct Surface {
    declared: Option<Arc<Graph>>,
    observed: Option<Collector>,
    window: Option<WindowFn>,
    algorithm: Algorithm,
}

impl std::fmt::Debug for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Surface")
            .field("declared", &self.declared.is_some())
            .field("observed", &self.observed.is_some())
            .field("window", &self.window.is_some())
            .field("algorithm", &self.algorithm)
            .finish()
    }
}

impl Surface {
    /// An empty surface (every document refused as missing) naming the default digest, sha256.
    pub fn new() -> Surface {
        Surface::default()
    }

    /// Serves `graph` as the declared document.
    pub fn declared(mut self, graph: Graph) -> Surface {
        self.declared = Some(Arc::new(graph));
        self
    }

    /// Serves the collector's snapshot as the observed document.
    pub fn observed(mut self, collector: Collector) -> Surface {
        self.observed = Some(collector);
        self
    }

    /// The diff's window, asked for at each read (e.g. the collector's start time and now); copied into
    /// the record.
    pub fn window(mut self, window: impl Fn() -> serde_json::Value + Send + Sync + 'static) -> Surface {
        self.window = Some(Arc::new(window));
        self
    }

    /// The digest the documents name (default sha256).
    pub fn algorithm(mut self, algorithm: Algorithm) -> Surface {
        self.algorithm = algorithm;
        self
    }

    /// The canonical bytes of one document, byte-identical to the file export.
    pub fn bytes(&self, which: Which) -> Result<Vec<u8>, SurfaceError> {
        match which {
            Which::Declared => {
                let graph = self.declared.as_ref().ok_or(SurfaceError::Missing("declared"))?;
                graph.to_canonical_bytes(self.algorithm).map_err(|e| SurfaceError::Declared(Box::new(e)))
            }
            Which::Observed => {
                let graph = self.observed_graph()?;
                graph
                    .to_canonical_bytes(self.algorithm)
                    .map_err(|e| SurfaceError::Observed(Box::new(e.into())))
            }
            Which::Diff => {
                let declared = self.declared.as_ref().ok_or(SurfaceError::Missing("declared"))?;
                let observed = self.observed_graph()?;
                let window = self.window.as_ref().ok_or(SurfaceError::Missing("window"))?;
                let diff =
                    Diff::run(declared, &observed, &window()).map_err(|e| SurfaceError::Diff(Box::new(e)))?;
                Ok(diff.encode(self.algorithm))
            }
        }
    }

    /// The observed graph's weight sidecar (never hashed; not served as a resource).
    pub fn sidecar_bytes(&self) -> Result<Vec<u8>, SurfaceError> {
        let collector = self.observed.as_ref().ok_or(SurfaceError::Missing("observed"))?;
        collector.sidecar_bytes().map_err(|e| SurfaceError::Observed(Box::new(e)))
    }

    /// Answers a `resources/read` of a connectome uri ([CH-2]): `None` when the uri is not one of the
    /// three, so the host's reader goes on to its own resources.
    ///
    /// [CH-2]: crate::manual::connectome
    pub fn read(&self, uri: &str) -> Option<Result<Vec<ResourceContents>, SurfaceError>> {
        let which = Which::from_uri(uri)?;
        Some(self.bytes(which).map(|bytes| {
            // The canonical bytes are UTF-8 by construction; a lossy conversion never changes them.
            let text = String::from_utf8_lossy(&bytes).into_owned();
            vec![ResourceContents::text(which.uri(), text).with_mime_type(MIME_TYPE)]
        }))
    }

    /// Answers the copyable tool ([CH-4]): `{"graph", "bytes", "<algorithm>": "<lowercase hex>"}` as
    /// structured content. A failure is a tool error naming the reason, never the caller's input.
    ///
    /// [CH-4]: crate::manual::connectome
    pub fn call(&self, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
        let which = arguments
            .get_str("graph")
            .and_then(Which::from_name)
            .ok_or_else(|| ToolError::new("graph must be one of declared, observed, diff"))?;
        self.answer(which)
    }

    /// The tool's answer for one document (what [`Surface::call`] answers once the argument is read).
    pub fn answer(&self, which: Which) -> Result<ToolOutput, ToolError> {
        let bytes = self.bytes(which).map_err(|e| ToolError::new(e.to_string()))?;
        let hash = connectome_canonical::to_hex(&connectome_canonical::digest(self.algorithm, &bytes));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut out = serde_json::Map::new();
        out.insert("graph".to_owned(), json!(which.name()));
        out.insert("bytes".to_owned(), json!(text));
        out.insert(self.algorithm.name().to_owned(), json!(hash));
        ToolOutput::json(&out)
    }

    /// The collector's snapshot, or the refusal.
    fn observed_graph(&self) -> Result<Graph, SurfaceError> {
        let collector = self.observed.as_ref().ok_or(SurfaceError::Missing("observed"))?;
        collector.snapshot().map_err(|e| SurfaceError::Observed(Box::new(e)))
    }
}
