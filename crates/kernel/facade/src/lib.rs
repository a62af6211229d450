//! mcp-kernel: a Model Context Protocol server core.
//!
//! It speaks MCP `2026-07-28` (stateless) and `2025-11-25` (legacy). The host injects the catalog
//! (tools, resources, prompts) and the functions that do the work; the package refuses every malformed
//! request and decides nothing about what a tool does.
//!
//! This crate only stitches the layered crates together; each can also be used on its own:
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`wire`] | `mcp-kernel-wire` | JSON-RPC and MCP serde types, error objects, the bounded JSON reader |
//! | [`schema`] | `mcp-kernel-schema` | JSON Schema 2020-12 validation of tool arguments, `x-mcp-header` rules |
//! | [`router`] | `mcp-kernel-router` | the host contract and the era-aware core [`Server`] (the root and modules below are its own) |
//! | [`stdio`] | `mcp-kernel-stdio` | newline-delimited JSON-RPC over stdin/stdout (feature `stdio`) |
//! | [`http`] | `mcp-kernel-http` | the stateless Streamable HTTP service, a `tower::Service` (feature `http`) |
//! | `redis` | `mcp-kernel-redis` | the change hub, the task store and the legacy session store shared through Redis, for many instances behind a proxy (feature `redis`) |
//! | `connectome` | `connectome-*` | the connectome surface: `connectome://` resources, the copyable tool, the collector (feature `connectome`) |
//!
//! The root holds the host's everyday API — the server and its builder, the catalog ([`Listing`],
//! [`ToolSpec`], [`Tools`]), what a handler is handed and returns ([`RequestContext`], [`ToolCall`],
//! [`ToolOutput`], [`ToolError`]) — and the rest is grouped by reader, one module each:
//!
//! | module | who reads it | what it holds |
//! |---|---|---|
//! | [`resources`] | a host serving resources | resource and template specs, the typed registry, the reader and its request |
//! | [`prompts`] | a host serving prompts | prompt specs, the typed registry, the renderer, its request and output |
//! | [`completion`] | a host answering `completion/complete` | the completer, its request and answer |
//! | [`visibility`] | a host whose lists vary per caller | the per-request filter and the item it is asked about |
//! | [`notify`] | a host reporting progress or logging | the progress reporter, log levels |
//! | [`observe`] | a host watching dispatch | the dispatch observer and its events |
//! | [`options`] | a host naming itself or tuning pages and caching | server options, cache hints, identity, defaults |
//! | [`sealing`] | a host answering "input required" | the request-state sealer, its keys, clock and lifetime |
//! | [`testing`] | a host's tests | the in-process [`testing::TestClient`] and its results |
//! | [`transport`] | a transport's author (the stdio and HTTP crates, or a third party) | [`Server::admit`]'s answer, what a transport attaches to a message, the replaceable [`transport::LiveServer`] |
//!
//! The root holds at most 45 names, counted by this crate's `tests/facade_root.rs`.
//!
//! Both transports are default features; a stdio-only host uses
//! `default-features = false, features = ["stdio", "schemars"]` and pulls in no HTTP stack. The
//! `connectome` feature is off: it serves nothing until the host wires its surface, and adds 15 crates
//! to the build (about 6 % of a default host's release build, 0.5 MiB once used; measured side by side
//! by `cargo xtask bench features`, in [`manual::packaging`]).
//!
//! The `schemars` feature (default) adds [`Tools::add_derived`], [`Tools::add_derived_input`] and
//! [`Prompts::add_derived`](prompts::Prompts::add_derived), which derive schemas from the handler's types. It is on by default because
//! the typed form is the one the README teaches and it costs a host nothing at run time: schemars runs
//! once per tool, when the server is built, and its derive shares `syn` with serde's. A host that writes
//! every schema by hand turns it off to skip compiling schemars.
//!
//! The `opentelemetry` feature (off) makes each request's span a child of the caller's span in what an
//! OpenTelemetry exporter sends, through `tracing-opentelemetry`; without it the span records the
//! caller's `trace_id` and `parent_span_id` as fields. See [`manual::tracing`].
//!
//! The `weather` example (`cargo run --example weather --features connectome`) is a complete host, over stdio or, with
//! `-- --http 127.0.0.1:4000`, over HTTP at `/mcp`.
//!
//! [`shutdown_signal`] completes at Ctrl-C or `SIGTERM`: handed to `http::serve` or to
//! `stdio::StdioOptions::shutdown_on`, it makes a rolling restart drain the process (stop taking work, answer
//! what was taken, exit 0) instead of cutting it off. Both examples use it.
//!
//! The [`manual`] holds the user-facing documents: the architecture, the host contract, the protocol
//! core, each transport, validation, the threat model, what will not be implemented, the connectome.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "connectome")]
#[cfg_attr(docsrs, doc(cfg(feature = "connectome")))]
pub mod connectome;
pub mod manual;
#[cfg(any(feature = "stdio", feature = "http"))]
mod shutdown;
pub mod tasks;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use mcp_kernel_http as http;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use mcp_kernel_redis as redis;
pub use mcp_kernel_router as router;
pub use mcp_kernel_schema as schema;
#[cfg(feature = "stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
pub use mcp_kernel_stdio as stdio;
pub use mcp_kernel_wire as wire;
#[cfg(any(feature = "stdio", feature = "http"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "stdio", feature = "http"))))]
pub use shutdown::shutdown_signal;

// The root holds at most 45 names (`tests/facade_root.rs` counts them): the host's everyday API, the
// crates, and one module per reader or opt-in (the table above).
pub use mcp_kernel_router::{
    Arguments, BoxFuture, BuildError, Catalog, Dispatch, Era, Extensions, InputRequired, IntoToolOutput,
    Json, Listing, Mode, NoCaller, ReaderError, RequestContext, RetryInput, Server, ServerBuilder, ToolCall,
    ToolError, ToolOutput, ToolSpec, Tools, ToolsWith,
};
pub use mcp_kernel_router::{
    completion, notify, observe, options, prompts, resources, sealing, testing, transport, visibility,
};
pub use mcp_kernel_wire::ProtocolVersion;

/// The workspace README's Rust examples, compiled as doctests so that they stay true. The host's test
/// is `ignore` here: it is pasted after the host in one file, and `cargo xtask readme` builds and runs
/// the two together in a new crate.
#[cfg(doctest)]
#[doc = include_str!("../manual/workspace-README.md")]
pub struct ReadmeDoctests;

/// This crate's README (the registry's page), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
