//! The collector ([CE-2]…[CE-5], [CK-10]): one row per distinct edge, written in the dispatching task.
//!
//! Hot path ([CE-3]): a dispatched call on a listed tool goes to the tool's bound slot (`bound.rs`): no
//! lookup at all. Any other edge already seen (a host edge, a call told by event) is one atomic load of
//! the running flag, one lock-free lookup in a concurrent map (`papaya`) by a *borrowed* key (no
//! allocation, no id formatting) and three relaxed atomic updates — `count += 1`, `sum_ns += d`,
//! `max_ns = max(max_ns, d)`. No lock is taken and no other thread is involved. First sight of an edge (the cold path) allocates its owned key once; the
//! table is bounded by the number of distinct edges, never by the number of calls.
//!
//! Lifecycle ([CE-4], [CE-5]): [`Collector::new`] is **not started**; every read of a collector that is not
//! running is [`ObserveError::NotStarted`](crate::ObserveError::NotStarted), never an empty answer.
//! [`Collector::start`] opens a window with zero rows, [`Collector::stop`] closes it and drops its rows
//! (take the snapshot first), and a later `start` begins again from zero. A call in flight across a
//! `stop`/`start` may land in either window (a tracer write may not: it is checked against its window
//! under the lifecycle lock, see [`Collector::record_in_window`]). Counters are read one by one, so a snapshot taken under load
//! may pair a count with a sum one call apart; each value is exact on its own.
//!
//! Threat model ([CE-9]): accidents and API misuse are in scope; an adversary inside the process is not (it
//! could call dispatch itself). What reaches a row is only the names in the key and a duration: the
//! router hands the observer no argument, result, error text or panic payload. (Whether a panic's
//! message reaches stderr is up to the host's panic hook, which runs before the router catches it.)
//!
//! [CE-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use connectome_graph::{EdgeKind, Identity};
use mcp_kernel_router::observe::{DispatchEvent, DispatchObserver, DispatchRecorder};

use crate::bound::{Bound, Slot};
use crate::key::{EndRef, Key, KeyRef};

/// One row's measurements; written with relaxed atomics (each value is a counter, not a protocol).
#[derive(Debug)]
pub(crate) struct Counters {
    pub(crate) count: AtomicU64,
    pub(crate) sum_ns: AtomicU64,
    pub(crate) max_ns: AtomicU64,
}

impl Counters {
    /// The counters of an edge seen once, taking `ns`.
    fn first(ns: u64) -> Self {
        Counters { count: AtomicU64::new(1), sum_ns: AtomicU64::new(ns), max_ns: AtomicU64::new(ns) }
    }

    /// Counters with no call.
    pub(crate) fn zero() -> Self {
        Counters { count: AtomicU64::new(0), sum_ns: AtomicU64::new(0), max_ns: AtomicU64::new(0) }
    }

    /// Back to no call (a window opening).
    pub(crate) fn reset(&self) {
        self.count.store(0, Ordering::Relaxed);
        self.sum_ns.store(0, Ordering::Relaxed);
        self.max_ns.store(0, Ordering::Relaxed);
    }

    /// Adds one call taking `ns`: two atomic adds, and an update of the maximum only when `ns` beats the
    /// one read (on x86 `fetch_max` is a compare-and-swap loop, so it is skipped when it cannot change
    /// anything). The count and the sum saturate at `u64::MAX` rather than wrap (an add that would wrap
    /// stores the maximum instead).
    pub(crate) fn add(&self, ns: u64) {
        if self.count.fetch_add(1, Ordering::Relaxed) == u64::MAX {
            self.count.store(u64::MAX, Ordering::Relaxed);
        }
        if self.sum_ns.fetch_add(ns, Ordering::Relaxed).checked_add(ns).is_none() {
            self.sum_ns.store(u64::MAX, Ordering::Relaxed);
        }
        if ns > self.max_ns.load(Ordering::Relaxed) {
            self.max_ns.fetch_max(ns, Ordering::Relaxed);
        }
    }
}

/// The shared state behind every clone of a [`Collector`].
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) running: AtomicBool,
    pub(crate) rows: papaya::HashMap<Key, Counters>,
    /// The window counter: bumped by every `start` that opens a window and every `stop` that closes
    /// one, so a window is told apart from the next even when no call happened in between. It is odd
    /// exactly while the collector runs (a bound slot reads only this).
    pub(crate) generation: AtomicU64,
    /// The bound edges' slots, one per distinct edge (`bound.rs`); locked by `bind`, `start` and reads,
    /// never by a call.
    pub(crate) slots: Mutex<HashMap<Key, Arc<Slot>>>,
    /// Held exclusively by `start` and `stop` (serialising them), shared by a write bound to one window;
    /// never taken on the dispatch hot path.
    lifecycle: RwLock<()>,
}

/// The observed-side collector: counts calls per edge while running. Cheap to clone; clones share rows.
///
/// Install it on a server with `ServerBuilder::observe_dispatch(collector.clone())` (one `invoke` edge
/// server → tool per dispatched call, a panicking call included), record host edges with
/// [`Collector::observe`], and read it with [`Collector::snapshot`] and the other reads.
#[derive(Debug, Clone)]
pub struct Collector {
    pub(crate) inner: Arc<Inner>,
}

impl Default for Collector {
    fn default() -> Self {
        Collector::new()
    }
}

/// A duration in nanoseconds, saturating at `u64::MAX` (about 584 years).
fn nanos(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
}

impl Collector {
    /// A collector that is **not started**: it records nothing and every read is refused until
    /// [`Collector::start`].
    pub fn new() -> Self {
        Collector {
            inner: Arc::new(Inner {
                running: AtomicBool::new(false),
                rows: papaya::HashMap::new(),
                generation: AtomicU64::new(0),
                slots: Mutex::new(HashMap::new()),
                lifecycle: RwLock::new(()),
            }),
        }
    }

    /// Opens a window with zero rows; a collector already running keeps its rows.
    pub fn start(&self) {
        let _serial = self.inner.lifecycle.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !self.inner.running.load(Ordering::Acquire) {
            self.inner.rows.pin().clear();
            let opening = self.inner.generation.load(Ordering::Acquire) + 1;
            for slot in self.inner.slots().values() {
                slot.set(opening).reset();
            }
            self.inner.generation.fetch_add(1, Ordering::AcqRel);
            self.inner.running.store(true, Ordering::Release);
        }
    }

    /// Closes the window: recording stops and the rows are dropped, so reads are refused again.
    pub fn stop(&self) {
        let _serial = self.inner.lifecycle.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.inner.running.swap(false, Ordering::AcqRel) {
            self.inner.generation.fetch_add(1, Ordering::AcqRel);
        }
        self.inner.rows.pin().clear();
    }

    /// True between [`Collector::start`] and [`Collector::stop`].
    pub fn is_running(&self) -> bool {
        self.inner.running.load(Ordering::Acquire)
    }

    /// The current window's number; any `start` or `stop` since a reading changes it.
    pub(crate) fn window(&self) -> u64 {
        self.inner.generation.load(Ordering::Acquire)
    }

    /// Records one edge into `window` only: false, recording nothing, when that window has closed (the
    /// collector stopped, or stopped and started again). Holds the lifecycle lock shared, so no `stop`
    /// or `start` can fall between the check and the write.
    pub(crate) fn record_in_window(&self, window: u64, key: KeyRef<'_>, elapsed: Duration) -> bool {
        let _window = self.inner.lifecycle.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !self.is_running() || self.window() != window {
            return false;
        }
        self.record(key, elapsed);
        true
    }

    /// Records one edge `from → to` of `kind` that took `elapsed` (use `Duration::ZERO` when there is
    /// no measurement); a host records its own edges with it. Ignored while the collector is not running.
    pub fn observe(&self, from: Identity, to: Identity, kind: EdgeKind, elapsed: Duration) {
        self.record(KeyRef { from: EndRef::of(&from), to: EndRef::of(&to), kind }, elapsed);
    }

    /// The hot path: one lookup by borrowed key, three atomics; the owned key only on first sight.
    pub(crate) fn record(&self, key: KeyRef<'_>, elapsed: Duration) {
        if !self.inner.running.load(Ordering::Acquire) {
            return;
        }
        let ns = nanos(elapsed);
        let rows = self.inner.rows.pin();
        match rows.get(&key) {
            Some(counters) => counters.add(ns),
            None => {
                if let Err(taken) = rows.try_insert(key.to_owned(), Counters::first(ns)) {
                    // Another task inserted the same edge first: count this call on its row.
                    taken.current.add(ns);
                }
            }
        }
    }
}

impl Inner {
    /// The bound slots, locked (a poisoned lock still holds plain counters).
    pub(crate) fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl DispatchObserver for Collector {
    /// One `invoke` edge server → tool per dispatched call, whatever its outcome (the attempt counts).
    fn dispatched(&self, event: &DispatchEvent<'_>) {
        let key = KeyRef {
            from: EndRef::server(event.server),
            to: EndRef::tool(event.server, event.tool),
            kind: EdgeKind::Invoke,
        };
        self.record(key, event.elapsed);
    }

    /// The slot of the edge server → tool, registered once (shared by every server that binds the same
    /// names): the tool's calls then go straight to it.
    fn bind(&self, server: &str, tool: &str) -> Option<Arc<dyn DispatchRecorder>> {
        let key =
            KeyRef { from: EndRef::server(server), to: EndRef::tool(server, tool), kind: EdgeKind::Invoke };
        let slot = {
            let mut slots = self.inner.slots();
            let key = key.to_owned();
            Arc::clone(slots.entry(key.clone()).or_insert_with(|| Arc::new(Slot::new(key))))
        };
        Some(Arc::new(Bound::new(Arc::clone(&self.inner), slot)))
    }
}
