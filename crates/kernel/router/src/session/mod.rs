//! `2025-11-25` sessions and the requests a server sends to a client.
//!
//! Two seams, shared by every transport that serves legacy clients:
//!
//! * [`ClientChannel`] (`channel.rs`): where a legacy request's server-to-client requests go and where
//!   their answers come back. The core's bridge asks through it when a host answers "input required"
//!   to a `2025-11-25` client, then calls the host again with the answers as its retry input. The
//!   stdio transport's channel is the connection; the HTTP transport's is the stream of the POST that
//!   needs it, with answers routed through the session store.
//! * The bridge (`bridge.rs`, with the `2025-11-25` forms of the host's requests in `legacy_input.rs`):
//!   a legacy `tools/call`, `resources/read` or `prompts/get` whose host answers "input required" is
//!   asked of the client through the channel and retried with the answers.
//! * [`SessionStore`] (`store.rs`): where an HTTP transport keeps its legacy sessions — in process by
//!   default, in a shared engine (Redis) when many instances serve one endpoint — and through which a
//!   client's answer POSTed to one instance reaches the instance waiting for it;
//!   [`InProcessSessionStore`](memory::InProcessSessionStore) (`memory/`) is the default.
//!
//! A transport attaches the session a request is served in with
//! [`Inbound::stored_session`](crate::transport::Inbound::stored_session) (`stored.rs`), and opens the
//! session's own stream of notifications with [`Server::session_stream`](crate::Server::session_stream)
//! (`stream.rs`).

pub(crate) mod bridge;
pub(crate) mod channel;
pub(crate) mod legacy_input;
pub(crate) mod memory;
pub(crate) mod store;
pub(crate) mod stored;
pub(crate) mod stream;
