//! One request's SSE stream as a body: its queued notifications, the dispatch still running, then its
//! response, one JSON-RPC message per `data:` event (`dispatch/sse.rs` decides when a request gets one).
//! The event framing and the SSE response head are shared with the listen stream (`listen_stream.rs`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use mcp_kernel_wire::Response as JsonRpcResponse;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::response::body::ResponseBody;

/// The dispatch of a streamed request, owned by its body.
pub(crate) type CoreFuture = Pin<Box<dyn Future<Output = Option<JsonRpcResponse>> + Send>>;

/// One request's stream: queued notifications, the dispatch still running, then the response.
pub(crate) struct SseStream {
    queued: std::collections::VecDeque<Value>,
    notifications: mpsc::Receiver<Value>,
    core: Option<CoreFuture>,
    response: Option<JsonRpcResponse>,
    finish: fn(&mut JsonRpcResponse),
    done: bool,
}

/// One `data:` event holding one JSON-RPC message.
pub(crate) fn event(message: &[u8]) -> Bytes {
    let mut bytes = Vec::with_capacity(message.len() + 24);
    bytes.extend_from_slice(b"event: message\ndata: ");
    bytes.extend_from_slice(message);
    bytes.extend_from_slice(b"\n\n");
    Bytes::from(bytes)
}

impl SseStream {
    pub(crate) fn new(
        queued: Vec<Value>,
        notifications: mpsc::Receiver<Value>,
        core: Option<CoreFuture>,
        response: Option<JsonRpcResponse>,
        finish: fn(&mut JsonRpcResponse),
    ) -> Self {
        Self { queued: queued.into(), notifications, core, response, finish, done: false }
    }

    /// Whether the stream has ended.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// The next event: a queued notification, then (dispatch done) the rest, then the response.
    pub(crate) fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(notification) = self.queued.pop_front() {
            return Poll::Ready(Some(event(&serde_json::to_vec(&notification).unwrap_or_default())));
        }
        if let Some(core) = &mut self.core {
            match core.as_mut().poll(cx) {
                Poll::Ready(response) => {
                    self.core = None;
                    self.response = response;
                }
                Poll::Pending => {
                    return match self.notifications.poll_recv(cx) {
                        Poll::Ready(Some(n)) => {
                            Poll::Ready(Some(event(&serde_json::to_vec(&n).unwrap_or_default())))
                        }
                        _ => Poll::Pending,
                    };
                }
            }
        }
        // The dispatch is done: every notification it sent is already queued in the channel.
        if let Ok(n) = self.notifications.try_recv() {
            return Poll::Ready(Some(event(&serde_json::to_vec(&n).unwrap_or_default())));
        }
        match self.response.take() {
            Some(mut response) => {
                (self.finish)(&mut response);
                Poll::Ready(Some(event(&response.to_bytes())))
            }
            None => {
                self.done = true;
                Poll::Ready(None)
            }
        }
    }
}

/// 200 with the SSE headers of [S-18] (and `X-Accel-Buffering: no`, so that a buffering proxy passes
/// each event on at once) around `body`.
///
/// [S-18]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub(crate) fn event_stream_response(body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
