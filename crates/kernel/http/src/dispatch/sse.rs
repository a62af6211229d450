//! Progress and logs over HTTP: a request that may be sent notifications (`Admitted::may_notify`: it
//! carries `_meta.progressToken`, or log notifications may reach it) and whose call sends one is
//! answered as an SSE stream scoped to it (MCP [S-17], [S-18], [S-19], [S-52]).
//!
//! Threats guarded against:
//!
//! * **Speaking out of turn.** Only the request's own `notifications/progress` and
//!   `notifications/message` and then its response go
//!   on its stream, one JSON-RPC message per `data:` event; no server request, no other request's
//!   message, nothing after the response (the router closes the reporter and logger when it answers).
//! * **A status lost to streaming.** The stream opens only when the first notification is ready. Every
//!   refusal before dispatch — headers, auth, body limits, an unknown tool — and every call that reports
//!   nothing before finishing is answered as JSON with its usual status, exactly as without a token
//!   or a log.
//! * **Work for nobody.** The body owns the dispatch future: a client closing the stream or the
//!   connection drops the body, which drops the dispatch (the observer sees `Cancelled`); nothing more
//!   is written for that request ([S-19]). On the legacy path a disconnect is not cancellation in
//!   2025-11-25 ([S-61]), but a stateless endpoint has no other stream to deliver to, so it is treated
//!   the same. No priming event or event id is sent: nothing is resumable.
//! * **A flooding tool.** At most [`QUEUED_NOTIFICATIONS`] notifications wait for a slow reader; further
//!   notifications are dropped (progress and logs are advisory; the response is never dropped).
//!
//! [S-17]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-18]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-52]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-61]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::sync::Arc;
use std::task::Poll;

use http::Response;
use serde_json::Value;
use tokio::sync::mpsc;

use mcp_kernel_router::Server;
use mcp_kernel_router::transport::{Inbound, NotificationSink, SharedChannel};
use mcp_kernel_wire::{Envelope, ErrorObject, Method, Response as JsonRpcResponse};

use crate::dispatch::core::{CoreOutcome, Panicked, guarded};
use crate::response::body::ResponseBody;
use crate::response::event_stream::{CoreFuture, SseStream, event_stream_response};

/// How many notifications may wait for a slow reader before further reports are dropped.
pub(crate) const QUEUED_NOTIFICATIONS: usize = 64;

/// How one message was answered.
pub(crate) enum Outcome {
    /// The core finished before any notification: the caller answers as JSON, as without a token.
    Done(CoreOutcome),
    /// The SSE response, ready to send.
    Streaming(Response<ResponseBody>),
}

/// Makes a request's client channel, writing to its stream.
pub(crate) type MakeChannel = Box<dyn FnOnce(mpsc::Sender<Value>) -> SharedChannel + Send>;

/// What may go on a request's stream besides its response.
pub(crate) struct Streams {
    /// The request may be sent notifications (as the core answered it: `Admitted::may_notify`).
    pub(crate) may_notify: bool,
    /// The request is one of a legacy session: its server-to-client requests go on its stream, through
    /// the channel this makes (`session/channel.rs`).
    pub(crate) channel: Option<MakeChannel>,
}

/// Whether a message may be streamed: a request to a streamable method that may be sent notifications
/// or requests. One that may not (most) is answered by the core alone, as JSON (`dispatch/mod.rs`).
pub(crate) fn wants_stream(message: &Envelope, streams: &Streams) -> bool {
    message.has_id()
        && message.method().is_some_and(Method::may_stream)
        && (streams.may_notify || streams.channel.is_some())
}

/// Runs the core on one message [`wants_stream`] took, with `inbound` (the request's extensions and
/// served revisions); opens an SSE stream at the first notification. The extensions travel inside the
/// dispatch future the stream owns, so the host sees them however the stream is polled. `finish`
/// adjusts the final response (the legacy path strips cache hints).
pub(crate) async fn stream(
    server: &Server,
    message: Envelope,
    mut inbound: Inbound,
    streams: Streams,
    finish: fn(&mut JsonRpcResponse),
) -> Outcome {
    let (sender, mut notifications) = mpsc::channel(QUEUED_NOTIFICATIONS);
    if let Some(make) = streams.channel {
        inbound = inbound.client(make(sender.clone()));
    }
    if streams.may_notify {
        let sink: NotificationSink = Arc::new(move |notification: Value| {
            if sender.try_send(notification).is_err() {
                tracing::debug!("a notification was dropped: the stream is full or gone");
            }
        });
        inbound = inbound.notifications(sink);
    }
    let server = server.clone();
    // Allocated first, so that the optimizer can build the future in it (`service.rs`, `McpService::call`).
    let boxed = Box::write(Box::new_uninit(), async move {
        guarded(&server, message, inbound)
            .await
            .unwrap_or_else(|Panicked { id }| Some(JsonRpcResponse::error(id, ErrorObject::internal())))
    });
    let mut core: CoreFuture = Box::into_pin(boxed);
    let first = std::future::poll_fn(|cx| {
        if let Poll::Ready(response) = core.as_mut().poll(cx) {
            return Poll::Ready(Err(response));
        }
        match notifications.poll_recv(cx) {
            Poll::Ready(Some(notification)) => Poll::Ready(Ok(notification)),
            // Closed only as the core finishes: it was polled above and will wake this task.
            _ => Poll::Pending,
        }
    })
    .await;
    let stream = match first {
        Ok(first) => SseStream::new(vec![first], notifications, Some(core), None, finish),
        Err(response) => {
            let mut queued = Vec::new();
            while let Ok(notification) = notifications.try_recv() {
                queued.push(notification);
            }
            if queued.is_empty() {
                return Outcome::Done(Ok(response));
            }
            SseStream::new(queued, notifications, None, response, finish)
        }
    };
    Outcome::Streaming(event_stream_response(ResponseBody::sse(stream)))
}
