//! The service: every refusal layer of `protocol.md` [D-3] to [D-20], in order (and the path, D-2,
//! when the host named one), then the core.
//!
//! | step | check | module | refusal | connection |
//! |---|---|---|---|---|
//! | 0 | the server current when the request arrived (`LiveServer::current`), read once: every later step and the core use it | `service.rs` | — | — |
//! | 0a | with `Builder::path` and a protected resource, a request for the resource's metadata document (`ProtectedResource::metadata_path`) is answered with it, to any name and origin, as `ProtectedResource::metadata_service` answers | `admission/path.rs`, `auth/metadata.rs` | 200 / 204 (preflight) / 405 | closed (HTTP/1.x) when a body is declared, else kept |
//! | 1 | `Host` / `:authority` in the allowed hosts (default: the protected resource's name, else the loopback names) | `admission/host_header.rs` | 421; 400 if missing, repeated, malformed or disagreeing; 403 instead when the `Origin` is not allowed either | closed (HTTP/1.x) |
//! | 1a | `Origin`, every value | `admission/origin.rs` | 403 | closed |
//! | 1b | with `Builder::path`, the request's path is that one (its query aside, byte for byte) | `admission/path.rs` | 404, no content | closed (HTTP/1.x) when a body is declared, else kept |
//! | 1c | a CORS preflight from a listed origin | `admission/cors.rs` | 204 with the grant | kept (a declared body is never read: drained if it came with the head, else the connection is closed after the 204) |
//! | 2 | method is POST (with `LegacyClients::Sessions`, also GET or DELETE) | `service.rs` | 405, `allow: POST` (`allow: GET, POST, DELETE` with sessions) | closed |
//! | 3 | no `transfer-encoding` | `service.rs` | 411 | closed |
//! | 4 | `authorize(&Parts)` or `authorize_async(&Parts)`, admitting with the caller's principal (into the request's `Extensions`); the async hook is awaited within the request's one deadline (`read_timeout`, from arrival), which the body read then shares | `auth/hooks.rs`, `response/challenge.rs` | the refusal's kind: 401 / 403 / 400 with its `WWW-Authenticate`; 500 if it panics; 503, `retry-after: 1`, if the async hook is not done by the deadline | closed |
//! | 4a | with sessions, a GET or DELETE: no body declared, then its session (`Mcp-Session-Id`, resumed, the caller's: its principal's digest); DELETE (a legacy version header if any) ends it; GET opens its stream (`Accept: text/event-stream`, a legacy version header if any, a server with notifications, a listen slot as at step 11b; a newer stream of the session ends the older) | `service.rs`, `session/mod.rs`, `session/stream.rs` | 400 (a body); 400 (no id) / 404 (unknown, expired, another principal's: one body); DELETE 400 (version) / 204; GET 406 / 405 (no notifications) / 503 (`retry-after`: hub, slot) / 200 (an SSE stream) | closed (400 for a body), kept |
//! | 5 | declared `Content-Length` within the cap | `body/read.rs` | 413 | closed |
//! | 5a | the body's first 64 KiB (all of it if it declares less) would fit the body budget and the client's share of it (the client is the principal step 4 named, else the address prefix, else one unknown client held only to the budget: `client.rs`) — checked, nothing charged | `body/budget.rs` | 503, `retry-after: 1` | closed |
//! | 6 | the body, within the cap, one deadline, the budget and the client's share (charged as its bytes arrive) | `body/read.rs`, `body/budget.rs` | 413 / 408 / 503 / 400 | closed |
//! | 7 | `authorize_body(&Parts, &Bytes)`, whose principal joins the extensions (replacing one of the same type) | `auth/hooks.rs` | 401 / 403 / 400 as in step 4, or 500 | kept |
//! | 8 | bounded decode: depth, duplicate keys, an object; read once into an `Envelope`, which every later step asks | `service.rs` (`read_envelope`) | 400 | kept |
//! | 8a | with `LegacyClients::Sessions`, a 2025-11-25 message (a header-less one carrying `Mcp-Session-Id` too) is served in its session instead: `initialize` mints one (the core with `keeps_session`); any other message needs its session; a POSTed response is delivered to the request of the session waiting for it; a request is served as at the next row, with `Inbound::stored_session` and, when it may stream, the session's client channel (its server-to-client requests on its SSE stream) | `session/post.rs`, `session/channel.rs` | 200 + `Mcp-Session-Id` / 429 / 503; 400 (no id) / 404 (unknown); 202 / 413 / 400 (no request awaits it); 400 / 200 / 202 / 500 | kept |
//! | 8a | else, with `LegacyClients::Stateless` (the default; not with `Refused`), a 2025-11-25 message is served on its own path instead (the core with `Revisions::Legacy`, `sessionless` and the same extensions) | `legacy.rs` | 400 / 200 / 202 / 500 | kept |
//! | 8b | a JSON-RPC request or notification (a POSTed response is refused) | `response/refusal.rs` (`jsonrpc_shape`) | 400 | kept |
//! | 9 | header rules: `_meta`, versions, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` (the tool's annotations as this caller may see them: a tool the host's `Visibility` hides from the caller mirrors nothing, like an unknown tool) | `mirror/` | 400 (500 for a bad annotation) | kept |
//! | 10 | removed methods (`initialize`, `notifications/initialized`, `ping`) | `service.rs` | 404, or 202 without an id | kept |
//! | 11 | the core (`handle_envelope`: the extensions, `Revisions::Stateless`, `sessionless`, the trace context of the `traceparent`, `tracestate` and `baggage` headers) | `dispatch/mod.rs`, `dispatch/core.rs`, `trace.rs`; the status, `response/status.rs` | 200 / 202 / 400 / 404 / 500 | kept |
//! | 11a | `tools/call`, `resources/read` or `prompts/get` with `_meta.progressToken` (or a `logLevel` with log notifications on), and a notification sent before the answer: an SSE stream | `dispatch/sse.rs`, `response/event_stream.rs` | 200 | kept |
//! | 11b | `subscriptions/listen` (`Admitted::listens`): the core opens it (`Server::open_listen`; a listen it does not open gets the core's answer, as at step 11), then a slot among the open listen streams, in all and for the request's client (as at step 5a), then the stream: acknowledgment, notifications, keep-alive comments, completion; the request's body-budget share is given back as it opens | `dispatch/listen/`, `response/listen_stream.rs` | 200 (an SSE stream); 503, `retry-after: 1`, when no slot is free | kept |
//!
//! The module column names the file that owns each row, in its concern's folder: `admission/` (the
//! head, before any hook), `auth/` (the hooks and what their refusals say), `body/` (the bounded read
//! and the body budget), `mirror/` (the standard headers against the body), `dispatch/` (the core, as
//! JSON or as an SSE stream), `session/` (legacy sessions: their ids, POSTs, streams and client
//! channel), `response/` (the shapes of every answer); the head checks that need
//! nothing but the request line, and the order itself, are here.
//!
//! A `HEAD` is answered as a `GET` without sessions would be (405; 404 at another path than
//! `Builder::path`'s; the metadata document's headers at its path), without content
//! (`response/body.rs`); with sessions too, since it may not open or replace a session's stream.
//!
//! Every answer after step 1a to a request from a listed origin carries the CORS grant
//! (`admission/cors.rs`), refusals included, so that a browser page can read a 401's challenge; with
//! a list of origins, every answer after step 1a carries `vary: origin`.
//!
//! [D-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-20]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use http::header::TRANSFER_ENCODING;
use http::request::Parts;
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use serde_json::Value;

use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::{BoxFuture, Extensions, Server};
use mcp_kernel_wire::{Envelope, ErrorObject, Method as McpMethod, read_envelope};

use crate::admission::cors;
use crate::admission::host_header::{self, AllowedHosts, HostRefusal};
use crate::admission::origin::{self, AllowedOrigins};
use crate::admission::path::{self, EndpointPath};
use crate::auth::hooks::{AuthorizeBodyFn, AuthorizeHook, HookOutcome, run_authorize, run_hook};
use crate::body::budget::{BodyBudget, FIRST_BYTES, Full};
use crate::body::read::{
    ReadFailure, deadline_after, declares_body, declares_more_than, most_bytes, read_bounded,
};
use crate::client::Client;
use crate::dispatch::listen::{self, Caller, ListenPolicy};
use crate::dispatch::{Attached, Path, dispatch};
use crate::legacy;
use crate::legacy::LegacyClients;
use crate::mirror;
use crate::response::body::ResponseBody;
use crate::response::refusal::{Refusal, Stage, accepted, jsonrpc_shape};
use crate::serve::Draining;
use crate::session::post::Post;
use crate::session::stream::Get;
use crate::session::{self, SessionPolicy};

/// Everything one service holds; shared by its clones.
pub(crate) struct Shared {
    /// The server; each request reads the current one once, when it arrives.
    pub(crate) live: LiveServer,
    /// The one path served (`Builder::path`), with the metadata document beside it; `None` serves
    /// every path.
    pub(crate) path: Option<EndpointPath>,
    /// Whether 2025-11-25 messages are served (`LegacyClients::Stateless`, `Sessions`) or refused.
    pub(crate) legacy: LegacyClients,
    /// How legacy sessions are kept: `Some` exactly with `LegacyClients::Sessions`.
    pub(crate) sessions: Option<SessionPolicy>,
    pub(crate) hosts: AllowedHosts,
    pub(crate) origins: AllowedOrigins,
    /// `resource_metadata` of every challenge: the protected resource's metadata URL.
    pub(crate) metadata_url: Option<String>,
    pub(crate) authorize: AuthorizeHook,
    pub(crate) authorize_body: Option<AuthorizeBodyFn>,
    pub(crate) read_timeout: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) budget: BodyBudget,
    /// How `subscriptions/listen` streams are served: their bounds, keep-alives and end.
    pub(crate) listen: ListenPolicy,
    /// The `serve` drain this service was last named to (its `TaskDrain` id),
    /// so that a `tools/call` names it once, not on every call.
    pub(crate) named_to_drain: std::sync::atomic::AtomicU64,
}

/// The stateless Streamable HTTP endpoint as a `tower::Service`. Cheap to clone.
#[derive(Clone)]
pub struct McpService {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("path", &self.shared.path)
            .field("hosts", &self.shared.hosts)
            .field("origins", &self.shared.origins)
            .field("metadata_url", &self.shared.metadata_url)
            .field("legacy_clients", &self.shared.legacy)
            .field("read_timeout", &self.shared.read_timeout)
            .field("max_body_bytes", &self.shared.max_body_bytes)
            .field("body_bytes_in_flight", &self.shared.budget.total())
            .field("body_bytes_per_client", &self.shared.budget.per_client())
            .field("listen_keep_alive", &self.shared.listen.keep_alive)
            .field("listen_queue", &self.shared.listen.queue)
            .field("max_listens", &self.shared.listen.slots.total())
            .field("max_listens_per_client", &self.shared.listen.slots.per_client())
            .finish_non_exhaustive()
    }
}

/// The future a call returns.
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

impl McpService {
    pub(crate) fn new(shared: Shared) -> Self {
        Self { shared: Arc::new(shared) }
    }

    /// The whole-body deadline in force.
    pub fn read_timeout(&self) -> Duration {
        self.shared.read_timeout
    }

    /// Ends every `subscriptions/listen` stream of this service (and of its clones) gracefully: each
    /// is sent the notifications it has pending, then its completion result, and ends. A listen that
    /// arrives later is answered with its acknowledgment and its completion at once. It cannot be
    /// undone.
    ///
    /// [`serve`](crate::serve) does this for its own requests when its shutdown begins. A host that
    /// mounts the service in another server calls it when that server's graceful shutdown begins:
    /// a listen stream never ends by itself, so a drain that waits for open responses would otherwise
    /// wait for them until its own deadline cuts them.
    pub fn end_listens(&self) {
        self.shared.listen.end.end();
    }

    /// Ends the tasks of the server serving now (a server built with tasks, the tasks extension): waits
    /// up to `grace` for them to finish, then fails each one still running — a JSON-RPC error saying
    /// the server shut down — and cancels its handler
    /// ([`Server::drain_tasks`](mcp_kernel_router::Server::drain_tasks)). Resolves at once on a server
    /// without tasks.
    ///
    /// [`serve`](crate::serve) does this at the end of its drain, with what is left of its grace
    /// period. A host that mounts the service in another server awaits it once that server's graceful
    /// shutdown is over: a task runs outside every connection, so nothing else waits for it, and the
    /// process would otherwise exit with the task still `working`.
    pub async fn drain_tasks(&self, grace: Duration) {
        self.shared.live.current().drain_tasks(grace).await;
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        // The head is held here, once, for the whole request: every step borrows it (a step that took
        // it by value would keep another copy of it in the request's future, making it larger).
        let (mut parts, body) = request.into_parts();
        // Allocated first, so that the optimizer can build the future in its allocation (a release
        // build; `docs/performance.md`, "Eighth round"): `Box::pin(async move { .. })` builds it on the
        // stack and copies it in at its full size (4.8 KB a request, most of it not yet set).
        let boxed = Box::write(Box::new_uninit(), async move {
            // A fault in the transport itself is answered 500, never a dropped connection.
            let answer = AssertUnwindSafe(serve(&shared, &mut parts, body)).catch_unwind().await;
            let mut response = answer.unwrap_or_else(|_| {
                tracing::error!("the HTTP transport panicked; answered 500");
                Refusal::pre_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal())
                    .into_response(parts.version)
            });
            if parts.method == Method::HEAD {
                ResponseBody::answer_head(&mut response);
            }
            Ok(response)
        });
        Box::into_pin(boxed)
    }
}

/// Steps 0 to 1c, then the rest with the CORS grant added for a listed origin.
async fn serve<B>(shared: &Shared, parts: &mut Parts, body: B) -> Response<ResponseBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    let deadline = deadline_after(tokio::time::Instant::now(), shared.read_timeout);
    // Read once: a replacement while this request runs never splits it between two servers.
    let server = shared.live.current();
    let version = parts.version;
    let refuse = |refusal: Refusal| refusal.into_response(version);
    // The protected resource's metadata document, beside the one path: public, to any name and origin.
    if let Some(document) = shared.path.as_ref().and_then(|path| path.metadata(parts)) {
        return document;
    }

    // The name and the origin first: header checks, before anything else reads the request. An
    // invalid Origin is 403 whatever the name (MCP S-14), so a rebound name with a foreign page's
    // Origin is 403 too; a rebound name alone, same-origin and maybe without any Origin, is 421.
    let origin_refused = || {
        let error = ErrorObject::refused("Origin not allowed");
        Refusal::pre_body(StatusCode::FORBIDDEN, error)
    };
    let origin_ok = origin::check(&shared.origins, &parts.headers).is_ok();
    match host_header::check(&shared.hosts, parts) {
        Ok(()) => {}
        Err(_) if !origin_ok => return refuse(origin_refused()),
        Err(HostRefusal::Malformed) => {
            let error = ErrorObject::refused("Bad Request: missing or malformed Host");
            return refuse(Refusal::pre_body(StatusCode::BAD_REQUEST, error));
        }
        Err(HostRefusal::NotAllowed) => {
            let error =
                ErrorObject::refused("Misdirected Request: this server does not answer for that host");
            return refuse(Refusal::pre_body(StatusCode::MISDIRECTED_REQUEST, error));
        }
    }
    if !origin_ok {
        return refuse(origin_refused());
    }
    let listed = matches!(shared.origins, AllowedOrigins::List(_));
    let elsewhere = shared.path.as_ref().is_some_and(|path| !path.serves(parts));
    let Some(origin) = cors::granted_origin(&shared.origins, &parts.headers) else {
        let mut response = if elsewhere {
            path::not_found(parts)
        } else {
            admit(shared, &server, parts, body, deadline).await
        };
        if listed {
            // The answer depends on the Origin (a listed one would have been granted): caches must
            // not serve it to another.
            cors::vary_origin(&mut response);
        }
        return response;
    };
    if elsewhere {
        let mut not_found = path::not_found(parts);
        cors::grant(&mut not_found, origin, shared.sessions.is_some());
        return not_found;
    }
    if cors::is_preflight(parts) {
        return cors::preflight(origin, parts, shared.sessions.is_some());
    }
    let mut response = admit(shared, &server, parts, body, deadline).await;
    cors::grant(&mut response, origin, shared.sessions.is_some());
    response
}

/// Steps 2 to 6: the checks on the head, the host's `authorize`, and the bounded read.
async fn admit<B>(
    shared: &Shared,
    server: &Server,
    parts: &mut Parts,
    body: B,
    deadline: tokio::time::Instant,
) -> Response<ResponseBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    let version = parts.version;
    let refuse = |refusal: Refusal| refusal.into_response(version);
    // With legacy sessions, GET (a session's stream) and DELETE (its end) pass too (S-25 otherwise).
    let sessions = shared.sessions.as_ref();
    let bodyless = sessions.is_some() && (parts.method == Method::GET || parts.method == Method::DELETE);
    if parts.method != Method::POST && !bodyless {
        let error = ErrorObject::refused("Method not allowed; use POST");
        let refusal = Refusal::pre_body(StatusCode::METHOD_NOT_ALLOWED, error);
        return refuse(if sessions.is_some() { refusal.allowing("GET, POST, DELETE") } else { refusal });
    }
    if parts.headers.contains_key(TRANSFER_ENCODING) {
        let error =
            ErrorObject::refused("Request body must declare its length: transfer-encoding is refused");
        return refuse(Refusal::pre_body(StatusCode::LENGTH_REQUIRED, error));
    }
    let busy = || {
        let error = ErrorObject::new(mcp_kernel_wire::code::INTERNAL_ERROR, "Server busy; retry later");
        Refusal::pre_body(StatusCode::SERVICE_UNAVAILABLE, error).retry_after(1)
    };
    let (extensions, client, owner) = match run_authorize(&shared.authorize, parts, deadline).await {
        HookOutcome::Admitted(admission) => {
            let client = Client::of(admission.principal, &parts.extensions);
            (admission.extensions, client, admission.owner)
        }
        HookOutcome::Refused(denial) => {
            return refuse(Refusal::denied(&denial, shared.metadata_url.as_deref(), Stage::PreBody));
        }
        HookOutcome::Panicked => {
            return refuse(Refusal::pre_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal()));
        }
        // The async hook used up the request's deadline: try again (logged in `auth/hooks.rs`).
        HookOutcome::TimedOut => return refuse(busy()),
    };
    if let (true, Some(policy)) = (bodyless, sessions) {
        if declares_body(&parts.headers) {
            let error = ErrorObject::refused("Bad Request: a GET or DELETE carries no body");
            return refuse(Refusal::pre_body(StatusCode::BAD_REQUEST, error));
        }
        if parts.method == Method::DELETE {
            return session::end(policy, &parts.headers, owner.as_deref(), version).await;
        }
        let draining = parts.extensions.get::<Arc<Draining>>().map(|draining| Draining::clone(draining));
        let caller = Caller { client, draining };
        let (headers, listen) = (&parts.headers, &shared.listen);
        let get = Get { policy, listen, headers, version, extensions, owner, caller };
        return session::stream::open(get, server).await;
    }
    let cap = shared.max_body_bytes;
    let too_large = || {
        Refusal::pre_body(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorObject::refused(format!("Request body exceeds {cap} bytes")),
        )
    };
    if declares_more_than(&parts.headers, cap) {
        return refuse(too_large());
    }
    // Before any of the body is read, its first bytes must fit (checked: a head alone holds nothing);
    // then its buffer is charged as its bytes arrive.
    let mut reserved = shared.budget.open(client);
    if let Err(full) = reserved.check(most_bytes(&body, cap).min(FIRST_BYTES)) {
        return refuse(over_budget(full, client));
    }
    let bytes = match read_bounded(body, cap, deadline, &mut reserved).await {
        Ok(bytes) => {
            reserved.shrink_to(bytes.len());
            bytes
        }
        Err(ReadFailure::TooLarge) => return refuse(too_large()),
        Err(ReadFailure::Busy(full)) => return refuse(over_budget(full, client)),
        Err(ReadFailure::TimedOut) => {
            let ms = shared.read_timeout.as_millis();
            let error = ErrorObject::refused(format!("Request body not received within {ms} ms"));
            return refuse(Refusal::pre_body(StatusCode::REQUEST_TIMEOUT, error));
        }
        Err(ReadFailure::Failed) => {
            let error = ErrorObject::new(mcp_kernel_wire::code::PARSE_ERROR, "Could not read request body");
            return refuse(Refusal::pre_body(StatusCode::BAD_REQUEST, error));
        }
    };
    // The reservation goes with the answer: it is given back when the transport has taken it (a
    // listen stream's at once, `response/body.rs`).
    let caller = Authorized { extensions, client, owner };
    let mut response = answer(shared, server, parts, bytes, caller).await;
    response.body_mut().hold(reserved);
    response
}

/// A body the budget, or its client's share, has no room for: 503, try again shortly (logged at
/// `debug`, with which of the two was full and, for an address, whose).
fn over_budget(full: Full, client: Client) -> Refusal {
    match (full, client) {
        (Full::ClientShare, Client::Network(network)) => {
            tracing::debug!(%network, "a body past its client's share of the budget was refused 503");
        }
        (Full::ClientShare, _) => {
            tracing::debug!("a body past its client's share of the budget was refused 503")
        }
        (Full::Budget, _) => tracing::debug!("a body past the body budget was refused 503"),
    }
    let error = ErrorObject::new(mcp_kernel_wire::code::INTERNAL_ERROR, "Server busy; retry later");
    Refusal::pre_body(StatusCode::SERVICE_UNAVAILABLE, error).retry_after(1)
}

/// What `authorize` admitted a request with: its extensions, its client, and (with legacy sessions)
/// the owner its sessions are bound to.
struct Authorized {
    extensions: Extensions,
    client: Client,
    owner: Option<String>,
}

/// Steps 7 to 11b: everything after the body has been read, by the request's one `server`.
async fn answer(
    shared: &Shared,
    server: &Server,
    parts: &mut Parts,
    bytes: bytes::Bytes,
    caller: Authorized,
) -> Response<ResponseBody> {
    let Authorized { mut extensions, client, owner } = caller;
    let version = parts.version;
    let refuse = |refusal: Refusal| refusal.into_response(version);
    if let Some(hook) = &shared.authorize_body {
        let post = |status, error| refuse(Refusal::post_body(status, error, Value::Null));
        match run_hook("authorize_body", || hook(parts, &bytes)) {
            HookOutcome::Admitted(more) => extensions.extend(more),
            HookOutcome::Refused(denial) => {
                return refuse(Refusal::denied(&denial, shared.metadata_url.as_deref(), Stage::PostBody));
            }
            // Only the async pre-read hook has a deadline of its own.
            HookOutcome::Panicked | HookOutcome::TimedOut => {
                return post(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal());
            }
        }
    }
    let message = match read_envelope(&bytes) {
        Ok(message) => message,
        Err(error) => {
            let status = StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            return refuse(Refusal::post_body(status, error.to_error_object(), Value::Null));
        }
    };
    if let Some(policy) = &shared.sessions
        && legacy::claims_in(&parts.headers, &message, true)
    {
        let post = Post { policy, headers: &parts.headers, version, extensions, owner, client };
        return session_post_boxed(post, server, message, bytes).await;
    }
    drop(bytes);
    if shared.legacy == LegacyClients::Stateless && legacy::claims(&parts.headers, &message) {
        return match legacy::check(server, &parts.headers, &message, version, extensions) {
            Ok(attached) => dispatch(server, message, version, attached, Path::Legacy).await,
            Err(answered) => answered,
        };
    }
    // Only requests and notifications are POSTed (clients MUST NOT POST responses).
    if let Err(refusal) = jsonrpc_shape(&message) {
        return refuse(refusal);
    }
    let admitted = server.admit(&message, &extensions);
    if let Err(refusal) = mirror::check(&parts.headers, &message, &admitted) {
        return refuse(refusal);
    }
    let carrier = crate::trace::carrier(&parts.headers);
    let draining = parts.extensions.get::<Arc<Draining>>().cloned();
    // Nothing reads the head any more: its headers are not held while the core runs.
    drop(std::mem::take(&mut parts.headers));
    drop(std::mem::take(&mut parts.extensions));
    // A call may become a task, which outlives this request: `serve`'s drain ends its service's tasks.
    if let Some(draining) = &draining
        && message.method() == Some(&McpMethod::ToolsCall)
    {
        let drain = draining.tasks.id();
        if shared.named_to_drain.swap(drain, std::sync::atomic::Ordering::Relaxed) != drain {
            draining.tasks.register(std::ptr::from_ref(shared).addr(), &shared.live);
        }
    }
    // A method 2026-07-28 does not have: 404 with an id, 202 without one.
    if message.method().is_some_and(McpMethod::is_removed_in_stateless) {
        if !message.has_id() {
            return accepted();
        }
        let id = message.echoable_id();
        return refuse(Refusal::post_body(StatusCode::NOT_FOUND, ErrorObject::method_not_found(), id));
    }
    let listens = admitted.listens();
    let attached = Attached { extensions, carrier, admitted, session: None };
    if listens {
        let caller = Caller { client, draining: draining.map(|draining| Draining::clone(&draining)) };
        return listen_open_boxed(server, message, version, attached, &shared.listen, caller).await;
    }
    dispatch(server, message, version, attached, Path::Modern).await
}

/// A legacy session's POST, in a future of its own so that the request's future is not as large as
/// this path: allocated first, as the request's own future is (`McpService::call`), and returned as
/// a `dyn Future`. Awaited as its own type, its `poll` was inlined into `answer`'s, whose stack frame
/// then kept room for this path's locals on every request (13.7 KB; 2.4 KB without them). Not
/// inlined itself, or the optimizer, seeing the vtable, could inline that `poll` again
/// (`docs/performance.md`, "Tenth round").
#[inline(never)]
fn session_post_boxed<'a>(
    post: Post<'a>,
    server: &'a Server,
    message: Envelope,
    bytes: bytes::Bytes,
) -> BoxFuture<'a, Response<ResponseBody>> {
    let boxed = Box::write(Box::new_uninit(), session::post::serve(post, server, message, bytes));
    Box::into_pin(boxed)
}

/// A listen stream's opening, in a future of its own behind a `dyn Future` made here, for the
/// reasons of [`session_post_boxed`].
#[inline(never)]
fn listen_open_boxed<'a>(
    server: &'a Server,
    message: Envelope,
    version: http::Version,
    attached: Attached<'a>,
    listen_policy: &'a ListenPolicy,
    caller: Caller,
) -> BoxFuture<'a, Response<ResponseBody>> {
    let boxed = Box::write(
        Box::new_uninit(),
        listen::open(server, message, version, attached, listen_policy, caller),
    );
    Box::into_pin(boxed)
}
