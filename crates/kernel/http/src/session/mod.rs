//! MCP `2025-11-25` clients with sessions ([`LegacyClients::Sessions`], opt-in; MCP [S-61], [S-62]):
//! `initialize` mints an `Mcp-Session-Id`, every later request of the client carries it, `DELETE`
//! ends it, a GET opens its stream of notifications, and a request whose host asks for input is
//! answered as an SSE stream on which the server-to-client request goes.
//!
//! Where a session lives: in the [`SessionStore`] the host gives ([`LegacySessions::with_store`]; in
//! process by default, [`InProcessSessionStore`]), which keeps what the legacy protocol needs — the
//! client's revision and capabilities, its subscriptions, its log level — and the digest of the
//! principal that initialized it. Any instance sharing the store serves any session.
//!
//! Threats, each closed here:
//!
//! * **A session id as a bearer token.** Ids are 128 bits from the system's random source, visible
//!   ASCII. A session is bound to the principal `authorize` admitted `initialize` with (a SHA-256
//!   digest, equal on every instance): a request whose principal differs is answered exactly as for
//!   an id never issued — 404, the same bytes — so a stolen id is worth nothing to another principal,
//!   and a guess learns nothing. GET and DELETE pass the same admission and `authorize` as a POST.
//! * **Misread statuses.** A `2025-11-25` client reads 404 as "your session ended" and initializes
//!   again: at the endpoint's path, 404 answers only an unknown, expired, ended or foreign session, and its body echoes no id;
//!   a request without the header is 400. Every JSON-RPC error of the core stays 200 (a host fault,
//!   500), as on the stateless path.
//! * **Exhaustion.** Sessions are bounded per client (429) and in all (503, `retry-after`)
//!   ([`SessionLimits`]); a client is its principal, else its address prefix (`client.rs`), so on a
//!   host whose `authorize` names nobody one address still cannot take the whole total and starve
//!   every other client for the idle time. A session is bound to its principal only, never to an
//!   address: a client that changes networks keeps it. Sessions expire when idle (every request
//!   resumes its session and pushes the expiry), and bound their subscriptions; a GET stream takes a listen slot (in all and per client, 503) and
//!   a bounded queue (a reader that falls behind has its stream ended); server-to-client requests are
//!   bounded per session, in the time they wait and in the size of an answer (413).
//! * **An answer the server did not ask for** (`post.rs`): a POSTed response is delivered only to a
//!   request the server issued to that very session and that still waits; anything else is refused
//!   400 with one fixed body.
//! * **One message on two streams.** List changes and resource updates go on the session's GET stream
//!   only, a request's own notifications and server-to-client requests on its POST stream only; a
//!   newer GET stream of a session, on any instance sharing its store, takes the session over and the
//!   older falls silent (`stream.rs`; on this instance it ends at once, `registry.rs`).
//!
//! Left out: resumable streams (`Last-Event-ID` is ignored; no event ids are sent), and requests the
//! server sends outside a request's stream.
//!
//! [S-61]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-62]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [`LegacyClients::Sessions`]: crate::LegacyClients::Sessions
//! [`SessionStore`]: mcp_kernel_router::sessions::SessionStore
//! [`InProcessSessionStore`]: mcp_kernel_router::sessions::InProcessSessionStore
//! [`SessionLimits`]: mcp_kernel_router::sessions::SessionLimits

pub(crate) mod channel;
pub(crate) mod post;
pub(crate) mod registry;
pub(crate) mod stream;

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, Response, StatusCode};
use serde_json::Value;

use mcp_kernel_router::sessions::{InProcessSessionStore, SessionLimits, SessionStore, StoredSession};
use mcp_kernel_router::tasks::now_ms;
use mcp_kernel_wire::ErrorObject;

use crate::response::body::ResponseBody;
use crate::response::refusal::Refusal;
use registry::GetStreams;

pub(crate) use crate::legacy::SESSION_HEADER;

/// The longest session id admitted, in bytes (the ids minted are 32): a longer one is unknown.
const MAX_SESSION_ID_BYTES: usize = 128;

/// How long a request waits for the client's answer to one server-to-client request, by default.
pub const DEFAULT_ANSWER_WAIT: Duration = Duration::from_secs(60);

/// The largest answer to a server-to-client request a client may POST, by default (a larger one is
/// refused 413).
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 256 * 1024;

/// How `2025-11-25` sessions are kept ([`Builder::legacy_sessions`](crate::Builder::legacy_sessions)):
/// the store, its bounds, and the bounds on server-to-client requests. Cheap to clone.
///
/// | setting | default |
/// |---|---|
/// | store | [`InProcessSessionStore`] (this process only) |
/// | [`SessionLimits`] | 16 sessions per client (principal, else address prefix), 10,000 in all, 30 min idle, 16 waiting requests per session, 1,024 subscriptions per session |
/// | [`answer_wait`](LegacySessions::answer_wait) | 60 s ([`DEFAULT_ANSWER_WAIT`]) |
/// | [`max_answer_bytes`](LegacySessions::max_answer_bytes) | 256 KiB ([`DEFAULT_MAX_ANSWER_BYTES`]) |
#[derive(Clone)]
pub struct LegacySessions {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) limits: SessionLimits,
    pub(crate) answer_wait: Duration,
    pub(crate) max_answer_bytes: usize,
}

impl std::fmt::Debug for LegacySessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySessions")
            .field("limits", &self.limits)
            .field("answer_wait", &self.answer_wait)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for LegacySessions {
    fn default() -> Self {
        Self::in_process()
    }
}

impl LegacySessions {
    /// Sessions kept in this process ([`InProcessSessionStore`]), at the default bounds.
    pub fn in_process() -> Self {
        Self::with_store(Arc::new(InProcessSessionStore::new()))
    }

    /// Sessions kept in `store` (one shared by many instances, so that any of them serves any
    /// session), at the default bounds.
    pub fn with_store(store: Arc<dyn SessionStore>) -> Self {
        Self {
            store,
            limits: SessionLimits::default(),
            answer_wait: DEFAULT_ANSWER_WAIT,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }

    /// The bounds sessions are kept within (sessions per client and in all, idle expiry, waiting
    /// requests and subscriptions per session).
    pub fn limits(mut self, limits: SessionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How long a request waits for the client's answer to one server-to-client request (default
    /// 60 s; at least 1 ms): past it the request is told the client did not answer, and the client is
    /// sent `notifications/cancelled` for it.
    pub fn answer_wait(mut self, wait: Duration) -> Self {
        self.answer_wait = wait.max(Duration::from_millis(1));
        self
    }

    /// The largest answer to a server-to-client request a client may POST, in bytes (default 256 KiB;
    /// at least 1 KiB, at most the body cap): a larger one is refused 413, and the request waiting for
    /// it is told the answer was too large.
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes.max(1024);
        self
    }
}

/// The sessions of one service, as its requests use them.
pub(crate) struct SessionPolicy {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) limits: SessionLimits,
    pub(crate) answer_wait: Duration,
    pub(crate) max_answer_bytes: usize,
    /// The GET streams open on this instance, one per session.
    pub(crate) streams: Arc<GetStreams>,
}

impl SessionPolicy {
    /// The policy of `settings`, its answers bounded by the body cap too.
    pub(crate) fn new(settings: LegacySessions, max_body_bytes: usize) -> Self {
        Self {
            store: settings.store,
            limits: settings.limits,
            answer_wait: settings.answer_wait,
            max_answer_bytes: settings.max_answer_bytes.min(max_body_bytes),
            streams: Arc::default(),
        }
    }
}

/// What a request presented as its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presented<'a> {
    /// No `Mcp-Session-Id`.
    Nothing,
    /// One value that could be an id this server minted.
    Id(&'a str),
    /// Anything else (repeated, not visible ASCII, too long): never an id this server minted.
    Unusable,
}

/// The session id `headers` present.
pub(crate) fn presented(headers: &HeaderMap) -> Presented<'_> {
    let mut values = headers.get_all(SESSION_HEADER).iter();
    let Some(value) = values.next() else { return Presented::Nothing };
    if values.next().is_some() {
        return Presented::Unusable;
    }
    let bytes = value.as_bytes();
    let visible = !bytes.is_empty() && bytes.iter().all(|byte| (0x21..=0x7e).contains(byte));
    match std::str::from_utf8(bytes) {
        Ok(id) if visible && id.len() <= MAX_SESSION_ID_BYTES => Presented::Id(id),
        _ => Presented::Unusable,
    }
}

/// 400: a legacy request of a service with sessions must carry its session id (MCP S-62).
pub(crate) fn missing(version: http::Version) -> Response<ResponseBody> {
    let error = ErrorObject::refused("Bad Request: Mcp-Session-Id header is required");
    Refusal::post_body(StatusCode::BAD_REQUEST, error, Value::Null).into_response(version)
}

/// 404: the session is unknown, expired, ended or another principal's — one answer for all four, which
/// echoes nothing the request sent, so that the client initializes again (MCP S-62) and learns nothing.
pub(crate) fn unknown(version: http::Version) -> Response<ResponseBody> {
    Refusal::post_body(StatusCode::NOT_FOUND, ErrorObject::refused("Session not found"), Value::Null)
        .into_response(version)
}

/// 503 with `retry-after: 1`: the store cannot be reached now (logged).
pub(crate) fn unavailable(version: http::Version, error: &dyn std::fmt::Display) -> Response<ResponseBody> {
    tracing::warn!(%error, "the session store is unreachable; answered 503");
    Refusal::post_body(StatusCode::SERVICE_UNAVAILABLE, ErrorObject::unavailable(1), Value::Null)
        .retry_after(1)
        .into_response(version)
}

/// The session a request presented, if it is `owner`'s, resumed (its idle expiry pushed); another
/// owner's is answered as an unknown one, and its expiry is not pushed (the store compares the owners).
pub(crate) async fn resume(
    policy: &SessionPolicy,
    headers: &HeaderMap,
    owner: Option<&str>,
    version: http::Version,
) -> Result<StoredSession, Response<ResponseBody>> {
    let id = match presented(headers) {
        Presented::Nothing => return Err(missing(version)),
        Presented::Unusable => return Err(unknown(version)),
        Presented::Id(id) => id,
    };
    match policy.store.resume(id, owner, now_ms(), &policy.limits).await {
        // The owners compared again: a store that returned another owner's session is not believed.
        Ok(Some(record)) if record.owner.as_deref() == owner => {
            Ok(StoredSession::new(record, Arc::clone(&policy.store), policy.limits))
        }
        Ok(_) => Err(unknown(version)),
        Err(error) => Err(unavailable(version, &error)),
    }
}

/// `DELETE` with a session id: the session ends (204), and its GET stream on this instance with it;
/// 404 when it is unknown or another principal's; 400 for a version header naming no served legacy
/// revision (MCP S-63: every request after `initialize`, a DELETE too), which ends nothing.
pub(crate) async fn end(
    policy: &SessionPolicy,
    headers: &HeaderMap,
    owner: Option<&str>,
    version: http::Version,
) -> Response<ResponseBody> {
    let session = match resume(policy, headers, owner, version).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    if let Err(refusal) = crate::legacy::protocol_version(headers, &Value::Null) {
        return refusal.into_response(version);
    }
    match policy.store.end(session.id()).await {
        Ok(true) => {
            policy.streams.end(session.id());
            let mut response = Response::new(ResponseBody::empty());
            *response.status_mut() = StatusCode::NO_CONTENT;
            response
        }
        Ok(false) => unknown(version),
        Err(error) => unavailable(version, &error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(SESSION_HEADER, HeaderValue::from_bytes(value).unwrap());
        }
        map
    }

    #[test]
    fn only_one_visible_ascii_value_of_a_sane_length_can_be_a_session_id() {
        assert_eq!(presented(&HeaderMap::new()), Presented::Nothing);
        assert_eq!(presented(&headers(&[b"0123abcd"])), Presented::Id("0123abcd"));
        for bad in [&b"two words"[..], b"\xffbad", b"tab\there", &[b'a'; 129]] {
            assert_eq!(presented(&headers(&[bad])), Presented::Unusable, "{bad:?}");
        }
        assert_eq!(presented(&headers(&[b"a", b"b"])), Presented::Unusable, "repeated");
        assert_eq!(presented(&headers(&[&[b'a'; 128]])), Presented::Id(&"a".repeat(128)));
    }

    #[test]
    fn the_answer_bound_is_at_least_a_kibibyte_and_at_most_the_body_cap() {
        let settings = LegacySessions::in_process().max_answer_bytes(10).answer_wait(Duration::ZERO);
        assert_eq!((settings.max_answer_bytes, settings.answer_wait), (1024, Duration::from_millis(1)));
        let policy = SessionPolicy::new(LegacySessions::in_process().max_answer_bytes(usize::MAX), 4096);
        assert_eq!(policy.max_answer_bytes, 4096);
        assert_eq!(
            SessionPolicy::new(LegacySessions::default(), 1 << 20).max_answer_bytes,
            DEFAULT_MAX_ANSWER_BYTES
        );
    }
}
