//! The response body type of the service.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;

use crate::body::budget::Reserved;
use crate::response::event_stream::SseStream;
use crate::response::listen_stream::ListenStream;

/// The body of every response the service writes: one JSON message, nothing (202), or an SSE stream
/// (a request with a progress token whose call reported progress, or a `subscriptions/listen` stream).
#[derive(Default)]
pub struct ResponseBody {
    inner: Inner,
    /// The request's share of the body budget, given back when the transport drops this body.
    held: Option<Reserved>,
}

#[derive(Default)]
enum Inner {
    /// No content, and no length announced (see [`ResponseBody::empty`]).
    #[default]
    Empty,
    Full(Full<Bytes>),
    Sse(Box<SseStream>),
    Listen(Box<ListenStream>),
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Empty => f.write_str("ResponseBody(Empty)"),
            Inner::Full(full) => f.debug_tuple("ResponseBody").field(full).finish(),
            Inner::Sse(_) => f.write_str("ResponseBody(SseStream)"),
            Inner::Listen(_) => f.write_str("ResponseBody(ListenStream)"),
        }
    }
}

impl ResponseBody {
    /// An empty body whose length is not announced.
    ///
    /// It ends at once, and its size hint is not exact, so that hyper writes no `content-length`
    /// for it over HTTP/2 either: hyper derives one from an exact hint whenever the end of the stream
    /// does not go with the head, which is how `serve` sends every HTTP/2 answer. A 204 must carry
    /// none, and a `HEAD` answer only `GET`'s (RFC 9110 §8.6). Over HTTP/1.1 hyper writes
    /// `content-length: 0` where the status allows one (a 202, an empty 405), as before.
    pub fn empty() -> Self {
        Self { inner: Inner::Empty, held: None }
    }

    /// Makes `response` the answer to a `HEAD`: no content, and the `content-length` a `GET` would
    /// have had, when it is known (RFC 9110 §9.3.2). hyper leaves a `HEAD`'s content out over HTTP/1.1
    /// but sends it over HTTP/2, where a client takes DATA on a `HEAD` for a protocol error.
    pub(crate) fn answer_head(response: &mut http::Response<Self>) {
        if let Some(length) = response.body().size_hint().exact() {
            response.headers_mut().insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(length));
        }
        *response.body_mut() = Self::empty();
    }

    /// Keeps `reserved` until this body is dropped — except a listen stream's, given back at once: its
    /// body was read and decoded, and the stream may stay open for hours.
    pub(crate) fn hold(&mut self, reserved: Reserved) {
        if !matches!(self.inner, Inner::Listen(_)) {
            self.held = Some(reserved);
        }
    }

    /// A streamed body; dropping it drops the dispatch it drives.
    pub(crate) fn sse(stream: SseStream) -> Self {
        Self { inner: Inner::Sse(Box::new(stream)), held: None }
    }

    /// A `subscriptions/listen` stream; dropping it closes the stream (its pump stops).
    pub(crate) fn listen(stream: ListenStream) -> Self {
        Self { inner: Inner::Listen(Box::new(stream)), held: None }
    }
}

impl From<Vec<u8>> for ResponseBody {
    fn from(bytes: Vec<u8>) -> Self {
        Self { inner: Inner::Full(Full::new(Bytes::from(bytes))), held: None }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        match &mut self.inner {
            Inner::Empty => Poll::Ready(None),
            Inner::Full(full) => Pin::new(full).poll_frame(cx),
            Inner::Sse(stream) => {
                stream.poll_event(cx).map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
            }
            Inner::Listen(stream) => {
                stream.poll_event(cx).map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Inner::Empty => true,
            Inner::Full(full) => full.is_end_stream(),
            Inner::Sse(stream) => stream.is_done(),
            Inner::Listen(stream) => stream.is_done(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            // Unknown, for `Empty` too: no length is derived from it (see `empty`).
            Inner::Empty | Inner::Sse(_) | Inner::Listen(_) => SizeHint::default(),
            Inner::Full(full) => full.size_hint(),
        }
    }
}
