//! The era-aware core of mcp-kernel and the host contract.
//!
//! A host describes what it offers ([`Catalog`] → [`Listing`]: tools, resources and prompts) and
//! supplies the functions that do the work ([`Dispatch`], [`ResourceReader`], [`PromptReader`], and
//! optionally a [`Completer`] for `completion/complete`). The [`ServerBuilder`] checks all of it once
//! and compiles an immutable snapshot; [`Server::handle`] then answers one decoded message at a time,
//! refusing every malformed request, and never decides what a tool does.
//!
//! Multi-round-trip requests (`2026-07-28`: a tool, resource or prompt answering "input required") are
//! opt-in: [`ServerBuilder::request_state_sealer`] with a [`StateSealer`] such as [`HmacSealer`].
//!
//! Progress (`notifications/progress`, MCP [S-52]) is opt-in per request: a transport that can deliver
//! notifications calls [`Server::handle_with_notifications`]; the host reports through
//! [`RequestContext::progress`]. Log notifications (`notifications/message`) are opt-in for the host
//! ([`ServerBuilder::log_notifications`]) and, on `2026-07-28`, per request (`_meta` `logLevel`); the
//! host logs through [`RequestContext::log`].
//!
//! This crate does no I/O and depends on no async runtime: it awaits only the host's futures.
//!
//! ```
//! use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolOutput, ToolError, ToolSpec};
//! use serde_json::json;
//!
//! let catalog = Listing {
//!     tools: vec![ToolSpec::new("echo", Mode::ReadOnly).input_schema(json!({
//!         "type": "object",
//!         "properties": {"message": {"type": "string"}},
//!         "required": ["message"]
//!     }))],
//!     ..Listing::default()
//! };
//! let server = Server::builder(catalog)
//!     .dispatch(|call: ToolCall| async move {
//!         Ok::<_, ToolError>(ToolOutput::text(call.arguments.get_str("message").unwrap_or_default()))
//!     })
//!     .build()
//!     .expect("a valid catalog");
//! # let _ = server;
//! ```
//!
//! [S-52]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod advertised;
mod answer;
mod arguments;
mod builder;
mod capability;
mod client;
mod compile;
mod cursor;
mod decoration;
mod extensions;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod guard;
mod host;
mod inbound;
mod input;
mod live;
mod log;
mod meta_keys;
mod methods;
mod observe;
mod options;
mod progress;
mod reader_error;
mod registry;
mod responses;
mod sealer;
mod server;
mod snapshot;
mod spec;
mod state;
mod template;
mod template_index;
mod trace;
mod visibility;
#[cfg(test)]
mod wire_order;

pub use arguments::Arguments;
pub use builder::ServerBuilder;
pub use client::{Called, ClientError, TestClient};
pub use compile::BuildError;
pub use extensions::Extensions;
pub use host::{
    BoxFuture, Completer, Completion, CompletionArgument, CompletionRef, CompletionRequest, Dispatch, Era,
    GetPrompt, PromptOutput, PromptReader, ReadResource, ReaderError, RequestContext, ResourceReader,
    ToolCall, ToolError, ToolOutput,
};
pub use inbound::{Inbound, Revisions};
pub use input::{InputRequired, RetryInput};
pub use live::LiveServer;
pub use log::LogLevel;
pub use observe::{DispatchEvent, DispatchObserver, DispatchOutcome};
pub use options::{
    CacheHints, DEFAULT_PAGE_SIZE, DEFAULT_SERVER_NAME, HostIdentity, PACKAGE_VERSION, ServerOptions,
};
pub use progress::{MAX_PROGRESS_TOKEN_BYTES, NotificationSink, Progress, progress_token};
pub use registry::{IntoToolOutput, Json, Prompts, PromptsWith, Resources, ResourcesWith, Tools, ToolsWith};
pub use sealer::{HmacSealer, KeyError, KeyPosition, KeyTooShort, StateSealer};
pub use server::{Control, Handled, Server, ToolHeaders};
pub use spec::{
    Catalog, Listing, Mode, PromptArgument, PromptSpec, ResourceEntry, ResourceSpec, ResourceTemplateSpec,
    ToolSpec,
};
pub use state::{Clock, DEFAULT_REQUEST_STATE_TTL};
pub use template::TemplateMatch;
pub use trace::Network;
pub use visibility::{Listed, Visibility};

pub use mcp_kernel_schema as schema;
pub use mcp_kernel_wire as wire;

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
