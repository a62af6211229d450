//! This instance's listeners of the one subscription: the change feeds of its listen streams, and the
//! watches of its tasks, fanned out from what the subscription connection receives.
//!
//! Threat: **a listener silently deaf**. While the subscription is down, nothing published anywhere
//! reaches this instance. So when it drops, every feed and every watch here **ends** (the listen
//! streams end with their completion result, the runners read their tasks again), and until it is
//! back a new feed is refused ([`HubUnavailable`]) and a new watch ends at once. A publication lost
//! on its way (a number skipped, `sequence.rs`) ends them the same way ([`Events::interrupt`]). A feed is bounded
//! like the in-process hub's: a subscriber that falls `hub_capacity` changes behind has its feed
//! ended rather than skipped.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll};

use futures_channel::mpsc;
use futures_util::Stream;
use mcp_kernel_router::notify::{Change, ChangeFeed, HubUnavailable};
use tokio::sync::{Notify, watch};

use crate::lease::LeaseGuard;

/// How many feeds there may be before the ones whose listen is gone are let go, at least.
const PRUNE_AT: usize = 64;

/// The local listeners, and whether the subscription is up.
pub(crate) struct Events {
    state: Mutex<State>,
    capacity: usize,
    /// Asks the subscription task to drop its connection and subscribe again.
    pub(crate) resubscribe: Notify,
    up: watch::Sender<bool>,
}

struct State {
    /// Why the subscription is down (`None`: it is up).
    down: Option<String>,
    feeds: Vec<mpsc::Sender<Change>>,
    /// How many feeds there may be before the ones whose listen is gone are let go (doubling).
    prune_at: usize,
    watches: HashMap<Arc<str>, Vec<(u64, mpsc::Sender<()>)>>,
    next_watch: u64,
}

impl Events {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::new(State {
                down: Some("not subscribed to Redis yet".into()),
                feeds: Vec::new(),
                prune_at: PRUNE_AT,
                watches: HashMap::new(),
                next_watch: 0,
            }),
            capacity: capacity.max(1),
            resubscribe: Notify::new(),
            up: watch::Sender::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the subscription is up now (watchable).
    pub(crate) fn up(&self) -> watch::Receiver<bool> {
        self.up.subscribe()
    }

    /// Why the subscription is down now (`None`: it is up).
    pub(crate) fn down_reason(&self) -> Option<String> {
        self.lock().down.clone()
    }

    /// The subscription is up: new feeds and watches are served.
    pub(crate) fn set_up(&self) {
        self.lock().down = None;
        self.up.send_replace(true);
    }

    /// The subscription is down for `reason`: every feed and watch ends, and new ones are refused
    /// until it is up again.
    pub(crate) fn set_down(&self, reason: &str) {
        let (feeds, watches) = {
            let mut state = self.lock();
            if state.down.is_none() {
                tracing::warn!(reason, "the Redis subscription is down; every local listen and watch ends");
            }
            state.down = Some(reason.to_owned());
            (std::mem::take(&mut state.feeds), std::mem::take(&mut state.watches))
        };
        self.up.send_replace(false);
        // Dropped outside the lock: each sender dropped ends its feed or watch.
        drop((feeds, watches));
    }

    /// A publication was lost (`reason`): every feed and watch ends now, as when the subscription
    /// drops — the listen streams end with their completion result and the runners read their tasks
    /// again — while the subscription, which is up, goes on serving new ones.
    pub(crate) fn interrupt(&self, reason: &str) {
        let (feeds, watches) = {
            let mut state = self.lock();
            (std::mem::take(&mut state.feeds), std::mem::take(&mut state.watches))
        };
        let watches_count: usize = watches.values().map(Vec::len).sum();
        tracing::warn!(
            reason,
            feeds = feeds.len(),
            watches = watches_count,
            "a publication was lost; every local listen and watch ends"
        );
        drop((feeds, watches));
    }

    /// Ends everything now and has the subscription made again: what this instance publishes could
    /// not be sent, so its own listeners must not believe they heard everything.
    pub(crate) fn fail(&self, reason: &str) {
        self.set_down(reason);
        self.resubscribe.notify_one();
    }

    /// A new feed, or why none can be had now.
    pub(crate) fn subscribe(&self) -> Result<ChangeFeed, HubUnavailable> {
        let mut state = self.lock();
        if let Some(reason) = &state.down {
            return Err(HubUnavailable(reason.clone()));
        }
        // A bounded channel holds its buffer plus one message per sender: `capacity - 1` and the one
        // sender hold exactly `capacity`.
        let (sender, receiver) = mpsc::channel(self.capacity - 1);
        // A feed whose listen is gone is let go at the next change; with no change for a while,
        // listens opened and closed meanwhile are let go here, at doubling sizes (amortized once each).
        if state.feeds.len() >= state.prune_at {
            state.feeds.retain(|feed| !feed.is_closed());
            state.prune_at = (state.feeds.len() * 2).max(PRUNE_AT);
        }
        state.feeds.push(sender);
        Ok(ChangeFeed::new(receiver))
    }

    /// Delivers `change` to every local feed (a feed gone or too far behind is dropped: it ends).
    pub(crate) fn deliver_change(&self, change: &Change) {
        let mut state = self.lock();
        state.feeds.retain_mut(|feed| feed.try_send(change.clone()).is_ok());
    }

    /// Wakes every local watch of the task `id`.
    pub(crate) fn deliver_wake(&self, id: &str) {
        let mut state = self.lock();
        if let Some(watches) = state.watches.get_mut(id) {
            // One pending wake-up is enough: each says only "read again".
            watches.retain_mut(|(_, watch)| match watch.try_send(()) {
                Ok(()) => true,
                Err(error) => error.is_full(),
            });
        }
    }

    /// A watch of the task `id`; one that has ended already while the subscription is down. `lease`
    /// is held for as long as the watch lives.
    pub(crate) fn watch(self: &Arc<Self>, id: &str, lease: Option<LeaseGuard>) -> WatchStream {
        let (sender, receiver) = mpsc::channel(1);
        let mut state = self.lock();
        let key = state.next_watch;
        state.next_watch += 1;
        let id: Arc<str> = Arc::from(id);
        if state.down.is_none() {
            state.watches.entry(Arc::clone(&id)).or_default().push((key, sender));
        }
        WatchStream { receiver, events: Arc::downgrade(self), id, key, _lease: lease }
    }

    /// How many feeds and watches are registered (for tests and logs).
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let state = self.lock();
        (state.feeds.len(), state.watches.values().map(Vec::len).sum())
    }

    fn forget_watch(&self, id: &str, key: u64) {
        let mut state = self.lock();
        if let Some(watches) = state.watches.get_mut(id) {
            watches.retain(|(k, _)| *k != key);
            if watches.is_empty() {
                state.watches.remove(id);
            }
        }
    }
}

/// The wake-ups of one watch; dropping it unregisters it (and releases its lease, if it holds one).
pub(crate) struct WatchStream {
    receiver: mpsc::Receiver<()>,
    events: Weak<Events>,
    id: Arc<str>,
    key: u64,
    _lease: Option<LeaseGuard>,
}

impl Stream for WatchStream {
    type Item = ();

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<()>> {
        Pin::new(&mut self.receiver).poll_next(cx)
    }
}

impl Drop for WatchStream {
    fn drop(&mut self) {
        if let Some(events) = self.events.upgrade() {
            events.forget_watch(&self.id, self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{FutureExt, StreamExt};
    use mcp_kernel_router::notify::ChangeKind;

    fn tools() -> Change {
        Change::to_everyone(ChangeKind::ToolsListChanged)
    }

    #[test]
    fn while_down_a_feed_is_refused_and_a_watch_has_ended() {
        let events = Arc::new(Events::new(4));
        assert!(events.subscribe().is_err());
        let mut watch = events.watch("t", None);
        assert_eq!(watch.next().now_or_never(), Some(None));
        events.set_up();
        assert!(events.subscribe().is_ok());
    }

    #[test]
    fn going_down_ends_every_feed_and_watch() {
        let events = Arc::new(Events::new(4));
        events.set_up();
        let mut feed = events.subscribe().unwrap();
        let mut watch = events.watch("t", None);
        events.deliver_change(&tools());
        events.deliver_wake("t");
        events.set_down("test");
        assert_eq!(feed.next().now_or_never(), Some(Some(tools())), "what it holds is delivered");
        assert_eq!(feed.next().now_or_never(), Some(None), "then it ends");
        assert_eq!(watch.next().now_or_never(), Some(Some(())));
        assert_eq!(watch.next().now_or_never(), Some(None));
    }

    #[test]
    fn an_interruption_ends_every_feed_and_watch_and_new_ones_are_served() {
        let events = Arc::new(Events::new(4));
        events.set_up();
        let mut feed = events.subscribe().unwrap();
        let mut watch = events.watch("t", None);
        events.interrupt("test");
        assert_eq!(feed.next().now_or_never(), Some(None));
        assert_eq!(watch.next().now_or_never(), Some(None));
        assert!(events.subscribe().is_ok());
        let mut again = events.watch("t", None);
        events.deliver_wake("t");
        assert_eq!(again.next().now_or_never(), Some(Some(())));
    }

    #[test]
    fn feeds_dropped_without_a_change_in_between_are_not_kept() {
        let events = Arc::new(Events::new(4));
        events.set_up();
        let _kept = events.subscribe().unwrap();
        for _ in 0..10_000 {
            drop(events.subscribe().unwrap());
        }
        let (feeds, _) = events.counts();
        assert!(feeds <= 64, "{feeds} senders kept for one live feed");
    }

    #[test]
    fn a_lagged_feed_ends_and_a_dropped_watch_is_forgotten() {
        let events = Arc::new(Events::new(1));
        events.set_up();
        let mut feed = events.subscribe().unwrap();
        events.deliver_change(&tools());
        events.deliver_change(&tools());
        assert_eq!(feed.next().now_or_never(), Some(Some(tools())));
        assert_eq!(feed.next().now_or_never(), Some(None));
        let watch = events.watch("t", None);
        assert_eq!(events.counts(), (0, 1));
        drop(watch);
        assert_eq!(events.counts(), (0, 0));
    }
}
