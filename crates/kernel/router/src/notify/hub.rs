//! Where changes travel: the [`ChangeHub`] a server publishes to and every listen stream subscribes to.
//!
//! The default, [`InProcessHub`], fans each change out inside one process: a bounded channel per
//! subscriber, runtime-agnostic. A hub shared by many instances (one engine every instance publishes to
//! and reads from) implements the same two calls.
//!
//! Threat: a listener that silently stops receiving. A client that holds a listen stream believes it
//! will be told of every change it asked for; a stream that stays open after its source stopped
//! delivering breaks that belief without a trace. So a feed never skips: when a subscriber falls more
//! than the hub's capacity behind, or the hub loses its own source (a shared engine's connection), the
//! feed **ends**, and every listen stream reading it ends with its completion result, so the client
//! knows to listen again (and to list again).

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use futures_channel::mpsc;
use futures_util::{Stream, StreamExt};

use crate::notify::change::Change;

/// The changes a subscriber receives, in publication order, until the feed ends.
///
/// A feed that ends is over for good: the hub fell behind for this subscriber, or lost its source.
pub struct ChangeFeed {
    stream: Pin<Box<dyn Stream<Item = Change> + Send>>,
}

impl std::fmt::Debug for ChangeFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeed").finish_non_exhaustive()
    }
}

impl ChangeFeed {
    /// A feed reading `stream`: every item is one change; the stream's end is the feed's.
    pub fn new(stream: impl Stream<Item = Change> + Send + 'static) -> Self {
        Self { stream: Box::pin(stream.fuse()) }
    }

    /// A feed that has ended already.
    pub fn ended() -> Self {
        Self::new(futures_util::stream::empty())
    }

    /// The next change, or `None` once the feed has ended.
    pub async fn next(&mut self) -> Option<Change> {
        self.stream.next().await
    }
}

/// Where changes are published and read: shared by every server (and every replacement of it) that
/// announces to the same listeners.
pub trait ChangeHub: Send + Sync + 'static {
    /// Publishes `change` to every current subscriber (of every instance that shares the hub).
    /// Never blocks: a subscriber too far behind has its feed ended, it is not waited for.
    fn publish(&self, change: Change);

    /// A new subscriber: every change published from now on, in order, until the feed ends.
    fn subscribe(&self) -> ChangeFeed;

    /// A new subscriber, or `Err` when the hub cannot deliver now (a shared hub whose engine is
    /// unreachable): the listen that asked is refused with a retryable error instead of acknowledged
    /// and ended at once. By default, [`ChangeHub::subscribe`], always `Ok`.
    fn try_subscribe(&self) -> Result<ChangeFeed, HubUnavailable> {
        Ok(self.subscribe())
    }
}

/// A hub that cannot deliver changes now (its engine is unreachable); the reason is logged, never sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the change hub is unreachable: {0}")]
pub struct HubUnavailable(pub String);

/// How many changes a subscriber of an [`InProcessHub`] may fall behind before its feed ends, by
/// default.
pub const DEFAULT_HUB_CAPACITY: usize = 256;

/// The default hub: each subscriber has a bounded channel in this process. Cheap to clone; clones
/// share the subscribers.
#[derive(Clone)]
pub struct InProcessHub {
    shared: Arc<Fanout>,
}

struct Fanout {
    subscribers: Mutex<Vec<mpsc::Sender<Change>>>,
    capacity: usize,
}

impl std::fmt::Debug for InProcessHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessHub").field("subscribers", &self.subscribers()).finish()
    }
}

impl Default for InProcessHub {
    fn default() -> Self {
        Self::new()
    }
}

impl InProcessHub {
    /// A hub whose subscribers may fall [`DEFAULT_HUB_CAPACITY`] changes behind.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_HUB_CAPACITY)
    }

    /// A hub whose subscribers may fall `capacity` changes behind (at least 1) before their feed ends.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { shared: Arc::new(Fanout { subscribers: Mutex::default(), capacity: capacity.max(1) }) }
    }

    /// How many feeds are subscribed now (a feed dropped since the last publication may still count).
    pub fn subscribers(&self) -> usize {
        self.shared.subscribers.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl ChangeHub for InProcessHub {
    fn publish(&self, change: Change) {
        let mut subscribers = self.shared.subscribers.lock().unwrap_or_else(PoisonError::into_inner);
        // A subscriber that is gone, or `capacity` changes behind, is dropped: a lagged feed delivers
        // what it holds, then ends, rather than skip this change.
        subscribers.retain_mut(|subscriber| subscriber.try_send(change.clone()).is_ok());
    }

    fn subscribe(&self) -> ChangeFeed {
        // A bounded channel holds its buffer plus one message per sender: `capacity - 1` and the one
        // sender hold exactly `capacity`.
        let (sender, receiver) = mpsc::channel(self.shared.capacity - 1);
        self.shared.subscribers.lock().unwrap_or_else(PoisonError::into_inner).push(sender);
        ChangeFeed::new(receiver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::change::ChangeKind;

    fn tools() -> Change {
        Change::to_everyone(ChangeKind::ToolsListChanged)
    }

    #[tokio::test]
    async fn a_subscriber_receives_every_change_in_order() {
        let hub = InProcessHub::new();
        let mut feed = hub.subscribe();
        hub.publish(tools());
        hub.publish(Change::to_everyone(ChangeKind::PromptsListChanged));
        assert_eq!(feed.next().await, Some(tools()));
        assert_eq!(feed.next().await.map(|c| c.kind), Some(ChangeKind::PromptsListChanged));
    }

    #[tokio::test]
    async fn a_subscriber_too_far_behind_has_its_feed_ended_not_skipped() {
        let hub = InProcessHub::with_capacity(2);
        let mut feed = hub.subscribe();
        for _ in 0..3 {
            hub.publish(tools());
        }
        assert_eq!(feed.next().await, Some(tools()), "what it holds is delivered");
        assert_eq!(feed.next().await, Some(tools()));
        assert_eq!(
            feed.next().await,
            None,
            "then the lagged feed ends: the third change is not skipped silently"
        );
        assert_eq!(feed.next().await, None, "and stays ended");
        assert_eq!(hub.subscribers(), 0);
    }

    #[tokio::test]
    async fn a_subscriber_at_its_capacity_misses_nothing() {
        let hub = InProcessHub::with_capacity(3);
        let mut feed = hub.subscribe();
        for _ in 0..3 {
            hub.publish(tools());
        }
        for _ in 0..3 {
            assert_eq!(feed.next().await, Some(tools()));
        }
        hub.publish(tools());
        assert_eq!(feed.next().await, Some(tools()), "room again once read");
    }

    #[test]
    fn a_dropped_feed_is_forgotten_at_the_next_publication() {
        let hub = InProcessHub::new();
        drop(hub.subscribe());
        assert_eq!(hub.subscribers(), 1);
        hub.publish(tools());
        assert_eq!(hub.subscribers(), 0);
    }

    #[tokio::test]
    async fn a_feed_ends_when_the_hub_is_gone() {
        let hub = InProcessHub::new();
        let mut feed = hub.subscribe();
        drop(hub);
        assert_eq!(feed.next().await, None);
    }

    #[test]
    fn publishing_with_nobody_subscribed_is_fine() {
        InProcessHub::new().publish(tools());
    }
}
