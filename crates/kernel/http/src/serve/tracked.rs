//! The response body as the connection's [`Watch`] sees it: the request stays open while it lives,
//! and every wait on the transport is timed.
//!
//! Threat: a response the client takes too slowly to matter, or never — a zero or trickled HTTP/2
//! flow-control window, a socket read a byte at a time — holding the response's bytes, its stream and
//! its connection. Every wait on the transport is timed, from the moment the body hands it a piece
//! until it asks for the next one, and the waits of one response add up ([`Watch`] closes the
//! connection when they reach the write timeout).
//!
//! Over HTTP/2 the body is handed over in pieces of at most [`PIECE`] bytes, one frame each, so that
//! the HTTP/2 layer asks for the next piece only when it has sent the one before (its flow-control
//! window open): most of a large response stays here, where the wait is timed, rather than queued in
//! the HTTP/2 layer, whose socket stays writable while a window stays shut. The end of the stream is
//! announced only when the transport comes back after the last piece, so the last piece too is waited
//! on here rather than ended while its bytes sit unsent.
//!
//! Over HTTP/1.1 each data frame is handed over whole: hyper holds it by reference (no copy) and
//! writes it straight to the socket, in one system call where the socket takes it. Cut into
//! [`PIECE`]s, a 1 MiB answer took 16 `writev` calls of hyper's 64 KiB write buffer (`max_buf_size`,
//! [`HTTP1_READ_BUFFER`]) instead of one. What hyper queues is timed as before: once its queue holds
//! [`HTTP1_READ_BUFFER`] bytes or more it writes them all out before it asks for more, and the end of a
//! body whose last frame is that large is held (not announced with the frame), so that hyper comes
//! back for the end after writing the frame — or, for a body of known length, drops the body then —
//! and the write is waited on here, not done after the body (and its place in the [`Watch`]) is gone.
//! A smaller last frame ends the body with it: hyper queues it behind less than its buffer and asks
//! for the end before writing, as it did with pieces.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};

use super::options::HTTP1_READ_BUFFER;
use super::watch::Open;

/// The largest piece handed to an HTTP/2 transport at once: one frame at the default frame size.
pub(crate) const PIECE: usize = 16 * 1024;

/// How a body is handed to its connection's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handover {
    /// HTTP/1.1: each data frame whole; the end of the body with its last frame, unless that frame is
    /// as large as hyper's write buffer ([`HTTP1_READ_BUFFER`]).
    Whole,
    /// HTTP/2: pieces of at most [`PIECE`] bytes; the end held until the transport comes back after
    /// the last one.
    Frames,
}

pin_project_lite::pin_project! {
    /// A response body counted by the connection's [`Watch`](super::watch::Watch).
    pub(crate) struct Tracked<B> {
        #[pin]
        inner: B,
        // What is left of the inner body's last data frame.
        rest: Bytes,
        id: u64,
        handover: Handover,
        // Over HTTP/1.1: the last frame handed over fills hyper's write buffer, so the end waits until
        // hyper has written it.
        large_out: bool,
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
    pub(crate) fn new(inner: B, open: Open, handover: Handover) -> Self {
        let id = open.watch.new_body();
        Self { inner, rest: Bytes::new(), id, handover, large_out: false, open }
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
                    let data = data.copy_to_bytes(data.remaining());
                    match this.handover {
                        Handover::Whole => {
                            *this.large_out = data.len() >= HTTP1_READ_BUFFER;
                            Poll::Ready(Some(Ok(Frame::data(data))))
                        }
                        Handover::Frames => {
                            *this.rest = data;
                            Poll::Ready(Some(Ok(Frame::data(piece(this.rest)))))
                        }
                    }
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
        self.handover == Handover::Whole
            && !self.large_out
            && self.rest.is_empty()
            && self.inner.is_end_stream()
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
    async fn over_http2_a_large_body_goes_out_in_pieces_of_at_most_one_frame_and_whole() {
        let watch = Watch::new();
        let sent: Vec<u8> = (0..100_000u32).map(|n| (n % 253) as u8).collect();
        let mut body =
            Tracked::new(Full::new(Bytes::from(sent.clone())), watch.request_started(), Handover::Frames);
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
    async fn over_http1_a_large_body_goes_out_in_its_own_frames_uncopied() {
        let watch = Watch::new();
        let sent = Bytes::from((0..100_000u32).map(|n| (n % 253) as u8).collect::<Vec<u8>>());
        let mut body = Tracked::new(Full::new(sent.clone()), watch.request_started(), Handover::Whole);
        assert!(!body.is_end_stream(), "its one frame is still to come");
        let frame = body.frame().await.expect("a frame").expect("infallible");
        let data = frame.into_data().expect("data");
        assert_eq!(data.as_ptr(), sent.as_ptr(), "the frame is the body's own buffer, not a copy");
        assert_eq!(data.len(), sent.len());
        assert!(!body.is_end_stream(), "the end waits until the transport has written the large frame");
        assert!(body.frame().await.is_none());
    }

    #[tokio::test]
    async fn over_http1_a_last_frame_smaller_than_hyper_buffer_ends_the_body_with_it() {
        let watch = Watch::new();
        let size = HTTP1_READ_BUFFER - 1;
        let mut body =
            Tracked::new(Full::new(Bytes::from(vec![b'x'; size])), watch.request_started(), Handover::Whole);
        let frame = body.frame().await.expect("a frame").expect("infallible");
        assert_eq!(frame.into_data().expect("data").len(), size);
        assert!(body.is_end_stream(), "an answer hyper queues whole ends with its frame: no poll more");
    }

    #[tokio::test]
    async fn over_http2_the_end_waits_for_the_transport_to_come_back() {
        let watch = Watch::new();
        let body =
            Tracked::new(Full::new(Bytes::from_static(b"{}")), watch.request_started(), Handover::Frames);
        assert!(!body.is_end_stream(), "held");
        let body = Tracked::new(Full::new(Bytes::new()), watch.request_started(), Handover::Whole);
        assert!(body.is_end_stream(), "an empty body over HTTP/1.1 ends at once");
    }
}
