//! The tracer's `tracing_subscriber` layer: inert unless a tracer session is running.
//!
//! What it sees ([CK-11]): only spans, that is, only **instrumented** code (`#[tracing::instrument]` or a
//! span entered by hand). A plain function call leaves no trace and is not an edge. A span's module is
//! the `module_path` of the callsite that created it; its caller is the module of its parent span.
//!
//! What it records: when a span whose module is one of the session's named modules (or inside one) is
//! entered for the first time, and its parent span's module differs, one module-level `invoke` edge
//! parent module → span module, through [`crate::Collector`]'s write path. Later entries of the same span
//! (an async span is entered on every poll) do not count again. It never reads a field value, so span
//! arguments (and any payload recorded in them) never reach the collector.
//!
//! [CK-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use tracing::Subscriber;
use tracing::span::Id;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use std::sync::atomic::Ordering;

use super::session::{self, ARMED};

/// Marks a span already counted (stored in the span's extensions on its first entry).
struct Counted;

/// The tracer layer: add it once to the host's subscriber; it records only while a
/// [`super::Tracer`] session runs, and costs one relaxed load per span entry otherwise.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracerLayer;

impl TracerLayer {
    /// The layer (stateless; every instance reads the one process-wide session).
    pub fn new() -> Self {
        TracerLayer
    }
}

impl<S> Layer<S> for TracerLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if !ARMED.load(Ordering::Relaxed) {
            return;
        }
        let Some(session) = session::current() else { return };
        let Some(span) = ctx.span(id) else { return };
        let Some(callee) = span.metadata().module_path() else { return };
        if !session.traces(callee) {
            return;
        }
        let Some(caller) = span.parent().and_then(|parent| parent.metadata().module_path()) else { return };
        if caller == callee {
            return;
        }
        {
            let mut extensions = span.extensions_mut();
            if extensions.get_mut::<Counted>().is_some() {
                return;
            }
            extensions.insert(Counted);
        }
        session.write(caller, callee);
    }
}
