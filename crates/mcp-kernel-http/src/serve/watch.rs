//! One connection's deadlines: the first request's head, idleness, and responses the client will not
//! take.
//!
//! Threats: an HTTP/2 connection that completes its preface and answers every ping but never opens a
//! stream, or stops opening them — hyper keeps it forever, since a ping answered is a live peer; and an
//! HTTP/2 client that advertises a zero flow-control window, so that a response's headers go out and
//! its body waits for a `WINDOW_UPDATE` that never comes (the socket stays writable, so no write
//! blocks and [`super::io::ConnIo`]'s deadline never fires).
//!
//! [`Watch`] counts the connection's open requests — from the moment hyper hands a request head to the
//! service until its response body is dropped — and, for each response body, whether the transport
//! owes it a poll: from the moment the body hands over a frame (or is created with its data ready)
//! until the transport asks for the next one and finds nothing ready yet. A body that is owed a poll
//! for longer than the write timeout is one the client is not taking. [`Watch::verdict`] sleeps until
//! the earliest of the deadlines and says which one passed.
//!
//! The requests and bodies never wake the watch. It sleeps until the deadline it knows of, or for the
//! shorter of the write and idle timeouts if that comes sooner, and looks again: a response that starts
//! waiting, or a connection that falls idle, between two looks is seen at the second, no later than its
//! own deadline; a deadline that moved later (a new request on an idle connection) is slept to again. Serving a request costs a few uncontended
//! lock operations and no timer.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use tokio::time::Instant;

use super::io::deadline_after;

/// Which deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No request head arrived before the first-bytes deadline: close at once.
    NoRequest,
    /// No request was open for the idle timeout: close politely (HTTP/2 `GOAWAY`).
    Idle,
    /// A response waited on the client for longer than the write timeout: abandon the connection.
    Stalled,
}

/// The deadlines one connection is held to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadlines {
    /// When the first request's head must have arrived.
    pub(crate) first_request: Instant,
    /// How long the connection may have no open request.
    pub(crate) idle: Duration,
    /// How long a response may wait on the client.
    pub(crate) write: Duration,
}

#[derive(Debug)]
struct State {
    seen_request: bool,
    open: usize,
    idle_since: Instant,
    /// Response bodies the transport owes a poll, by body id: since when.
    owed: HashMap<u64, Instant>,
    next_body: u64,
}

/// The shared state of one connection's requests and responses.
#[derive(Debug)]
pub(crate) struct Watch {
    state: Mutex<State>,
}

impl Watch {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                seen_request: false,
                open: 0,
                idle_since: Instant::now(),
                owed: HashMap::new(),
                next_body: 0,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request head arrived: the request is open until the returned guard is dropped.
    pub(crate) fn request_started(self: &Arc<Self>) -> Open {
        let mut state = self.lock();
        state.seen_request = true;
        state.open += 1;
        drop(state);
        Open { watch: Arc::clone(self) }
    }

    fn request_ended(&self) {
        let mut state = self.lock();
        state.open = state.open.saturating_sub(1);
        if state.open == 0 {
            state.idle_since = Instant::now();
        }
    }

    fn new_body(&self) -> u64 {
        let mut state = self.lock();
        state.next_body += 1;
        state.next_body
    }

    /// The transport owes body `id` a poll from now (the clock restarts with every frame handed over).
    fn owe(&self, id: u64) {
        self.lock().owed.insert(id, Instant::now());
    }

    /// The transport asked body `id` for more: it owes it nothing now.
    fn paid(&self, id: u64) {
        self.lock().owed.remove(&id);
    }

    /// The next deadline and what passing it means; `None` while requests are open and no response
    /// waits on the client.
    fn next_deadline(&self, deadlines: &Deadlines) -> Option<(Instant, Verdict)> {
        let state = self.lock();
        if !state.seen_request {
            return Some((deadlines.first_request, Verdict::NoRequest));
        }
        if state.open == 0 {
            return Some((deadline_after(state.idle_since, deadlines.idle), Verdict::Idle));
        }
        let oldest = state.owed.values().min()?;
        Some((deadline_after(*oldest, deadlines.write), Verdict::Stalled))
    }

    /// Waits until one of the deadlines passes, looking again at least once per write or idle timeout
    /// (whichever is shorter).
    pub(crate) async fn verdict(&self, deadlines: Deadlines) -> Verdict {
        let period = deadlines.write.min(deadlines.idle);
        loop {
            let now = Instant::now();
            let next_look = deadline_after(now, period);
            match self.next_deadline(&deadlines) {
                Some((at, verdict)) if at <= now => return verdict,
                Some((at, _)) => tokio::time::sleep_until(at.min(next_look)).await,
                None => tokio::time::sleep_until(next_look).await,
            }
        }
    }
}

/// Keeps one request counted as open.
#[derive(Debug)]
pub(crate) struct Open {
    watch: Arc<Watch>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.watch.request_ended();
    }
}

pin_project_lite::pin_project! {
    /// A response body counted by the connection's [`Watch`]: the request stays open while it lives, and
    /// the time the transport owes it a poll is recorded.
    ///
    /// Over HTTP/2 the end of the stream is announced only once the transport comes back for more after
    /// the last data frame, so that a last frame stuck behind a closed flow-control window keeps the body
    /// alive (and owed), instead of ending it while its bytes wait unsent inside the HTTP/2 layer.
    pub(crate) struct Tracked<B> {
        #[pin]
        inner: B,
        id: u64,
        hold_end: bool,
        open: Open,
    }

    impl<B> PinnedDrop for Tracked<B> {
        fn drop(this: Pin<&mut Self>) {
            this.open.watch.paid(this.id);
        }
    }
}

impl<B> Tracked<B> {
    /// Wraps `inner`, created with data to hand over: the transport owes it a poll from now.
    pub(crate) fn new(inner: B, open: Open, hold_end: bool) -> Self {
        let id = open.watch.new_body();
        open.watch.owe(id);
        Self { inner, id, hold_end, open }
    }
}

impl<B: Body> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        match &polled {
            // Handed over: the next poll is owed from now.
            Poll::Ready(Some(_)) => this.open.watch.owe(*this.id),
            Poll::Ready(None) | Poll::Pending => this.open.watch.paid(*this.id),
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        !self.hold_end && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};

    fn deadlines() -> Deadlines {
        Deadlines {
            first_request: Instant::now() + Duration::from_secs(15),
            idle: Duration::from_secs(60),
            write: Duration::from_secs(30),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_without_a_request_is_closed_at_the_first_bytes_deadline() {
        let watch = Watch::new();
        let started = Instant::now();
        assert_eq!(watch.verdict(deadlines()).await, Verdict::NoRequest);
        assert_eq!(started.elapsed(), Duration::from_secs(15));
    }

    #[tokio::test(start_paused = true)]
    async fn idleness_is_counted_from_the_last_open_request() {
        let watch = Watch::new();
        let open = watch.request_started();
        tokio::time::sleep(Duration::from_secs(100)).await;
        drop(open);
        let ended = Instant::now();
        assert_eq!(watch.verdict(deadlines()).await, Verdict::Idle);
        assert_eq!(ended.elapsed(), Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_request_without_a_waiting_response_has_no_deadline() {
        let watch = Watch::new();
        let _open = watch.request_started();
        let verdict = tokio::time::timeout(Duration::from_secs(3600), watch.verdict(deadlines())).await;
        assert!(verdict.is_err(), "a slow tool is the host's business, not a stalled client");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_never_polled_is_stalled_at_the_write_deadline() {
        let watch = Watch::new();
        let body = Tracked::new(Full::new(Bytes::from_static(b"{}")), watch.request_started(), true);
        let started = Instant::now();
        assert_eq!(watch.verdict(deadlines()).await, Verdict::Stalled);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        drop(body);
    }

    #[tokio::test(start_paused = true)]
    async fn a_response_that_starts_waiting_between_two_looks_is_stalled_at_its_own_deadline() {
        let watch = Watch::new();
        let started = Instant::now();
        let open = watch.request_started();
        let late = async {
            // The call takes 10 s; then its response waits on a client that never takes it.
            tokio::time::sleep(Duration::from_secs(10)).await;
            Tracked::new(Full::new(Bytes::from_static(b"{}")), open, true)
        };
        let (verdict, body) = tokio::join!(watch.verdict(deadlines()), late);
        assert_eq!(verdict, Verdict::Stalled);
        assert_eq!(started.elapsed(), Duration::from_secs(40), "10 s of work, then the 30 s deadline");
        drop(body);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_falls_idle_before_the_first_bytes_deadline_is_closed_at_its_idle_deadline() {
        let watch = Watch::new();
        let started = Instant::now();
        let short = Deadlines { idle: Duration::from_secs(2), ..deadlines() };
        let served = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            drop(watch.request_started());
        };
        let (verdict, ()) = tokio::join!(watch.verdict(short), served);
        assert_eq!(verdict, Verdict::Idle);
        assert_eq!(started.elapsed(), Duration::from_millis(2_500), "idle from the request's end");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_read_to_its_end_is_owed_nothing() {
        let watch = Watch::new();
        let body = Tracked::new(Full::new(Bytes::from_static(b"{}")), watch.request_started(), true);
        assert!(!body.is_end_stream(), "the end is held until the transport comes back");
        let collected = body.collect().await.expect("infallible").to_bytes();
        assert_eq!(collected, "{}");
        assert_eq!(watch.verdict(deadlines()).await, Verdict::Idle, "the body is gone: only idleness");
    }
}
