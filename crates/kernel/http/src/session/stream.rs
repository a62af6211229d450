//! A session's GET stream (MCP `2025-11-25` "Listening for Messages from the Server"): the session's
//! notifications outside any request — list changes and `notifications/resources/updated` for its
//! subscribed uris (`Server::session_stream`, from the same change hub as `subscriptions/listen`) —
//! one `data:` event each, `: keep-alive` comment lines in between, until the client closes it.
//!
//! Bounded as listen streams are (`dispatch/listen/`): a slot among the open streams, in all and per
//! client (503 with `retry-after` when none is free), a queue of `listen_queue` notifications (a
//! reader that falls that far behind has its stream ended: it opens it again, and lists again), the
//! keep-alive interval, and the ending of streams when `serve` drains or the service ends its listens.
//!
//! Threats, each closed here:
//!
//! * **One message on two streams** (MCP: each message goes on one stream only). A session has one
//!   GET stream across every instance sharing its store: a newer one takes the session over
//!   (`SessionStream::take_over`, a fresh token in the session's record), and the older, wherever it
//!   is, delivers nothing more — every notification reads the session first — and ends at its next
//!   notification or check; on this instance it ends at once (`registry.rs`).
//! * **A stream that outlives its session.** The stream reads its session again at each keep-alive
//!   interval (and before each notification): once the session ended (a DELETE on any instance),
//!   expired or was taken over by a newer stream, the stream ends. An open stream is the client's use of its session: it keeps the
//!   session from expiring while it is open.
//!
//! Refusals before the stream: 406 without `Accept: text/event-stream`, then the session (400, 404),
//! the version header (400), 405 (`allow: POST, DELETE`) on a server that announces no changes, 503
//! when the change hub is unreachable or no slot is free.

use std::time::Duration;

use bytes::Bytes;
use http::header::ACCEPT;
use http::{HeaderMap, Response, StatusCode};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use mcp_kernel_router::sessions::{SessionStream, StreamRefused};
use mcp_kernel_router::{Extensions, Server};
use mcp_kernel_wire::ErrorObject;

use crate::dispatch::listen::ending::Ending;
use crate::dispatch::listen::{Caller, ListenPolicy, busy};
use crate::legacy::protocol_version;
use crate::response::body::ResponseBody;
use crate::response::event_stream::{event, event_stream_response};
use crate::response::listen_stream::ListenStream;
use crate::response::refusal::Refusal;
use crate::session::registry::Registration;
use crate::session::{SessionPolicy, resume, unavailable, unknown};

/// One GET of a legacy client, as its stream needs it.
pub(crate) struct Get<'a> {
    pub(crate) policy: &'a SessionPolicy,
    pub(crate) listen: &'a ListenPolicy,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) version: http::Version,
    /// The caller's principal (its caller key filters the changes, as a listen's).
    pub(crate) extensions: Extensions,
    /// The digest of `authorize`'s principal.
    pub(crate) owner: Option<String>,
    /// The client its slot is charged to, and the drain that ends it.
    pub(crate) caller: Caller,
}

/// Whether `headers` accept an event stream.
fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers.get_all(ACCEPT).iter().filter_map(|value| value.to_str().ok()).any(|value| {
        value.split(',').any(|kind| {
            let kind = kind.split(';').next().unwrap_or_default().trim();
            kind.eq_ignore_ascii_case("text/event-stream") || kind == "text/*" || kind == "*/*"
        })
    })
}

/// Opens the GET stream of the session the request presents.
pub(crate) async fn open(get: Get<'_>, server: &Server) -> Response<ResponseBody> {
    let Get { policy, listen, headers, version, extensions, owner, caller } = get;
    let refuse = |status, message: &str| {
        Refusal::post_body(status, ErrorObject::refused(message), Value::Null).into_response(version)
    };
    if !accepts_event_stream(headers) {
        return refuse(StatusCode::NOT_ACCEPTABLE, "Not Acceptable: a GET must accept text/event-stream");
    }
    let session = match resume(policy, headers, owner.as_deref(), version).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    if let Err(refusal) = protocol_version(headers, &Value::Null) {
        return refusal.into_response(version);
    }
    let id = session.id().to_owned();
    let mut stream = match server.session_stream(session, extensions) {
        Ok(stream) => stream,
        Err(StreamRefused::NoNotifications) => {
            let error = ErrorObject::refused("Method not allowed: this server announces no changes");
            let refusal = Refusal::post_body(StatusCode::METHOD_NOT_ALLOWED, error, Value::Null);
            return refusal.allowing("POST, DELETE").into_response(version);
        }
        Err(refused) => return unavailable(version, &refused),
    };
    let slot = match listen.slots.take(caller.client) {
        Ok(slot) => slot,
        Err(full) => return busy(full, caller.client, Value::Null, version),
    };
    let ending = listen.end.ending(caller.draining);
    if ending.has_begun() {
        let error =
            ErrorObject::new(mcp_kernel_wire::code::INTERNAL_ERROR, "Server shutting down; retry later");
        let refusal = Refusal::post_body(StatusCode::SERVICE_UNAVAILABLE, error, Value::Null);
        return refusal.retry_after(1).into_response(version);
    }
    // Last, once nothing else can refuse the stream: the older stream, on any instance, falls silent.
    match stream.take_over().await {
        Ok(true) => {}
        Ok(false) => return unknown(version),
        Err(error) => return unavailable(version, &error),
    }
    let (ended, registration) = policy.streams.open(&id);
    let (sender, queue) = mpsc::channel(listen.queue);
    let signals = Signals { ending, ended, recheck: listen.keep_alive };
    tokio::spawn(pump(stream, sender, signals, registration));
    event_stream_response(ResponseBody::listen(ListenStream::open(None, queue, listen.keep_alive, slot)))
}

/// What ends one stream besides its client and its feed.
struct Signals {
    /// The server ends its streams (`serve`'s drain, the service's `end_listens`, the connection's
    /// notice).
    ending: Ending,
    /// A newer stream of the session replaced this one, or the session was ended here.
    ended: oneshot::Receiver<()>,
    /// How often the session is read again (between notifications).
    recheck: Duration,
}

/// Queues the session's notifications for the body until the stream must end; the body's end follows
/// (the queue closes when this returns).
async fn pump(
    mut stream: SessionStream,
    queue: mpsc::Sender<Bytes>,
    signals: Signals,
    _registration: Registration,
) {
    let Signals { mut ending, mut ended, recheck } = signals;
    let check = stream.check();
    let mut rechecks = tokio::time::interval_at(tokio::time::Instant::now() + recheck, recheck);
    loop {
        // One `next` across rechecks: a resource update being read is never dropped half-way.
        let next = stream.next();
        tokio::pin!(next);
        let notification = loop {
            tokio::select! {
                biased;
                () = queue.closed() => return,
                () = ending.begun() => return,
                _ = &mut ended => return,
                _ = rechecks.tick() => {
                    // Ended, expired, taken over by a newer stream (on any instance), or unreachable.
                    if !check.holds().await {
                        return;
                    }
                }
                notification = &mut next => break notification,
            }
        };
        let Some(notification) = notification else { return };
        let bytes = serde_json::to_vec(&notification).unwrap_or_default();
        // Full: the reader fell a whole queue behind; the stream ends (it opens it again).
        if queue.try_send(event(&bytes)).is_err() {
            tracing::debug!("a session stream whose reader fell behind was ended");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_stream_is_accepted_by_name_or_by_wildcard() {
        let accept = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, http::HeaderValue::from_static(value));
            accepts_event_stream(&headers)
        };
        assert!(accept("text/event-stream"));
        assert!(accept("application/json, text/event-stream;q=0.9"));
        assert!(accept("*/*"));
        assert!(!accept("application/json"));
        assert!(!accepts_event_stream(&HeaderMap::new()));
    }
}
