//! The collector ([CE-2]…[CE-5], [CK-10]): one row per distinct edge, written in the dispatching task.
//!
//! Hot path ([CE-3]): a call on an edge already seen is one atomic load of the running flag, one lock-free
//! lookup in a concurrent map (`papaya`) by a *borrowed* key (no allocation, no id formatting) and three
//! relaxed atomic updates — `count += 1`, `sum_ns += d`, `max_ns = max(max_ns, d)`. No lock is taken and
//! no other thread is involved. First sight of an edge (the cold path) allocates its owned key once; the
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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use connectome_graph::{EdgeKind, Identity};
use mcp_kernel_router::observe::{DispatchEvent, DispatchObserver};

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

    /// Adds one call taking `ns`; the count and the sum saturate at `u64::MAX` rather than wrap.
    fn add(&self, ns: u64) {
        let _ = self.count.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| Some(c.saturating_add(1)));
        let _ =
            self.sum_ns.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| Some(s.saturating_add(ns)));
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
    }
}

/// The shared state behind every clone of a [`Collector`].
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) running: AtomicBool,
    pub(crate) rows: papaya::HashMap<Key, Counters>,
    /// The window counter: bumped by every `start` that opens a window and every `stop` that closes
    /// one, so a window is told apart from the next even when no call happened in between.
    generation: AtomicU64,
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
                lifecycle: RwLock::new(()),
            }),
        }
    }

    /// Opens a window with zero rows; a collector already running keeps its rows.
    pub fn start(&self) {
        let _serial = self.inner.lifecycle.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !self.inner.running.load(Ordering::Acquire) {
            self.inner.rows.pin().clear();
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
}
