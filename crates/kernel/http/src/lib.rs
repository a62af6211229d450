//! The stateless Streamable HTTP transport of mcp-kernel (MCP `2026-07-28`): one POST endpoint, no
//! sessions, every request standing alone, hardened by default. `2025-11-25` clients, which open with
//! `initialize`, are served on the same endpoint without sessions unless the host refuses them
//! ([`LegacyClients`]), or with sessions when it opts in ([`LegacyClients::Sessions`]).
//!
//! [`McpHttp::builder`] makes an [`McpService`], a `tower::Service<http::Request<B>>` for any body `B`:
//! mount it in axum (`Router::route_service("/mcp", service)`), in hyper, in any tower stack, or serve
//! it with [`serve`] (HTTP/1.1 and HTTP/2 cleartext on one listener) — given its one path
//! ([`Builder::path`]) when MCP is all the port serves.
//!
//! # Threat model
//!
//! The client is trusted for nothing; the host (the catalog, dispatch, the hooks) for everything. Each
//! refusal runs before anything more expensive than it (the table is in [`McpService`]'s module):
//!
//! * **DNS rebinding**: the request's name (`Host`, `:authority`) must be allowed ([`AllowedHosts`],
//!   checked first; the default admits only the loopback names, so a server bound to loopback refuses a
//!   rebound name with 421 unconfigured), and every `Origin` value must be allowed ([`AllowedOrigins`];
//!   there is no default).
//! * **Browser pages**: CORS is granted only to a listed origin, from the same list, with the MCP
//!   headers and no credentials mode; [`AllowedOrigins::any`] grants no browser access.
//! * **Signing in** (OAuth, as a resource server): a hook's [`Refused`] says what the client should do
//!   — 401 with `WWW-Authenticate: Bearer resource_metadata="…"` naming the [`ProtectedResource`]
//!   document, 403 `insufficient_scope` naming the scopes — and [`bearer_token`] refuses a token in
//!   the query string or a repeated credential. The package verifies no token and holds no key:
//!   the hook decides, [`ProtectedResource::is_audience`] refusing tokens issued for another resource.
//! * **Unauthenticated callers**: `authorize` (or `authorize_async`) runs before the body is read and,
//!   by its type, cannot read it; a refused caller's body is never drained (`connection: close` over
//!   HTTP/1.x). An async hook's time counts against the request's one deadline (`read_timeout`, from
//!   its arrival, which the body then has what is left of): a hook not done by then is dropped and
//!   answered 503 with `retry-after: 1`, so a slow identity provider cannot hold requests open past
//!   it. A hook that panics (an async one: when called or while polled) is answered 500.
//! * **Identity**: what the hooks admit with (the host's principal; `authorize_body`'s replaces
//!   `authorize`'s of the same type) is attached to that request alone and reaches the host in
//!   `RequestContext::principal::<P>()` on every path: a JSON answer, an SSE stream, the legacy path.
//!   It is never read from the body or the client's `_meta`.
//! * **Per-caller lists**: with a `Visibility` filter, a tool hidden from the caller is refused exactly
//!   like an unknown tool, headers included: its `x-mcp-header` annotations are not checked (no -32020
//!   and no annotation fault can reveal it), and the core answers "Unknown tool".
//! * **Slow and oversized bodies**: one deadline over the whole body (default 15 s, 408), a 1 MiB cap
//!   (413) checked from `Content-Length` before reading and while streaming, `transfer-encoding`
//!   refused (411) because a chunked body defeats a whole-body bound.
//! * **Many held bodies**: a budget of request-body bytes across the service (default 64 MiB) and a
//!   share of it per client (default 8 MiB; the principal `authorize` names, else the address prefix:
//!   [`AddressPrefixes`]), charged only as bytes arrive, so heads alone hold nothing and one client
//!   cannot spend the others' room; a body that does not fit is refused 503 with `retry-after`.
//! * **Held connections** ([`serve`], [`serve_with`]): connections bounded in total and per client
//!   (its address prefix, [`AddressPrefixes`]), the client holding the most giving one up to a client
//!   holding fewer when all are held, 16 HTTP/2 streams per connection, one deadline from accept to the first request's head
//!   (the protocol decision reads, never peeks, so a partial preface costs nothing while it waits),
//!   an idle timeout that pings do not reset, and a write deadline for responses the client will not
//!   take. The bounds and their costs are in [`ServeOptions`].
//! * **Listen streams** (`subscriptions/listen`, the POST's own SSE response, open until the server
//!   ends it): bounded in all (default 4,096) and per client (default 32; the client of the body
//!   budget), a listen past either refused 503 with `retry-after` before its stream opens; a queue of
//!   64 notifications per stream, a reader that falls that far behind has its stream ended with its
//!   completion result (never a silent gap, never unbounded memory) and is closed at `serve`'s write
//!   deadline if it never reads again; keep-alive comment lines every 15 s; every stream ended with its
//!   completion result when `serve` drains, when its connection is told to make room, or at
//!   [`McpService::end_listens`]. A stream holds no share of the body budget.
//! * **Tasks** (a server built with the tasks extension): `tasks/get`, `tasks/update` and
//!   `tasks/cancel` pass every check above, `authorize` included, like any request; `Mcp-Name` must
//!   equal `params.taskId` (-32020, 400). A task's handler outlives its request, so [`serve`]'s drain
//!   gives running tasks what is left of its grace period and fails each one still running
//!   ([`McpService::drain_tasks`] for a host serving the service itself): no task is left `working`.
//! * **Hostile JSON**: the bounded reader refuses nesting deeper than 64, repeated keys, and
//!   non-objects (batches) before any schema sees them.
//! * **Smuggling between a gateway and the server**: the standard headers must agree with the body,
//!   every value of a repeated header included (-32020, 400).
//! * **Legacy clients** ([`LegacyClients::Stateless`], the default; [`LegacyClients::Refused`] closes
//!   the path): only a message with nothing modern in it takes the `2025-11-25` path; `Mcp-*` headers it
//!   sends must still agree with the body; no session is minted, and a 404 never answers a JSON-RPC
//!   error (a legacy client reads it as an ended session).
//! * **Legacy sessions** (opt-in, [`LegacyClients::Sessions`], [`Builder::legacy_sessions`]): a session
//!   id is 128 random bits, bound to the digest of the principal that initialized it; another
//!   principal's, a guessed, an ended or an expired id is 404 with one body that echoes nothing, no id
//!   400; GET and DELETE pass the same admission and `authorize` as a POST. Sessions are bounded per
//!   principal (429) and in all (503), expire when idle, and bound their subscriptions; a session's GET
//!   stream takes a listen slot; a POSTed answer is delivered only to a request of its own session
//!   still waiting (else 400), within a size (413); server-to-client requests are bounded per session
//!   and in the time they wait ([`LegacySessions`]).
//! * **Replacement** ([`mcp_kernel_router::transport::LiveServer`]): each request reads the current server once,
//!   as it arrives, and every check and the core use that one server, so a replacement never applies
//!   one catalog's header rules to another's call.
//! * **Leaks**: a refusal's reason is logged (tracing), never returned; a host fault is answered 500
//!   with nothing but "Internal error".
//!
//! Left to the server in front and the host: TLS, header count and size (hyper's limits), rate limits,
//! connection limits when the service is mounted in another server, sessions (none exist unless
//! legacy sessions are turned on: a `Mcp-Session-Id` is ignored and never sent).
#![forbid(unsafe_code)]

mod admission;
mod auth;
mod body;
mod builder;
mod client;
mod dispatch;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod legacy;
mod mirror;
mod response;
mod serve;
mod service;
mod session;
#[cfg(feature = "test-util")]
#[doc(hidden)]
pub mod testing;
mod trace;

pub use admission::host_header::AllowedHosts;
pub use admission::origin::AllowedOrigins;
pub use auth::bearer::{BearerError, bearer_token};
pub use auth::hooks::Refused;
pub use auth::metadata::MetadataService;
pub use auth::protected_resource::{InvalidResource, ProtectedResource};
pub use body::budget::DEFAULT_BODY_BYTES_IN_FLIGHT;
pub use builder::{
    Authorize, Builder, DEFAULT_READ_TIMEOUT, MAX_BODY_BYTES, McpHttp, NoAuthorize, NoOrigins,
};
pub use client::{AddressPrefixes, ClientNetwork, DEFAULT_IPV4_PREFIX, DEFAULT_IPV6_PREFIX, PeerAddr};
pub use dispatch::listen::slots::{DEFAULT_MAX_LISTENS, DEFAULT_MAX_LISTENS_PER_CLIENT};
pub use dispatch::listen::{DEFAULT_LISTEN_KEEP_ALIVE, DEFAULT_LISTEN_QUEUE};
pub use legacy::LegacyClients;
pub use response::body::ResponseBody;
pub use serve::{
    DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER,
    FIRST_BYTES_TIMEOUT, HEADER_READ_TIMEOUT, HTTP1_READ_BUFFER, HTTP2_KEEP_ALIVE, HTTP2_RECEIVE_WINDOW,
    IDLE_TIMEOUT, SHUTDOWN_GRACE, ServeOptions, WRITE_TIMEOUT, serve, serve_with,
};
pub use service::{McpService, ResponseFuture};
pub use session::{DEFAULT_ANSWER_WAIT, DEFAULT_MAX_ANSWER_BYTES, LegacySessions};

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
