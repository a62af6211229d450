//! `subscriptions/listen` over Streamable HTTP (MCP `2026-07-28`): the POST's own response is the
//! stream (step 11b of [`McpService`](crate::McpService)'s table).
//!
//! The core settles the request ([`Server::open_listen`]): a listen that is not a well-formed
//! `2026-07-28` listen — no `_meta`, a `2025-11-25` one, a bad filter — gets exactly the answer any
//! request would (JSON, the status of `response/status.rs`); the header rules (`MCP-Protocol-Version`
//! equal to `_meta`'s, `Mcp-Method`) were checked before, as for every request. A listen the core opens
//! is answered `200 text/event-stream` with `cache-control: no-cache` and `x-accel-buffering: no`:
//!
//! 1. the acknowledgment, written first and at once (the core subscribed before building it, so a
//!    change announced as soon as the client reads it is not missed);
//! 2. each notification the core yields, one `data:` event each, tagged with the request's id;
//!    `: keep-alive` comment lines whenever nothing was written for the keep-alive interval;
//! 3. the completion result, then the end of the response, when the server ends the stream.
//!
//! A listen nothing of which is honoured (a server built without notifications, or a filter asking for
//! nothing it announces) is answered with the acknowledgment and the completion at once: no stream is
//! held, no slot kept. A listen that may hold a stream ([`Server::may_hold_listen`]: the server
//! announces changes and the filter asks for something) takes its slot first, before the core looks up
//! its subscribed uris, so a client at its bound is refused without costing those look-ups.
//!
//! Threats, each owned by a module here: **a flood of listens** (`slots.rs`: bounded in all and per
//! client, refused 503 with `retry-after` before any byte of a stream), **a listener that never reads**
//! (`pump.rs`: a bounded queue, the stream ended with its completion when it is full), **a shutdown
//! that cuts streams** (`ending.rs`: every stream is ended with its completion). The request's share of
//! the body budget is given back as the stream opens (`response/body.rs`): a stream holds its slot, not
//! body bytes.

pub(crate) mod ending;
pub(crate) mod pump;
pub(crate) mod slots;

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;
use http::{Response, StatusCode};

use mcp_kernel_router::Server;
use mcp_kernel_router::transport::{Inbound, Revisions};
use mcp_kernel_wire::{Envelope, ErrorObject};

use crate::client::Client;
use crate::dispatch::{Attached, modern_answer};
use crate::response::body::ResponseBody;
use crate::response::event_stream::{event, event_stream_response};
use crate::response::listen_stream::ListenStream;
use crate::response::refusal::{Refusal, accepted};
use crate::serve::Draining;
use ending::EndListens;
use slots::{Full, ListenSlots};

/// How long a listen stream may stay silent before a keep-alive comment line is written, by default.
pub const DEFAULT_LISTEN_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How many notifications may wait for one listen stream's reader by default before the stream is
/// ended (with its completion result, which has a place of its own).
pub const DEFAULT_LISTEN_QUEUE: usize = 64;

/// The shortest keep-alive interval admitted.
const MIN_KEEP_ALIVE: Duration = Duration::from_millis(1);

/// The longest queue admitted (a million notifications: far past any use, well within what a channel
/// admits).
pub(crate) const MAX_LISTEN_QUEUE: usize = 1 << 20;

/// How listen streams are served: one per service, shared by its clones.
#[derive(Debug)]
pub(crate) struct ListenPolicy {
    /// The silence after which a keep-alive comment line is written.
    pub(crate) keep_alive: Duration,
    /// How many notifications may wait for one stream's reader.
    pub(crate) queue: usize,
    /// The open streams, in all and per client.
    pub(crate) slots: ListenSlots,
    /// The service's own signal to end every stream.
    pub(crate) end: EndListens,
}

impl ListenPolicy {
    /// A policy of `keep_alive` (at least 1 ms), `queue` (1 to [`MAX_LISTEN_QUEUE`]), `total` streams
    /// and `per_client` streams per client (each at least 1, the share at most the total).
    pub(crate) fn new(keep_alive: Duration, queue: usize, total: usize, per_client: usize) -> Self {
        Self {
            keep_alive: keep_alive.max(MIN_KEEP_ALIVE),
            queue: queue.clamp(1, MAX_LISTEN_QUEUE),
            slots: ListenSlots::new(total, per_client),
            end: EndListens::default(),
        }
    }
}

/// Who sent the listen, as far as its stream is concerned.
pub(crate) struct Caller {
    /// The client its slot is charged to (`client.rs`).
    pub(crate) client: Client,
    /// The drain of the `serve` that accepted it, if it came through one.
    pub(crate) draining: Option<Draining>,
}

/// Serves one checked `subscriptions/listen` request: the core's answer when it opens no stream, a
/// 503 when no slot is free, else the stream.
pub(crate) async fn open(
    server: &Server,
    message: Envelope,
    version: http::Version,
    attached: Attached<'_>,
    policy: &ListenPolicy,
    caller: Caller,
) -> Response<ResponseBody> {
    let Attached { extensions, carrier, admitted, .. } = attached;
    let id = message.echoable_id();
    // A listen that may hold a stream takes its slot before the core does any work for it (up to 1,024
    // look-ups of subscribed uris): a client at its bound costs nothing more than the refusal.
    let early = match server.may_hold_listen(&message) {
        true => match policy.slots.take(caller.client) {
            Ok(slot) => Some(slot),
            Err(full) => return busy(full, caller.client, id, version),
        },
        false => None,
    };
    let inbound = Inbound::new()
        .admitted(&admitted)
        .extensions(extensions)
        .revisions(Revisions::Stateless)
        .sessionless()
        .trace_carrier(carrier)
        .network(crate::trace::network(version));
    let listen = match AssertUnwindSafe(server.open_listen(message, inbound)).catch_unwind().await {
        Ok(Ok(listen)) => listen,
        Ok(Err(handled)) => return handled.response.map_or_else(accepted, modern_answer),
        Err(_) => {
            tracing::error!("the core panicked opening a listen stream; answered 500");
            let refusal = Refusal::post_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal(), id);
            return refusal.into_response(version);
        }
    };
    let acknowledgment = event(&serde_json::to_vec(listen.acknowledgment()).unwrap_or_default());
    let ending = policy.end.ending(caller.draining);
    if listen.completes_at_once() || ending.has_begun() {
        let completion = event(&listen.completion().to_bytes());
        return event_stream_response(ResponseBody::listen(ListenStream::at_once(
            acknowledgment,
            completion,
        )));
    }
    let slot = match early.map_or_else(|| policy.slots.take(caller.client), Ok) {
        Ok(slot) => slot,
        Err(full) => return busy(full, caller.client, listen.id().clone(), version),
    };
    let (sender, queue) = pump::channel(policy.queue);
    tokio::spawn(pump::pump(listen, sender, ending));
    let stream = ListenStream::open(Some(acknowledgment), queue, policy.keep_alive, slot);
    event_stream_response(ResponseBody::listen(stream))
}

/// No slot for the stream: 503 with `retry-after: 1`, the shape of a body the budget has no room for
/// (logged at `debug`, with which bound was met and, for an address, whose).
pub(crate) fn busy(
    full: Full,
    client: Client,
    id: serde_json::Value,
    version: http::Version,
) -> Response<ResponseBody> {
    match (full, client) {
        (Full::ClientShare, Client::Network(network)) => {
            tracing::debug!(%network, "a listen past its client's share of listen streams was refused 503");
        }
        (Full::ClientShare, _) => tracing::debug!("a listen past its client's share was refused 503"),
        (Full::Total, _) => tracing::debug!("a listen past the listen streams' bound was refused 503"),
    }
    let error = ErrorObject::new(mcp_kernel_wire::code::INTERNAL_ERROR, "Server busy; retry later");
    Refusal::post_body(StatusCode::SERVICE_UNAVAILABLE, error, id).retry_after(1).into_response(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_defaults_are_the_documented_constants() {
        let server = Server::builder(mcp_kernel_router::Listing::default()).build().expect("a server");
        let service = crate::McpHttp::builder(server)
            .allowed_origins(crate::AllowedOrigins::any())
            .authorize(|_| Ok(()))
            .build();
        let shown = format!("{service:?}");
        assert!(shown.contains("listen_keep_alive: 15s"), "{shown}");
        assert!(shown.contains("listen_queue: 64"), "{shown}");
        assert!(shown.contains("max_listens: 4096"), "{shown}");
        assert!(shown.contains("max_listens_per_client: 32"), "{shown}");
        assert_eq!(DEFAULT_LISTEN_KEEP_ALIVE, Duration::from_secs(15));
        assert_eq!(DEFAULT_LISTEN_QUEUE, 64);
    }

    #[test]
    fn bounds_out_of_range_are_brought_to_the_nearest_that_serves() {
        let policy = ListenPolicy::new(Duration::ZERO, 0, 0, 0);
        assert_eq!(policy.keep_alive, MIN_KEEP_ALIVE);
        assert_eq!(policy.queue, 1);
        assert_eq!((policy.slots.total(), policy.slots.per_client()), (1, 1));
        let policy = ListenPolicy::new(Duration::MAX, usize::MAX, usize::MAX, usize::MAX);
        assert_eq!(policy.queue, MAX_LISTEN_QUEUE);
        let (sender, _queue) = pump::channel(policy.queue);
        assert_eq!(sender.max_capacity(), MAX_LISTEN_QUEUE + 1, "a channel that large is made");
    }
}
