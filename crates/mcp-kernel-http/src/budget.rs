//! The request-body budget: a bound on the bytes of request bodies held across the whole service.
//!
//! Threat: many clients that each start a body near the cap and then hold it — 1,000 HTTP/1.1
//! connections, or one HTTP/2 connection with many streams, each keeping almost a mebibyte — so that
//! memory grows with the number of clients, not with the work. The per-request cap and the body
//! deadline bound one request; this bounds their sum. Before a body is read its most possible bytes are
//! reserved: the length the body itself declares (`Content-Length`; none at all for an HTTP/1.1 request
//! with neither a length nor `transfer-encoding`, whose body is empty), or the cap when nothing bounds it
//! (HTTP/2 may omit the length). A request whose reservation does not fit is refused at once with 503
//! and `Retry-After`, before a byte of its body is read (a waiting request would hold its connection,
//! and its client's bytes in the socket, for the same budget it is waiting for). Once the body is read
//! the reservation shrinks to the bytes that arrived, and what remains is held until the answer is
//! ready — through the decode and the dispatch, while the message's decoded form is alive too — or, for
//! an answer streamed as SSE, until the stream opens. A slow tool with a small body holds a small
//! reservation.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// The default budget: 64 MiB of request bodies at once (64 cap-sized bodies, or tens of thousands
/// of ordinary requests).
pub const DEFAULT_BODY_BYTES_IN_FLIGHT: usize = 64 * 1_048_576;

/// The bytes of request bodies the service may hold at once.
#[derive(Debug, Clone)]
pub(crate) struct BodyBudget {
    bytes: Arc<Semaphore>,
    total: usize,
}

/// Bytes reserved for one request's body; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reserved(#[allow(dead_code, reason = "held for its drop")] Option<OwnedSemaphorePermit>);

impl Reserved {
    /// Gives back all but `bytes` of the reservation (the body turned out smaller than it could have been).
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        if let Some(permit) = &mut self.0
            && let Some(surplus) = permit.num_permits().checked_sub(bytes).filter(|&n| n > 0)
        {
            drop(permit.split(surplus));
        }
    }
}

impl BodyBudget {
    /// A budget of `total` bytes.
    pub(crate) fn new(total: usize) -> Self {
        let total = total.min(Semaphore::MAX_PERMITS);
        Self { bytes: Arc::new(Semaphore::new(total)), total }
    }

    /// The budget's size in bytes.
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// Reserves `bytes` (at most the per-request cap), or `None` when they do not fit now.
    pub(crate) fn reserve(&self, bytes: usize) -> Option<Reserved> {
        let Ok(bytes) = u32::try_from(bytes) else { return None };
        if bytes == 0 {
            return Some(Reserved(None));
        }
        match Arc::clone(&self.bytes).try_acquire_many_owned(bytes) {
            Ok(permit) => Some(Reserved(Some(permit))),
            Err(TryAcquireError::NoPermits | TryAcquireError::Closed) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_past_the_budget_are_refused_until_one_is_given_back() {
        let budget = BodyBudget::new(100);
        let first = budget.reserve(60).expect("fits");
        assert!(budget.reserve(41).is_none(), "60 + 41 > 100");
        let second = budget.reserve(40).expect("60 + 40 fits exactly");
        drop(first);
        assert!(budget.reserve(60).is_some(), "given back on drop");
        drop(second);
        assert!(budget.reserve(0).is_some(), "an empty body needs no bytes");
    }

    #[test]
    fn a_reservation_shrinks_to_the_bytes_that_arrived() {
        let budget = BodyBudget::new(100);
        let mut held = budget.reserve(100).expect("the whole budget");
        assert!(budget.reserve(1).is_none());
        held.shrink_to(10);
        assert!(budget.reserve(90).is_some(), "the surplus is given back at once");
        held.shrink_to(50);
        assert!(budget.reserve(91).is_none(), "a reservation never grows");
    }
}
