//! Building a server: the catalog is read once, checked, and compiled into an immutable snapshot.
//!
//! Every fault the compiler cannot see is found here and returned as a [`BuildError`] naming it; the
//! builder never panics, and a server that builds never re-checks its catalog on a request.

use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcp_kernel_wire::ProtocolVersion;

use crate::catalog::compile::{BuildError, check_versions};
use crate::catalog::registry::{Prompts, Resources, Tools};
use crate::catalog::snapshot::{Registered, Snapshot};
use crate::catalog::source::ResourceSource;
use crate::catalog::spec::{Catalog, Listing};
use crate::catalog::visibility::Visibility;
use crate::contract::{Completer, Dispatch, PromptReader, ResourceReader};
use crate::notify::log::LogLevel;
use crate::notify::notifier::Notifications;
use crate::options::{CacheHints, ServerOptions};
use crate::sealing::sealer::StateSealer;
use crate::sealing::state::{Clock, DEFAULT_REQUEST_STATE_TTL, Sealing};
use crate::server::{Injected, Server};
use crate::trace::observe::DispatchObserver;

impl Server {
    /// Starts building a server over `catalog`.
    pub fn builder<C: Catalog>(catalog: C) -> ServerBuilder {
        ServerBuilder::new(catalog)
    }
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
    notifications: Option<Notifications>,
    tasks: Option<crate::tasks::Tasks>,
    source: Option<Arc<dyn ResourceSource>>,
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
            notifications: None,
            tasks: None,
            source: None,
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

    /// Per-caller resources (see [`ResourceSource`]): listed after the catalog's, accepted for a read
    /// when the source says the caller has them, and read by the [`resource_reader`](Self::resource_reader),
    /// which is then required. As with a visibility filter, every result's `cacheScope` is `"private"`.
    pub fn resource_source(mut self, source: impl ResourceSource) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The host's tool dispatch (required when tools are listed).
    pub fn dispatch(mut self, dispatch: impl Dispatch) -> Self {
        self.dispatch = Some(Arc::new(dispatch));
        self
    }

    /// The host's resource reader (required when resources or templates are listed, or a resource
    /// source is given).
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

    /// Turns change notifications on (off by default): `server/discover` advertises `listChanged` for
    /// tools, prompts and resources and `resources.subscribe`; `subscriptions/listen` streams are told
    /// of what the host announces through [`Server::notifier`] (and of what a
    /// [`LiveServer`](crate::transport::LiveServer) replacement changes); on a transport that keeps a
    /// session (stdio), legacy `initialize` advertises them too and `resources/subscribe` is served.
    /// Without it, every listen is acknowledged empty and completed at once.
    pub fn notifications(mut self, notifications: Notifications) -> Self {
        self.notifications = Some(notifications);
        self
    }

    /// Turns the tasks extension on (off by default): `server/discover` lists
    /// `io.modelcontextprotocol/tasks` under `capabilities.extensions`, a call of a tool whose
    /// [`TaskMode`](crate::tasks::TaskMode) is not `Never` may become a task, and `tasks/get`,
    /// `tasks/update` and `tasks/cancel` are served (see [`crate::tasks`]). With
    /// [`ServerBuilder::notifications`] too, a `subscriptions/listen` may ask for a task's status
    /// notifications (`taskIds`).
    pub fn tasks(mut self, tasks: crate::tasks::Tasks) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// The name advertised in `serverInfo` (default `mcp-kernel`).
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.options.server_name = name.into();
        self
    }

    /// The version advertised in `serverInfo` (default this package's version, [`crate::options::PACKAGE_VERSION`]).
    pub fn server_version(mut self, version: impl Into<String>) -> Self {
        self.options.server_version = version.into();
        self
    }

    /// Name and version together: `.server_info(mcp_kernel_router::options::host_identity!())` advertises the
    /// host crate's own `CARGO_PKG_NAME` and `CARGO_PKG_VERSION`.
    pub fn server_info(self, identity: crate::options::HostIdentity) -> Self {
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

    /// Not API: reads try every template in turn, as before the template index.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn linear_template_scan(mut self) -> Self {
        self.options.linear_template_scan = true;
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
        if self.source.is_some() && self.resources.is_none() {
            return Err(BuildError::SourceWithoutReader);
        }
        if !listing.prompts.is_empty() && self.prompts.is_none() {
            return Err(BuildError::MissingPromptReader);
        }
        let snapshot = Snapshot::compile(listing, self.registered, self.options.defer_header_faults)?;
        let runs_only_as_task = |tool: &&crate::catalog::snapshot::CompiledTool| {
            tool.task_mode == crate::catalog::spec::TaskMode::Required
        };
        if self.tasks.is_none()
            && let Some(tool) = snapshot.tools.iter().find(runs_only_as_task)
        {
            return Err(BuildError::RequiredTaskWithoutTasks(tool.name.to_string()));
        }
        let mut snapshot = snapshot;
        if let Some(observer) = &self.observer {
            // Each tool is resolved once, here, so the dispatch site hands its recorder no name to look up.
            for tool in &mut snapshot.tools {
                tool.recorder =
                    crate::trace::observe::bind(&**observer, self.options.server_name(), &tool.name);
            }
        }
        #[cfg(feature = "fuzzing")]
        let snapshot = Snapshot { linear_template_scan: self.options.linear_template_scan, ..snapshot };
        let mut options = self.options;
        if self.visibility.is_some() || self.source.is_some() {
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
        let injected = Injected {
            dispatch: self.dispatch,
            resources: self.resources,
            prompts: self.prompts,
            completer: self.completer,
            observer: self.observer,
            sealing,
            log_level: self.log_level,
            visibility: self.visibility,
            notifications: self.notifications,
            tasks: self.tasks,
            source: self.source,
        };
        Ok(Server::from_injected(snapshot, options, injected))
    }
}
