//! The dispatch observer hook: one optional callback at the one dispatch site.
//!
//! Threat: an observer is host code placed on every `tools/call` path, so what it is handed is the
//! contract. It receives the server name, the catalog's tool name, the elapsed time and how the call
//! ended — **never** the arguments, the result, the error text or a panic payload, so an observer
//! cannot leak what it was never given. Names are identity and are published (a secret in a tool name
//! ends up in a connectome's signed bytes); payloads are not.
//!
//! Semantics: every call that *reaches dispatch* is reported exactly once — a success, a tool error and
//! a panic once the outcome is known, and a call whose future the transport drops before dispatch
//! finishes (a client that went away) as [`DispatchOutcome::Cancelled`] when it is dropped: the attempt
//! is the edge. A call refused before dispatch (unknown tool, missing capability, schema violation) is
//! never reported. With no observer set the site reads no clock. A panicking observer is caught and
//! logged with names only; the call is still answered.
//!
//! Bound recorders: when the server is built, the router asks the observer once per listed tool for a
//! [`DispatchRecorder`] ([`DispatchObserver::bind`]) and keeps it in the compiled catalog. A tool with a
//! recorder is reported to it instead of to [`DispatchObserver::dispatched`]: the recorder reads its own
//! clock at the start and at the end, and is handed no name at all, so the observer resolves each tool
//! once instead of on every call. A replacement catalog is a newly built server, so its tools are bound
//! by its own build.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

/// How a dispatched call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DispatchOutcome {
    /// The tool returned a result.
    Ok,
    /// The tool returned a tool error (answered with `isError: true`).
    Error,
    /// The tool panicked (answered -32603); the attempt still counts.
    Panic,
    /// The tool returned a result that breaks its declared output schema, or no structured content
    /// although it declares one (a host fault, answered -32603).
    Fault,
    /// The call's future was dropped before dispatch finished (nothing was answered).
    Cancelled,
}

impl DispatchOutcome {
    /// The name recorded in the `mcp.dispatch` span's `outcome` field.
    pub fn as_str(self) -> &'static str {
        match self {
            DispatchOutcome::Ok => "ok",
            DispatchOutcome::Error => "error",
            DispatchOutcome::Panic => "panic",
            DispatchOutcome::Fault => "fault",
            DispatchOutcome::Cancelled => "cancelled",
        }
    }
}

/// One dispatched call, as an observer sees it: names and timing only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchEvent<'a> {
    /// The server name advertised in `serverInfo`.
    pub server: &'a str,
    /// The tool name, as the catalog lists it.
    pub tool: &'a str,
    /// The time from just before dispatch was called to the outcome.
    pub elapsed: Duration,
    /// How the call ended.
    pub outcome: DispatchOutcome,
}

/// A host callback told of every call that reaches dispatch (see [`crate::ServerBuilder::observe_dispatch`]).
pub trait DispatchObserver: Send + Sync + 'static {
    /// Called once per dispatched call, in the dispatching task, right after its outcome is known.
    fn dispatched(&self, event: &DispatchEvent<'_>);

    /// A recorder for the calls of tool `tool` of server `server`, asked once per listed tool when the
    /// server is built; `None` (the default) reports that tool's calls to [`Self::dispatched`].
    fn bind(&self, server: &str, tool: &str) -> Option<Arc<dyn DispatchRecorder>> {
        let _ = (server, tool);
        None
    }
}

/// One tool's calls, as a bound recorder sees them: the recorder's own clock readings and the outcome,
/// never a name or a payload (see [`DispatchObserver::bind`]).
pub trait DispatchRecorder: Send + Sync + 'static {
    /// A reading of the recorder's clock, taken just before dispatch is called.
    fn start(&self) -> u64;

    /// Called once per dispatched call, in the dispatching task, when its outcome is known; `started`
    /// is what [`Self::start`] returned for this call.
    fn finish(&self, started: u64, outcome: DispatchOutcome);
}

/// Tells `observer` of one call; a panic in the observer is caught and logged by names only (the
/// package never logs a payload; the process's panic hook sees the panic first).
pub(crate) fn notify(observer: &dyn DispatchObserver, event: &DispatchEvent<'_>) {
    if std::panic::catch_unwind(AssertUnwindSafe(|| observer.dispatched(event))).is_err() {
        tracing::error!(server = event.server, tool = event.tool, "dispatch observer panicked");
    }
}

/// Asks `observer` for a recorder of `tool` (at build time); a panicking `bind` is caught, logged by names
/// only, and leaves the tool reported to `dispatched`.
pub(crate) fn bind(
    observer: &dyn DispatchObserver,
    server: &str,
    tool: &str,
) -> Option<Arc<dyn DispatchRecorder>> {
    std::panic::catch_unwind(AssertUnwindSafe(|| observer.bind(server, tool))).unwrap_or_else(|_| {
        tracing::error!(server, tool, "dispatch observer panicked while binding a tool");
        None
    })
}

/// Who is told of one call, and the clock reading its time is measured from.
enum Watch<'a> {
    /// No observer: no clock is read.
    Nobody,
    /// The observer, told by event; the router's clock.
    Event(&'a dyn DispatchObserver, std::time::Instant),
    /// The tool's bound recorder and its own clock reading.
    Bound(&'a dyn DispatchRecorder, u64),
}

/// One call in dispatch: reports its outcome once, or [`DispatchOutcome::Cancelled`] if it is dropped
/// first (the future holding it was dropped by the transport).
pub(crate) struct PendingDispatch<'a> {
    watch: Watch<'a>,
    server: &'a str,
    tool: &'a str,
    span: tracing::Span,
    reported: bool,
}

impl<'a> PendingDispatch<'a> {
    /// Starts the clock when an observer is set: the tool's bound recorder's when it has one, else the
    /// router's.
    pub(crate) fn start(
        observer: Option<&'a dyn DispatchObserver>,
        recorder: Option<&'a dyn DispatchRecorder>,
        server: &'a str,
        tool: &'a str,
        span: tracing::Span,
    ) -> Self {
        let watch = match (observer, recorder) {
            (None, _) => Watch::Nobody,
            (Some(observer), Some(recorder)) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| recorder.start())) {
                    Ok(started) => Watch::Bound(recorder, started),
                    Err(_) => {
                        // The call is still reported, by event.
                        tracing::error!(server, tool, "dispatch recorder panicked");
                        Watch::Event(observer, std::time::Instant::now())
                    }
                }
            }
            (Some(observer), None) => Watch::Event(observer, std::time::Instant::now()),
        };
        PendingDispatch { watch, server, tool, span, reported: false }
    }

    /// Records the outcome on the span and tells the observer, once.
    pub(crate) fn finish(mut self, outcome: DispatchOutcome) {
        self.report(outcome);
    }

    fn report(&mut self, outcome: DispatchOutcome) {
        if std::mem::replace(&mut self.reported, true) {
            return;
        }
        self.span.record("outcome", outcome.as_str());
        match outcome {
            DispatchOutcome::Ok => {}
            DispatchOutcome::Error => crate::trace::record_failure(&self.span, "tool_error", None),
            DispatchOutcome::Panic | DispatchOutcome::Fault => {
                let code = mcp_kernel_wire::code::INTERNAL_ERROR;
                crate::trace::record_failure(&self.span, &code.to_string(), Some(code));
            }
            DispatchOutcome::Cancelled => crate::trace::record_failure(&self.span, "cancelled", None),
        }
        match self.watch {
            Watch::Nobody => {}
            Watch::Event(observer, started) => {
                let event = DispatchEvent {
                    server: self.server,
                    tool: self.tool,
                    elapsed: started.elapsed(),
                    outcome,
                };
                notify(observer, &event);
            }
            Watch::Bound(recorder, started) => {
                if std::panic::catch_unwind(AssertUnwindSafe(|| recorder.finish(started, outcome))).is_err() {
                    tracing::error!(server = self.server, tool = self.tool, "dispatch recorder panicked");
                }
            }
        }
    }
}

impl Drop for PendingDispatch<'_> {
    fn drop(&mut self) {
        self.report(DispatchOutcome::Cancelled);
    }
}
