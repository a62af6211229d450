//! The request-body budget: a bound on the bytes of request bodies held across the whole service.
//!
//! Threat: many clients that each start a body near the cap and then hold it — 1,000 HTTP/1.1
//! connections, or one HTTP/2 connection with many streams, each keeping almost a mebibyte — so that
//! memory grows with the number of clients, not with the work. The per-request cap and the body
//! deadline bound one request; this bounds their sum.
//!
//! Bytes are reserved as they are held, so that a head alone (a declared length, or an HTTP/2 stream
//! with none) cannot claim more than a little of the budget:
//!
//! * **Before the body is read**, its first [`UPFRONT_BYTES`] (or all of it, when it declares less —
//!   an HTTP/1.1 request with neither a length nor `transfer-encoding` has an empty body and reserves
//!   nothing). A request whose first bytes do not fit is refused at once with 503 and `Retry-After`,
//!   before a byte of its body is read: waiting would hold its connection, and its client's bytes in the
//!   socket, for the budget it waits for.
//! * **While it is read**, each frame that takes the body past what is reserved reserves the rest of
//!   it; one that does not fit is refused the same way (the rest of the body is not read, and an
//!   HTTP/1.1 connection is closed).
//! * **Once it is read**, the reservation shrinks to the bytes that arrived, and is held until the
//!   response has been handed to the transport: through the decode and the dispatch, while the
//!   message's decoded form is alive, and while an answer of about the same size waits to be written.
//!   So a client that asks and does not read the answer keeps its reservation, and a slow tool with a
//!   small body holds a small one.

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

/// How much of a body is reserved before any of it is read.
pub(crate) const UPFRONT_BYTES: usize = 64 * 1024;

/// Bytes reserved for one request's body; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reserved {
    bytes: Arc<Semaphore>,
    held: Option<OwnedSemaphorePermit>,
}

impl Reserved {
    /// How many bytes are reserved.
    pub(crate) fn len(&self) -> usize {
        self.held.as_ref().map_or(0, OwnedSemaphorePermit::num_permits)
    }

    /// Reserves more, so that `bytes` are held in all; false (and nothing more held) when they do not fit.
    pub(crate) fn grow_to(&mut self, bytes: usize) -> bool {
        let Some(more) = bytes.checked_sub(self.len()).filter(|&more| more > 0) else { return true };
        let Ok(more) = u32::try_from(more) else { return false };
        match Arc::clone(&self.bytes).try_acquire_many_owned(more) {
            Ok(permit) => {
                match &mut self.held {
                    Some(held) => held.merge(permit),
                    None => self.held = Some(permit),
                }
                true
            }
            Err(TryAcquireError::NoPermits | TryAcquireError::Closed) => false,
        }
    }

    /// Gives back all but `bytes` of the reservation (the body turned out smaller than it could have been).
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        if let Some(permit) = &mut self.held
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

    /// Reserves `bytes`, or `None` when they do not fit now.
    pub(crate) fn reserve(&self, bytes: usize) -> Option<Reserved> {
        let mut reserved = Reserved { bytes: Arc::clone(&self.bytes), held: None };
        reserved.grow_to(bytes).then_some(reserved)
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
    fn a_reservation_grows_while_the_budget_has_room_and_not_past_it() {
        let budget = BodyBudget::new(100);
        let mut held = budget.reserve(10).expect("fits");
        assert!(held.grow_to(60));
        assert_eq!(held.len(), 60);
        let other = budget.reserve(30).expect("60 + 30 fits");
        assert!(!held.grow_to(71), "60 + 30 + 11 > 100");
        assert_eq!(held.len(), 60, "a failed growth holds nothing more");
        drop(other);
        assert!(held.grow_to(100));
        assert!(held.grow_to(50), "never shrinks by growing");
        assert_eq!(held.len(), 100);
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
