//! The response body type of the service.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;

/// The body of every response the service writes: one JSON message, or nothing (202).
#[derive(Debug, Default)]
pub struct ResponseBody(Full<Bytes>);

impl ResponseBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self(Full::new(Bytes::new()))
    }
}

impl From<Vec<u8>> for ResponseBody {
    fn from(bytes: Vec<u8>) -> Self {
        Self(Full::new(Bytes::from(bytes)))
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}
