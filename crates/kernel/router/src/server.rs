//! The era-aware core: one message in, at most one response out.
//!
//! The order of the checks is part of the contract (`protocol.md` [B-3]): a top-level `_meta` is refused
//! first, then `server/discover` and `initialize` are answered, then the request's `params._meta`
//! decides its era, then the method is routed. Results of requests that declared `2026-07-28` carry
//! `resultType` and the server's identity in `_meta`; bare and legacy requests get legacy-shaped results.
//!
//! [B-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

use std::sync::Arc;

use serde_json::{Map, Value, json};

use mcp_kernel_wire::trace::TraceCarrier;
use mcp_kernel_wire::types::CacheScope;
use mcp_kernel_wire::{Envelope, ErrorObject, Method, Payload, ProtocolVersion, RequestMeta, Response};

use crate::catalog::snapshot::Snapshot;
use crate::catalog::visibility::Visibility;
use crate::contract::{Completer, Dispatch, Era, PromptReader, RequestContext, ResourceReader};
use crate::notify::log::{LogLevel, level_in, parse_level};
use crate::notify::notifier::{Notifications, Notifier};
use crate::notify::progress::{CloseOnDrop, Progress, progress_token_in};
use crate::notify::session::LegacySession;
use crate::options::{CacheHints, ServerOptions};
use crate::request::inbound::{Inbound, Served};
use crate::sealing::state::Sealing;
use crate::session::channel::SharedChannel;
use crate::session::stored::StoredSession;
use crate::trace::observe::DispatchObserver;
use crate::trace::{RequestTrace, SpanSite, record_error};

/// What the transport should do after writing the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Keep serving.
    Continue,
    /// `shutdown` or `exit` was received: a stdio loop ends after writing the response.
    Shutdown,
}

/// The outcome of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Handled {
    /// The response to write, if the message gets one.
    pub response: Option<Response>,
    /// What the transport does next.
    pub control: Control,
}

impl Handled {
    pub(crate) fn reply(response: Response) -> Self {
        Self { response: Some(response), control: Control::Continue }
    }

    fn silent() -> Self {
        Self { response: None, control: Control::Continue }
    }
}

use crate::request::answer::encoded;
pub(crate) use crate::request::answer::{Answer, Routed};
use crate::request::decoration::Decoration;

/// A request whose era is settled, as the method handlers see it.
pub(crate) struct Request<'a> {
    pub(crate) method: &'a Method,
    pub(crate) params: Option<Value>,
    pub(crate) context: RequestContext,
    /// The filter's answer for the called tool, when the transport asked already.
    pub(crate) tool_shown: Option<(Arc<str>, bool)>,
    /// The transport keeps no session ([`Inbound::sessionless`]).
    pub(crate) sessionless: bool,
    /// What the request's server span records, and the trace it continues.
    pub(crate) trace: RequestTrace<'a>,
    /// The connection's legacy session, when the transport keeps one.
    pub(crate) session: Option<&'a LegacySession>,
    /// Where a legacy request's questions to the client go ([`Inbound::client`]), for the bridge.
    pub(crate) client: Option<SharedChannel>,
    /// The stored session this legacy request is served in (HTTP legacy sessions).
    pub(crate) stored: Option<&'a StoredSession>,
}

pub(crate) struct Inner {
    pub(crate) snapshot: Arc<Snapshot>,
    pub(crate) options: ServerOptions,
    /// The host's functions and opt-ins.
    pub(crate) injected: Injected,
    /// [B-5]'s decoration of a modern result, built once.
    ///
    /// [B-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) decoration: Decoration,
    pub(crate) capabilities: Value,
}

/// What the host injected: its functions and opt-ins, as the builder hands them over.
#[derive(Clone, Default)]
pub(crate) struct Injected {
    pub(crate) dispatch: Option<Arc<dyn Dispatch>>,
    pub(crate) resources: Option<Arc<dyn ResourceReader>>,
    pub(crate) prompts: Option<Arc<dyn PromptReader>>,
    /// The host's completer; `None` leaves `completion/complete` unserved and unadvertised.
    pub(crate) completer: Option<Arc<dyn Completer>>,
    /// Told of every dispatched call; `None` costs the dispatch site nothing.
    pub(crate) observer: Option<Arc<dyn DispatchObserver>>,
    /// The request-state sealer; `None` leaves multi-round-trip requests off.
    pub(crate) sealing: Option<Sealing>,
    /// The minimum level of log notifications to 2025-11-25 requests; `None` leaves logging off.
    pub(crate) log_level: Option<LogLevel>,
    /// The host's per-request list filter; `None` shows every item to every request.
    pub(crate) visibility: Option<Arc<dyn Visibility>>,
    /// Change notifications; `None` acknowledges every listen empty and advertises no change.
    pub(crate) notifications: Option<Notifications>,
    /// The tasks extension; `None` serves no task method and never makes a call a task.
    pub(crate) tasks: Option<crate::tasks::Tasks>,
    /// The host's per-caller resources; `None`: the catalog's only.
    pub(crate) source: Option<Arc<dyn crate::catalog::source::ResourceSource>>,
}

/// A built server: the compiled catalog, the host's functions and the options. Cheap to clone.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("options", &self.inner.options).finish_non_exhaustive()
    }
}

/// Writes the cache hints into a result object.
pub(crate) fn cache_fields(result: &mut Map<String, Value>, hints: CacheHints) {
    result.insert("ttlMs".into(), Value::from(hints.ttl_ms));
    result.insert("cacheScope".into(), Value::from(scope_name(hints.scope)));
}

/// The same two members, written into a result the core encodes straight to bytes.
pub(crate) fn append_cache_fields<M: serde::ser::SerializeMap>(
    map: &mut M,
    hints: CacheHints,
) -> Result<(), M::Error> {
    map.serialize_entry("ttlMs", &hints.ttl_ms)?;
    map.serialize_entry("cacheScope", scope_name(hints.scope))
}

fn scope_name(scope: CacheScope) -> &'static str {
    match scope {
        CacheScope::Public => "public",
        CacheScope::Private => "private",
    }
}

impl Server {
    pub(crate) fn from_injected(snapshot: Snapshot, options: ServerOptions, injected: Injected) -> Self {
        Self::assemble(Arc::new(snapshot), options, injected)
    }

    pub(crate) fn assemble(snapshot: Arc<Snapshot>, options: ServerOptions, injected: Injected) -> Self {
        // Both encoded once: `discover` copies the capabilities, the decoration the identity, per request.
        let identity = crate::catalog::advertised::identity(&options);
        let server_info = serde_json::to_value(&identity).unwrap_or(Value::Null);
        let capabilities = crate::catalog::advertised::capabilities(
            injected.completer.is_some(),
            injected.log_level.is_some(),
            injected.notifications.is_some(),
        );
        let mut capabilities = serde_json::to_value(&capabilities).unwrap_or(Value::Null);
        if injected.tasks.is_some()
            && let Value::Object(capabilities) = &mut capabilities
        {
            // 2026-07-28 only: `initialize` (2025-11-25) builds its capabilities without it.
            let extension = json!({ mcp_kernel_wire::version::EXTENSION_TASKS: {} });
            capabilities.insert("extensions".into(), extension);
        }
        let decoration = Decoration::new(server_info);
        Self { inner: Arc::new(Inner { snapshot, options, injected, decoration, capabilities }) }
    }

    /// The revisions a message handled with `inbound` may be served in.
    pub(crate) fn served(&self, inbound: &Inbound) -> Served<'_> {
        Served { all: &self.inner.options.supported_versions, only: inbound.revisions }
    }

    /// The options this server was built with.
    pub fn options(&self) -> &ServerOptions {
        &self.inner.options
    }

    /// The handle announcing changes to this server's listeners, when it was built with
    /// [`ServerBuilder::notifications`](crate::ServerBuilder::notifications).
    pub fn notifier(&self) -> Option<Notifier> {
        self.inner.injected.notifications.as_ref().map(Notifications::notifier)
    }

    /// Ends this server's tasks for a shutdown: waits up to `grace` for the tasks this instance runs
    /// to finish, then fails each one still running (`failed`, with a JSON-RPC error saying the server
    /// shut down) and cancels its handler, so that no poller waits on a `working` task until its time
    /// to live. Resolves at once on a server without tasks. The transports call it when they drain.
    pub async fn drain_tasks(&self, grace: std::time::Duration) {
        if let Some(engine) = self.task_engine() {
            engine.drain(grace).await;
        }
    }

    /// The notifications opt-in this server was built with.
    pub(crate) fn notifications(&self) -> Option<&Notifications> {
        self.inner.injected.notifications.as_ref()
    }

    /// Handles one decoded message and returns at most one response.
    pub async fn handle(&self, message: Value) -> Handled {
        self.handle_value(message, Inbound::new()).await
    }

    /// Handles one message given as a JSON value, with what the transport attached: it is read into
    /// its [`Envelope`] and handed to [`Server::handle_envelope`].
    pub(crate) async fn handle_value(&self, message: Value, inbound: Inbound) -> Handled {
        match Envelope::from_value(message) {
            Ok(envelope) => self.handle_envelope(envelope, inbound).await,
            Err(error) => Handled::reply(Response::error(Value::Null, error)),
        }
    }

    /// Handles one message, already read into its [`Envelope`], with what the transport attached
    /// ([`Inbound`]: the request's extensions — the caller's principal, which reaches the host in
    /// [`RequestContext::extensions`] —, a notification sink, the revisions this transport serves, and
    /// what [`Server::admit`] answered about it). The checks run in the order of `protocol.md` [B-3].
    ///
    /// [B-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub async fn handle_envelope(&self, envelope: Envelope, inbound: Inbound) -> Handled {
        let served = self.served(&inbound);
        let Inbound {
            extensions,
            sink,
            tool_shown,
            sessionless,
            trace,
            network,
            session,
            client,
            stored,
            keeps_session,
            ..
        } = inbound;
        let is_jsonrpc = envelope.is_jsonrpc();
        if !envelope.has_id() {
            return Self::handle_notification(&envelope, session.as_ref());
        }
        if !envelope.has_valid_id() {
            return Handled::reply(Response::error(Value::Null, ErrorObject::invalid_request()));
        }
        if is_jsonrpc && let Err(error) = envelope.top_level_meta() {
            return Handled::reply(Response::error(envelope.echoable_id(), error));
        }
        let (id, method, mut params, meta) = envelope.into_parts();
        let id = id.unwrap_or(Value::Null);
        let method = match method {
            Some(method) if is_jsonrpc => method,
            _ => return Handled::reply(Response::error(id, ErrorObject::invalid_request())),
        };
        // Only when a transport can deliver them.
        let progress = match (&sink, progress_token_in(&meta)) {
            (Some(sink), Some(token)) => Progress::to(token.clone(), Arc::clone(sink)),
            _ => Progress::default(),
        };
        let logs = sink.is_some() && self.inner.injected.log_level.is_some();
        let log_level = if logs { level_in(&meta) } else { None };
        match method {
            Method::Discover => {
                return Handled::reply(Response::error_or_result(id, self.discover(served, &meta)));
            }
            Method::Initialize => {
                let keeps = session.is_some() || keeps_session;
                let answer = self.initialize(served, params.as_ref(), session.as_ref(), keeps, &extensions);
                return Handled::reply(Response::error_or_result(id, answer));
            }
            _ => {}
        }
        let (era, client_capabilities) = match self.settle_era(served, &method, &meta) {
            Ok(settled) => settled,
            Err(error) => return Handled::reply(Response::error(id, error)),
        };
        // A legacy request of a stored session is served in the revision and with the capabilities
        // the session remembers from `initialize`; a `2026-07-28` request has no session.
        let stored = stored.filter(|_| !era.is_modern());
        let (era, client_capabilities) = match &stored {
            Some(stored) => (Era::Declared(stored.version()), Some(Arc::clone(stored.capabilities()))),
            None => (era, client_capabilities),
        };
        match method {
            // protocol.md B-3 step 9: sent with an id, it still gets no reply.
            Method::NotificationInitialized => return Handled::silent(),
            Method::Exit => return Handled { response: None, control: Control::Shutdown },
            _ => {}
        }
        // The trace context `_meta` carries wins over the transport's; with no subscriber at INFO no
        // span is recorded, and neither is read.
        let carrier = match tracing::level_enabled!(tracing::Level::INFO) {
            true => TraceCarrier::from_meta(&meta).or(trace),
            false => TraceCarrier::default(),
        };
        // Whatever else the message held is released before any host code is awaited.
        drop(meta);
        if params.as_ref().is_some_and(|p| !p.is_object()) {
            return Handled::reply(Response::error(
                id,
                ErrorObject::invalid_params("params must be an object"),
            ));
        }
        let mut context = RequestContext::new(era, client_capabilities);
        context.extensions = extensions;
        context.progress = progress.clone();
        let session_level = stored.as_ref().and_then(StoredSession::log_level);
        context.log = self.logger(sink.as_ref(), era.is_modern(), log_level, session_level);
        // Closed when answered or dropped (cancelled): no notification ever follows the response.
        let closer = (CloseOnDrop(progress), CloseOnDrop(context.log.clone()));
        if method == Method::SubscriptionsListen && era.is_modern() {
            drop(closer);
            return self.listen_at_once_boxed(id, params.as_ref(), context, sink.as_ref()).await;
        }
        let trace = RequestTrace { carrier, id: &id, network };
        let request = Request {
            method: &method,
            params: params.take(),
            context,
            tool_shown,
            sessionless,
            trace,
            session: session.as_ref(),
            client,
            stored: stored.as_ref(),
        };
        let ends = method == Method::Shutdown && !sessionless;
        let control = if ends { Control::Shutdown } else { Control::Continue };
        let answer = self.route(request).await;
        drop(closer);
        let answer = answer.map(|payload| match payload {
            Payload::Value(result) if era.is_modern() => Payload::Value(self.inner.decoration.apply(result)),
            decorated => decorated,
        });
        Handled { response: Some(Response { id, body: answer }), control }
    }

    fn handle_notification(envelope: &Envelope, session: Option<&LegacySession>) -> Handled {
        // A notification never gets a reply; a top-level `_meta` on one is ignored (B-3.3).
        match envelope.method() {
            Some(Method::Exit) if envelope.is_jsonrpc() => {
                Handled { response: None, control: Control::Shutdown }
            }
            // A legacy session is told of changes from `initialized` on (the client is ready for them).
            Some(Method::NotificationInitialized) => {
                if let Some(session) = session {
                    session.initialized();
                }
                Handled::silent()
            }
            _ => Handled::silent(),
        }
    }

    /// A request that declares no revision: legacy-shaped where 2025-11-25 is served, else malformed.
    fn undeclared(served: Served<'_>) -> Result<(Era, Option<Arc<Value>>), ErrorObject> {
        if served.serves(false) {
            Ok((Era::Bare, None))
        } else {
            Err(ErrorObject::invalid_params(
                "params._meta with io.modelcontextprotocol/protocolVersion and clientCapabilities is required on every request",
            ))
        }
    }

    /// Reads `params._meta`: its protocol version settles the era ([B-3.6] to [B-3.8]).
    ///
    /// [B-3.6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    /// [B-3.8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
    pub(crate) fn settle_era(
        &self,
        served: Served<'_>,
        method: &Method,
        meta: &RequestMeta,
    ) -> Result<(Era, Option<Arc<Value>>), ErrorObject> {
        if meta.object()?.is_none() {
            return Self::undeclared(served);
        }
        let Some(requested) = meta.protocol_version() else {
            // A 2025-11-25 request may carry a `_meta` of its own (a progress token): it is undeclared,
            // unless it carries client capabilities, which only 2026-07-28 sends there.
            if meta.client_capabilities().is_none() && served.serves(false) {
                return Ok((Era::Bare, None));
            }
            return Err(ErrorObject::invalid_params(
                "params._meta lacks io.modelcontextprotocol/protocolVersion",
            ));
        };
        let Some(text) = requested.as_str() else {
            return Err(ErrorObject::invalid_params(
                "params._meta io.modelcontextprotocol/protocolVersion must be a string",
            ));
        };
        let version = ProtocolVersion::parse(text).filter(|v| served.admits(*v));
        let Some(version) = version else {
            return Err(Self::unsupported_version(served, Value::from(text)));
        };
        if version.is_modern() {
            meta.require_capabilities()?;
            if let Some(level) = meta.log_level()
                && parse_level(level).is_none()
            {
                return Err(ErrorObject::invalid_params(
                    "params._meta io.modelcontextprotocol/logLevel is not a logging level",
                ));
            }
            if *method == Method::Ping {
                return Err(ErrorObject::method_not_found());
            }
        }
        let capabilities = meta.client_capabilities().filter(|c| c.is_object()).cloned().map(Arc::new);
        Ok((Era::Declared(version), capabilities))
    }

    /// The method's answer, inside the request's server span: `tools/call` opens its own at dispatch
    /// (`mcp.dispatch`), every other method is answered inside an `mcp.request` span, which records an
    /// error answer's code.
    async fn route(&self, request: Request<'_>) -> Routed {
        if *request.method == Method::ToolsCall {
            return self.call_tool(request).await;
        }
        let prompt = match request.method {
            Method::PromptsGet => request
                .params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .and_then(|name| self.inner.snapshot.prompt(name))
                .map(|listed| &*listed.name),
            _ => None,
        };
        let site = SpanSite { server: self.inner.options.server_name(), era: request.context.era };
        let span = request.trace.request_span(site, request.method, prompt);
        // Allocated first, as in `contract.rs` (`Dispatch for F`).
        let answering = Box::into_pin(Box::write(Box::new_uninit(), self.answer(request)));
        let answer = tracing::Instrument::instrument(answering, span.clone()).await;
        if let Err(error) = &answer {
            record_error(&span, error);
        }
        answer
    }

    /// The answer of every method but `tools/call`. `tools/list` comes back encoded and already
    /// decorated for its era; every other answer is a value, decorated by the caller.
    async fn answer(&self, request: Request<'_>) -> Routed {
        let answer = match request.method {
            Method::ToolsList => return self.list_tools(&request.context),
            Method::ResourcesList => self.list_resources(request.params.as_ref(), &request.context).await,
            Method::ResourcesTemplatesList => self.list_templates(request.params.as_ref(), &request.context),
            Method::ResourcesRead => self.read_resource(request).await,
            Method::PromptsList => self.list_prompts(request.params.as_ref(), &request.context),
            Method::PromptsGet => self.get_prompt(request).await,
            Method::CompletionComplete if self.inner.injected.completer.is_some() => {
                self.complete(request).await
            }
            Method::LoggingSetLevel
                if (self.inner.injected.log_level.is_some() || request.sessionless)
                    && !request.context.era.is_modern() =>
            {
                self.set_level(request.params.as_ref(), request.stored).await
            }
            Method::Ping => encoded(&mcp_kernel_wire::types::EmptyResult::default()),
            Method::ResourcesSubscribe | Method::ResourcesUnsubscribe
                if !request.context.era.is_modern()
                    && (request.session.is_some() || request.stored.is_some())
                    && self.notifications().is_some() =>
            {
                self.legacy_subscription(request).await
            }
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel
                if request.context.era.is_modern() && self.inner.injected.tasks.is_some() =>
            {
                self.task_request(request.method, request.params.as_ref(), &request.context).await
            }
            Method::Shutdown if !request.sessionless => {
                encoded(&mcp_kernel_wire::types::EmptyResult::default())
            }
            _ => Err(ErrorObject::method_not_found()),
        };
        answer.map(Payload::Value)
    }

    /// -32022 naming the served revisions.
    fn unsupported_version(served: Served<'_>, requested: Value) -> ErrorObject {
        ErrorObject::unsupported_version(mcp_kernel_wire::error::UnsupportedVersionData {
            supported: served.names(),
            requested,
        })
    }

    /// `server/discover`: the full, decorated result. A probe without `_meta` is answered whatever its
    /// era; a `_meta` that is present is checked like any request's. A server that does not serve
    /// 2026-07-28 does not implement the method, so a probing client falls back to `initialize`.
    ///
    /// Built as a map around the capabilities encoded once: a typed `DiscoverResult` would encode them
    /// again per request (10% more work).
    fn discover(&self, served: Served<'_>, meta: &RequestMeta) -> Answer {
        if !served.serves(true) {
            return Err(ErrorObject::method_not_found());
        }
        if meta.is_present() {
            self.settle_era(served, &Method::Discover, meta)?;
        }
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!(served.names()));
        result.insert("capabilities".into(), self.inner.capabilities.clone());
        cache_fields(&mut result, CacheHints::default());
        Ok(self.inner.decoration.apply(Value::Object(result)))
    }

    /// `initialize`, the legacy opener: never decorated. On a transport that keeps a session (`keeps`:
    /// the connection's, or one it stores), a server with notifications advertises them; a connection's
    /// session opens its notifications.
    fn initialize(
        &self,
        served: Served<'_>,
        params: Option<&Value>,
        session: Option<&LegacySession>,
        keeps: bool,
        extensions: &crate::Extensions,
    ) -> Answer {
        let requested = params.and_then(|p| p.get("protocolVersion")).cloned();
        let served_legacy = served.iter().find(|v| !v.is_modern());
        let Some(legacy) = served_legacy else {
            // A modern-only server names what it serves in its answer to `initialize` (S-7).
            return Err(match requested {
                Some(Value::String(text)) => Self::unsupported_version(served, Value::String(text)),
                _ => ErrorObject::invalid_params("initialize requires a string protocolVersion")
                    .with_data(json!({"supported": served.names()})),
            });
        };
        // 2025-11-25 negotiation: echo a supported legacy revision, otherwise offer ours.
        let agreed = requested
            .as_ref()
            .and_then(Value::as_str)
            .and_then(ProtocolVersion::parse)
            .filter(|v| !v.is_modern() && served.admits(*v))
            .unwrap_or(legacy);
        // What the bridge may ask this client (a stdio connection is one session).
        if let (Some(session), Some(declared)) = (session, params.and_then(|p| p.get("capabilities"))) {
            session.remember_capabilities(declared);
        }
        if let (Some(session), Some(notifications)) = (session, self.notifications()) {
            let context =
                RequestContext::new(Era::Declared(agreed), None).with_extensions(extensions.clone());
            session.open(|| notifications.hub.subscribe(), notifications.key_of(&context));
        }
        let notifying = keeps && self.notifications().is_some();
        encoded(&mcp_kernel_wire::types::InitializeResult {
            protocol_version: agreed.as_str().to_owned(),
            capabilities: crate::catalog::advertised::capabilities(
                self.inner.injected.completer.is_some(),
                self.inner.injected.log_level.is_some(),
                notifying,
            ),
            server_info: crate::catalog::advertised::identity(&self.inner.options),
            instructions: None,
            meta: None,
        })
    }
}

trait ErrorOrResult {
    fn error_or_result(id: Value, answer: Answer) -> Response;
}

impl ErrorOrResult for Response {
    fn error_or_result(id: Value, answer: Answer) -> Response {
        match answer {
            Ok(result) => Response::result(id, result),
            Err(error) => Response::error(id, error),
        }
    }
}
