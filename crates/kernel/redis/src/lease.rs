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
//! When the instance stops, nothing renews its leases: after at most `lease`, the next read of each of
//! its running tasks (through any instance) fails it ("the instance running the task stopped").

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::keys::Keys;
use crate::link::Link;

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

/// The heartbeat: renews every held lease, every third of `lease`, in one round trip.
pub(crate) async fn heartbeat(
    leases: Arc<Leases>,
    link: Arc<Link>,
    keys: Keys,
    lease: Duration,
    holder: String,
) {
    let beat = lease / 3;
    let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + beat, beat);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let held = leases.held();
        if held.is_empty() {
            continue;
        }
        let mut pipeline = redis::pipe();
        for id in &held {
            pipeline.cmd("SET").arg(keys.lease(id)).arg(&holder).arg("PX").arg(lease_ms).ignore();
        }
        if let Err(error) = link.pipeline::<()>(&pipeline).await {
            tracing::warn!(%error, tasks = held.len(), "the task leases could not be renewed");
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
