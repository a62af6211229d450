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

use std::panic::AssertUnwindSafe;
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
}

/// Tells `observer` of one call; a panic in the observer is caught and logged by names only (the
/// package never logs a payload; the process's panic hook sees the panic first).
pub(crate) fn notify(observer: &dyn DispatchObserver, event: &DispatchEvent<'_>) {
    if std::panic::catch_unwind(AssertUnwindSafe(|| observer.dispatched(event))).is_err() {
        tracing::error!(server = event.server, tool = event.tool, "dispatch observer panicked");
    }
}

/// One call in dispatch: reports its outcome once, or [`DispatchOutcome::Cancelled`] if it is dropped
/// first (the future holding it was dropped by the transport).
pub(crate) struct PendingDispatch<'a> {
    observer: Option<&'a dyn DispatchObserver>,
    server: &'a str,
    tool: &'a str,
    started: Option<std::time::Instant>,
    span: tracing::Span,
    reported: bool,
}

impl<'a> PendingDispatch<'a> {
    /// Starts the clock when an observer is set.
    pub(crate) fn start(
        observer: Option<&'a dyn DispatchObserver>,
        server: &'a str,
        tool: &'a str,
        span: tracing::Span,
    ) -> Self {
        let started = observer.map(|_| std::time::Instant::now());
        PendingDispatch { observer, server, tool, started, span, reported: false }
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
        if let (Some(observer), Some(started)) = (self.observer, self.started) {
            let event =
                DispatchEvent { server: self.server, tool: self.tool, elapsed: started.elapsed(), outcome };
            notify(observer, &event);
        }
    }
}

impl Drop for PendingDispatch<'_> {
    fn drop(&mut self) {
        self.report(DispatchOutcome::Cancelled);
    }
}
