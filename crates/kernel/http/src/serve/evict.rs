//! Telling one connection to close, so that another client may have its slot ([`super::limits`] decides
//! which one and when).
//!
//! Threat: a connection told to close that does not go — an HTTP/2 peer that never acknowledges the
//! `GOAWAY`'s ping, a request that never ends — keeps its descriptor, and the accept loop counts it
//! (the over-commit bound in [`super::limits`]) until it does. So a told connection is given exactly
//! what a connection closed at a deadline is given: its open requests run to their end under the
//! connection's own deadlines (a response the client does not take is cut at the write timeout), and
//! once none is open it has [`GOODBYE`](super::GOODBYE) to say goodbye and is then dropped.
//!
//! How it is told is the graceful path of the deadlines: over HTTP/2 a `GOAWAY` (the streams already
//! opened are served, the client opens no more on it); an idle HTTP/1.1 connection is closed at once;
//! one with a request in flight answers that request with `connection: close` and closes after it. A
//! connection that has not yet shown its protocol has sent no request, and is closed. A
//! `subscriptions/listen` stream, which would never end by itself, hears the notice too
//! (`dispatch/listen/ending.rs`): it is sent its completion result and ends, so that its connection
//! can go.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::watch::Watch;
use crate::body::read::deadline_after;

/// How often a told connection with a request open is looked at again.
const LOOK: Duration = Duration::from_millis(250);

/// The word from the slots to one connection: another client needs its slot.
#[derive(Debug, Default)]
pub(crate) struct Notice {
    told: AtomicBool,
    wake: Notify,
}

impl Notice {
    /// Tells the connection to close (once; telling again changes nothing).
    pub(crate) fn tell(&self) {
        self.told.store(true, Ordering::Release);
        // Every waiter now (the connection and its listen streams), then a permit for one that comes
        // later: no telling is missed.
        self.wake.notify_waiters();
        self.wake.notify_one();
    }

    /// Whether the connection has been told.
    pub(crate) fn is_told(&self) -> bool {
        self.told.load(Ordering::Acquire)
    }

    /// Completes once the connection has been told (at once if it has been). Any number may wait.
    pub(crate) async fn told(&self) {
        loop {
            // Registered before the check: a telling between the two still wakes it.
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_told() {
                return;
            }
            notified.await;
        }
    }
}

/// Completes once the connection has had no open request for `grace`, counted from `told_at` at the
/// earliest: a told connection whose last request has ended has that long to close by itself.
pub(crate) async fn quiet(watch: &Watch, told_at: Instant, grace: Duration) {
    loop {
        let now = Instant::now();
        match watch.idle_since() {
            Some(since) => {
                let at = deadline_after(since.max(told_at), grace);
                if at <= now {
                    return;
                }
                tokio::time::sleep_until(at.min(deadline_after(now, LOOK))).await;
            }
            None => tokio::time::sleep_until(deadline_after(now, LOOK)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_told_connection_without_a_request_has_the_grace_from_the_telling() {
        let watch = Watch::new();
        tokio::time::sleep(Duration::from_secs(30)).await;
        let told_at = Instant::now();
        quiet(&watch, told_at, Duration::from_secs(1)).await;
        assert_eq!(told_at.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_told_connection_keeps_its_open_request_and_has_the_grace_after_it() {
        let watch = Watch::new();
        let open = watch.request_started();
        let told_at = Instant::now();
        let request = async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(open);
        };
        tokio::join!(quiet(&watch, told_at, Duration::from_secs(1)), request);
        let elapsed = told_at.elapsed();
        assert!(elapsed >= Duration::from_secs(6), "{elapsed:?}");
        assert!(elapsed <= Duration::from_secs(6) + LOOK, "{elapsed:?}");
    }

    #[tokio::test]
    async fn a_notice_is_heard_whether_it_comes_before_or_after_the_wait() {
        let early = Notice::default();
        early.tell();
        early.told().await;
        assert!(early.is_told());
        let late = std::sync::Arc::new(Notice::default());
        let teller = std::sync::Arc::clone(&late);
        let waiting = tokio::spawn(async move { late.told().await });
        tokio::task::yield_now().await;
        teller.tell();
        let heard = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert!(heard.is_ok(), "the wait ends when the notice comes");
    }

    #[tokio::test]
    async fn every_waiter_hears_the_notice() {
        let notice = std::sync::Arc::new(Notice::default());
        let mut waiting = tokio::task::JoinSet::new();
        for _ in 0..5 {
            let notice = std::sync::Arc::clone(&notice);
            waiting.spawn(async move { notice.told().await });
        }
        tokio::task::yield_now().await;
        notice.tell();
        let all = tokio::time::timeout(Duration::from_secs(5), async {
            while waiting.join_next().await.is_some() {}
        })
        .await;
        assert!(all.is_ok(), "the connection and each of its listen streams hear it");
    }
}
