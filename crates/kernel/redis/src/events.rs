//! This instance's listeners of the one subscription: the change feeds of its listen streams, the
//! watches of its tasks, and the waits of its sessions' server-to-client requests, fanned out from
//! what the subscription connection receives.
//!
//! Threat: **a listener silently deaf**. While the subscription is down, nothing published anywhere
//! reaches this instance. So when it drops, every feed, every watch and every wait here **ends** (the
//! listen streams end with their completion result, the runners read their tasks again, a wait
//! resolves `None`), and until it is back a new feed is refused ([`HubUnavailable`]), a new watch ends
//! at once and a new wait is refused. A publication lost on its way (a number skipped,
//! `sequence.rs`) ends the feeds and watches the same way ([`Events::interrupt`]); not the waits,
//! whose answers are never numbered publications (`replies.rs`). A feed is bounded
//! like the in-process hub's: a subscriber that falls `hub_capacity` changes behind has its feed
//! ended rather than skipped.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll};

use futures_channel::mpsc;
use futures_util::Stream;
use mcp_kernel_router::notify::{Change, ChangeFeed, HubUnavailable};
use serde_json::Value;
use tokio::sync::{Notify, oneshot, watch};

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
    /// The waits of each session's server-to-client requests, by request id (with the key that
    /// tells one registration from a later one of the same id).
    replies: Replies,
}

/// The waits of each session, by request id: each with its key and the sending end of its answer.
type Replies = HashMap<Arc<str>, HashMap<Arc<str>, (u64, oneshot::Sender<Value>)>>;

/// Why a wait was not registered.
#[derive(Debug)]
pub(crate) enum NotWaiting {
    /// The subscription is down (the reason): no answer could be heard.
    Down(String),
    /// A wait for this request of this session is registered here already.
    Duplicate,
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
                replies: HashMap::new(),
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
        let (feeds, watches, replies) = {
            let mut state = self.lock();
            if state.down.is_none() {
                tracing::warn!(reason, "the Redis subscription is down; every local listen and watch ends");
            }
            state.down = Some(reason.to_owned());
            (
                std::mem::take(&mut state.feeds),
                std::mem::take(&mut state.watches),
                std::mem::take(&mut state.replies),
            )
        };
        self.up.send_replace(false);
        // Dropped outside the lock: each sender dropped ends its feed, watch or wait.
        drop((feeds, watches, replies));
    }

    /// A publication was lost (`reason`): every feed and watch ends now, as when the subscription
    /// drops — the listen streams end with their completion result and the runners read their tasks
    /// again — while the subscription, which is up, goes on serving new ones. The waits go on: an
    /// answer is published by the script that takes it, never through the numbered queue.
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

    /// Registers a wait for the answer to the request `id` of `session`: its key (for
    /// [`Events::forget_reply`]) and its receiving end, which resolves with the answer or fails when
    /// the wait ends (the subscription dropped, a publication was lost, the session ended).
    pub(crate) fn expect_reply(
        &self,
        session: &str,
        id: &str,
    ) -> Result<(u64, oneshot::Receiver<Value>), NotWaiting> {
        let mut state = self.lock();
        if let Some(reason) = &state.down {
            return Err(NotWaiting::Down(reason.clone()));
        }
        if state.replies.get(session).is_some_and(|waits| waits.contains_key(id)) {
            return Err(NotWaiting::Duplicate);
        }
        let key = state.next_watch;
        state.next_watch += 1;
        let (sender, receiver) = oneshot::channel();
        state.replies.entry(Arc::from(session)).or_default().insert(Arc::from(id), (key, sender));
        Ok((key, receiver))
    }

    /// Hands `message` to the local wait for the request `id` of `session`, if there is one (it is
    /// then forgotten); whether there was.
    pub(crate) fn deliver_reply(&self, session: &str, id: &str, message: Value) -> bool {
        // A wait dropped meanwhile no longer wants it: the answer was handed over all the same.
        self.take_reply(session, id).map(|sender| sender.send(message)).is_some()
    }

    /// Whether a wait for the request `id` of `session` is registered here.
    pub(crate) fn waits_for(&self, session: &str, id: &str) -> bool {
        self.lock().replies.get(session).is_some_and(|waits| waits.contains_key(id))
    }

    /// The local wait for the request `id` of `session`, taken out (forgotten here), if there is one.
    pub(crate) fn take_reply(&self, session: &str, id: &str) -> Option<oneshot::Sender<Value>> {
        let mut state = self.lock();
        let waits = state.replies.get_mut(session)?;
        let taken = waits.remove(id);
        if waits.is_empty() {
            state.replies.remove(session);
        }
        taken.map(|(_, sender)| sender)
    }

    /// Ends every local wait of `session` (it was ended).
    pub(crate) fn end_session(&self, session: &str) {
        let waits = self.lock().replies.remove(session);
        drop(waits);
    }

    /// Forgets the wait registered as `key` for the request `id` of `session` (dropped).
    pub(crate) fn forget_reply(&self, session: &str, id: &str, key: u64) {
        let mut state = self.lock();
        if let Some(waits) = state.replies.get_mut(session) {
            if waits.get(id).is_some_and(|(k, _)| *k == key) {
                waits.remove(id);
            }
            if waits.is_empty() {
                state.replies.remove(session);
            }
        }
    }

    /// How many waits are registered here (for tests and logs).
    #[cfg(test)]
    pub(crate) fn waits(&self) -> usize {
        self.lock().replies.values().map(HashMap::len).sum()
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
    fn an_answer_reaches_its_wait_once_and_an_end_or_the_subscription_dropping_ends_the_waits() {
        let events = Arc::new(Events::new(4));
        assert!(matches!(events.expect_reply("s", "r"), Err(NotWaiting::Down(_))), "refused while down");
        events.set_up();
        let (_, mut answered) = events.expect_reply("s", "r").unwrap();
        assert!(matches!(events.expect_reply("s", "r"), Err(NotWaiting::Duplicate)));
        assert!(!events.deliver_reply("other", "r", Value::Null), "another session's id");
        assert!(events.deliver_reply("s", "r", Value::from(1)));
        assert_eq!(answered.try_recv().ok(), Some(Value::from(1)));
        assert!(!events.deliver_reply("s", "r", Value::from(2)), "once");
        let (_, mut ended) = events.expect_reply("s", "a").unwrap();
        let (_, mut kept) = events.expect_reply("t", "a").unwrap();
        events.end_session("s");
        assert!(matches!(ended.try_recv(), Err(oneshot::error::TryRecvError::Closed)));
        assert!(matches!(kept.try_recv(), Err(oneshot::error::TryRecvError::Empty)));
        events.interrupt("test");
        assert!(matches!(kept.try_recv(), Err(oneshot::error::TryRecvError::Empty)), "no answer's loss");
        events.set_down("test");
        assert!(matches!(kept.try_recv(), Err(oneshot::error::TryRecvError::Closed)));
        events.set_up();
        let (key, _dropped) = events.expect_reply("s", "b").unwrap();
        let (_, mut down) = events.expect_reply("s", "c").unwrap();
        events.forget_reply("s", "b", key + 1);
        assert_eq!(events.waits(), 2, "another registration's key forgets nothing");
        events.forget_reply("s", "b", key);
        assert_eq!(events.waits(), 1);
        events.set_down("test");
        assert!(matches!(down.try_recv(), Err(oneshot::error::TryRecvError::Closed)));
        assert_eq!(events.waits(), 0);
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
