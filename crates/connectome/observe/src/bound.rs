//! Bound edges ([CE-3], [CE-10]): the `invoke` row of one listed tool, resolved once when the server is
//! built, so a call on it hashes and compares nothing.
//!
//! Semantics: the router asks the collector once per listed tool for a recorder
//! (`DispatchObserver::bind`). The collector registers one [`Slot`] per distinct edge server → tool (two
//! servers of the same name, or a catalog and its replacement, share it) and hands back a [`Bound`]
//! recorder that holds the slot itself. A call then costs two readings of the collector's clock (the
//! time stamp counter, scaled to nanoseconds, where the platform has a stable one; the operating
//! system's monotonic clock otherwise) and, while a window is open, three relaxed atomic updates on the
//! slot. No map, no lock, no hashing.
//!
//! Windows: a slot keeps two sets of counters and a call writes the set of the window it ends in (the
//! window counter is odd while the collector runs; its second bit picks the set). `start` zeroes the
//! set of the window it opens before opening it, and the reads merge the open window's set into the
//! rows of the same edge recorded by name. A call in flight across a `stop` or a `start` therefore lands
//! whole in one window; only a call still in flight two windows later could split its counters.
//! Slots are kept across windows (zeroed, never read while stopped): the registry is bounded by the
//! number of distinct bound edges, never by the number of calls.
//!
//! [CE-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use mcp_kernel_router::observe::{DispatchOutcome, DispatchRecorder};

use crate::collector::{Counters, Inner};
use crate::key::Key;

/// One bound edge's counters: one set per window parity.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) key: Key,
    sets: [Counters; 2],
}

impl Slot {
    /// A slot with no call in either set.
    pub(crate) fn new(key: Key) -> Self {
        Slot { key, sets: [Counters::zero(), Counters::zero()] }
    }

    /// The set that window `window` (a value of the window counter) writes and reads.
    pub(crate) fn set(&self, window: u64) -> &Counters {
        &self.sets[usize::from(window & 2 != 0)]
    }
}

/// The collector's clock, made once per process (calibrating the time stamp counter takes a moment,
/// so it is done on the first bind, at build time, never on a call).
fn clock() -> quanta::Clock {
    static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new).clone()
}

/// The recorder of one bound edge, handed to the router for one listed tool.
#[derive(Debug)]
pub(crate) struct Bound {
    inner: Arc<Inner>,
    slot: Arc<Slot>,
    clock: quanta::Clock,
}

impl Bound {
    /// The recorder of `slot` in the collector `inner`.
    pub(crate) fn new(inner: Arc<Inner>, slot: Arc<Slot>) -> Self {
        Bound { inner, slot, clock: clock() }
    }
}

impl DispatchRecorder for Bound {
    /// A raw reading of the collector's clock.
    fn start(&self) -> u64 {
        self.clock.raw()
    }

    /// One call on the edge, whatever its outcome; nothing while the collector is stopped.
    fn finish(&self, started: u64, _outcome: DispatchOutcome) {
        let window = self.inner.generation.load(Ordering::Acquire);
        if window & 1 == 0 {
            return;
        }
        let ns = self.clock.delta_as_nanos(started, self.clock.raw());
        self.slot.set(window).add(ns);
    }
}
