//! The observed side of the connectome (docs/connectome.md §E, [CK-10], [CK-11]): what did happen.
//!
//! - [`Collector`]: one row per distinct edge `(from identity, to identity, kind)` with a call count, a
//!   latency sum and a maximum. It implements the router's [`DispatchObserver`], so
//!   `ServerBuilder::observe_dispatch(collector.clone())` records one `invoke` edge server → tool per
//!   call that reaches dispatch — ok, tool error or panic alike: the attempt is the edge. A call refused
//!   before dispatch (schema, unknown tool) is not an edge. Hosts record their own edges with
//!   [`Collector::observe`].
//! - Reads: [`Collector::snapshot`] (the observed [`Graph`], [CB-6]), [`Collector::sidecar_bytes`] (the
//!   call counts, [CB-5]), [`Collector::snapshot_with_timings`] (the graph and its `Timings` from one read,
//!   [CM-2]), [`Collector::latency`], [`Collector::rows`], [`Collector::size`]. A collector
//!   that is not running refuses every read with [`ObserveError::NotStarted`]: "nothing watched" is never
//!   reported as "nothing ran" (an empty graph).
//! - [`Tracer`] (optional, off by default, one at a time): module-level `invoke` edges between
//!   instrumented spans of named modules, through a [`TracerLayer`] in the host's subscriber. It sees
//!   only instrumented functions.
//!
//! **What is never recorded** ([CE-1], [CE-11]): arguments, results, error text, headers, panic payloads. The
//! router hands the observer names and a duration only; the tracer reads span metadata (module paths),
//! never field values. Names are identity and are published: a secret in a server, tool or module name
//! ends up in the signed bytes. The package never logs a panic payload either, but what reaches stderr
//! when host code panics is the host's panic hook's choice: it runs before the router catches the panic,
//! and Rust's default hook prints the message. A host that must keep payloads out of its logs installs
//! a hook that prints only the location (see `docs/connectome-observe.md`).
//!
//! ```
//! use connectome_observe::{Collector, ObserveError};
//!
//! let collector = Collector::new();
//! assert_eq!(collector.snapshot().unwrap_err(), ObserveError::NotStarted);
//! collector.start();
//! assert!(collector.snapshot().unwrap().edges().is_empty()); // watched, nothing ran
//! ```
//!
//! [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#![forbid(unsafe_code)]

mod bound;
mod collector;
mod error;
mod key;
mod snapshot;
pub mod tracer;

pub use collector::Collector;
pub use error::ObserveError;
pub use snapshot::{EdgeIds, LatencySummary, Row};
pub use tracer::{StopReason, Tracer, TracerError, TracerGuard, TracerLayer, TracerOptions};

pub use connectome_graph::Graph;
pub use mcp_kernel_router::observe::{DispatchEvent, DispatchObserver, DispatchOutcome, DispatchRecorder};

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
