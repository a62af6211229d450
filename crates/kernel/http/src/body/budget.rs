//! The request-body budget: a bound on the bytes of request bodies held across the whole service, and
//! a share of it per client.
//!
//! Threats:
//!
//! * **Many held bodies**: many connections (1,000 HTTP/1.1 ones, or HTTP/2 streams by the thousand)
//!   that each start a body near the cap and then hold it, so that memory grows with the number of
//!   clients, not with the work. The per-request cap and the body deadline bound one request; the
//!   budget bounds their sum.
//! * **Heads that spend the budget**: a request head costs a client a few dozen bytes; if it reserved
//!   part of the budget before its body arrived, a thousand heads (64 HTTP/2 connections × 16 streams
//!   with no DATA, or HTTP/1.1 heads declaring a mebibyte) would spend the budget without sending a
//!   byte of body, and every other client would be refused.
//! * **One client spending everyone's budget**: a client that holds bodies on many connections at
//!   once, each within the cap and the deadline, renewing them as they expire.
//!
//! So the budget counts bytes of buffer the service has allocated for bodies, and nothing else, and
//! each client ([`crate::client`]: its principal, else its address prefix) may hold only its share:
//!
//! * **Before the body is read** nothing is charged. The budget and the client's share are only
//!   *checked* for the body's first bytes ([`FIRST_BYTES`], or all of it when it declares less): a
//!   request that could not get them now is refused at once with 503 and `Retry-After`, before a
//!   byte of its body is read, rather than holding its connection while it waits. A head alone
//!   holds nothing, however many there are.
//! * **As the body arrives** its buffer is allocated and charged: it doubles as bytes arrive, at
//!   least to what must fit and never past the declared length, so a buffer is never more than twice
//!   the bytes that arrived (a body that arrives whole in one frame, as most do, is one exact
//!   allocation). A growth that does not fit the budget or the client's share is refused the same way
//!   (the rest of the body is not read, and an HTTP/1.1 connection is closed).
//! * **Once it is read**, the buffer is trimmed to the bytes that arrived and the charge with it; the
//!   charge is held until the response has been handed to the transport: through the decode and the
//!   dispatch, while the message's decoded form is alive, and while an answer of about the same size
//!   waits to be written. So a client that asks and does not read the answer keeps its charge, and a
//!   slow tool with a small body holds a small one.
//!
//! The arithmetic: holding budget takes sending bytes, at least half a byte per byte held. A client
//! holds at most its share (default an eighth of the budget, 8 MiB of the default 64 MiB: eight
//! cap-sized bodies at once, or the same bytes spread over many small ones), so one client — one
//! principal, one IPv4 address, one IPv6 `/64` — cannot spend more than an eighth, and filling the
//! budget takes eight clients each sending at least 4 MiB and holding it. Requests whose client is
//! unknown (no principal, no address: a service mounted in another server without a
//! [`PeerAddr`](crate::PeerAddr)) cannot be told apart, and share the whole budget.
//!
//! A host that expects fewer, larger clients raises the share; one behind a proxy that does not forward
//! the client's address either names principals in `authorize` or raises the share to the budget
//! (every anonymous request then comes from the proxy's one address).

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::client::Client;

/// The default budget: 64 MiB of request bodies at once (64 cap-sized bodies, or tens of thousands
/// of ordinary requests).
pub const DEFAULT_BODY_BYTES_IN_FLIGHT: usize = 64 * 1_048_576;

/// The default share of one client, as a fraction of the budget: one eighth (8 MiB of the default
/// budget), and never less than one body of the cap.
pub const DEFAULT_CLIENT_SHARE_DIVISOR: usize = 8;

/// How much of a body must fit, before any of it is read, for the read to begin.
pub(crate) const FIRST_BYTES: usize = 64 * 1024;

/// Why bytes could not be charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// The client already holds its share.
    ClientShare,
    /// The budget is spent.
    Budget,
}

/// The bytes of request bodies the service may hold at once, and each client's share of them. The
/// same ledger counts listen streams (`dispatch/listen/slots.rs`), one unit each.
#[derive(Debug, Clone)]
pub(crate) struct BodyBudget {
    ledger: Arc<Ledger>,
}

#[derive(Debug)]
struct Ledger {
    total: usize,
    per_client: usize,
    /// The keys clients are hashed with, once per request ([`Key`]).
    keys: RandomState,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes charged in all.
    held: usize,
    /// Bytes charged per client; a client holding nothing has no entry.
    by_client: HashMap<Key, usize, BuildHasherDefault<KeyHasher>>,
}

/// A client as the ledger files it: hashed once, with the ledger's random keys, when its request opens
/// its charge, so that the look-ups of one request (a check, a charge, giving it back) hash nothing
/// again. Two keys are equal when their clients are; the hash only picks the bucket, and a client
/// cannot choose it without the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    hash: u64,
    client: Client,
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The hasher of the ledger's map: a [`Key`]'s hash, as it was made.
#[derive(Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is ever called (`Key::hash`); anything else is folded in all the same.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Ledger {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `client`'s key in this ledger.
    fn key(&self, client: Client) -> Key {
        Key { hash: self.keys.hash_one(client), client }
    }

    /// Whether `more` bytes for the client of `key` fit now.
    fn room(&self, state: &State, key: &Key, more: usize) -> Result<(), Full> {
        if state.held.saturating_add(more) > self.total {
            return Err(Full::Budget);
        }
        if key.client == Client::Unknown {
            return Ok(());
        }
        let mine = state.by_client.get(key).copied().unwrap_or(0);
        if mine.saturating_add(more) > self.per_client {
            return Err(Full::ClientShare);
        }
        Ok(())
    }
}

/// The bytes charged for one request's body; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reserved {
    ledger: Arc<Ledger>,
    key: Key,
    len: usize,
}

impl Reserved {
    /// How many bytes are charged.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether `bytes` more would fit now, beside what this charge holds (nothing is charged).
    pub(crate) fn check(&self, bytes: usize) -> Result<(), Full> {
        let state = self.ledger.lock();
        self.ledger.room(&state, &self.key, bytes)
    }

    /// Charges more, so that `bytes` are held in all; refused (and nothing more held) when they do not
    /// fit the budget or the client's share.
    pub(crate) fn grow_to(&mut self, bytes: usize) -> Result<(), Full> {
        let Some(more) = bytes.checked_sub(self.len).filter(|&more| more > 0) else { return Ok(()) };
        let mut state = self.ledger.lock();
        self.ledger.room(&state, &self.key, more)?;
        state.held += more;
        *state.by_client.entry(self.key).or_insert(0) += more;
        self.len = bytes;
        Ok(())
    }

    /// Gives back all but `bytes` of the charge (the body turned out smaller than its buffer).
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        if let Some(surplus) = self.len.checked_sub(bytes).filter(|&n| n > 0) {
            give_back(&self.ledger, &self.key, surplus);
            self.len = bytes;
        }
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if self.len > 0 {
            give_back(&self.ledger, &self.key, self.len);
        }
    }
}

fn give_back(ledger: &Ledger, key: &Key, bytes: usize) {
    let mut state = ledger.lock();
    state.held = state.held.saturating_sub(bytes);
    if let Some(mine) = state.by_client.get_mut(key) {
        *mine = mine.saturating_sub(bytes);
        if *mine == 0 {
            state.by_client.remove(key);
        }
    }
}

impl BodyBudget {
    /// A budget of `total` bytes, of which one client may hold `per_client` (clamped to the total).
    pub(crate) fn new(total: usize, per_client: usize) -> Self {
        let ledger = Ledger {
            total,
            per_client: per_client.min(total),
            keys: RandomState::new(),
            state: Mutex::default(),
        };
        Self { ledger: Arc::new(ledger) }
    }

    /// The budget's size in bytes.
    pub(crate) fn total(&self) -> usize {
        self.ledger.total
    }

    /// One client's share in bytes.
    pub(crate) fn per_client(&self) -> usize {
        self.ledger.per_client
    }

    /// Whether `bytes` more for `client` would fit now (nothing is charged).
    #[cfg(test)]
    pub(crate) fn check(&self, client: Client, bytes: usize) -> Result<(), Full> {
        self.open(client).check(bytes)
    }

    /// An empty charge for one of `client`'s bodies, to grow as its bytes arrive.
    pub(crate) fn open(&self, client: Client) -> Reserved {
        Reserved { ledger: Arc::clone(&self.ledger), key: self.ledger.key(client), len: 0 }
    }

    /// How many units are held in all.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.ledger.lock().held
    }

    /// Whether no client has an entry (a client holding nothing has none).
    #[cfg(test)]
    pub(crate) fn no_client_holds_any(&self) -> bool {
        self.ledger.lock().by_client.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::AddressPrefixes;

    fn client(n: u8) -> Client {
        Client::Network(AddressPrefixes::default().network([192, 0, 2, n].into()))
    }

    fn charged(budget: &BodyBudget, who: Client, bytes: usize) -> Result<Reserved, Full> {
        let mut reserved = budget.open(who);
        reserved.grow_to(bytes)?;
        Ok(reserved)
    }

    #[test]
    fn charges_past_the_budget_are_refused_until_one_is_given_back() {
        let budget = BodyBudget::new(100, 100);
        let first = charged(&budget, client(1), 60).expect("fits");
        assert_eq!(charged(&budget, client(2), 41).err(), Some(Full::Budget), "60 + 41 > 100");
        let second = charged(&budget, client(2), 40).expect("60 + 40 fits exactly");
        drop(first);
        assert!(charged(&budget, client(3), 60).is_ok(), "given back on drop");
        drop(second);
        assert!(budget.ledger.lock().by_client.is_empty(), "no entry for a client holding nothing");
    }

    #[test]
    fn one_client_holds_at_most_its_share_and_others_are_not_affected() {
        let budget = BodyBudget::new(100, 30);
        let a = charged(&budget, client(1), 20).expect("within the share");
        assert_eq!(charged(&budget, client(1), 11).err(), Some(Full::ClientShare), "20 + 11 > 30");
        assert_eq!(budget.check(client(1), 11), Err(Full::ClientShare));
        assert_eq!(budget.check(client(2), 30), Ok(()), "another client has its whole share");
        let b = charged(&budget, client(2), 30).expect("another client's share");
        drop(a);
        assert!(charged(&budget, client(1), 30).is_ok(), "a share comes back with its bytes");
        drop(b);
    }

    #[test]
    fn a_check_charges_nothing_so_heads_cannot_spend_the_budget() {
        let budget = BodyBudget::new(100, 100);
        for _ in 0..1_000 {
            assert_eq!(budget.check(client(1), 64), Ok(()));
            let _opened = budget.open(client(1));
        }
        assert_eq!(budget.ledger.lock().held, 0);
        assert!(charged(&budget, client(2), 100).is_ok(), "the whole budget is still there");
    }

    #[test]
    fn a_charge_grows_while_there_is_room_and_not_past_it() {
        let budget = BodyBudget::new(100, 100);
        let mut held = charged(&budget, client(1), 10).expect("fits");
        assert_eq!(held.grow_to(60), Ok(()));
        assert_eq!(held.len(), 60);
        let other = charged(&budget, client(2), 30).expect("60 + 30 fits");
        assert_eq!(held.grow_to(71), Err(Full::Budget), "60 + 30 + 11 > 100");
        assert_eq!(held.len(), 60, "a failed growth holds nothing more");
        drop(other);
        assert_eq!(held.grow_to(100), Ok(()));
        assert_eq!(held.grow_to(50), Ok(()), "never shrinks by growing");
        assert_eq!(held.len(), 100);
    }

    #[test]
    fn a_charge_shrinks_to_the_bytes_that_arrived() {
        let budget = BodyBudget::new(100, 100);
        let mut held = charged(&budget, client(1), 100).expect("the whole budget");
        assert_eq!(budget.check(client(2), 1), Err(Full::Budget));
        held.shrink_to(10);
        assert!(charged(&budget, client(2), 90).is_ok(), "the surplus is given back at once");
        held.shrink_to(50);
        assert_eq!(held.len(), 10, "a charge never grows by shrinking");
    }

    #[test]
    fn requests_whose_client_is_unknown_share_the_whole_budget() {
        let budget = BodyBudget::new(100, 30);
        let unknown = charged(&budget, Client::Unknown, 90).expect("no share to hold it to");
        assert_eq!(charged(&budget, Client::Unknown, 11).err(), Some(Full::Budget));
        drop(unknown);
    }

    #[test]
    fn clients_whose_hashes_collide_are_still_two_clients() {
        // The ledger files a client by a hash made once per request; equal hashes never merge two
        // clients' shares.
        let budget = BodyBudget::new(100, 30);
        let mut a = budget.open(client(1));
        let mut b = budget.open(client(2));
        b.key.hash = a.key.hash;
        assert_eq!(a.grow_to(30), Ok(()));
        assert_eq!(b.grow_to(30), Ok(()), "the other client's share is its own");
        assert_eq!(a.grow_to(31), Err(Full::ClientShare));
        drop(a);
        assert_eq!(budget.held(), 30);
        drop(b);
        assert!(budget.no_client_holds_any());
    }

    #[test]
    fn a_share_larger_than_the_budget_is_the_budget() {
        let budget = BodyBudget::new(100, 1_000);
        assert_eq!(budget.per_client(), 100);
    }
}
