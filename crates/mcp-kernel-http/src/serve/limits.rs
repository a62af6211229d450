//! Connection slots: a bound on connections in total and per peer address.
//!
//! Threat: a client (or a handful) that opens connections until the process runs out of descriptors
//! or memory — each held connection costs a task, hyper's buffers and whatever request it carries.
//! The total bound is taken *before* `accept`: past it, new connections wait in the kernel's listen
//! backlog (and are refused by the kernel when that is full) instead of costing the process anything.
//! The per-peer bound is checked at accept: a peer over it has its new connection closed at once, so
//! that one address cannot take every slot.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots of one listener.
#[derive(Debug)]
pub(crate) struct Slots {
    total: Arc<Semaphore>,
    per_peer: usize,
    peers: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One connection's hold on its slots; released when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    _total: OwnedSemaphorePermit,
    peer: IpAddr,
    peers: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

fn lock(peers: &Mutex<HashMap<IpAddr, usize>>) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
    peers.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Slots {
    /// At most `total` connections, and at most `per_peer` from one address.
    pub(crate) fn new(total: usize, per_peer: usize) -> Self {
        Self { total: Arc::new(Semaphore::new(total)), per_peer, peers: Arc::default() }
    }

    /// Waits until a connection may be accepted.
    pub(crate) async fn free(&self) -> OwnedSemaphorePermit {
        // The semaphore is never closed, so acquiring cannot fail; a closed one would admit nothing.
        match Arc::clone(&self.total).acquire_owned().await {
            Ok(permit) => permit,
            Err(_) => std::future::pending().await,
        }
    }

    /// Takes a slot for a connection from `peer`, or `None` when that address holds its share.
    pub(crate) fn admit(&self, total: OwnedSemaphorePermit, peer: IpAddr) -> Option<Slot> {
        let mut peers = lock(&self.peers);
        let held = peers.entry(peer).or_insert(0);
        if *held >= self.per_peer {
            return None;
        }
        *held += 1;
        Some(Slot { _total: total, peer, peers: Arc::clone(&self.peers) })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut peers = lock(&self.peers);
        if let Some(held) = peers.get_mut(&self.peer) {
            *held -= 1;
            if *held == 0 {
                peers.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

    #[tokio::test]
    async fn one_peer_holds_at_most_its_share_and_gets_it_back_on_close() {
        let slots = Slots::new(10, 2);
        let first = slots.admit(slots.free().await, A).expect("first");
        let _second = slots.admit(slots.free().await, A).expect("second");
        assert!(slots.admit(slots.free().await, A).is_none(), "a third from the same address");
        assert!(slots.admit(slots.free().await, B).is_some(), "another address is not affected");
        drop(first);
        assert!(slots.admit(slots.free().await, A).is_some(), "a closed connection frees its slot");
    }

    #[tokio::test]
    async fn past_the_total_a_connection_waits_for_a_slot() {
        let slots = Slots::new(1, 5);
        let held = slots.admit(slots.free().await, A).expect("first");
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), slots.free()).await;
        assert!(waiting.is_err(), "no slot while the only one is held");
        drop(held);
        let freed = tokio::time::timeout(std::time::Duration::from_secs(5), slots.free()).await;
        assert!(freed.is_ok(), "the slot comes back");
        assert!(lock(&slots.peers).is_empty(), "no entry is kept for an address with no connection");
    }
}
