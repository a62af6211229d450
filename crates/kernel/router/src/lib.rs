//! The era-aware core of mcp-kernel and the host contract.
//!
//! A host describes what it offers ([`Catalog`] → [`Listing`]: tools, resources and prompts) and
//! supplies the functions that do the work ([`Dispatch`], [`ResourceReader`](resources::ResourceReader),
//! [`PromptReader`](prompts::PromptReader), and optionally a [`Completer`](completion::Completer) for
//! `completion/complete`). The [`ServerBuilder`] checks all of it once
//! and compiles an immutable snapshot; [`Server::handle`] then answers one decoded message at a time,
//! refusing every malformed request, and never decides what a tool does.
//!
//! Multi-round-trip requests (`2026-07-28`: a tool, resource or prompt answering "input required") are
//! opt-in: [`ServerBuilder::request_state_sealer`] with a [`StateSealer`](sealing::StateSealer) such as
//! [`HmacSealer`](sealing::HmacSealer).
//!
//! Progress (`notifications/progress`, MCP [S-52]) is opt-in per request: a transport that can deliver
//! notifications attaches a sink ([`transport::Inbound::notifications`]); the host reports through
//! [`RequestContext::progress`]. Log notifications (`notifications/message`) are opt-in for the host
//! ([`ServerBuilder::log_notifications`]) and, on `2026-07-28`, per request (`_meta` `logLevel`); the
//! host logs through [`RequestContext::log`].
//!
//! This crate does no I/O and depends on no async runtime: it awaits only the host's futures.
//!
//! The root holds the host's everyday API; the rest is grouped by reader: [`resources`], [`prompts`],
//! [`completion`], [`visibility`], [`notify`], [`observe`], [`options`] and [`sealing`] for a host that
//! uses those parts of the contract, [`testing`] for its tests, and [`transport`] for a transport's
//! author ([`Server::admit`] and [`Server::handle_envelope`] are a transport's two calls).
//!
//! The `test-util` feature (off) adds test-only views of a server, for tests that ask a transport's
//! questions one at a time, handle a JSON value with notifications, or narrow a server's revisions
//! (`Server::tool_headers`, `tool_headers_for`, `context_for`, `may_notify`, `handle_inbound`,
//! `handle_with_notifications`, `restricted_to`). It is not for transports.
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

mod builder;
mod catalog;
mod contract;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod live;
mod methods;
pub mod notify;
pub mod options;
mod request;
pub mod sealing;
mod server;
mod session;
pub mod tasks;
#[cfg(feature = "test-util")]
mod test_util;
pub mod testing;
mod trace;
#[cfg(test)]
mod wire_order;

pub use builder::ServerBuilder;
pub use catalog::compile::BuildError;
pub use catalog::export::{CATALOG_FORMAT, CATALOG_VERSION};
pub use catalog::registry::{IntoToolOutput, Json, Tools, ToolsWith};
pub use catalog::spec::{Catalog, Listing, Mode, ToolSpec};
pub use contract::{
    BoxFuture, Dispatch, Era, NoCaller, ReaderError, RequestContext, ToolCall, ToolError, ToolOutput,
};
pub use request::arguments::Arguments;
pub use request::extensions::Extensions;
pub use request::input::{InputRequired, RetryInput};
pub use server::Server;

pub use mcp_kernel_schema as schema;
pub use mcp_kernel_wire as wire;

/// Resources: the specs a host lists, the typed registry that declares each with its reader, what
/// a reader is handed, and the per-caller [`ResourceSource`](resources::ResourceSource)
/// (`resources/list`, `resources/templates/list`, `resources/read`).
pub mod resources {
    pub use crate::catalog::registry::{Resources, ResourcesWith};
    pub use crate::catalog::source::ResourceSource;
    pub use crate::catalog::spec::{ResourceEntry, ResourceSpec, ResourceTemplateSpec};
    pub use crate::catalog::template::TemplateMatch;
    pub use crate::contract::{ReadResource, ResourceReader};
}

/// Prompts: the specs a host lists, the typed registry that declares each with its renderer, and what
/// a renderer is handed and returns (`prompts/list`, `prompts/get`).
pub mod prompts {
    pub use crate::catalog::registry::{Prompts, PromptsWith};
    pub use crate::catalog::spec::{PromptArgument, PromptSpec};
    pub use crate::contract::{GetPrompt, PromptOutput, PromptReader};
}

/// Completions (`completion/complete`): the host's completer, opted in with
/// [`ServerBuilder::completer`], and what it is asked and answers.
pub mod completion {
    pub use crate::contract::{Completer, Completion, CompletionArgument, CompletionRef, CompletionRequest};
}

/// The dispatch observer ([`ServerBuilder::observe_dispatch`]): one callback told of every `tools/call` that
/// reaches dispatch, and what it is told.
pub mod observe {
    pub use crate::trace::observe::{DispatchEvent, DispatchObserver, DispatchOutcome, DispatchRecorder};
}

/// Per-principal lists ([`ServerBuilder::visibility`]): the host's filter and the listed item it is
/// asked about.
pub mod visibility {
    pub use crate::catalog::visibility::{Listed, Visibility};
}

/// What a transport (the stdio and HTTP crates, or a third party's) needs: [`Server::admit`] answers
/// its own checks of one message in one call ([`Admitted`](transport::Admitted)), and
/// [`Server::handle_envelope`] serves the message with what the transport attaches
/// ([`Inbound`](transport::Inbound)): the caller's extensions, a notification sink, the revisions it
/// serves, the trace context and network it read. A [`LiveServer`](transport::LiveServer) is the
/// replaceable server a transport serves.
pub mod transport {
    pub use crate::live::LiveServer;
    pub use crate::notify::listen::Listen;
    pub use crate::notify::progress::{NotificationSink, progress_token};
    pub use crate::notify::session::{LegacyNotifications, LegacySession};
    pub use crate::request::admitted::{Admitted, ToolHeaders};
    pub use crate::request::inbound::{Inbound, Revisions};
    pub use crate::server::{Control, Handled};
    pub use crate::session::bridge::MAX_BRIDGE_ROUNDS;
    pub use crate::session::channel::{ClientChannel, ClientFault, SharedChannel};
    pub use crate::trace::Network;
}

/// `2025-11-25` sessions over HTTP: the [`SessionStore`](sessions::SessionStore) they are kept in (in
/// process by default, [`InProcessSessionStore`](sessions::InProcessSessionStore), or shared by many
/// instances), what it holds and its bounds, the session a request is served in
/// ([`StoredSession`](sessions::StoredSession)) and the stream of its notifications
/// ([`SessionStream`](sessions::SessionStream)).
pub mod sessions {
    pub use crate::session::memory::InProcessSessionStore;
    pub use crate::session::store::{
        MAX_STORED_SUBSCRIPTION_BYTES, ReplyWait, SessionEdit, SessionError, SessionLimits, SessionRecord,
        SessionStore,
    };
    pub use crate::session::stored::{StoredSession, new_session_id};
    pub use crate::session::stream::{SessionStream, StreamCheck, StreamRefused};
    pub use crate::tasks::owner::{network_digest, principal_digest};
}

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
