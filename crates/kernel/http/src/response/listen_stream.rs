//! A `subscriptions/listen` stream as a response body: the acknowledgment first, then each event its
//! pump queued (`dispatch/listen/pump.rs`), the completion result last, and an SSE comment line
//! (`: keep-alive`) whenever nothing has been written for the keep-alive interval.
//!
//! Threats: **a stream that looks dead** — a proxy or a client that closes a response silent for a
//! minute would cut a stream on which nothing changed; the comment lines keep bytes flowing, and every
//! client ignores them (MCP streamable HTTP §Receiving Messages) — and **a stream that outlives its
//! bounds**: the body holds the stream's listen slot, so the slot is given back exactly when the
//! transport drops the body (the client closed the stream, the connection ended, or the stream was
//! written out). A keep-alive is produced only when the transport asks for more: a client that does not
//! read is sent nothing new, and the comment lines cannot pile up.
//!
//! Events already queued when the transport asks are handed over together, up to [`GATHER_BYTES`]: a
//! burst of changes goes out in a few writes (and a few HTTP/2 DATA frames, which some clients limit
//! when many small ones wait unread) rather than one per event.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use crate::body::read::deadline_after;
use crate::dispatch::listen::slots::ListenSlot;

/// The keep-alive: one SSE comment line, then the blank line that ends it.
pub(crate) const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The most bytes of queued events handed to the transport at once: one HTTP/2 frame at the default
/// frame size.
pub(crate) const GATHER_BYTES: usize = 16 * 1024;

/// One listen stream's body.
pub(crate) struct ListenStream {
    /// The acknowledgment, until it is written.
    first: Option<Bytes>,
    /// The queued events; closed after the completion result (or when the pump is gone).
    queue: mpsc::Receiver<Bytes>,
    /// When the next keep-alive is due, and the interval between them; `None` for a stream that
    /// completes at once.
    keep_alive: Option<(Pin<Box<Sleep>>, Duration)>,
    done: bool,
    /// The stream's slot, held while the body lives.
    _slot: Option<ListenSlot>,
}

impl ListenStream {
    /// A stream that stays open: `acknowledgment` first (a legacy session's GET stream has none), then
    /// what `queue` yields, a keep-alive after each `interval` without an event, holding `slot` while
    /// it lives.
    pub(crate) fn open(
        acknowledgment: Option<Bytes>,
        queue: mpsc::Receiver<Bytes>,
        interval: Duration,
        slot: ListenSlot,
    ) -> Self {
        let due = Box::pin(tokio::time::sleep_until(deadline_after(Instant::now(), interval)));
        Self {
            first: acknowledgment,
            queue,
            keep_alive: Some((due, interval)),
            done: false,
            _slot: Some(slot),
        }
    }

    /// A stream that completes at once: `acknowledgment`, then `completion`, then the end.
    pub(crate) fn at_once(acknowledgment: Bytes, completion: Bytes) -> Self {
        let (sender, queue) = mpsc::channel(1);
        // A fresh channel of one place: the send cannot fail.
        let _ = sender.try_send(completion);
        Self { first: Some(acknowledgment), queue, keep_alive: None, done: false, _slot: None }
    }

    /// Whether the stream has ended.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Something was written: the next keep-alive is due an interval from now.
    fn wrote(&mut self) {
        if let Some((due, interval)) = &mut self.keep_alive {
            due.as_mut().reset(deadline_after(Instant::now(), *interval));
        }
    }

    /// `first` and the events queued behind it, up to [`GATHER_BYTES`] (or `first` alone, whatever
    /// its size).
    fn gather(&mut self, first: Bytes) -> Bytes {
        if first.len() >= GATHER_BYTES {
            return first;
        }
        let Ok(mut next) = self.queue.try_recv() else { return first };
        let mut gathered = BytesMut::with_capacity(GATHER_BYTES.min(first.len() + next.len()));
        gathered.extend_from_slice(&first);
        loop {
            gathered.extend_from_slice(&next);
            if gathered.len() >= GATHER_BYTES {
                break;
            }
            match self.queue.try_recv() {
                Ok(more) => next = more,
                // Empty, or closed: the next poll sees the end.
                Err(_) => break,
            }
        }
        gathered.freeze()
    }

    /// The next piece of the stream: the acknowledgment, a queued event, or a keep-alive when one is
    /// due; `None` once the queue is closed and empty.
    pub(crate) fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(first) = self.first.take() {
            self.wrote();
            return Poll::Ready(Some(first));
        }
        match self.queue.poll_recv(cx) {
            Poll::Ready(Some(event)) => {
                self.wrote();
                return Poll::Ready(Some(self.gather(event)));
            }
            Poll::Ready(None) => {
                self.done = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        let Some((due, _)) = &mut self.keep_alive else { return Poll::Pending };
        match due.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.wrote();
                Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Client;
    use crate::dispatch::listen::slots::ListenSlots;

    async fn next(stream: &mut ListenStream) -> Option<Bytes> {
        std::future::poll_fn(|cx| stream.poll_event(cx)).await
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_stream_sends_a_keep_alive_each_interval_and_an_event_moves_the_next_one() {
        let slots = ListenSlots::new(1, 1);
        let (sender, queue) = mpsc::channel(4);
        let slot = slots.take(Client::Unknown).expect("a slot");
        let mut stream =
            ListenStream::open(Some(Bytes::from_static(b"ack")), queue, Duration::from_secs(15), slot);
        let started = Instant::now();
        assert_eq!(next(&mut stream).await.as_deref(), Some(&b"ack"[..]), "the acknowledgment first");
        assert_eq!(next(&mut stream).await.as_deref(), Some(KEEP_ALIVE));
        assert_eq!(started.elapsed(), Duration::from_secs(15));
        tokio::time::sleep(Duration::from_secs(5)).await;
        sender.try_send(Bytes::from_static(b"event")).expect("room");
        assert_eq!(next(&mut stream).await.as_deref(), Some(&b"event"[..]));
        assert_eq!(next(&mut stream).await.as_deref(), Some(KEEP_ALIVE));
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(35),
            "15 s after the event, not after the last comment"
        );
        drop(sender);
        assert_eq!(next(&mut stream).await, None, "the queue closed: the end");
        assert!(stream.is_done());
        assert!(slots.take(Client::Unknown).is_err(), "the slot is held while the body lives");
        drop(stream);
        assert!(slots.take(Client::Unknown).is_ok(), "and given back with it");
    }

    #[tokio::test]
    async fn events_queued_together_are_handed_over_together_up_to_one_frame() {
        let slots = ListenSlots::new(1, 1);
        let (sender, queue) = mpsc::channel(64);
        let slot = slots.take(Client::Unknown).expect("a slot");
        let mut stream =
            ListenStream::open(Some(Bytes::from_static(b"ack")), queue, Duration::from_secs(15), slot);
        for _ in 0..3 {
            sender.try_send(Bytes::from_static(b"event\n\n")).expect("room");
        }
        assert_eq!(
            next(&mut stream).await.as_deref(),
            Some(&b"ack"[..]),
            "the acknowledgment alone, at once"
        );
        assert_eq!(next(&mut stream).await.as_deref(), Some(&b"event\n\nevent\n\nevent\n\n"[..]));
        let large = Bytes::from(vec![b'x'; 10 * 1024]);
        for _ in 0..3 {
            sender.try_send(large.clone()).expect("room");
        }
        assert_eq!(next(&mut stream).await.map(|b| b.len()), Some(20 * 1024), "two, past one frame");
        assert_eq!(next(&mut stream).await.map(|b| b.len()), Some(10 * 1024), "then the third");
        drop(sender);
        assert_eq!(next(&mut stream).await, None);
    }

    #[tokio::test]
    async fn a_stream_that_completes_at_once_is_two_events_then_the_end() {
        let mut stream = ListenStream::at_once(Bytes::from_static(b"ack"), Bytes::from_static(b"done"));
        assert_eq!(next(&mut stream).await.as_deref(), Some(&b"ack"[..]));
        assert_eq!(next(&mut stream).await.as_deref(), Some(&b"done"[..]));
        assert_eq!(next(&mut stream).await, None);
    }
}
