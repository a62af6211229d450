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
//! | [`router`] | `mcp-kernel-router` | the host contract and the era-aware core [`Server`] |
//! | [`stdio`] | `mcp-kernel-stdio` | newline-delimited JSON-RPC over stdin/stdout (feature `stdio`) |
//! | [`http`] | `mcp-kernel-http` | the stateless Streamable HTTP service, a `tower::Service` (feature `http`) |
//! | `connectome` | `connectome-*` | the connectome surface: `connectome://` resources, the copyable tool, the collector (feature `connectome`) |
//!
//! Both transports are default features; a stdio-only host uses
//! `default-features = false, features = ["stdio"]` and pulls in no HTTP stack.
//!
//! The `weather` example (`cargo run --example weather`) is a complete host, over stdio or, with
//! `-- --http 127.0.0.1:4000`, over HTTP at `/mcp`.
#![forbid(unsafe_code)]

#[cfg(feature = "connectome")]
pub mod connectome;
#[cfg(feature = "http")]
pub use mcp_kernel_http as http;
pub use mcp_kernel_router as router;
pub use mcp_kernel_schema as schema;
#[cfg(feature = "stdio")]
pub use mcp_kernel_stdio as stdio;
pub use mcp_kernel_wire as wire;

pub use mcp_kernel_router::{
    Arguments, BuildError, CacheHints, Listing, Catalog, Clock, Completer, Completion,
    CompletionArgument, CompletionRef, CompletionRequest, Control, Dispatch, DispatchEvent, DispatchObserver,
    DispatchOutcome, Era, GetPrompt, Handled, HmacSealer, InputRequired, LogLevel, Mode, NotificationSink,
    Progress, PromptArgument, PromptOutput, PromptReader, PromptSpec, ReadResource, ReaderError,
    RequestContext, ResourceEntry, ResourceReader, ResourceSpec, ResourceTemplateSpec, RetryInput, Server,
    ServerBuilder, StateSealer, ToolCall, ToolError, ToolOutput, ToolSpec,
};
pub use mcp_kernel_wire::ProtocolVersion;

/// The README's Rust examples, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
