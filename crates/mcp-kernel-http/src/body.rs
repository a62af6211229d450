//! The response body type of the service.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;

use crate::budget::Reserved;
use crate::event_stream::SseStream;

/// The body of every response the service writes: one JSON message, nothing (202), or an SSE stream
/// (a request with a progress token whose call reported progress).
#[derive(Default)]
pub struct ResponseBody {
    inner: Inner,
    /// The request's share of the body budget, given back when the transport drops this body.
    held: Option<Reserved>,
}

enum Inner {
    Full(Full<Bytes>),
    Sse(Box<SseStream>),
}

impl Default for Inner {
    fn default() -> Self {
        Inner::Full(Full::default())
    }
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Full(full) => f.debug_tuple("ResponseBody").field(full).finish(),
            Inner::Sse(_) => f.write_str("ResponseBody(SseStream)"),
        }
    }
}

impl ResponseBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self { inner: Inner::Full(Full::new(Bytes::new())), held: None }
    }

    /// Keeps `reserved` until this body is dropped.
    pub(crate) fn hold(&mut self, reserved: Reserved) {
        self.held = Some(reserved);
    }

    /// A streamed body; dropping it drops the dispatch it drives.
    pub(crate) fn sse(stream: SseStream) -> Self {
        Self { inner: Inner::Sse(Box::new(stream)), held: None }
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
            Inner::Full(full) => Pin::new(full).poll_frame(cx),
            Inner::Sse(stream) => {
                stream.poll_event(cx).map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Inner::Full(full) => full.is_end_stream(),
            Inner::Sse(stream) => stream.is_done(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Full(full) => full.size_hint(),
            Inner::Sse(_) => SizeHint::default(),
        }
    }
}
