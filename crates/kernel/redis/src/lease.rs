//! Leases: the running instance's claim on each task it runs, renewed by a heartbeat.
//!
//! `create` takes the task's lease (`<prefix>:lease:<id>`, `PX lease`) in the same script that stores
//! it; the router then holds the task's [`watch_running`](mcp_kernel_router::tasks::TaskStore::watch_running)
//! watch for as long as the run lasts, and while one lives ([`LeaseGuard`]) the heartbeat renews the
//! lease every third of its length — all of this instance's leases in one pipelined round trip per
//! beat. Renewal is `SET … PX`, not `PEXPIRE`: a lease that lapsed while Redis was unreachable (a pause
//! longer than the lease) is taken again at the next beat, so a task whose instance is alive is failed
//! only if a read came in between.
//!
//! The running instance itself never takes a lapse for its stop: its own read of a task whose lease it
//! holds here and finds lapsed takes the lease again (one more round trip) and leaves the task as it
//! is — its run, reading its task again after its watch ended, would otherwise be the read that fails
//! it, with its handler alive.
//!
//! When the instance stops, nothing renews its leases: after at most `lease`, the next read of each of
//! its running tasks (through any instance) fails it ("the instance running the task stopped"), and
//! the next create of its owner at the owner's bound no longer counts it (`create.lua`).
//!
//! The same pipeline carries the family's beat (`sequence.rs`): the number of its last publication
//! sent or dropped, on `<prefix>:wake`, so that a loss is noticed by the other instances even when
//! this one publishes nothing after it. An instance running no task sends the beat alone: one round
//! trip per beat.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::keys::Keys;
use crate::link::Link;
use crate::sequence::{Counter, encode};

/// The tasks whose lease this instance holds, with how many running watches hold each.
#[derive(Default)]
pub(crate) struct Leases {
    held: Mutex<HashMap<Arc<str>, usize>>,
}

impl Leases {
    /// Holds the lease of `id` until the guard is dropped.
    pub(crate) fn hold(self: &Arc<Self>, id: &str) -> LeaseGuard {
        let id: Arc<str> = Arc::from(id);
        *self.held.lock().unwrap_or_else(PoisonError::into_inner).entry(Arc::clone(&id)).or_insert(0) += 1;
        LeaseGuard { leases: Arc::clone(self), id }
    }

    /// The ids held now.
    pub(crate) fn held(&self) -> Vec<Arc<str>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).keys().cloned().collect()
    }

    /// Whether this instance holds the lease of `id` (it runs the task).
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).contains_key(id)
    }

    fn release(&self, id: &str) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(id) {
            *count -= 1;
            if *count == 0 {
                held.remove(id);
            }
        }
    }
}

/// One running watch's hold on a task's lease.
pub(crate) struct LeaseGuard {
    leases: Arc<Leases>,
    id: Arc<str>,
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        self.leases.release(&self.id);
    }
}

/// The heartbeat: every third of `lease`, in one round trip, publishes the beat of `counter` and
/// renews every held lease.
pub(crate) async fn heartbeat(
    leases: Arc<Leases>,
    link: Arc<Link>,
    keys: Keys,
    lease: Duration,
    holder: String,
    counter: Arc<Counter>,
) {
    let beat = lease / 3;
    let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
    let wake = keys.wake();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + beat, beat);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failures = 0u64;
    loop {
        ticks.tick().await;
        let held = leases.held();
        let mark = counter.mark();
        let mut pipeline = redis::pipe();
        let message = encode(&holder, mark.settled, mark.lost, ("beat", serde_json::Value::Bool(true)));
        pipeline.cmd("PUBLISH").arg(&wake).arg(message).ignore();
        for id in &held {
            pipeline.cmd("SET").arg(keys.lease(id)).arg(&holder).arg("PX").arg(lease_ms).ignore();
        }
        match link.pipeline::<()>(&pipeline).await {
            Ok(()) => {
                counter.beat_sent(mark);
                failures = 0;
            }
            // The first failure of a streak is a warning; the ones after it, while Redis stays away,
            // debug.
            Err(error) if failures == 0 => {
                failures += 1;
                tracing::warn!(%error, tasks = held.len(), "the heartbeat (beat and task leases) could not be sent");
            }
            Err(error) => {
                failures += 1;
                tracing::debug!(%error, failures, tasks = held.len(), "the heartbeat could not be sent yet");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_held_while_any_of_its_guards_lives() {
        let leases = Arc::new(Leases::default());
        let first = leases.hold("t");
        let second = leases.hold("t");
        drop(first);
        assert_eq!(leases.held().len(), 1);
        drop(second);
        assert!(leases.held().is_empty());
    }
}
