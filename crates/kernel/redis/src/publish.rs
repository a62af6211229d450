//! Publications leave through one bounded queue and one task, so that
//! [`ChangeHub::publish`](mcp_kernel_router::notify::ChangeHub::publish) and
//! [`TaskStore::wake`](mcp_kernel_router::tasks::TaskStore::wake) never block: the task sends what is
//! queued in one pipelined round trip (`PUBLISH` each), in order.
//!
//! Nothing is buffered without bound, and nothing is dropped silently: each publication takes its
//! number from the family's counter as it is queued (`sequence.rs`), and when the queue is full
//! (Redis too slow for what this instance publishes) or a publication cannot be sent (Redis
//! unreachable, or not answering within the response timeout), it is dropped with its number,
//! logged, and this instance's own listeners are ended — their feeds and watches end and the
//! subscription is made again. The other instances learn of the loss from the numbers: the next
//! publication or beat of this instance skips the dropped one, and says it lost one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::mpsc;

use crate::events::Events;
use crate::keys::Keys;
use crate::link::Link;
use crate::sequence::{Counter, encode};

/// How many publications may wait for the publishing task.
pub(crate) const QUEUE: usize = 1024;
/// The most publications sent in one round trip.
const BATCH: usize = 64;

/// One publication.
pub(crate) enum Outgoing {
    /// A change, as JSON, on `<prefix>:changes`.
    Change(Value),
    /// A task id, on `<prefix>:wake`.
    Wake(Arc<str>),
}

/// A publication and its number.
pub(crate) struct Numbered {
    seq: u64,
    outgoing: Outgoing,
}

/// The sending end of the queue.
pub(crate) struct Outbox {
    sender: mpsc::Sender<Numbered>,
    events: Arc<Events>,
    counter: Arc<Counter>,
    losing: Arc<AtomicBool>,
}

/// The receiving end of the queue, for [`publish_forever`].
pub(crate) struct Queue {
    receiver: mpsc::Receiver<Numbered>,
    /// Set by the first loss of a streak (logged at `error`), cleared by the next batch sent: the
    /// rest of the streak is logged at `debug`, so a flood or an outage writes one error line, not
    /// one per publication.
    losing: Arc<AtomicBool>,
}

impl Outbox {
    /// A queue numbered by `counter`, and its receiving end.
    pub(crate) fn new(events: Arc<Events>, counter: Arc<Counter>) -> (Self, Queue) {
        let (sender, receiver) = mpsc::channel(QUEUE);
        let losing = Arc::new(AtomicBool::new(false));
        (Self { sender, events, counter, losing: Arc::clone(&losing) }, Queue { receiver, losing })
    }

    /// Numbers and queues `outgoing`, never waiting.
    pub(crate) fn send(&self, outgoing: Outgoing) {
        // A closed queue: the family is stopping, and its listeners with it.
        let queued = self.counter.assign(|seq| {
            !matches!(
                self.sender.try_send(Numbered { seq, outgoing }),
                Err(mpsc::error::TrySendError::Full(_))
            )
        });
        if !queued {
            if self.losing.swap(true, Ordering::Relaxed) {
                tracing::debug!("the Redis publication queue is full; a publication was dropped");
            } else {
                tracing::error!(
                    "the Redis publication queue is full; publications are dropped until it drains"
                );
            }
            self.events.fail("the publication queue is full");
        }
    }
}

/// Sends what is queued, batch by batch, for as long as the family lives, each publication as
/// `{"from": id, "seq": …, "change" or "task": …}`.
pub(crate) async fn publish_forever(
    queue: Queue,
    link: Arc<Link>,
    events: Arc<Events>,
    keys: Keys,
    counter: Arc<Counter>,
    id: String,
) {
    let changes = keys.changes();
    let wake = keys.wake();
    let Queue { mut receiver, losing } = queue;
    let mut batch = Vec::with_capacity(BATCH);
    while receiver.recv_many(&mut batch, BATCH).await > 0 {
        // The first message after a loss says so.
        let mark = counter.mark();
        let count = batch.len() as u64;
        let mut pipeline = redis::pipe();
        let mut last = 0;
        for (n, Numbered { seq, outgoing }) in batch.drain(..).enumerate() {
            let lost = if n == 0 { mark.lost } else { None };
            last = seq;
            match outgoing {
                Outgoing::Change(change) => pipeline
                    .cmd("PUBLISH")
                    .arg(&changes)
                    .arg(encode(&id, seq, lost, ("change", change)))
                    .ignore(),
                Outgoing::Wake(task) => {
                    let message = encode(&id, seq, lost, ("task", Value::from(&*task)));
                    pipeline.cmd("PUBLISH").arg(&wake).arg(message).ignore()
                }
            };
        }
        match link.pipeline::<()>(&pipeline).await {
            Ok(()) => {
                counter.sent(last, mark);
                losing.store(false, Ordering::Relaxed);
            }
            Err(error) => {
                counter.dropped(last, count);
                if losing.swap(true, Ordering::Relaxed) {
                    tracing::debug!(%error, count, "publications to Redis could not be sent; dropped");
                } else {
                    tracing::error!(%error, count, "publications to Redis could not be sent; dropped until one is");
                }
                events.fail("a publication could not be sent");
            }
        }
    }
}
