//! The era-aware core of mcp-kernel and the host contract.
//!
//! A host describes what it offers ([`Catalog`] → [`Capabilities`]: tools, resources and prompts) and
//! supplies the functions that do the work ([`Dispatch`], [`ResourceReader`], [`PromptReader`]). The
//! [`ServerBuilder`] checks all of it once and compiles an immutable snapshot; [`Server::handle`] then
//! answers one decoded message at a time, refusing every malformed request, and never decides what a
//! tool does.
//!
//! This crate does no I/O and depends on no async runtime: it awaits only the host's futures.
//!
//! ```
//! use mcp_kernel_router::{Capabilities, Mode, Server, ToolCall, ToolOutput, ToolError, ToolSpec};
//! use serde_json::json;
//!
//! let catalog = Capabilities {
//!     tools: vec![ToolSpec::new("echo", Mode::ReadOnly).input_schema(json!({
//!         "type": "object",
//!         "properties": {"message": {"type": "string"}},
//!         "required": ["message"]
//!     }))],
//!     ..Capabilities::default()
//! };
//! let server = Server::builder(catalog)
//!     .dispatch(|call: ToolCall| async move {
//!         Ok::<_, ToolError>(ToolOutput::text(call.arguments.get_str("message").unwrap_or_default()))
//!     })
//!     .build()
//!     .expect("a valid catalog");
//! # let _ = server;
//! ```
#![forbid(unsafe_code)]

mod arguments;
mod builder;
pub mod cursor;
mod guard;
mod host;
mod methods;
mod observe;
mod options;
mod server;
mod snapshot;
mod spec;
pub mod template;

pub use arguments::Arguments;
pub use builder::{BuildError, ServerBuilder};
pub use host::{
    BoxFuture, Dispatch, Era, GetPrompt, PromptOutput, PromptReader, ReadResource, ReaderError,
    RequestContext, ResourceReader, ToolCall, ToolError, ToolOutput,
};
pub use observe::{DispatchEvent, DispatchObserver, DispatchOutcome};
pub use options::{CacheHints, DEFAULT_PAGE_SIZE, DEFAULT_SERVER_NAME, PACKAGE_VERSION, ServerOptions};
pub use server::{Control, Handled, Server, ToolHeaders};
pub use spec::{
    Capabilities, Catalog, Mode, PromptArgument, PromptSpec, ResourceEntry, ResourceSpec,
    ResourceTemplateSpec, ToolSpec,
};

pub use mcp_kernel_schema as schema;
pub use mcp_kernel_wire as wire;
