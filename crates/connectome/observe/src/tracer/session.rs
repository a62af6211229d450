//! One tracer session and the process-wide slot that holds it (one tracer at a time, [CE-6]).
//!
//! The slot is a static: `SESSION` holds the running session, `ARMED` mirrors "the slot is full" so that
//! an idle [`super::TracerLayer`] costs one relaxed load per span entry. A session ends exactly once,
//! for the first of: [`StopReason::Stopped`] (its guard's `stop` or drop, or [`super::Tracer::stop`]),
//! the event limit, the deadline, or the close of the collector window it started in (the collector
//! stopped, or stopped and started again — told apart by the collector's window counter, so a restart
//! with no call in between still ends the session). Ending sets the reason, waits for writes in
//! flight (they hold the session's gate shared and re-check the reason under it), then empties the slot;
//! after that no write of the session reaches the collector.
//!
//! [CE-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use connectome_graph::EdgeKind;

use crate::collector::Collector;
use crate::key::{EndRef, KeyRef};

/// Why a tracer session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// Stopped by its guard (`stop` or drop) or by [`super::Tracer::stop`].
    Stopped,
    /// `max_events` edges were written.
    EventLimit,
    /// `max_duration` passed (checked before each write and by every `is_running`).
    DurationLimit,
    /// Its collector stopped; the tracer never outlives the rows it writes into.
    CollectorStopped,
    /// Its collector was stopped and started again (even with no call in between): the window the
    /// session started in closed, and the session never writes into a later one.
    CollectorRestarted,
}

impl StopReason {
    const ALL: [StopReason; 5] = [
        StopReason::Stopped,
        StopReason::EventLimit,
        StopReason::DurationLimit,
        StopReason::CollectorStopped,
        StopReason::CollectorRestarted,
    ];

    fn code(self) -> u8 {
        match self {
            StopReason::Stopped => 1,
            StopReason::EventLimit => 2,
            StopReason::DurationLimit => 3,
            StopReason::CollectorStopped => 4,
            StopReason::CollectorRestarted => 5,
        }
    }

    fn from_code(code: u8) -> Option<StopReason> {
        StopReason::ALL.into_iter().find(|r| r.code() == code)
    }
}

/// True while a session is in the slot; the layer's only check when idle.
pub(crate) static ARMED: AtomicBool = AtomicBool::new(false);
/// The running session, if any.
static SESSION: RwLock<Option<Arc<Session>>> = RwLock::new(None);

/// A running (or just ended) tracer: its collector, scope, limits and counters.
#[derive(Debug)]
pub(crate) struct Session {
    collector: Collector,
    /// The collector window the session started in ([`Collector::window`]); it writes into no other.
    window: u64,
    server: Box<str>,
    modules: Vec<Box<str>>,
    max_events: u64,
    deadline: Instant,
    /// Edges claimed (written or refused by the limit); never above `max_events` once written.
    claimed: AtomicU64,
    /// Edges written into the collector.
    pub(crate) written: AtomicU64,
    /// 0 while running, else a [`StopReason`] code; set once.
    reason: AtomicU8,
    /// Held shared by each write, exclusively by `end` to wait for writes in flight.
    gate: RwLock<()>,
}

impl Session {
    /// A session ready to be installed.
    pub(crate) fn new(
        collector: Collector,
        window: u64,
        server: String,
        modules: Vec<String>,
        max_events: u64,
        deadline: Instant,
    ) -> Arc<Session> {
        Arc::new(Session {
            collector,
            window,
            server: server.into(),
            modules: modules.into_iter().map(String::into_boxed_str).collect(),
            max_events,
            deadline,
            claimed: AtomicU64::new(0),
            written: AtomicU64::new(0),
            reason: AtomicU8::new(0),
            gate: RwLock::new(()),
        })
    }

    /// Why the session ended, or `None` while it runs.
    pub(crate) fn reason(&self) -> Option<StopReason> {
        StopReason::from_code(self.reason.load(Ordering::Acquire))
    }

    /// True when `module` is one of the named modules or inside one (`a::b` is inside `a`).
    pub(crate) fn traces(&self, module: &str) -> bool {
        self.modules.iter().any(|prefix| {
            module.strip_prefix(&**prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        })
    }

    /// The limit this session has passed, checked before every write.
    pub(crate) fn passed_limit(&self) -> Option<StopReason> {
        if Instant::now() >= self.deadline { Some(StopReason::DurationLimit) } else { self.window_closed() }
    }

    /// Why the session's collector window has closed, if it has: the collector is not running, or it
    /// has been stopped and started again since the session started.
    fn window_closed(&self) -> Option<StopReason> {
        if !self.collector.is_running() {
            Some(StopReason::CollectorStopped)
        } else if self.collector.window() != self.window {
            Some(StopReason::CollectorRestarted)
        } else {
            None
        }
    }

    /// Writes one module-level `invoke` edge `caller → callee` unless the session has ended or a limit
    /// is reached; ends the session on the limit it meets.
    pub(crate) fn write(self: &Arc<Self>, caller: &str, callee: &str) {
        let end = {
            let _shared = self.gate.read().unwrap_or_else(|poisoned| poisoned.into_inner());
            if self.reason().is_some() {
                return;
            }
            if let Some(limit) = self.passed_limit() {
                Some(limit)
            } else {
                let claimed = self.claimed.fetch_add(1, Ordering::AcqRel) + 1;
                let mut closed_window = None;
                if claimed <= self.max_events {
                    let key = KeyRef {
                        from: EndRef::module(&self.server, caller),
                        to: EndRef::module(&self.server, callee),
                        kind: EdgeKind::Invoke,
                    };
                    if self.collector.record_in_window(self.window, key, Duration::ZERO) {
                        self.written.fetch_add(1, Ordering::AcqRel);
                    } else {
                        // The window closed between the check above and the write, so nothing was
                        // written; the session ends below, once the gate is released.
                        closed_window = Some(self.window_closed().unwrap_or(StopReason::CollectorStopped));
                    }
                }
                closed_window.or((claimed >= self.max_events).then_some(StopReason::EventLimit))
            }
        };
        if let Some(reason) = end {
            end_session(self, reason);
        }
    }
}

/// The running session, if any; a session past a limit is ended here and not returned.
pub(crate) fn current() -> Option<Arc<Session>> {
    let session = SESSION.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()?;
    match session.passed_limit() {
        Some(reason) => {
            end_session(&session, reason);
            None
        }
        None if session.reason().is_none() => Some(session),
        None => None,
    }
}

/// Installs `session` unless one is running (the caller has checked everything else).
pub(crate) fn install(session: &Arc<Session>) -> bool {
    let mut slot = SESSION.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    if slot.as_ref().is_some_and(|running| running.reason().is_none() && running.passed_limit().is_none()) {
        return false;
    }
    if let Some(stale) = slot.take() {
        stale.mark(stale.passed_limit().unwrap_or(StopReason::Stopped));
    }
    *slot = Some(Arc::clone(session));
    ARMED.store(true, Ordering::Release);
    true
}

impl Session {
    /// Sets the reason if none is set yet, then waits for writes in flight.
    fn mark(&self, reason: StopReason) {
        let _ = self.reason.compare_exchange(0, reason.code(), Ordering::AcqRel, Ordering::Acquire);
        drop(self.gate.write().unwrap_or_else(|poisoned| poisoned.into_inner()));
    }
}

/// Ends `session` (the first reason wins) and empties the slot if it still holds it.
pub(crate) fn end_session(session: &Arc<Session>, reason: StopReason) {
    session.mark(reason);
    let mut slot = SESSION.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    if slot.as_ref().is_some_and(|running| Arc::ptr_eq(running, session)) {
        *slot = None;
        ARMED.store(false, Ordering::Release);
    }
}

/// Ends whatever session is running.
pub(crate) fn end_current() {
    let running = SESSION.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    if let Some(session) = running {
        end_session(&session, StopReason::Stopped);
    }
}
