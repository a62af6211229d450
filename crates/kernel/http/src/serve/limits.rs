//! Connection slots: a bound on connections in total and per client, and who gives one up when they
//! are all taken.
//!
//! Threat: a client (or a handful) that opens connections until the process runs out of descriptors
//! or memory — each held connection costs a task, hyper's buffers and whatever request it carries —
//! or that holds every slot so that nobody else is served. A bound per exact address is not enough
//! for the second: eight loopback addresses × 512 HTTP/2 connections hold all 4,096 default slots, a
//! request every 50 s keeps each under the idle limit, and a client from a ninth address then waits
//! in the listen backlog until it gives up. An IPv6 host has a whole `/64` of addresses.
//!
//! A connection's **client** is its peer address cut to [`ServeOptions::client_prefixes`] (a
//! [`ClientNetwork`]: an IPv4 address whole, an IPv6 address to its `/64`, by default). The rule:
//!
//! 1. **A share per client.** A client holding [`ServeOptions::max_connections_per_peer`] connections
//!    has its next one closed at accept.
//! 2. **Free slots are taken.** While fewer than [`ServeOptions::max_connections`] connections are in
//!    service, a new one is admitted.
//! 3. **When every slot is held, the biggest holder goes first.** A newcomer whose client holds fewer
//!    connections than the client holding the most is admitted, and one connection of that client is
//!    told to close ([`super::evict`]): its longest-idle connection (no request open; one that has not
//!    sent its first request is idle since it was accepted), else its oldest. The told connection
//!    leaves service at once (its slot is the newcomer's) but keeps counting against its client until
//!    it has actually ended, so a client that lost a connection cannot win one back from the next
//!    client until then. A newcomer whose client holds as many connections as the biggest holder, or
//!    more, is closed at accept, so that the biggest holders cannot take slots from one another: an
//!    attacker cannot churn other clients' connections. Between equal biggest holders, which one gives
//!    a connection up is not specified.
//! 4. **The over-commit is bounded.** A connection told to close still holds its descriptor until it
//!    ends. At most [`leaving_bound`] of them — `max(1, max_connections / 16)`, 256 by default — may be
//!    on their way out at once; while that many are, the accept loop waits before `accept`, as it does
//!    once the slots are all held without a smaller client to make room for (new connections wait in
//!    the kernel's listen backlog, and are refused by the kernel when it is full). So at most
//!    `max_connections + max(1, max_connections / 16)` connections — 4,352 by default — are open at
//!    once, and as many descriptors.
//!
//! What a legitimate client sees while an attacker holds every slot from N addresses (or N `/64`s):
//! as long as it holds fewer connections than the attacker's biggest address (`max_connections / N`
//! when they are spread evenly: 512 for eight addresses), each new connection it opens is admitted at
//! once and served, and one of the attacker's connections gets `GOAWAY`. What the rule does not do: it
//! cannot tell a legitimate client from an attacker with as many addresses as there are slots; an
//! attacker that keeps a request open on every connection (a slow body, until its 15 s deadline) has
//! its told connections finish those requests first, so slots change hands at most 256 per such
//! request's length before newcomers wait in the backlog again; and behind a proxy every connection
//! comes from one client (the proxy), which then has nobody to take a slot from: its connection past
//! the last slot is closed at accept.
//!
//! This module is bookkeeping only: [`Slots`] counts and chooses, [`Slot`] gives its place back when
//! dropped, and the accept loop and the connections act on what they are told.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use super::evict::Notice;
use super::watch::Watch;
use crate::client::ClientNetwork;

#[cfg(doc)]
use super::ServeOptions;

/// How many connections may be on their way out at once, for `max_connections` slots: one in
/// sixteen, at least one (256 for the default 4,096).
pub(crate) fn leaving_bound(max_connections: usize) -> usize {
    (max_connections / 16).max(1)
}

/// Why a connection was not admitted (it is closed at accept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its client holds its share.
    OverShare,
    /// Every slot is held, and its client holds as many connections as the biggest holder.
    Outnumbered,
    /// Every slot is held and no connection may be told to close now (the drain, or too many leaving).
    Full,
}

/// The slots of one listener.
#[derive(Debug)]
pub(crate) struct Slots {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    ledger: Mutex<Ledger>,
    /// Told each time a connection ends: the accept loop may be waiting for room.
    ended: Notify,
    max: usize,
    per_client: usize,
    leaving_bound: usize,
}

#[derive(Debug, Default)]
struct Ledger {
    /// Connections in service: admitted and not told to close.
    serving: usize,
    /// Connections told to close that have not ended.
    leaving: usize,
    clients: HashMap<ClientNetwork, Holder>,
    /// Every client holding a connection, by how many it holds (the biggest holders last).
    by_count: BTreeMap<usize, HashSet<ClientNetwork>>,
    next_id: u64,
}

/// One client's connections.
#[derive(Debug, Default)]
struct Holder {
    /// Its connections in service, by id (ids grow with accept order).
    serving: HashMap<u64, Held>,
    /// How many of its connections were told to close and have not ended.
    leaving: usize,
}

impl Holder {
    /// How many connections the client holds, those on their way out included.
    fn count(&self) -> usize {
        self.serving.len() + self.leaving
    }

    /// The connection to tell first: the longest idle, else the oldest (ties go to the older).
    fn first_to_go(&self) -> Option<u64> {
        let idlest = self
            .serving
            .iter()
            .filter_map(|(id, held)| held.watch.idle_since().map(|since| (since, *id)))
            .min()
            .map(|(_, id)| id);
        idlest.or_else(|| self.serving.keys().min().copied())
    }
}

/// One connection in service, as the ledger sees it.
#[derive(Debug)]
struct Held {
    watch: Arc<Watch>,
    notice: Arc<Notice>,
}

impl Ledger {
    /// Moves `client` from the `before` row of `by_count` to the `after` row.
    fn recount(&mut self, client: ClientNetwork, before: usize, after: usize) {
        if before == after {
            return;
        }
        if let Some(row) = self.by_count.get_mut(&before) {
            row.remove(&client);
            if row.is_empty() {
                self.by_count.remove(&before);
            }
        }
        if after > 0 {
            self.by_count.entry(after).or_default().insert(client);
        }
    }

    /// The biggest holder that holds more than `than` connections and has one in service to give up,
    /// and that connection.
    fn victim(&self, than: usize) -> Option<(ClientNetwork, u64)> {
        for (count, row) in self.by_count.iter().rev() {
            if *count <= than {
                return None;
            }
            // A client whose connections are all on their way out has none left to give.
            let found = row.iter().find_map(|client| {
                let id = self.clients.get(client)?.first_to_go()?;
                Some((*client, id))
            });
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

fn lock(ledger: &Mutex<Ledger>) -> MutexGuard<'_, Ledger> {
    ledger.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Slots {
    /// At most `max` connections in service (at least 1), at most `per_client` held by one client.
    pub(crate) fn new(max: usize, per_client: usize) -> Self {
        let max = max.max(1);
        Self {
            shared: Arc::new(Shared {
                ledger: Mutex::default(),
                ended: Notify::new(),
                max,
                per_client,
                leaving_bound: leaving_bound(max),
            }),
        }
    }

    /// Whether a slot is free without telling anyone to close.
    pub(crate) fn has_free(&self) -> bool {
        lock(&self.shared.ledger).serving < self.shared.max
    }

    /// Whether a connection may be accepted now: a slot is free, or one may be made.
    fn has_room(&self) -> bool {
        let ledger = lock(&self.shared.ledger);
        ledger.serving < self.shared.max || ledger.leaving < self.shared.leaving_bound
    }

    /// Waits until a connection may be accepted: a slot is free, or fewer connections than the bound
    /// are on their way out (so that one more may be told). Only [`Slots::admit`] takes room away, so
    /// the room found here is still there when the accepted connection is admitted.
    pub(crate) async fn room(&self) {
        loop {
            // Made before looking: a connection that ends in between leaves its permit.
            let ended = self.shared.ended.notified();
            if self.has_room() {
                return;
            }
            ended.await;
        }
    }

    /// Takes a slot for a connection from `client` whose requests `watch` counts. When every slot is
    /// held and `may_tell`, a connection of the biggest holder is told to close if the rule admits the
    /// newcomer (see the module docs); otherwise the newcomer is refused.
    pub(crate) fn admit(
        &self,
        client: ClientNetwork,
        watch: Arc<Watch>,
        may_tell: bool,
    ) -> Result<Slot, Refusal> {
        let shared = &self.shared;
        let mut ledger = lock(&shared.ledger);
        let held = ledger.clients.get(&client).map_or(0, Holder::count);
        if held >= shared.per_client {
            return Err(Refusal::OverShare);
        }
        if ledger.serving >= shared.max {
            if !may_tell || ledger.leaving >= shared.leaving_bound {
                return Err(Refusal::Full);
            }
            let (victim, id) = ledger.victim(held).ok_or(Refusal::Outnumbered)?;
            let told = ledger.clients.get_mut(&victim).and_then(|holder| {
                let told = holder.serving.remove(&id)?;
                holder.leaving += 1;
                Some(told)
            });
            if let Some(told) = told {
                ledger.serving -= 1;
                ledger.leaving += 1;
                told.notice.tell();
            }
        }
        let id = ledger.next_id;
        ledger.next_id += 1;
        let notice = Arc::new(Notice::default());
        let holder = ledger.clients.entry(client).or_default();
        holder.serving.insert(id, Held { watch, notice: Arc::clone(&notice) });
        ledger.serving += 1;
        ledger.recount(client, held, held + 1);
        Ok(Slot { shared: Arc::clone(shared), client, id, notice })
    }
}

/// One connection's hold on its slot; given back when dropped (when the connection has ended).
#[derive(Debug)]
pub(crate) struct Slot {
    shared: Arc<Shared>,
    client: ClientNetwork,
    id: u64,
    notice: Arc<Notice>,
}

impl Slot {
    /// Where the connection hears that it is told to close.
    pub(crate) fn notice(&self) -> &Arc<Notice> {
        &self.notice
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut ledger = lock(&self.shared.ledger);
        let counts = match ledger.clients.entry(self.client) {
            Entry::Occupied(mut entry) => {
                let holder = entry.get_mut();
                let before = holder.count();
                let was_serving = holder.serving.remove(&self.id).is_some();
                if !was_serving {
                    holder.leaving = holder.leaving.saturating_sub(1);
                }
                let after = holder.count();
                if after == 0 {
                    entry.remove();
                }
                Some((before, after, was_serving))
            }
            Entry::Vacant(_) => None,
        };
        if let Some((before, after, was_serving)) = counts {
            if was_serving {
                ledger.serving = ledger.serving.saturating_sub(1);
            } else {
                ledger.leaving = ledger.leaving.saturating_sub(1);
            }
            ledger.recount(self.client, before, after);
        }
        drop(ledger);
        self.shared.ended.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::AddressPrefixes;
    use std::net::IpAddr;
    use std::time::Duration;

    fn client(text: &str) -> ClientNetwork {
        AddressPrefixes::default().network(text.parse::<IpAddr>().expect("an address"))
    }

    fn admit(slots: &Slots, from: &str) -> Result<(Slot, Arc<Watch>), Refusal> {
        let watch = Watch::new();
        slots.admit(client(from), Arc::clone(&watch), true).map(|slot| (slot, watch))
    }

    fn held(slots: &Slots) -> (usize, usize) {
        let ledger = lock(&slots.shared.ledger);
        (ledger.serving, ledger.leaving)
    }

    #[tokio::test]
    async fn one_client_holds_at_most_its_share_and_gets_it_back_when_a_connection_ends() {
        let slots = Slots::new(10, 2);
        let (first, _) = admit(&slots, "127.0.0.1").expect("first");
        let _second = admit(&slots, "127.0.0.1").expect("second");
        assert_eq!(admit(&slots, "127.0.0.1").err(), Some(Refusal::OverShare), "a third from one client");
        assert!(admit(&slots, "127.0.0.2").is_ok(), "another client is not affected");
        drop(first);
        assert!(admit(&slots, "127.0.0.1").is_ok(), "an ended connection gives its slot back");
    }

    #[tokio::test]
    async fn an_ipv6_slash_64_is_one_client_and_its_neighbour_another() {
        let slots = Slots::new(10, 2);
        let _a = admit(&slots, "2001:db8:1:2::1").expect("first");
        let _b = admit(&slots, "2001:db8:1:2:ffff:ffff:ffff:ffff").expect("second, same /64");
        assert_eq!(admit(&slots, "2001:db8:1:2:1234::9").err(), Some(Refusal::OverShare));
        assert!(admit(&slots, "2001:db8:1:3::1").is_ok(), "the next /64 is another client");
    }

    #[tokio::test]
    async fn when_every_slot_is_held_a_smaller_client_takes_one_from_the_biggest_holder() {
        let slots = Slots::new(4, 10);
        let mut big: Vec<_> = (0..3).map(|_| admit(&slots, "127.0.0.2").expect("big")).collect();
        let (small, _) = admit(&slots, "127.0.0.3").expect("small");
        assert!(!slots.has_free());
        let (newcomer, _) = admit(&slots, "127.0.0.4").expect("a newcomer holding nothing");
        let told = big.iter().filter(|(slot, _)| slot.notice().is_told()).count();
        assert_eq!(told, 1, "one connection of the biggest holder is told");
        assert!(!small.notice().is_told() && !newcomer.notice().is_told());
        assert_eq!(held(&slots), (4, 1), "four in service, one on its way out");
        big.retain(|(slot, _)| !slot.notice().is_told());
        assert_eq!(held(&slots), (4, 0), "the told one has ended");
        drop(big);
        assert_eq!(held(&slots), (2, 0));
    }

    #[tokio::test]
    async fn a_newcomer_whose_client_holds_as_many_as_the_biggest_is_closed_at_accept() {
        let slots = Slots::new(4, 10);
        let a: Vec<_> = (0..2).map(|_| admit(&slots, "127.0.0.2").expect("a")).collect();
        let b: Vec<_> = (0..2).map(|_| admit(&slots, "127.0.0.3").expect("b")).collect();
        assert_eq!(admit(&slots, "127.0.0.2").err(), Some(Refusal::Outnumbered), "a tie takes nothing");
        assert_eq!(admit(&slots, "127.0.0.3").err(), Some(Refusal::Outnumbered));
        assert!(a.iter().chain(&b).all(|(slot, _)| !slot.notice().is_told()), "nobody was told");
        assert_eq!(held(&slots), (4, 0));
    }

    #[tokio::test]
    async fn a_client_told_to_close_cannot_win_a_slot_back_until_its_connection_has_ended() {
        // 32 slots: two may be on their way out at once, so the bound does not decide here.
        let slots = Slots::new(32, 100);
        let mut a: Vec<_> = (0..16).map(|_| admit(&slots, "127.0.0.2").expect("a")).collect();
        let mut b: Vec<_> = (0..16).map(|_| admit(&slots, "127.0.0.3").expect("b")).collect();
        let _c = admit(&slots, "127.0.0.4").expect("c takes one from a or b");
        let told_a = a.iter().any(|(slot, _)| slot.notice().is_told());
        let (loser, losers) = if told_a { ("127.0.0.2", &mut a) } else { ("127.0.0.3", &mut b) };
        // The told connection still counts: the loser holds 16, as many as the other, and takes nothing.
        assert_eq!(admit(&slots, loser).err(), Some(Refusal::Outnumbered));
        losers.retain(|(slot, _)| !slot.notice().is_told());
        let (_back, _) = admit(&slots, loser).expect("once it has ended, the loser holds 15 and takes one");
        assert_eq!(held(&slots), (32, 1));
    }

    #[tokio::test(start_paused = true)]
    async fn the_longest_idle_connection_goes_first_then_the_oldest() {
        let second = Duration::from_secs(1);
        let slots = Slots::new(3, 10);
        let (oldest, oldest_watch) = admit(&slots, "127.0.0.2").expect("1");
        tokio::time::sleep(second).await;
        let (idlest, _) = admit(&slots, "127.0.0.2").expect("2");
        tokio::time::sleep(second).await;
        let (newest, newest_watch) = admit(&slots, "127.0.0.2").expect("3");
        tokio::time::sleep(second).await;
        // The oldest and the newest served a request since; the second has been idle since accept.
        drop(oldest_watch.request_started());
        drop(newest_watch.request_started());
        tokio::time::sleep(second).await;
        let (_d, _) = admit(&slots, "127.0.0.3").expect("d");
        assert!(idlest.notice().is_told(), "the longest idle goes first");
        assert!(!oldest.notice().is_told() && !newest.notice().is_told());
        drop(idlest);
        // Now every connection of the biggest holder has a request open: the oldest goes.
        let _busy = (oldest_watch.request_started(), newest_watch.request_started());
        let (_e, _) = admit(&slots, "127.0.0.4").expect("e");
        assert!(oldest.notice().is_told(), "with none idle, the oldest goes");
        assert!(!newest.notice().is_told());
    }

    #[tokio::test(start_paused = true)]
    async fn at_most_one_in_sixteen_may_be_leaving_then_the_accept_loop_waits_for_one_to_end() {
        assert_eq!(leaving_bound(4_096), 256);
        assert_eq!(leaving_bound(2), 1);
        let slots = Slots::new(32, 100);
        let mut big: Vec<_> = (0..32).map(|_| admit(&slots, "127.0.0.2").expect("big")).collect();
        let mut small = Vec::new();
        for n in 0..2u8 {
            tokio::time::timeout(Duration::from_secs(1), slots.room()).await.expect("room to tell one");
            small.push(admit(&slots, &format!("127.0.1.{n}")).expect("a newcomer takes a slot"));
        }
        assert_eq!(held(&slots), (32, 2), "two on their way out: the bound for 32 slots");
        let waiting = tokio::time::timeout(Duration::from_secs(60), slots.room()).await;
        assert!(waiting.is_err(), "no room while the bound is reached");
        assert_eq!(admit(&slots, "127.0.2.1").err(), Some(Refusal::Full), "and admit agrees");
        // One told connection ends: the accept loop may accept again.
        let told = big.iter().position(|(slot, _)| slot.notice().is_told()).expect("a told one");
        drop(big.swap_remove(told));
        tokio::time::timeout(Duration::from_secs(1), slots.room()).await.expect("room again");
        assert_eq!(held(&slots), (32, 1));
    }

    #[tokio::test]
    async fn the_drain_takes_free_slots_only() {
        let slots = Slots::new(1, 10);
        let (_first, _) = admit(&slots, "127.0.0.2").expect("first");
        let watch = Watch::new();
        let drained = slots.admit(client("127.0.0.3"), watch, false);
        assert_eq!(drained.err(), Some(Refusal::Full), "nobody is told to close during the drain");
        assert!(!slots.has_free());
        assert!(lock(&slots.shared.ledger).clients.len() == 1, "the refused one left no entry");
    }

    #[tokio::test]
    async fn no_entry_is_kept_for_a_client_with_no_connection() {
        let slots = Slots::new(2, 5);
        let a = admit(&slots, "127.0.0.2").expect("a");
        let b = admit(&slots, "127.0.0.3").expect("b");
        let c = admit(&slots, "127.0.0.4").expect("c tells a or b");
        drop((a, b, c));
        let ledger = lock(&slots.shared.ledger);
        assert!(ledger.clients.is_empty() && ledger.by_count.is_empty(), "{ledger:?}");
        assert_eq!((ledger.serving, ledger.leaving), (0, 0));
    }
}
