//! The listen slots: how many `subscriptions/listen` streams are open at once, in all and per client.
//!
//! Threat: **a flood of listens**. A listen stream is a request that stays open for as long as the
//! client keeps it: each one holds a subscription to the change hub, a task, a queue of pending
//! notifications and its HTTP stream. Without a bound, one client opening streams by the thousand
//! (16 per HTTP/2 connection, 512 connections) holds the memory and the hub's fan-out for everyone.
//!
//! So a stream takes a slot before it opens and gives it back when its body is dropped (the client
//! closed it, the connection ended, or the stream was ended and written out). A slot is refused when
//! the service holds [`DEFAULT_MAX_LISTENS`] (or the host's bound) or when the request's client holds
//! its share ([`DEFAULT_MAX_LISTENS_PER_CLIENT`]) — the same client the body budget charges
//! (`client.rs`: the principal `authorize` names, else the address prefix), so one address cannot
//! take every slot and another address, or another principal, still gets its stream. Requests with
//! neither a principal nor an address are one unknown client held to the total alone, as the body
//! budget holds them. A refusal is answered 503 with `retry-after` before any byte of a stream.

use crate::body::budget::{self, BodyBudget, Reserved};
use crate::client::Client;

/// How many listen streams the service holds open at once by default (all clients together).
pub const DEFAULT_MAX_LISTENS: usize = 4_096;

/// How many listen streams one client may hold open at once by default.
pub const DEFAULT_MAX_LISTENS_PER_CLIENT: usize = 32;

/// Which bound a refused stream met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// Its client holds its share.
    ClientShare,
    /// Every slot of the service is held.
    Total,
}

/// The open listen streams of one service, counted in all and per client: the body budget's ledger,
/// counting streams (one unit each) instead of bytes.
#[derive(Debug, Clone)]
pub(crate) struct ListenSlots {
    ledger: BodyBudget,
}

/// One open stream's slot, given back when dropped.
#[derive(Debug)]
pub(crate) struct ListenSlot {
    _held: Reserved,
}

impl ListenSlots {
    /// At most `total` streams (at least 1), of which one client may hold `per_client` (at least 1,
    /// at most `total`).
    pub(crate) fn new(total: usize, per_client: usize) -> Self {
        let total = total.max(1);
        Self { ledger: BodyBudget::new(total, per_client.clamp(1, total)) }
    }

    /// The bound in all.
    pub(crate) fn total(&self) -> usize {
        self.ledger.total()
    }

    /// One client's bound.
    pub(crate) fn per_client(&self) -> usize {
        self.ledger.per_client()
    }

    /// A slot for one of `client`'s streams, or which bound is met.
    pub(crate) fn take(&self, client: Client) -> Result<ListenSlot, Full> {
        let mut held = self.ledger.open(client);
        match held.grow_to(1) {
            Ok(()) => Ok(ListenSlot { _held: held }),
            Err(budget::Full::ClientShare) => Err(Full::ClientShare),
            Err(budget::Full::Budget) => Err(Full::Total),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::AddressPrefixes;

    fn client(n: u8) -> Client {
        Client::Network(AddressPrefixes::default().network([192, 0, 2, n].into()))
    }

    #[test]
    fn one_client_holds_at_most_its_share_and_another_still_gets_a_slot() {
        let slots = ListenSlots::new(10, 3);
        let held: Vec<_> = (0..3).map(|_| slots.take(client(1)).expect("within the share")).collect();
        assert_eq!(slots.take(client(1)).err(), Some(Full::ClientShare), "the fourth of one client");
        let other = slots.take(client(2)).expect("another client has its whole share");
        drop(held);
        assert!(slots.take(client(1)).is_ok(), "a share comes back with its streams");
        drop(other);
    }

    #[test]
    fn past_the_total_every_client_is_refused_until_a_slot_is_given_back() {
        let slots = ListenSlots::new(4, 3);
        let a: Vec<_> = (0..3).map(|_| slots.take(client(1)).expect("a's share")).collect();
        let b = slots.take(client(2)).expect("the fourth slot");
        assert_eq!(slots.take(client(3)).err(), Some(Full::Total), "4 of 4 held");
        drop(b);
        let c = slots.take(client(3)).expect("the slot given back");
        drop((a, c));
        assert_eq!(slots.ledger.held(), 0);
        assert!(slots.ledger.no_client_holds_any(), "no entry for a client holding nothing");
    }

    #[test]
    fn requests_whose_client_is_unknown_are_held_to_the_total_alone() {
        let slots = ListenSlots::new(5, 1);
        let held: Vec<_> = (0..5).map(|_| slots.take(Client::Unknown).expect("only the total")).collect();
        assert_eq!(slots.take(Client::Unknown).err(), Some(Full::Total));
        drop(held);
    }

    #[test]
    fn bounds_are_at_least_one_and_a_share_never_exceeds_the_total() {
        let slots = ListenSlots::new(0, 0);
        assert_eq!((slots.total(), slots.per_client()), (1, 1));
        let slots = ListenSlots::new(8, 100);
        assert_eq!(slots.per_client(), 8);
    }
}
