//! The response body type of the service.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;
use mcp_kernel_wire::Pieces;

use crate::body::budget::Reserved;
use crate::response::event_stream::SseStream;
use crate::response::listen_stream::ListenStream;

/// An encoded result this long or longer is sent from the buffer it was encoded into, between the
/// envelope's bytes, rather than copied behind them ([`Pieces`]): a copy of 16 KiB costs more than
/// two more frames of one vectored write, and a megabyte answer is then held in memory once, not twice.
pub(crate) const COPY_BELOW: usize = 16 * 1024;

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
    /// A JSON answer in the pieces of [`Pieces::Around`], sent in order.
    Around(Box<Around>),
    Sse(Box<SseStream>),
    Listen(Box<ListenStream>),
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Empty => f.write_str("ResponseBody(Empty)"),
            Inner::Full(full) => f.debug_tuple("ResponseBody").field(full).finish(),
            Inner::Around(around) => f.debug_tuple("ResponseBody").field(&around.remaining).finish(),
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

impl From<Pieces> for ResponseBody {
    fn from(pieces: Pieces) -> Self {
        match pieces {
            Pieces::Whole(bytes) => Self::from(bytes),
            Pieces::Around { head, result, tail } => {
                // The envelope's closing bytes go into the result's buffer when it has room for them
                // (its encoder's guess leaves some): the result is then the answer's last frame, and
                // goes out in the same write as the head. As a frame of their own after a result of
                // 64 KiB or more, they were a write and a TCP segment of their own, which the client
                // had to wait for (hyper writes out what it has queued before asking for them).
                let mut result = result.into_bytes();
                let tail = if result.capacity() - result.len() >= tail.len() {
                    result.extend_from_slice(tail);
                    Bytes::new()
                } else {
                    Bytes::from_static(tail)
                };
                let pieces = [Bytes::from(head), Bytes::from(result), tail];
                let remaining = pieces.iter().map(|piece| piece.len() as u64).sum();
                let around = Around { pieces: pieces.into_iter(), remaining };
                Self { inner: Inner::Around(Box::new(around)), held: None }
            }
        }
    }
}

/// The pieces of one JSON answer not yet sent (an empty one is skipped), and how many bytes they hold.
struct Around {
    pieces: std::array::IntoIter<Bytes, 3>,
    remaining: u64,
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
            Inner::Around(around) => {
                Poll::Ready(around.pieces.find(|piece| !piece.is_empty()).map(|piece| {
                    around.remaining -= piece.len() as u64;
                    Ok(Frame::data(piece))
                }))
            }
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
            Inner::Around(around) => around.remaining == 0,
            Inner::Sse(stream) => stream.is_done(),
            Inner::Listen(stream) => stream.is_done(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            // Unknown, for `Empty` too: no length is derived from it (see `empty`).
            Inner::Empty | Inner::Sse(_) | Inner::Listen(_) => SizeHint::default(),
            Inner::Full(full) => full.size_hint(),
            Inner::Around(around) => SizeHint::with_exact(around.remaining),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use mcp_kernel_wire::{Encoded, Response as JsonRpcResponse};
    use serde_json::json;

    /// Every data frame of `body`, in order, checking its size hint before each.
    pub(crate) async fn frames(mut body: ResponseBody) -> Vec<Bytes> {
        let mut frames = Vec::new();
        loop {
            let left = body.size_hint().exact();
            let Some(frame) = body.frame().await else { break };
            let data = frame.expect("infallible").into_data().expect("a data frame");
            if let Some(left) = left {
                assert!(data.len() as u64 <= left, "a frame beyond the announced length");
            }
            frames.push(data);
        }
        assert!(body.is_end_stream());
        frames
    }

    #[tokio::test]
    async fn pieces_are_sent_in_order_with_their_exact_length() {
        let raw = serde_json::value::to_raw_value(&json!({"text": "é\"".repeat(40)})).unwrap();
        let at = raw.get().as_ptr();
        let response = JsonRpcResponse::encoded(json!("a"), raw);
        let whole = response.to_bytes();
        let body = ResponseBody::from(response.into_pieces(0));
        assert_eq!(body.size_hint().exact(), Some(whole.len() as u64));
        assert!(!body.is_end_stream());
        let frames = frames(body).await;
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[1].as_ptr(), at, "the result is sent from its own buffer");
        assert_eq!(frames.concat(), whole);
    }

    #[tokio::test]
    async fn the_closing_brace_goes_in_the_result_buffer_when_it_has_room() {
        let value = json!({"text": "é\"".repeat(40)});
        // A guess a little over the text, as `ToolResult::encode` makes: room is left after it.
        let encoded = Encoded::to_json(&value, serde_json::to_vec(&value).unwrap().len() + 16).unwrap();
        let at = encoded.get().as_ptr();
        let response = JsonRpcResponse::encoded(json!("a"), encoded);
        let whole = response.to_bytes();
        let body = ResponseBody::from(response.into_pieces(0));
        assert_eq!(body.size_hint().exact(), Some(whole.len() as u64));
        let frames = frames(body).await;
        assert_eq!(frames.len(), 2, "the head, then the result with the envelope's closing brace");
        assert_eq!(frames[1].as_ptr(), at, "the result is sent from its own buffer");
        assert!(frames[1].ends_with(b"}}"));
        assert_eq!(frames.concat(), whole);
    }

    #[tokio::test]
    async fn a_whole_answer_is_one_frame() {
        let response = JsonRpcResponse::result(json!(1), json!({"a": 1}));
        let whole = response.to_bytes();
        let body = ResponseBody::from(response.into_pieces(COPY_BELOW));
        assert_eq!(body.size_hint().exact(), Some(whole.len() as u64));
        assert_eq!(frames(body).await, [Bytes::from(whole)]);
    }
}
