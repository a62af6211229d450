//! The manual: the user-facing documents of `docs/`, one module each, so that they are read where the
//! API is (on docs.rs) and their Rust examples are compiled and run as doctests.
//!
//! These modules hold no items. Their text is the repository's `docs/*.md`, included verbatim, so a
//! link from one document to another (`[the HTTP transport](http.md)`) is relative to `docs/` and does
//! not lead anywhere here: the document it names is the module of the same name (`host-contract.md` is
//! [`host_contract`]), `mcp-2026-07-28.md` being [`mcp_rules`].
//!
//! | module | document |
//! |---|---|
//! | [`architecture`] | the crates and which depends on which, the path of a request, where each rule lives |
//! | [`host_contract`] | the catalog, typed and plain registries, dispatch, readers, completions, input required |
//! | [`protocol`] | revisions and eras, the order of the checks, results, errors, pagination |
//! | [`notifications`] | change notifications: `subscriptions/listen`, the notifier, the hub, legacy sessions |
//! | [`tasks`] | long-running tools: the tasks extension, task modes, input, cancellation, bounds, the store |
//! | [`http`] | the stateless Streamable HTTP transport: hooks, refusals, CORS, OAuth resource server |
//! | [`deploy`] | many instances behind a proxy: the tested nginx configuration, keys, rolling restarts |
//! | [`stdio`] | the newline-delimited stdio transport |
//! | [`tracing`] | traces across instances: W3C trace context in `_meta` and headers, the span, OpenTelemetry |
//! | [`validation`] | JSON Schema 2020-12 validation of tool and prompt arguments |
//! | [`threat_model`] | who is trusted for what, and what each refusal protects |
//! | [`will_not_implement`] | what the package will never do, each with its tests |
//! | [`mcp_rules`] | the MCP rules the code cites (`S-n`), and where each is enforced and tested |
//! | [`differences`] | where mcp-kernel differs from the reference design, and why |
//! | [`performance`] | what is measured, with which command, and the results |
//! | [`connectome`] | the connectome: the declared and observed graphs and their diff |
//! | [`connectome_canonical`] | the canonical bytes of a connectome graph (`schema_version` 3) |
//! | [`connectome_observe`] | the observed connectome: the dispatch collector and the span tracer |
//! | [`packaging`] | the published crates, the facade's features and what each costs, the build profile |
//! | [`connectome_render`] | rendering the connectome's exports: `connectome render` |

// The connectome chapters are included with the `connectome` feature only (docs.rs builds with every
// feature): their Rust examples use the connectome crates, which the feature brings.
//
// The documents are read from `manual/`, whose files link to the workspace's `docs/`: the package
// carries them as plain files (`cargo package` follows a link to a file), so it builds on its own.

/// The architecture: the crates and their dependencies, the path of one request, where each rule lives.
///
#[doc = include_str!("../manual/architecture.md")]
pub mod architecture {}

/// The host contract: the catalog, the typed and plain registries, dispatch, readers and completions.
///
#[doc = include_str!("../manual/host-contract.md")]
pub mod host_contract {}

/// The protocol core: one decoded JSON-RPC message in, at most one response out, on every transport.
///
#[doc = include_str!("../manual/protocol.md")]
pub mod protocol {}

/// Change notifications: `subscriptions/listen`, the host's notifier, the hub, legacy sessions.
///
#[doc = include_str!("../manual/notifications.md")]
pub mod notifications {}

/// Long-running tools: the tasks extension, task modes, input, cancellation, bounds, the store.
///
#[doc = include_str!("../manual/tasks.md")]
pub mod tasks {}

/// The stateless Streamable HTTP transport (`mcp-kernel-http`, feature `http`).
///
#[doc = include_str!("../manual/http.md")]
pub mod http {}

/// Many stateless instances behind a proxy: the tested nginx configuration, keys, restarts, limits.
///
#[doc = include_str!("../manual/deploy.md")]
pub mod deploy {}

/// The newline-delimited stdio transport (`mcp-kernel-stdio`, feature `stdio`).
///
#[doc = include_str!("../manual/stdio.md")]
pub mod stdio {}

/// Tracing: the span of each request, the W3C trace context it continues, the `opentelemetry` feature.
///
#[doc = include_str!("../manual/tracing.md")]
pub mod tracing {}

/// Validation of tool and prompt arguments against JSON Schema draft 2020-12 (`mcp-kernel-schema`).
///
#[doc = include_str!("../manual/validation.md")]
pub mod validation {}

/// The threat model: who is trusted for what.
///
#[doc = include_str!("../manual/threat-model.md")]
pub mod threat_model {}

/// What the package will not implement, whatever is asked of it.
///
#[doc = include_str!("../manual/will-not-implement.md")]
pub mod will_not_implement {}

/// The MCP rules the code cites (`MCP S-14`), each with where mcp-kernel honours it.
///
#[doc = include_str!("../manual/mcp-2026-07-28.md")]
pub mod mcp_rules {}

/// Where mcp-kernel differs from the reference design, and why.
///
#[doc = include_str!("../manual/differences.md")]
pub mod differences {}

/// Performance: what is measured, with which command, and how to read the numbers.
///
#[doc = include_str!("../manual/performance.md")]
pub mod performance {}

/// The connectome: the declared and observed graphs of a composed MCP system, and their diff.
///
#[cfg_attr(feature = "connectome", doc = include_str!("../manual/connectome.md"))]
#[cfg_attr(
    not(feature = "connectome"),
    doc = "Built without the `connectome` feature: this chapter's examples use it."
)]
pub mod connectome {}

/// The canonical bytes of a connectome graph (`schema_version` 3): the contract an encoder follows.
///
#[cfg_attr(feature = "connectome", doc = include_str!("../manual/connectome-canonical.md"))]
#[cfg_attr(
    not(feature = "connectome"),
    doc = "Built without the `connectome` feature: this chapter's examples use it."
)]
pub mod connectome_canonical {}

/// The observed connectome (`connectome-observe`): the dispatch collector and the optional span tracer.
///
#[cfg_attr(feature = "connectome", doc = include_str!("../manual/connectome-observe.md"))]
#[cfg_attr(
    not(feature = "connectome"),
    doc = "Built without the `connectome` feature: this chapter's examples use it."
)]
pub mod connectome_observe {}

/// Rendering the connectome's JSON exports as Mermaid, DOT or one HTML page (`connectome render`).
///
#[cfg_attr(feature = "connectome", doc = include_str!("../manual/connectome-render.md"))]
#[cfg_attr(
    not(feature = "connectome"),
    doc = "Built without the `connectome` feature: this chapter's examples use it."
)]
pub mod connectome_render {}

/// Packaging: the published crates, what `cargo xtask package` proves, the features and their cost.
///
#[doc = include_str!("../manual/packaging.md")]
pub mod packaging {}
