//! One connection's deadlines: the first request's head, over HTTP/1.1 each later head, idleness, and
//! responses the client will not take.
//!
//! Threats: an HTTP/2 connection that completes its preface and answers every ping but never opens a
//! stream, or stops opening them — hyper keeps it forever, since a ping answered is a live peer; and an
//! HTTP/2 client that advertises a zero flow-control window, so that a response's headers go out and
//! its body waits for a `WINDOW_UPDATE` that never comes (the socket stays writable, so no write
//! blocks and [`super::io::ConnIo`]'s deadline never fires); and an HTTP/1.1 client that, between two
//! requests, holds its kept-alive connection by sending nothing, or the next head a byte at a time.
//!
//! That last deadline is hyper's `header_read_timeout` in effect, kept here instead: hyper arms a
//! timer of its own for every request head it waits for and cancels it when the head is in, which cost
//! a small request about 3 % of its CPU (`docs/performance.md`, "Fourteenth round"). Here it is one more
//! deadline of the idle connection, counted from the end of its last request, or from the last write of
//! its response that had to wait for the client if that came later, and not counted while a write waits
//! (the write timeout bounds that): as with hyper's, which started once the response was flushed, the
//! time the next head may take includes the idle time before it, and a response the client is slow to
//! take is held to the write timeout, not to this one.
//!
//! [`Watch`] counts the connection's open requests — from the moment hyper hands a request head to the
//! service until its response body is dropped — and, for each response body, whether the transport
//! owes it a poll: from the moment the body hands over a frame (or is created with its data ready)
//! until the transport asks for the next one ([`super::tracked::Tracked`] reports both). The waits of
//! one response add up over its life; a response whose waits reach the write timeout is one the
//! client is not taking, however slowly it trickles its flow-control window open. [`Watch::verdict`] sleeps until
//! the earliest of the deadlines and says which one passed.
//!
//! The requests and bodies never wake the watch. It sleeps until the deadline it knows of, or for the
//! shortest of the write, idle and next-head timeouts if that comes sooner, and looks again: a response
//! that starts waiting, or a connection that falls idle, between two looks is seen at the second, no
//! later than its own deadline; a deadline that moved later (a new request on an idle connection) is
//! slept to again. Serving a request costs a few uncontended lock operations and no timer.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::body::read::deadline_after;

/// Which deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No request head arrived by its deadline — the first request's (the first-bytes deadline) or,
    /// over HTTP/1.1, the next one's (the header-read deadline, idle time before it included): close at
    /// once.
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
    /// Over HTTP/1.1, how long each later request's head may take once no request is open, the idle
    /// time before it included; `None` over HTTP/2, whose streams' heads hyper reads by frames.
    pub(crate) next_head: Option<Duration>,
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
    /// Every live response body, by id (ascending: ids are handed out in order), and how long it has
    /// waited on the transport so far. A list, not a map: a connection has one live body at a time
    /// over HTTP/1.1 and at most its open streams over HTTP/2, and each body looks itself up on every
    /// poll.
    owed: Vec<(u64, Waiting)>,
    next_body: u64,
    /// A write to the socket is waiting for the client to read ([`super::io::ConnIo`] says so).
    write_blocked: bool,
    /// When a write that had waited last went through.
    unblocked_at: Instant,
}

/// How long one response body has waited on the transport.
#[derive(Debug, Clone, Copy, Default)]
struct Waiting {
    /// Since when the transport owes it a poll, if it does now.
    since: Option<Instant>,
    /// The time it waited before that, summed over the response's life.
    before: Duration,
}

impl Waiting {
    /// When its waits add up to `limit`, if it is waiting now.
    fn deadline(&self, limit: Duration) -> Option<Instant> {
        self.since.map(|since| deadline_after(since, limit.saturating_sub(self.before)))
    }
}

/// The shared state of one connection's requests and responses.
#[derive(Debug)]
pub(crate) struct Watch {
    state: Mutex<State>,
    /// Told once, when the first request head arrives (waited on only during shutdown).
    first: Notify,
}

impl Watch {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                seen_request: false,
                open: 0,
                idle_since: Instant::now(),
                owed: Vec::new(),
                next_body: 0,
                write_blocked: false,
                unblocked_at: Instant::now(),
            }),
            first: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request head arrived: the request is open until the returned guard is dropped.
    pub(crate) fn request_started(self: &Arc<Self>) -> Open {
        let mut state = self.lock();
        let first = !state.seen_request;
        state.seen_request = true;
        state.open += 1;
        drop(state);
        if first {
            self.first.notify_one();
        }
        Open { watch: Arc::clone(self) }
    }

    fn request_ended(&self) {
        let mut state = self.lock();
        state.open = state.open.saturating_sub(1);
        if state.open == 0 {
            state.idle_since = Instant::now();
        }
    }

    /// A write to the socket could not proceed: the next head is not timed until one does.
    pub(super) fn write_blocked(&self) {
        self.lock().write_blocked = true;
    }

    /// A write that could not proceed went through: the next head is timed from now at the earliest.
    pub(super) fn write_unblocked(&self) {
        let mut state = self.lock();
        state.write_blocked = false;
        state.unblocked_at = Instant::now();
    }

    /// A new response body, created with data to hand over: the transport owes it a poll from now.
    pub(super) fn new_body(&self) -> u64 {
        let mut state = self.lock();
        state.next_body += 1;
        let id = state.next_body;
        // The largest id yet: the list stays in order.
        state.owed.push((id, Waiting { since: Some(Instant::now()), before: Duration::ZERO }));
        id
    }

    /// The transport asked body `id` for more: what it waited is added to its total, and when the body
    /// `handed_over` a frame the transport owes it the next poll from now.
    pub(super) fn polled(&self, id: u64, handed_over: bool) {
        let now = Instant::now();
        let mut state = self.lock();
        if let Some(waiting) = owed_mut(&mut state.owed, id) {
            if let Some(since) = waiting.since.take() {
                waiting.before += now.saturating_duration_since(since);
            }
            if handed_over {
                waiting.since = Some(now);
            }
        }
    }

    /// Body `id` is gone.
    pub(super) fn forget(&self, id: u64) {
        let mut state = self.lock();
        if let Ok(at) = state.owed.binary_search_by_key(&id, |(id, _)| *id) {
            state.owed.remove(at);
        }
    }

    /// Since when the connection has had no open request (since it was made, before its first), or
    /// `None` while one is open: how [`super::limits`] finds a client's longest-idle connection.
    pub(super) fn idle_since(&self) -> Option<Instant> {
        let state = self.lock();
        (state.open == 0).then_some(state.idle_since)
    }

    /// The next deadline and what passing it means; `None` while requests are open and no response
    /// waits on the client.
    fn next_deadline(&self, deadlines: &Deadlines) -> Option<(Instant, Verdict)> {
        let state = self.lock();
        if !state.seen_request {
            return Some((deadlines.first_request, Verdict::NoRequest));
        }
        if state.open == 0 {
            return Some(match deadlines.next_head {
                Some(head) if head <= deadlines.idle && !state.write_blocked => {
                    (deadline_after(state.idle_since.max(state.unblocked_at), head), Verdict::NoRequest)
                }
                _ => (deadline_after(state.idle_since, deadlines.idle), Verdict::Idle),
            });
        }
        let first = state.owed.iter().filter_map(|(_, waiting)| waiting.deadline(deadlines.write)).min()?;
        Some((first, Verdict::Stalled))
    }

    /// Whether a request head arrives by `deadline`: true as soon as one has (at once if one already
    /// has), false at the deadline.
    pub(crate) async fn first_request_by(&self, deadline: Instant) -> bool {
        if self.lock().seen_request {
            return true;
        }
        tokio::select! {
            // `notify_one` keeps its permit for a waiter that comes later: no arrival is missed.
            () = self.first.notified() => true,
            () = tokio::time::sleep_until(deadline) => self.lock().seen_request,
        }
    }

    /// Waits until one of the deadlines passes, looking again at least once per write, idle or
    /// next-head timeout (whichever is shortest).
    pub(crate) async fn verdict(&self, deadlines: Deadlines) -> Verdict {
        let period = deadlines.write.min(deadlines.idle).min(deadlines.next_head.unwrap_or(Duration::MAX));
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

/// The entry of body `id` in `owed`, if it is live.
fn owed_mut(owed: &mut [(u64, Waiting)], id: u64) -> Option<&mut Waiting> {
    let at = owed.binary_search_by_key(&id, |(id, _)| *id).ok()?;
    Some(&mut owed[at].1)
}

/// Keeps one request counted as open.
#[derive(Debug)]
pub(crate) struct Open {
    pub(super) watch: Arc<Watch>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.watch.request_ended();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::tracked::{Handover, Tracked};
    use bytes::Bytes;
    use http_body::Body;
    use http_body_util::{BodyExt, Full};

    fn deadlines() -> Deadlines {
        Deadlines {
            first_request: Instant::now() + Duration::from_secs(15),
            next_head: None,
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
    async fn a_first_request_is_waited_for_until_it_arrives_or_the_deadline_passes() {
        let at = Instant::now() + Duration::from_secs(1);
        let silent = Watch::new();
        assert!(!silent.first_request_by(at).await, "a connection that showed nothing");
        assert_eq!(Instant::now(), at, "is given up at the deadline");
        let at = Instant::now() + Duration::from_secs(1);
        let late = Watch::new();
        let arrives = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            late.request_started()
        };
        let (shown, _open) = tokio::join!(late.first_request_by(at), arrives);
        assert!(shown, "one whose first request arrives in time is kept");
        assert!(Instant::now() < at, "and seen when it arrives, not at the deadline");
        assert!(late.first_request_by(Instant::now()).await, "a request already seen counts at once");
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
        let body =
            Tracked::new(Full::new(Bytes::from_static(b"{}")), watch.request_started(), Handover::Frames);
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
            Tracked::new(Full::new(Bytes::from_static(b"{}")), open, Handover::Frames)
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

    /// An HTTP/1.1 connection's deadlines: the next head due 15 s after the last request.
    fn http1_deadlines() -> Deadlines {
        Deadlines { next_head: Some(Duration::from_secs(15)), ..deadlines() }
    }

    #[tokio::test(start_paused = true)]
    async fn over_http1_the_next_head_is_due_within_the_header_read_timeout_of_the_last_request() {
        let watch = Watch::new();
        let started = Instant::now();
        let served = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            drop(watch.request_started());
        };
        let (verdict, ()) = tokio::join!(watch.verdict(http1_deadlines()), served);
        assert_eq!(verdict, Verdict::NoRequest, "closed at once, as a head that never came");
        assert_eq!(started.elapsed(), Duration::from_millis(15_500), "the idle time before the head counts");
    }

    #[tokio::test(start_paused = true)]
    async fn over_http1_a_request_open_past_the_header_read_timeout_is_not_cut_and_the_next_head_is_timed_from_its_end()
     {
        let watch = Watch::new();
        let started = Instant::now();
        let served = async {
            let open = watch.request_started();
            // A slow tool: 100 s, looked at every 15 s meanwhile, none of them a deadline.
            tokio::time::sleep(Duration::from_secs(100)).await;
            drop(open);
        };
        let (verdict, ()) = tokio::join!(watch.verdict(http1_deadlines()), served);
        assert_eq!(verdict, Verdict::NoRequest);
        assert_eq!(started.elapsed(), Duration::from_secs(115), "15 s after the request's end, not later");
    }

    #[tokio::test(start_paused = true)]
    async fn over_http1_the_next_head_is_looked_for_within_its_own_timeout_after_a_request_ends() {
        // Looked at every 15 s (not every 30 s, the write timeout): a request open from 0 s to 5 s
        // is closed at 20 s, not at the 30 s look.
        let watch = Watch::new();
        let started = Instant::now();
        let open = watch.request_started();
        let served = async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(open);
        };
        let (verdict, ()) = tokio::join!(watch.verdict(http1_deadlines()), served);
        assert_eq!(verdict, Verdict::NoRequest);
        assert_eq!(started.elapsed(), Duration::from_secs(20));
    }

    #[tokio::test(start_paused = true)]
    async fn over_http1_the_next_head_is_not_timed_while_a_write_waits_and_is_timed_from_when_it_went_through()
     {
        // The last response is still on its way to a client slow to take it: the write timeout bounds
        // that wait, the head deadline starts once the write goes through (at 40 s here).
        let watch = Watch::new();
        drop(watch.request_started());
        watch.write_blocked();
        let started = Instant::now();
        let client = async {
            tokio::time::sleep(Duration::from_secs(40)).await;
            watch.write_unblocked();
        };
        let (verdict, ()) = tokio::join!(watch.verdict(http1_deadlines()), client);
        assert_eq!(verdict, Verdict::NoRequest);
        assert_eq!(started.elapsed(), Duration::from_secs(55), "15 s after the write went through");
    }

    #[tokio::test(start_paused = true)]
    async fn over_http1_an_idle_timeout_shorter_than_the_header_read_timeout_governs() {
        let watch = Watch::new();
        drop(watch.request_started());
        let started = Instant::now();
        let short_idle = Deadlines { idle: Duration::from_secs(5), ..http1_deadlines() };
        assert_eq!(watch.verdict(short_idle).await, Verdict::Idle, "closed politely, as idle");
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn over_http2_there_is_no_next_head_deadline_only_idleness() {
        let watch = Watch::new();
        drop(watch.request_started());
        let started = Instant::now();
        assert_eq!(watch.verdict(deadlines()).await, Verdict::Idle);
        assert_eq!(started.elapsed(), Duration::from_secs(60), "not at 15 s");
    }

    #[tokio::test(start_paused = true)]
    async fn the_waits_of_one_response_add_up_to_the_write_deadline() {
        let watch = Watch::new();
        let started = Instant::now();
        let mut body = Tracked::new(
            Full::new(Bytes::from(vec![b'x'; 3 * 16 * 1024])),
            watch.request_started(),
            Handover::Frames,
        );
        let trickle = async {
            // A client that takes a piece every 20 s: no single wait reaches 30 s, their sum does.
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_secs(20)).await;
                let _ = body.frame().await;
            }
        };
        tokio::select! {
            verdict = watch.verdict(deadlines()) => assert_eq!(verdict, Verdict::Stalled),
            () = trickle => panic!("the trickling client was served to the end"),
        }
        assert_eq!(started.elapsed(), Duration::from_secs(30), "20 s, then 10 s more of the second wait");
    }

    #[tokio::test(start_paused = true)]
    async fn over_http1_a_whole_frame_the_transport_never_finishes_is_stalled_at_the_write_deadline() {
        // HTTP/1.1 hands a megabyte over in one frame: a client that stops reading midway leaves hyper
        // writing it, never asking for more, and that wait is the one timed.
        let watch = Watch::new();
        let mut body = Tracked::new(
            Full::new(Bytes::from(vec![b'x'; 1 << 20])),
            watch.request_started(),
            Handover::Whole,
        );
        let frame = body.frame().await.expect("the one frame").expect("infallible");
        assert_eq!(frame.into_data().expect("data").len(), 1 << 20, "handed over whole");
        let started = Instant::now();
        assert_eq!(watch.verdict(deadlines()).await, Verdict::Stalled);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        drop(body);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_read_to_its_end_is_owed_nothing() {
        let watch = Watch::new();
        let body =
            Tracked::new(Full::new(Bytes::from_static(b"{}")), watch.request_started(), Handover::Frames);
        assert!(!body.is_end_stream(), "the end is held until the transport comes back");
        let collected = body.collect().await.expect("infallible").to_bytes();
        assert_eq!(collected, "{}");
        assert_eq!(watch.verdict(deadlines()).await, Verdict::Idle, "the body is gone: only idleness");
    }

    #[tokio::test(start_paused = true)]
    async fn bodies_that_end_out_of_order_each_keep_their_own_wait() {
        // HTTP/2: several responses live at once, dropped in any order. Each looks up its own entry:
        // the one left waiting is stalled at its own deadline, whatever became of the others.
        let watch = Watch::new();
        let body = |watch: &Arc<Watch>| {
            Tracked::new(Full::new(Bytes::from_static(b"{}")), watch.request_started(), Handover::Frames)
        };
        let (first, mut second, third) = (body(&watch), body(&watch), body(&watch));
        tokio::time::sleep(Duration::from_secs(10)).await;
        drop(third);
        drop(first);
        // The second is polled (its 10 s of waiting end) and hands its data over: it is owed again.
        let _ = second.frame().await;
        let looked = Instant::now();
        assert_eq!(watch.verdict(deadlines()).await, Verdict::Stalled);
        assert_eq!(looked.elapsed(), Duration::from_secs(20), "30 s in all: 10 s, then 20 s more");
        drop(second);
        assert!(watch.lock().owed.is_empty(), "no entry outlives its body");
    }
}
