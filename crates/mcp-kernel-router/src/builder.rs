//! Building a server: the catalog is read once, checked, and compiled into an immutable snapshot.
//!
//! Every fault the compiler cannot see is found here and returned as a [`BuildError`] naming it; the
//! builder never panics, and a server that builds never re-checks its catalog on a request.

use std::collections::{HashMap, HashSet};
use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcp_kernel_schema::{CompiledSchema, PromptArg, SchemaError};
use mcp_kernel_wire::ProtocolVersion;

use crate::host::{Completer, Dispatch, PromptReader, ResourceReader};
use crate::log::LogLevel;
use crate::observe::DispatchObserver;
use crate::options::{CacheHints, ServerOptions};
use crate::registry::{Prompts, Resources, Tools};
use crate::sealer::StateSealer;
use crate::server::{Parts, Server};
use crate::snapshot::{Registered, Snapshot};
use crate::spec::{Catalog, Listing};
use crate::state::{Clock, DEFAULT_REQUEST_STATE_TTL, Sealing};
use crate::visibility::Visibility;

/// A fault in the catalog or the options, found when the server is built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The catalog's `listing()` panicked.
    #[error("the catalog's listing() panicked")]
    CatalogPanicked,
    /// Two tools share a name.
    #[error("tool {0}: the name is listed twice")]
    DuplicateTool(String),
    /// Two resources share a uri.
    #[error("resource {0}: the uri is listed twice")]
    DuplicateResource(String),
    /// Two templates share a uri template.
    #[error("resource template {0}: the template is listed twice")]
    DuplicateTemplate(String),
    /// Two prompts share a name.
    #[error("prompt {0}: the name is listed twice")]
    DuplicatePrompt(String),
    /// A prompt lists an argument name twice.
    #[error("prompt {prompt}: the argument {argument} is listed twice")]
    DuplicatePromptArgument {
        /// The prompt.
        prompt: String,
        /// The repeated argument.
        argument: String,
    },
    /// A template uses an expression this package does not claim, or a bare brace.
    #[error("resource template {template}: {reason}")]
    InvalidTemplate {
        /// The template.
        template: String,
        /// Why.
        reason: String,
    },
    /// A tool's input schema cannot be enforced.
    #[error("tool {tool}: input {error}")]
    ToolSchema {
        /// The tool.
        tool: String,
        /// Why.
        error: SchemaError,
    },
    /// A tool's input schema does not declare `"type": "object"` at its root, as MCP requires.
    #[error("tool {0}: the input schema's root must declare \"type\": \"object\"")]
    ToolSchemaNotObject(String),
    /// A tool's output schema cannot be enforced.
    #[error("tool {tool}: output {error}")]
    OutputSchema {
        /// The tool.
        tool: String,
        /// Why.
        error: SchemaError,
    },
    /// A tool's output schema does not declare `"type": "object"` at its root.
    #[error("tool {0}: the output schema's root must declare \"type\": \"object\"")]
    OutputSchemaNotObject(String),
    /// A tool's `_meta` is not what MCP allows, or a typed tool's input type reads keys its derived
    /// schema does not declare.
    #[error("tool {tool}: {reason}")]
    InvalidTool {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A typed prompt's derived arguments are not what MCP allows (a field that is not a string).
    #[error("prompt {prompt}: {reason}")]
    InvalidPrompt {
        /// The prompt.
        prompt: String,
        /// Why.
        reason: String,
    },
    /// A tool's required client capabilities are not a JSON object.
    #[error("tool {0}: required client capabilities must be a ClientCapabilities object")]
    InvalidRequiredCapabilities(String),
    /// A prompt's derived argument schema cannot be compiled (an argument name the validator refuses).
    #[error("prompt {prompt}: {error}")]
    PromptSchema {
        /// The prompt.
        prompt: String,
        /// Why.
        error: SchemaError,
    },
    /// A resource's or template's annotations are outside the schema (`priority` must lie in 0..=1).
    #[error("resource {0}: annotations.priority must lie between 0 and 1")]
    InvalidAnnotations(String),
    /// Tools are listed but no dispatch function was given.
    #[error("tools are listed but no dispatch function was given")]
    MissingDispatch,
    /// Resources or templates are listed but no resource reader was given.
    #[error("resources are listed but no resource reader was given")]
    MissingResourceReader,
    /// Prompts are listed but no prompt reader was given.
    #[error("prompts are listed but no prompt reader was given")]
    MissingPromptReader,
    /// `supported_versions` is empty or repeats a revision.
    #[error("supported versions must be a non-empty list of distinct revisions")]
    InvalidSupportedVersions,
}

/// Builds a [`Server`]: `Server::builder(catalog).dispatch(f).build()`.
pub struct ServerBuilder {
    listing: Result<Listing, BuildError>,
    options: ServerOptions,
    dispatch: Option<Arc<dyn Dispatch>>,
    resources: Option<Arc<dyn ResourceReader>>,
    prompts: Option<Arc<dyn PromptReader>>,
    completer: Option<Arc<dyn Completer>>,
    observer: Option<Arc<dyn DispatchObserver>>,
    sealer: Option<Arc<dyn StateSealer>>,
    state_ttl: Duration,
    clock: Option<Arc<dyn Clock>>,
    log_level: Option<LogLevel>,
    visibility: Option<Arc<dyn Visibility>>,
    registered: Registered,
}

impl ServerBuilder {
    pub(crate) fn new<C: Catalog>(catalog: C) -> Self {
        let listing = std::panic::catch_unwind(AssertUnwindSafe(|| catalog.listing()))
            .map_err(|_| BuildError::CatalogPanicked);
        Self {
            listing,
            options: ServerOptions::default(),
            dispatch: None,
            resources: None,
            prompts: None,
            completer: None,
            observer: None,
            sealer: None,
            state_ttl: DEFAULT_REQUEST_STATE_TTL,
            clock: None,
            log_level: None,
            visibility: None,
            registered: Registered::default(),
        }
    }

    /// Adds typed tools: each is listed after the catalog's tools and served by its own handler (no
    /// dispatch function is needed for them).
    pub fn tools(mut self, tools: impl Into<Tools>) -> Self {
        let (entries, faults) = tools.into().into_parts();
        self.registered.tools.extend(entries);
        self.registered.faults.extend(faults);
        self
    }

    /// Adds typed resources and templates, each read by its own reader.
    pub fn resources(mut self, resources: impl Into<Resources>) -> Self {
        self.registered.resources.extend(resources.into().into_entries());
        self
    }

    /// Adds typed prompts, each rendered by its own function.
    pub fn prompts(mut self, prompts: impl Into<Prompts>) -> Self {
        let (entries, faults) = prompts.into().into_parts();
        self.registered.prompts.extend(entries);
        self.registered.faults.extend(faults);
        self
    }

    /// Filters the lists per request (per principal): see [`Visibility`]. A hidden item is answered
    /// as one that is not listed. With a filter, every result's `cacheScope` is `"private"`, whatever
    /// the cache hints say: a list that varies per principal is never for a shared cache.
    pub fn visibility(mut self, filter: impl Visibility) -> Self {
        self.visibility = Some(Arc::new(filter));
        self
    }

    /// The host's tool dispatch (required when tools are listed).
    pub fn dispatch(mut self, dispatch: impl Dispatch) -> Self {
        self.dispatch = Some(Arc::new(dispatch));
        self
    }

    /// The host's resource reader (required when resources or templates are listed).
    pub fn resource_reader(mut self, reader: impl ResourceReader) -> Self {
        self.resources = Some(Arc::new(reader));
        self
    }

    /// The host's prompt renderer (required when prompts are listed).
    pub fn prompt_reader(mut self, reader: impl PromptReader) -> Self {
        self.prompts = Some(Arc::new(reader));
        self
    }

    /// The host's completer (optional): with one, `completions` is advertised in both eras and
    /// `completion/complete` is served; without one it is -32601.
    pub fn completer(mut self, completer: impl Completer) -> Self {
        self.completer = Some(Arc::new(completer));
        self
    }

    /// An observer told of every call that reaches dispatch: names, timing and outcome, never payloads
    /// (see [`DispatchObserver`]). Without one, the dispatch site reads no clock.
    pub fn observe_dispatch(mut self, observer: impl DispatchObserver) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Turns on multi-round-trip requests (`2026-07-28` only): dispatch and the readers may answer
    /// "input required", whose `requestState` `sealer` protects, and a retry's `inputResponses` and
    /// `requestState` are verified and handed to them. Without a sealer both fields are ignored and an
    /// "input required" answer is -32603.
    pub fn request_state_sealer(mut self, sealer: impl StateSealer) -> Self {
        self.sealer = Some(Arc::new(sealer));
        self
    }

    /// How long a sealed `requestState` stays valid (default [`DEFAULT_REQUEST_STATE_TTL`], ten minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// The clock a sealed state's expiry is read from (default the system clock; for tests).
    pub fn request_state_clock(mut self, clock: impl Clock) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// Turns on log notifications (`notifications/message`, through [`crate::RequestContext::log`]):
    /// `logging` is advertised in both eras; a `2026-07-28` request receives messages at or above both
    /// the `_meta` `io.modelcontextprotocol/logLevel` it set (none set: none) and `minimum`, a
    /// 2025-11-25 request those at or above `minimum` (and `logging/setLevel` is answered `{}`). Off by
    /// default: nothing is sent.
    pub fn log_notifications(mut self, minimum: LogLevel) -> Self {
        self.log_level = Some(minimum);
        self
    }

    /// The name advertised in `serverInfo` (default `mcp-kernel`).
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.options.server_name = name.into();
        self
    }

    /// The version advertised in `serverInfo` (default this package's version, [`crate::PACKAGE_VERSION`]).
    pub fn server_version(mut self, version: impl Into<String>) -> Self {
        self.options.server_version = version.into();
        self
    }

    /// Name and version together: `.server_info(mcp_kernel_router::host_identity!())` advertises the
    /// host crate's own `CARGO_PKG_NAME` and `CARGO_PKG_VERSION`.
    pub fn server_info(self, identity: crate::HostIdentity) -> Self {
        self.server_name(identity.name).server_version(identity.version)
    }

    /// The served revisions in advertising order (default both, newest first).
    pub fn supported_versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.options.supported_versions = versions.into_iter().collect();
        self
    }

    /// Cache hints of `tools/list`.
    pub fn tools_cache(mut self, hints: CacheHints) -> Self {
        self.options.tools_cache = hints;
        self
    }

    /// Cache hints of `resources/list`, `resources/templates/list` and `resources/read`.
    pub fn resources_cache(mut self, hints: CacheHints) -> Self {
        self.options.resources_cache = hints;
        self
    }

    /// Cache hints of `prompts/list`.
    pub fn prompts_cache(mut self, hints: CacheHints) -> Self {
        self.options.prompts_cache = hints;
        self
    }

    /// The page size of the paginated lists (default 50).
    pub fn page_size(mut self, size: NonZeroUsize) -> Self {
        self.options.page_size = size;
        self
    }

    /// Keeps a tool whose `x-mcp-header` annotations break the MCP rules instead of refusing the build.
    ///
    /// Such a tool mirrors no header; it is served over stdio, and the HTTP transport answers every
    /// call to it 500 (naming the tool in its log) until the schema is corrected. Off by default: a
    /// bad annotation is a [`BuildError::ToolSchema`].
    pub fn defer_header_annotation_faults(mut self, defer: bool) -> Self {
        self.options.defer_header_faults = defer;
        self
    }

    /// Checks the catalog and options and compiles the snapshot.
    pub fn build(self) -> Result<Server, BuildError> {
        let listing = self.listing?;
        if let Some(fault) = self.registered.faults.first() {
            return Err(fault.clone());
        }
        check_versions(&self.options.supported_versions)?;
        if !listing.tools.is_empty() && self.dispatch.is_none() {
            return Err(BuildError::MissingDispatch);
        }
        if !listing.resources.is_empty() && self.resources.is_none() {
            return Err(BuildError::MissingResourceReader);
        }
        if !listing.prompts.is_empty() && self.prompts.is_none() {
            return Err(BuildError::MissingPromptReader);
        }
        let snapshot = Snapshot::compile(listing, self.registered, self.options.defer_header_faults)?;
        let mut options = self.options;
        if self.visibility.is_some() {
            // Lists (and reads) that vary per principal are never for a shared cache, whatever was asked.
            for hints in [&mut options.tools_cache, &mut options.resources_cache, &mut options.prompts_cache]
            {
                hints.scope = mcp_kernel_wire::types::CacheScope::Private;
            }
        }
        let sealing = self.sealer.map(|sealer| Sealing {
            sealer,
            ttl: self.state_ttl,
            clock: self.clock.unwrap_or_else(|| Arc::new(SystemTime::now)),
        });
        let parts = Parts {
            dispatch: self.dispatch,
            resources: self.resources,
            prompts: self.prompts,
            completer: self.completer,
            observer: self.observer,
            sealing,
            log_level: self.log_level,
            visibility: self.visibility,
        };
        Ok(Server::from_parts(snapshot, options, parts))
    }
}

/// Refuses an empty or repeating list of revisions.
pub(crate) fn check_versions(versions: &[ProtocolVersion]) -> Result<(), BuildError> {
    let distinct: HashSet<_> = versions.iter().collect();
    if versions.is_empty() || distinct.len() != versions.len() {
        return Err(BuildError::InvalidSupportedVersions);
    }
    Ok(())
}

/// Compiles a tool's schema, naming the tool in any fault.
pub(crate) fn compile_tool_schema(
    tool: &str,
    schema: &serde_json::Value,
    defer_header_faults: bool,
) -> Result<CompiledSchema, BuildError> {
    if schema.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        return Err(BuildError::ToolSchemaNotObject(tool.to_owned()));
    }
    let compiled = if defer_header_faults {
        mcp_kernel_schema::compile_deferring_header_faults(schema)
    } else {
        mcp_kernel_schema::compile(schema)
    };
    compiled.map_err(|error| BuildError::ToolSchema { tool: tool.to_owned(), error })
}

/// Compiles a tool's output schema, naming the tool in any fault; its root must be an object schema
/// (`2025-11-25` allows nothing else, and one catalog serves both revisions).
pub(crate) fn compile_output_schema(
    tool: &str,
    schema: &serde_json::Value,
) -> Result<CompiledSchema, BuildError> {
    if schema.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        return Err(BuildError::OutputSchemaNotObject(tool.to_owned()));
    }
    mcp_kernel_schema::compile(schema)
        .map_err(|error| BuildError::OutputSchema { tool: tool.to_owned(), error })
}

/// Compiles a prompt's argument schema, refusing repeated argument names.
pub(crate) fn compile_prompt_schema(spec: &crate::spec::PromptSpec) -> Result<CompiledSchema, BuildError> {
    let mut seen = HashMap::new();
    for arg in &spec.arguments {
        if seen.insert(arg.name.as_str(), ()).is_some() {
            return Err(BuildError::DuplicatePromptArgument {
                prompt: spec.name.clone(),
                argument: arg.name.clone(),
            });
        }
    }
    let schema = mcp_kernel_schema::prompt_argument_schema(spec.arguments.iter().map(|a| PromptArg {
        name: &a.name,
        description: a.description.as_deref(),
        required: a.required,
    }));
    mcp_kernel_schema::compile(&schema)
        .map_err(|error| BuildError::PromptSchema { prompt: spec.name.clone(), error })
}
