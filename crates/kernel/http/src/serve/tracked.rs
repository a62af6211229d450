//! The response body as the connection's [`Watch`] sees it: the request stays open while it lives,
//! and every wait on the transport is timed.
//!
//! Threat: a response the client takes too slowly to matter, or never — a zero or trickled HTTP/2
//! flow-control window, a socket read a byte at a time — holding the response's bytes, its stream and
//! its connection. The body is handed to the transport in pieces of at most [`PIECE`] bytes, so that
//! the transport asks for the next piece only when it has sent (or buffered within its own bounds) the
//! one before: most of a large response stays here, where the wait for the next request is timed, and
//! the waits of one response add up ([`Watch`] closes the connection when they reach the write
//! timeout). Over HTTP/2 the end of the stream is announced only when the transport comes back after
//! the last piece, so the last piece too is waited on here rather than ended while its bytes sit unsent
//! in the HTTP/2 layer.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};

use super::watch::Open;

/// The largest piece handed to the transport at once: one HTTP/2 frame at the default frame size.
pub(crate) const PIECE: usize = 16 * 1024;

pin_project_lite::pin_project! {
    /// A response body counted by the connection's [`Watch`](super::watch::Watch).
    pub(crate) struct Tracked<B> {
        #[pin]
        inner: B,
        // What is left of the inner body's last data frame.
        rest: Bytes,
        id: u64,
        hold_end: bool,
        open: Open,
    }

    impl<B> PinnedDrop for Tracked<B> {
        fn drop(this: Pin<&mut Self>) {
            this.open.watch.forget(this.id);
        }
    }
}

impl<B> Tracked<B> {
    /// Wraps `inner`, created with data to hand over: the transport owes it a poll from now.
    /// `hold_end` (HTTP/2) keeps the end of the stream until the transport comes back after the last piece.
    pub(crate) fn new(inner: B, open: Open, hold_end: bool) -> Self {
        let id = open.watch.new_body();
        Self { inner, rest: Bytes::new(), id, hold_end, open }
    }
}

/// The next piece of `rest`, at most [`PIECE`] bytes.
fn piece(rest: &mut Bytes) -> Bytes {
    rest.split_to(rest.len().min(PIECE))
}

impl<B: Body> Body for Tracked<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let (watch, id) = (&this.open.watch, *this.id);
        if !this.rest.is_empty() {
            watch.polled(id, true);
            return Poll::Ready(Some(Ok(Frame::data(piece(this.rest)))));
        }
        let polled = match this.inner.poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(mut data) => {
                    *this.rest = data.copy_to_bytes(data.remaining());
                    Poll::Ready(Some(Ok(Frame::data(piece(this.rest)))))
                }
                Err(frame) => match frame.into_trailers() {
                    Ok(trailers) => Poll::Ready(Some(Ok(Frame::trailers(trailers)))),
                    // A frame neither data nor trailers: http-body has none, so end the body.
                    Err(_) => Poll::Ready(None),
                },
            },
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        };
        // Asked for more: whatever the transport made this body wait ends here; a frame handed over
        // starts the next wait.
        watch.polled(id, matches!(polled, Poll::Ready(Some(_))));
        polled
    }

    fn is_end_stream(&self) -> bool {
        !self.hold_end && self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let hint = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut sum = SizeHint::new();
        sum.set_lower(hint.lower().saturating_add(rest));
        if let Some(upper) = hint.upper() {
            sum.set_upper(upper.saturating_add(rest));
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::watch::Watch;
    use http_body_util::{BodyExt, Full};

    #[tokio::test]
    async fn a_large_body_goes_out_in_pieces_of_at_most_one_frame_and_whole() {
        let watch = Watch::new();
        let sent: Vec<u8> = (0..100_000u32).map(|n| (n % 253) as u8).collect();
        let mut body = Tracked::new(Full::new(Bytes::from(sent.clone())), watch.request_started(), false);
        assert_eq!(body.size_hint().exact(), Some(100_000));
        let mut received = Vec::new();
        let mut pieces = 0;
        while let Some(frame) = body.frame().await {
            let data = frame.expect("infallible").into_data().expect("data");
            assert!(data.len() <= PIECE, "{}", data.len());
            received.extend_from_slice(&data);
            pieces += 1;
            assert_eq!(body.size_hint().exact(), Some((100_000 - received.len()) as u64));
        }
        assert_eq!(received, sent);
        assert_eq!(pieces, 100_000usize.div_ceil(PIECE));
    }

    #[tokio::test]
    async fn over_http2_the_end_waits_for_the_transport_to_come_back() {
        let watch = Watch::new();
        let body = Tracked::new(Full::new(Bytes::from_static(b"{}")), watch.request_started(), true);
        assert!(!body.is_end_stream(), "held");
        let body = Tracked::new(Full::new(Bytes::new()), watch.request_started(), false);
        assert!(body.is_end_stream(), "an empty body over HTTP/1.1 ends at once");
    }
}
