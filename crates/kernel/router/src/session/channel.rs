//! Where a legacy request's server-to-client requests go (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`), and where their answers come back.
//!
//! Threat: **an answer the server did not ask for**. A transport's channel mints every request id it
//! sends (unguessable where the answer may arrive on another connection), accepts an answer only for an
//! id it issued to the same session, bounds how many of its requests wait at once and how long each
//! waits, and forgets a request whose waiter went away (the client's request was cancelled), telling
//! the client with `notifications/cancelled` where the transport can.

use std::sync::Arc;

use serde_json::Value;

use mcp_kernel_wire::ErrorObject;

use crate::contract::BoxFuture;

/// Why a server-to-client request got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientFault {
    /// The client answered with a JSON-RPC error (kept for the log; never sent on).
    #[error("the client answered the request with error {}", .0.code)]
    Refused(ErrorObject),
    /// No answer within the transport's bound.
    #[error("the client did not answer within the bound")]
    TimedOut,
    /// The connection or session ended before the answer came.
    #[error("the client's connection or session ended")]
    Closed,
    /// The session already has as many requests waiting as its bound allows.
    #[error("too many server-to-client requests are waiting on this session")]
    Busy,
    /// The answer was larger than the transport's bound.
    #[error("the client's answer was too large")]
    TooLarge,
    /// The store through which the answer travels could not be reached.
    #[error("the session store is unreachable")]
    Unavailable,
}

/// A transport's way to send one legacy client requests of its own and read their answers.
///
/// Attached to a message with [`Inbound::client`](crate::transport::Inbound::client). Only the core's
/// bridge uses it, and only for a `2025-11-25` request whose host asked for input.
pub trait ClientChannel: Send + Sync + 'static {
    /// The capabilities the client declared in its `initialize`, once it has sent
    /// `notifications/initialized` (`None`: none known, or not yet initialized, so nothing is asked of
    /// it: the 2025-11-25 lifecycle allows the server no other request than pings before that).
    fn capabilities(&self) -> Option<Arc<Value>>;

    /// Sends `method` with `params` to the client as a JSON-RPC request (the channel mints its id) and
    /// resolves with the answer's `result`. Dropping the future forgets the request.
    fn request(&self, method: &'static str, params: Value) -> BoxFuture<'static, Result<Value, ClientFault>>;
}

/// A shared channel, as [`Inbound`](crate::transport::Inbound) holds it.
pub type SharedChannel = Arc<dyn ClientChannel>;
