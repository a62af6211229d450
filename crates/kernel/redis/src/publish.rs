//! Publications leave through one bounded queue and one task, so that
//! [`ChangeHub::publish`](mcp_kernel_router::notify::ChangeHub::publish) and
//! [`TaskStore::wake`](mcp_kernel_router::tasks::TaskStore::wake) never block: the task sends what is
//! queued in one pipelined round trip (`PUBLISH` each), in order.
//!
//! Nothing is buffered without bound, and nothing is dropped silently: when the queue is full (Redis
//! too slow for what this instance publishes) or a publication cannot be sent (Redis unreachable), it
//! is dropped, logged, and this instance's own listeners are ended — their feeds and watches end and
//! the subscription is made again — so that no local listen goes on believing it heard everything.
//! Listeners on other instances learn of an unreachable Redis through their own subscription.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::events::Events;
use crate::keys::Keys;
use crate::link::Link;

/// How many publications may wait for the publishing task.
pub(crate) const QUEUE: usize = 1024;
/// The most publications sent in one round trip.
const BATCH: usize = 64;

/// One publication.
pub(crate) enum Outgoing {
    /// A change, as JSON, on `<prefix>:changes`.
    Change(String),
    /// A task id, on `<prefix>:wake`.
    Wake(Arc<str>),
}

/// The sending end of the queue.
pub(crate) struct Outbox {
    sender: mpsc::Sender<Outgoing>,
    events: Arc<Events>,
}

impl Outbox {
    /// A queue and its receiving end (for [`publish_forever`]).
    pub(crate) fn new(events: Arc<Events>) -> (Self, mpsc::Receiver<Outgoing>) {
        let (sender, receiver) = mpsc::channel(QUEUE);
        (Self { sender, events }, receiver)
    }

    /// Queues `outgoing`, never waiting.
    pub(crate) fn send(&self, outgoing: Outgoing) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.sender.try_send(outgoing) {
            tracing::error!("the Redis publication queue is full; a publication was dropped");
            self.events.fail("the publication queue is full");
        }
    }
}

/// Sends what is queued, batch by batch, for as long as the family lives.
pub(crate) async fn publish_forever(
    mut receiver: mpsc::Receiver<Outgoing>,
    link: Arc<Link>,
    events: Arc<Events>,
    keys: Keys,
) {
    let changes = keys.changes();
    let wake = keys.wake();
    let mut batch = Vec::with_capacity(BATCH);
    while receiver.recv_many(&mut batch, BATCH).await > 0 {
        let mut pipeline = redis::pipe();
        for outgoing in batch.drain(..) {
            match outgoing {
                Outgoing::Change(json) => pipeline.cmd("PUBLISH").arg(&changes).arg(json).ignore(),
                Outgoing::Wake(id) => pipeline.cmd("PUBLISH").arg(&wake).arg(&*id).ignore(),
            };
        }
        if let Err(error) = link.pipeline::<()>(&pipeline).await {
            tracing::error!(%error, "publications to Redis could not be sent; dropped");
            events.fail("a publication could not be sent");
        }
    }
}
