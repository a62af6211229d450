//! The optional tracer ([CE-6]…[CE-9] adapted, [CK-11]): module-level `invoke` edges read from `tracing` spans.
//!
//! Off by default, at most one running in the process at a time. [`Tracer::start`] arms a session that
//! the [`TracerLayer`] (installed once in the host's subscriber) consults on every span entry; the
//! session writes into a running [`Collector`] and ends on the first of: its [`TracerGuard`] stopped or
//! dropped, [`Tracer::stop`], `max_events` edges written, `max_duration` passed (a deadline checked
//! before each write and by [`Tracer::is_running`]), or the close of the collector window it started in
//! (the collector stopped, or stopped and started again, even with no call in between; each write is
//! checked against that window). "Removed on every exit":
//! once a session has ended the layer is inert again and no further write of it reaches the collector.
//!
//! **It sees only instrumented functions** (spans); see [`TracerLayer`] for what one edge is.
//!
//! Guards ([CE-6], [CE-8]): a running collector is required; both limits must be positive; the module list
//! must be non-empty and name Rust paths — no wildcard (`*`, `_`, an empty path or segment). Refusals
//! are checked in that order, and only then is the process-wide slot claimed, so a refused start never
//! disturbs a running session. Threat model ([CE-9]): accidents and misuse (a forgotten stop, a panic
//! unwinding past the guard, a stopped collector, a second start) are in scope; an adversary in the
//! process is not.
//!
//! [CE-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

mod layer;
mod session;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub use layer::TracerLayer;
pub use session::StopReason;

use crate::collector::Collector;
use session::Session;

/// The default `max_events` ([CE-6]'s `max_messages`).
///
/// [CE-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const DEFAULT_MAX_EVENTS: u64 = 1_000;
/// The default `max_duration` ([CE-6]'s `max_duration_ms`).
///
/// [CE-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const DEFAULT_MAX_DURATION: Duration = Duration::from_secs(5);

/// What a tracer session traces and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracerOptions {
    /// The server the module nodes belong to (their identity's server component).
    pub server: String,
    /// The traced modules: Rust paths; a module inside one (`a::b` inside `a`) is traced too.
    pub modules: Vec<String>,
    /// Stop after this many edges (> 0).
    pub max_events: u64,
    /// Stop after this long (> 0).
    pub max_duration: Duration,
}

impl TracerOptions {
    /// Options for `server` and `modules` with the default limits (1,000 edges, 5 s).
    pub fn new(server: impl Into<String>, modules: impl IntoIterator<Item = impl Into<String>>) -> Self {
        TracerOptions {
            server: server.into(),
            modules: modules.into_iter().map(Into::into).collect(),
            max_events: DEFAULT_MAX_EVENTS,
            max_duration: DEFAULT_MAX_DURATION,
        }
    }
}

/// Why a tracer did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TracerError {
    /// An option is refused; `option` names it (`modules`, `max_events` or `max_duration`).
    Invalid {
        /// The refused option.
        option: &'static str,
    },
    /// The collector is not running, so there is nothing to write into.
    CollectorNotStarted,
    /// Another tracer is running in this process.
    AlreadyRunning,
}

impl fmt::Display for TracerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TracerError::Invalid { option } => write!(f, "invalid tracer option {option}"),
            TracerError::CollectorNotStarted => f.write_str("collector_not_started"),
            TracerError::AlreadyRunning => f.write_str("already_running"),
        }
    }
}

impl std::error::Error for TracerError {}

/// True for a Rust path: `::`-separated, non-empty segments of letters, digits and `_`, none of them a
/// bare `_` (no wildcard).
fn is_module_path(path: &str) -> bool {
    path.split("::").all(|segment| {
        !segment.is_empty() && segment != "_" && segment.chars().all(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The process-wide tracer.
#[derive(Debug)]
pub struct Tracer;

impl Tracer {
    /// Starts the one tracer of the process, writing into `collector`; see the module docs for the
    /// refusals and their order.
    pub fn start(collector: &Collector, options: TracerOptions) -> Result<TracerGuard, TracerError> {
        let TracerOptions { server, modules, max_events, max_duration } = options;
        if modules.is_empty() || !modules.iter().all(|m| is_module_path(m)) {
            return Err(TracerError::Invalid { option: "modules" });
        }
        if max_events == 0 {
            return Err(TracerError::Invalid { option: "max_events" });
        }
        let deadline = Instant::now().checked_add(max_duration).filter(|_| !max_duration.is_zero());
        let Some(deadline) = deadline else { return Err(TracerError::Invalid { option: "max_duration" }) };
        // The window is read before the running check: a stop (or stop and start) in between leaves the
        // session bound to a closed window, so it ends at its first check instead of writing.
        let window = collector.window();
        if !collector.is_running() {
            return Err(TracerError::CollectorNotStarted);
        }
        let session = Session::new(collector.clone(), window, server, modules, max_events, deadline);
        if !session::install(&session) {
            return Err(TracerError::AlreadyRunning);
        }
        Ok(TracerGuard { session })
    }

    /// Stops the running tracer, if any (always succeeds).
    pub fn stop() {
        session::end_current();
    }

    /// True while a tracer session runs (a session past its deadline or its collector window is ended
    /// here).
    pub fn is_running() -> bool {
        session::current().is_some()
    }
}

/// A running tracer session; stopping or dropping it ends the session (on every exit, unwinding included).
#[derive(Debug)]
#[must_use = "dropping the guard stops the tracer at once"]
pub struct TracerGuard {
    session: Arc<Session>,
}

impl TracerGuard {
    /// Ends the session on a limit it has passed unnoticed (no write since the deadline).
    fn notice_limit(&self) {
        if self.session.reason().is_none()
            && let Some(limit) = self.session.passed_limit()
        {
            session::end_session(&self.session, limit);
        }
    }

    /// Edges written so far (never above `max_events`).
    pub fn events(&self) -> u64 {
        self.session.written.load(Ordering::Acquire)
    }

    /// Why the session ended, or `None` while it runs.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.notice_limit();
        self.session.reason()
    }

    /// Ends the session and returns why it ended (an earlier limit wins over this stop).
    pub fn stop(self) -> StopReason {
        self.notice_limit();
        session::end_session(&self.session, StopReason::Stopped);
        self.session.reason().unwrap_or(StopReason::Stopped)
    }
}

impl Drop for TracerGuard {
    fn drop(&mut self) {
        session::end_session(&self.session, StopReason::Stopped);
    }
}
