//! The typestate builder: a service cannot be built until the host has chosen its allowed origins and
//! its `authorize` hook. "Any origin" and "everyone" are choices to spell out, never defaults.
//!
//! ```
//! use mcp_kernel_http::{AllowedOrigins, McpHttp};
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! let service = McpHttp::builder(server)
//!     .allowed_origins(AllowedOrigins::list(["http://localhost:4000"]))
//!     .authorize(|_parts| Ok(()))
//!     .build();
//! # let _ = service;
//! ```
//!
//! The hook may name the caller: what it returns (the host's principal) reaches dispatch, the readers
//! and the list filter as `RequestContext::principal::<P>()`. An asynchronous hook (a token
//! introspection, a database lookup) is given with `authorize_async` instead; its future owns what it
//! took from the parts, and must be done within the request's read timeout:
//!
//! ```
//! use mcp_kernel_http::{AllowedOrigins, McpHttp, Refused};
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! #[derive(Clone, PartialEq, Eq, Hash)]
//! struct Caller(String);
//!
//! let service = McpHttp::builder(server)
//!     .allowed_origins(AllowedOrigins::any())
//!     .authorize_async(|parts| {
//!         let token = parts.headers.get("authorization").cloned();
//!         async move {
//!             match token {
//!                 Some(token) if token.as_bytes() == b"Bearer alice" => Ok(Caller("alice".into())),
//!                 _ => Err(Refused::because("no valid token")),
//!             }
//!         }
//!     })
//!     .build();
//! # let _ = service;
//! ```
//!
//! Without `authorize`, it does not compile:
//!
//! ```compile_fail
//! use mcp_kernel_http::{AllowedOrigins, McpHttp};
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! let service = McpHttp::builder(server).allowed_origins(AllowedOrigins::any()).build();
//! ```
//!
//! Nor without `allowed_origins`:
//!
//! ```compile_fail
//! use mcp_kernel_http::McpHttp;
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! let service = McpHttp::builder(server).authorize(|_| Ok(())).build();
//! ```
//!
//! Nor with both hooks (one pre-read hook decides):
//!
//! ```compile_fail
//! use mcp_kernel_http::{AllowedOrigins, McpHttp};
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! let service = McpHttp::builder(server)
//!     .allowed_origins(AllowedOrigins::any())
//!     .authorize(|_| Ok(()))
//!     .authorize_async(|_| async { Ok(()) })
//!     .build();
//! ```

use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::FutureExt;
use http::request::Parts;
use mcp_kernel_router::transport::LiveServer;

use crate::admission::host_header::AllowedHosts;
use crate::admission::origin::AllowedOrigins;
use crate::admission::path::EndpointPath;
use crate::auth::hooks::{
    Admission, AuthorizeAsyncFn, AuthorizeBodyFn, AuthorizeFn, AuthorizeHook, Refused, principal,
};
use crate::auth::protected_resource::{ProtectedResource, WELL_KNOWN};
use crate::body::budget::{BodyBudget, DEFAULT_BODY_BYTES_IN_FLIGHT, DEFAULT_CLIENT_SHARE_DIVISOR};
use crate::client::PrincipalDigest;
use crate::dispatch::listen::slots::{DEFAULT_MAX_LISTENS, DEFAULT_MAX_LISTENS_PER_CLIENT};
use crate::dispatch::listen::{DEFAULT_LISTEN_KEEP_ALIVE, DEFAULT_LISTEN_QUEUE, ListenPolicy};
use crate::legacy::LegacyClients;
use crate::service::{McpService, Shared};
use crate::session::{LegacySessions, SessionPolicy};

/// The largest body admitted: 1 MiB. An MCP request is one JSON message; a larger one is refused (413).
pub const MAX_BODY_BYTES: usize = 1_048_576;

/// The default whole-body deadline: 15 s, which a cap-sized body meets at about 68 KiB/s.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(15);

/// Entry point of the HTTP transport: `McpHttp::builder(server)`.
#[derive(Debug)]
pub struct McpHttp;

impl McpHttp {
    /// Starts building the service for `server`: a [`mcp_kernel_router::Server`], or a [`LiveServer`]
    /// whose replacements the service then serves (each request is served to its end by the server
    /// current when it arrived). It serves `2026-07-28`, and `2025-11-25` clients statelessly unless
    /// [`Builder::legacy_clients`] says otherwise.
    pub fn builder(server: impl Into<LiveServer>) -> Builder<NoOrigins, NoAuthorize> {
        Builder {
            server: server.into(),
            origins: NoOrigins,
            authorize: NoAuthorize,
            authorize_body: None,
            path: None,
            hosts: None,
            resource: None,
            legacy: LegacyClients::default(),
            read_timeout: DEFAULT_READ_TIMEOUT,
            max_body_bytes: MAX_BODY_BYTES,
            body_bytes_in_flight: DEFAULT_BODY_BYTES_IN_FLIGHT,
            body_bytes_per_client: None,
            listen: ListenSettings::default(),
            sessions: None,
            digest: PrincipalDigest::default(),
        }
    }
}

/// The listen-stream options, until the service is built.
#[derive(Debug, Clone, Copy)]
struct ListenSettings {
    keep_alive: Duration,
    queue: usize,
    total: usize,
    per_client: usize,
}

impl Default for ListenSettings {
    fn default() -> Self {
        Self {
            keep_alive: DEFAULT_LISTEN_KEEP_ALIVE,
            queue: DEFAULT_LISTEN_QUEUE,
            total: DEFAULT_MAX_LISTENS,
            per_client: DEFAULT_MAX_LISTENS_PER_CLIENT,
        }
    }
}

/// Typestate: `allowed_origins` has not been given yet.
#[derive(Debug)]
pub struct NoOrigins;

/// Typestate: `authorize` has not been given yet.
#[derive(Debug)]
pub struct NoAuthorize;

/// Typestate: `authorize` (or `authorize_async`) has been given.
pub struct Authorize(AuthorizeHook);

impl std::fmt::Debug for Authorize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorize(..)")
    }
}

/// Builds an [`McpService`]; see [`McpHttp::builder`].
pub struct Builder<O, A> {
    server: LiveServer,
    origins: O,
    authorize: A,
    authorize_body: Option<AuthorizeBodyFn>,
    /// The one path served, when given (`path`).
    path: Option<Box<str>>,
    hosts: Option<AllowedHosts>,
    resource: Option<ProtectedResource>,
    legacy: LegacyClients,
    read_timeout: Duration,
    max_body_bytes: usize,
    body_bytes_in_flight: usize,
    body_bytes_per_client: Option<usize>,
    listen: ListenSettings,
    /// How legacy sessions are kept, when given (`legacy_sessions`).
    sessions: Option<LegacySessions>,
    /// Digests the principals of the hooks, shared with them.
    digest: PrincipalDigest,
}

impl<O: std::fmt::Debug, A: std::fmt::Debug> std::fmt::Debug for Builder<O, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("origins", &self.origins)
            .field("authorize", &self.authorize)
            .field("path", &self.path)
            .field("hosts", &self.hosts)
            .field("protected_resource", &self.resource)
            .field("legacy_clients", &self.legacy)
            .field("read_timeout", &self.read_timeout)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("body_bytes_in_flight", &self.body_bytes_in_flight)
            .field("body_bytes_per_client", &self.body_bytes_per_client)
            .field("listen", &self.listen)
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

impl<A> Builder<NoOrigins, A> {
    /// The `Origin` values admitted (required): `AllowedOrigins::list([...])` or `AllowedOrigins::any()`.
    pub fn allowed_origins(self, origins: AllowedOrigins) -> Builder<AllowedOrigins, A> {
        Builder {
            server: self.server,
            origins,
            authorize: self.authorize,
            authorize_body: self.authorize_body,
            path: self.path,
            hosts: self.hosts,
            resource: self.resource,
            legacy: self.legacy,
            read_timeout: self.read_timeout,
            max_body_bytes: self.max_body_bytes,
            body_bytes_in_flight: self.body_bytes_in_flight,
            body_bytes_per_client: self.body_bytes_per_client,
            listen: self.listen,
            sessions: self.sessions,
            digest: self.digest,
        }
    }
}

impl<O> Builder<O, NoAuthorize> {
    /// The pre-read hook (required, or [`Builder::authorize_async`]): it sees the request's parts and
    /// never its body. To admit every caller, say so: `.authorize(|_| Ok(()))`.
    ///
    /// What it admits with is the caller's principal, attached to the request and handed to the host
    /// as `RequestContext::principal::<P>()` (a `()` attaches nothing).
    ///
    /// The principal also names the request's client, whose share of the body budget its body is
    /// charged to ([`Builder::max_body_bytes_per_client`]): equal principals (by `Hash`) are one client
    /// from any address. So hash what identifies the caller, not the token (an expiry or a token id
    /// in the hash gives each fresh token a share of its own); and a hook that admits anonymous
    /// callers beside named ones should return `()` for nobody rather than `None` of an `Option`:
    /// every `None` is one client, from every address, where `()` falls back to the address.
    pub fn authorize<F, P>(self, hook: F) -> Builder<O, Authorize>
    where
        F: Fn(&Parts) -> Result<P, Refused> + Send + Sync + 'static,
        P: Hash + Clone + Send + Sync + 'static,
    {
        let digest = self.digest.clone();
        let hook: AuthorizeFn =
            Arc::new(move |parts: &Parts| hook(parts).map(|principal| Admission::of(&digest, principal)));
        self.authorized(AuthorizeHook::Sync(hook))
    }

    /// The pre-read hook as an async function (required, or [`Builder::authorize`]), for a check that
    /// waits (token introspection, a lookup). Like `authorize`, it runs before the body is read and
    /// sees the parts only: the future it returns owns what it took from them.
    ///
    /// Its time counts against the request's [`Builder::read_timeout`], the one deadline that covers
    /// the hook and then the body: a hook not done by then is dropped and answered 503 with
    /// `retry-after: 1` (logged). A panic, when called or while polled, is answered 500. What it admits
    /// with names the request's client as [`Builder::authorize`]'s principal does.
    pub fn authorize_async<F, Fut, P>(self, hook: F) -> Builder<O, Authorize>
    where
        F: Fn(&Parts) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<P, Refused>> + Send + 'static,
        P: Hash + Clone + Send + Sync + 'static,
    {
        let digest = self.digest.clone();
        let hook: AuthorizeAsyncFn = Arc::new(move |parts: &Parts| {
            let digest = digest.clone();
            hook(parts).map(move |answer| answer.map(|principal| Admission::of(&digest, principal))).boxed()
        });
        self.authorized(AuthorizeHook::Async(hook))
    }

    fn authorized(self, hook: AuthorizeHook) -> Builder<O, Authorize> {
        Builder {
            server: self.server,
            origins: self.origins,
            authorize: Authorize(hook),
            authorize_body: self.authorize_body,
            path: self.path,
            hosts: self.hosts,
            resource: self.resource,
            legacy: self.legacy,
            read_timeout: self.read_timeout,
            max_body_bytes: self.max_body_bytes,
            body_bytes_in_flight: self.body_bytes_in_flight,
            body_bytes_per_client: self.body_bytes_per_client,
            listen: self.listen,
            sessions: self.sessions,
            digest: self.digest,
        }
    }
}

impl<O, A> Builder<O, A> {
    /// The optional post-read hook: the parts and the body exactly as received, before decoding.
    ///
    /// What it admits with joins the request's extensions, replacing a value of the same type that
    /// `authorize` returned (a `()` attaches nothing).
    pub fn authorize_body<F, P>(mut self, hook: F) -> Self
    where
        F: Fn(&Parts, &Bytes) -> Result<P, Refused> + Send + Sync + 'static,
        P: Clone + Send + Sync + 'static,
    {
        let hook: AuthorizeBodyFn =
            Arc::new(move |parts: &Parts, body: &Bytes| hook(parts, body).map(principal));
        self.authorize_body = Some(hook);
        self
    }

    /// The one path the endpoint answers at, such as `"/mcp"`: once the `Host` and `Origin` checks
    /// have passed, a request for any other path (its query aside, compared byte for byte) is
    /// answered 404, with no content, before anything else reads it. With a
    /// [`protected_resource`](Self::protected_resource), its metadata document's path
    /// ([`ProtectedResource::metadata_path`]) is answered with the document, first, to any name and
    /// origin, as [`ProtectedResource::metadata_service`] would. Without a path (the default) every
    /// path is served, as when a router in front has chosen the path already.
    ///
    /// A host that serves MCP alone on its port gives the path here and serves the service itself
    /// ([`serve`](crate::serve)), without a router in front: a request then skips the router's
    /// matching, its moves of the request and the boxing of the answer's body (`docs/performance.md`,
    /// "Ninth round"). A host with other routes mounts the service in its router instead, at the path
    /// it gives here or without one — not under `nest_service`, which takes the prefix off the path
    /// the service sees.
    ///
    /// ```
    /// use mcp_kernel_http::{AllowedOrigins, McpHttp};
    /// # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
    /// let service = McpHttp::builder(server)
    ///     .allowed_origins(AllowedOrigins::any())
    ///     .authorize(|_| Ok(()))
    ///     .path("/mcp")
    ///     .build();
    /// # let _ = service;
    /// ```
    ///
    /// # Panics
    ///
    /// If clients may send `path` otherwise than as written, so that their requests would be 404: one
    /// not starting with `/`; with a query or a fragment; with a character RFC 3986 does not allow
    /// unescaped in a path (a space, a non-ASCII letter, `"`, `{`, `[`, `\`…); with an escape not in
    /// upper-case hex (`%7b`) or of a letter, digit or `-._~` (`%63`), which a normalising client
    /// sends unescaped; or with a `.` or `..` segment, which clients resolve. And
    /// [`build`](Builder::build) panics if the path is the protected resource's metadata path.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        if let Err(why) = crate::admission::path::check_servable(&path) {
            panic!("McpHttp::builder().path({path:?}): clients may send it otherwise: {why}");
        }
        self.path = Some(path.into_boxed_str());
        self
    }

    /// The names (`Host`, `:authority`) the endpoint answers to. Checked first, with `Origin`: a name
    /// not allowed is refused 421, a missing or malformed one 400. A server reachable under another
    /// name lists it; with [`AllowedOrigins::any`] this check is the only DNS-rebinding defence.
    ///
    /// The default is the [`ProtectedResource`]'s own `host[:port]` when one is given (its clients
    /// must address it by exactly that name: the metadata document's `resource` must match the URL
    /// they used), else [`AllowedHosts::Loopback`]: `localhost`, `127.0.0.1`, `[::1]`, any port.
    pub fn allowed_hosts(mut self, hosts: AllowedHosts) -> Self {
        self.hosts = Some(hosts);
        self
    }

    /// Describes the endpoint as an OAuth protected resource (RFC 9728): every challenge a hook's
    /// [`Refused`] carries then names its metadata document (`resource_metadata="…"`), which the host
    /// serves with [`ProtectedResource::metadata_service`] at [`ProtectedResource::metadata_path`].
    pub fn protected_resource(mut self, resource: ProtectedResource) -> Self {
        self.resource = Some(resource);
        self
    }

    /// Whether MCP `2025-11-25` clients are also served: by default [`LegacyClients::Stateless`], on
    /// the same endpoint without sessions; [`LegacyClients::Sessions`] with sessions, kept as
    /// [`Builder::legacy_sessions`] says (in this process, at the defaults of [`LegacySessions`], unless
    /// it is given); a host that serves `2026-07-28` only says `.legacy_clients(LegacyClients::Refused)`.
    pub fn legacy_clients(mut self, legacy: LegacyClients) -> Self {
        self.legacy = legacy;
        self
    }

    /// Serves MCP `2025-11-25` clients with sessions ([`LegacyClients::Sessions`]), kept as `sessions`
    /// says: in its store (in process, or one shared by many instances), within its bounds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_kernel_http::{AllowedOrigins, LegacySessions, McpHttp};
    /// use mcp_kernel_router::sessions::SessionLimits;
    /// # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
    /// let limits = SessionLimits::new(8, 5_000, Duration::from_secs(600), 16);
    /// let service = McpHttp::builder(server)
    ///     .allowed_origins(AllowedOrigins::any())
    ///     .authorize(|_| Ok(()))
    ///     .legacy_sessions(LegacySessions::in_process().limits(limits))
    ///     .build();
    /// # let _ = service;
    /// ```
    ///
    /// A session is bound to the principal `authorize` admitted its `initialize` with (by a SHA-256
    /// digest of its type and `Hash`, equal on every instance of one build): hash what identifies the
    /// caller, not the token, or a fresh token loses its sessions. A hook that names nobody (`()`)
    /// binds sessions to nobody: their ids alone guard them. Sessions are counted per client, as the
    /// body budget names clients: the principal, else the address prefix
    /// ([`ServeOptions::client_prefixes`](crate::ServeOptions::client_prefixes)), so one address of a
    /// host that names nobody holds at most [`SessionLimits::per_owner`] of them and no client takes
    /// the whole total. What a session costs and where it lives: `docs/http.md`, "Legacy sessions".
    ///
    /// [`SessionLimits::per_owner`]: mcp_kernel_router::sessions::SessionLimits::per_owner
    pub fn legacy_sessions(mut self, sessions: LegacySessions) -> Self {
        self.legacy = LegacyClients::Sessions;
        self.sessions = Some(sessions);
        self
    }

    /// The request's deadline, from its arrival (default 15 s): an `authorize_async` hook not done by
    /// then is answered 503; a body not complete by then, 408.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Lowers the body cap below [`MAX_BODY_BYTES`] (a larger value is clamped to it).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes.min(MAX_BODY_BYTES);
        self
    }

    /// The bytes of request bodies held at once across the service (default
    /// [`DEFAULT_BODY_BYTES_IN_FLIGHT`], 64 MiB; never below the body cap). A body is charged as its
    /// bytes arrive — its buffer doubles with them, never past its declared length, never more than
    /// twice what arrived — and keeps its charge until its answer has been handed to the transport; a head
    /// alone is charged nothing. Before a body is read, its first 64 KiB (all of it if it declares less)
    /// must fit, or it is refused 503 with `retry-after: 1`, unread; a body that outgrows the room
    /// left is refused the same way.
    pub fn max_body_bytes_in_flight(mut self, bytes: usize) -> Self {
        self.body_bytes_in_flight = bytes;
        self
    }

    /// The share of the body budget one client may hold at once (default an eighth of
    /// [`Builder::max_body_bytes_in_flight`], 8 MiB of the default 64 MiB; never below the body cap, never
    /// above the budget). A client is the principal `authorize` names, else the peer's address prefix
    /// (`ServeOptions::client_prefixes`: an IPv4 address, an IPv6 `/64`); a body that would take its
    /// client past its share is refused 503 with `retry-after: 1`, like one the budget has no room for.
    ///
    /// A client's body bytes are charged as they arrive (a buffer never more than twice what arrived),
    /// so holding a share takes sending it. Requests with neither a principal nor a peer address (a
    /// service mounted in another server without a [`PeerAddr`](crate::PeerAddr) extension) cannot be
    /// told apart: they are held to the budget alone. Behind a proxy that does not forward the client's
    /// address, every anonymous request comes from the proxy: raise the share to the budget there,
    /// insert the forwarded address as `PeerAddr` in a layer you trust, or name principals in
    /// `authorize`.
    pub fn max_body_bytes_per_client(mut self, bytes: usize) -> Self {
        self.body_bytes_per_client = Some(bytes);
        self
    }

    /// How many `subscriptions/listen` streams may be open at once across the service (default
    /// [`DEFAULT_MAX_LISTENS`], 4,096; at least 1). A listen past it is refused 503 with
    /// `retry-after: 1` before its stream opens. A listen that completes at once (nothing of it
    /// honoured, or a server built without notifications) holds no stream and is never refused.
    ///
    /// A stream costs a task, a subscription to the change hub, its queue and its HTTP stream (about
    /// 10 KiB idle over HTTP/2, `docs/http.md`); over HTTP/1.1 also a connection each, bounded by
    /// `ServeOptions::max_connections`. A benchmark or a host with many clients raises it, with
    /// [`Builder::max_listens_per_client`] when the clients share an address.
    pub fn max_listens(mut self, streams: usize) -> Self {
        self.listen.total = streams;
        self
    }

    /// How many `subscriptions/listen` streams one client may hold open at once (default
    /// [`DEFAULT_MAX_LISTENS_PER_CLIENT`], 32; at least 1, at most [`Builder::max_listens`]). The
    /// client is the one the body budget charges: the principal `authorize` names, else the peer's
    /// address prefix (an IPv4 address, an IPv6 `/64`); requests with neither are held to
    /// `max_listens` alone. A listen past it is refused 503 with `retry-after: 1`, while other clients
    /// still open theirs. Behind a proxy that does not forward the client's address every anonymous
    /// listen comes from the proxy: name principals, insert the forwarded address as
    /// [`PeerAddr`](crate::PeerAddr), or raise this to `max_listens`.
    pub fn max_listens_per_client(mut self, streams: usize) -> Self {
        self.listen.per_client = streams;
        self
    }

    /// How many notifications may wait for one listen stream's reader (default
    /// [`DEFAULT_LISTEN_QUEUE`], 64; at least 1, at most 1,048,576). A reader that falls that far behind has its stream
    /// ended: the notification that found the queue full is not queued, the completion result (which
    /// has a place of its own) follows what was queued, and a client that reads again learns to listen
    /// again. A client that never reads again is closed at `serve`'s write deadline. So one stream
    /// holds at most this many notifications, never a silent gap.
    pub fn listen_queue(mut self, notifications: usize) -> Self {
        self.listen.queue = notifications;
        self
    }

    /// How long a listen stream may stay silent before the service writes an SSE comment line
    /// (`: keep-alive`), which every client ignores and which keeps proxies and clients from closing a
    /// stream on which nothing changed (default [`DEFAULT_LISTEN_KEEP_ALIVE`], 15 s; at least 1 ms).
    /// The interval restarts at every event written. Keep it below the idle timeouts of what sits
    /// between the server and its clients (nginx's `proxy_read_timeout` is 60 s by default).
    pub fn listen_keep_alive(mut self, interval: Duration) -> Self {
        self.listen.keep_alive = interval;
        self
    }
}

impl Builder<AllowedOrigins, Authorize> {
    /// The service.
    pub fn build(self) -> McpService {
        // Over HTTP there is no era probe: the stateless revision alone is advertised and served to
        // modern requests; legacy ones, when served, are served the legacy revision alone. Each
        // request narrows the server current when it arrived (`Inbound::revisions`).
        if let Some(hosts) = &self.hosts {
            hosts.warn_unusable();
        }
        let sessions = (self.legacy == LegacyClients::Sessions)
            .then(|| SessionPolicy::new(self.sessions.unwrap_or_default(), self.max_body_bytes));
        self.digest.name_owners(sessions.is_some());
        McpService::new(Shared {
            sessions,
            named_to_drain: std::sync::atomic::AtomicU64::new(0),
            live: self.server,
            path: self.path.map(|path| endpoint_path(path, self.resource.as_ref())),
            legacy: self.legacy,
            hosts: self.hosts.unwrap_or_else(|| match &self.resource {
                Some(resource) => AllowedHosts::List(vec![resource.authority().to_owned()]),
                None => AllowedHosts::Loopback,
            }),
            origins: self.origins,
            metadata_url: self.resource.map(|r| r.metadata_url().to_owned()),
            authorize: self.authorize.0,
            authorize_body: self.authorize_body,
            read_timeout: self.read_timeout,
            max_body_bytes: self.max_body_bytes,
            budget: {
                let total = self.body_bytes_in_flight.max(self.max_body_bytes);
                let share = self
                    .body_bytes_per_client
                    .unwrap_or(total / DEFAULT_CLIENT_SHARE_DIVISOR)
                    .max(self.max_body_bytes);
                BodyBudget::new(total, share)
            },
            listen: ListenPolicy::new(
                self.listen.keep_alive,
                self.listen.queue,
                self.listen.total,
                self.listen.per_client,
            ),
        })
    }
}

/// The service's one path, with the protected resource's metadata document beside it. A path that is
/// the document's would hide the endpoint (panics); one that is not the resource's own (its
/// identifier's path) is served, with a warning: its clients reach it only through a proxy that
/// rewrites the path, and the document names a resource at another one.
fn endpoint_path(path: Box<str>, resource: Option<&ProtectedResource>) -> EndpointPath {
    let Some(resource) = resource else { return EndpointPath::new(path, None) };
    let metadata_path = resource.metadata_path();
    assert!(
        metadata_path != &*path,
        "McpHttp::builder().path({path:?}): it is the protected resource's metadata path"
    );
    let resource_path = metadata_path.strip_prefix(WELL_KNOWN).filter(|p| !p.is_empty()).unwrap_or("/");
    if resource_path != &*path {
        tracing::warn!(
            path = %path,
            resource_path,
            "the service's path is not its protected resource's: clients use the resource's"
        );
    }
    EndpointPath::new(path, Some((metadata_path.into(), resource.metadata_service())))
}
