//! The core's call from the transport: one decoded message and what the transport attached, handed
//! to `Server::handle_envelope` behind the one panic guard, so that a panic in it is answered (500, or
//! -32603 on a stream already open) rather than a dropped connection.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use futures_util::future::CatchUnwind;
use http::{Response, StatusCode};
use serde_json::Value;

use mcp_kernel_router::Server;
use mcp_kernel_router::transport::{Handled, Inbound};
use mcp_kernel_wire::{Envelope, ErrorObject, Response as JsonRpcResponse};

use crate::response::body::ResponseBody;
use crate::response::refusal::Refusal;

/// The core's answer: a response, none, or (`Err`) the 500 answering a panic.
pub(crate) type CoreOutcome = Result<Option<JsonRpcResponse>, Response<ResponseBody>>;

/// The core panicked on a message: its echoable id, for the error that replaces the lost response.
pub(crate) struct Panicked {
    /// The message's id (`null` when it had none worth echoing).
    pub(crate) id: Value,
}

/// The one panic guard, around the core's future for one message: what it resolves to goes to
/// [`settle`]. Awaited where the core's future is made (`server.handle_envelope(..)` as the argument),
/// so that the future is built in place in the request's own: a future handed back from a function
/// that does any work is moved, whole, into the one awaiting it.
pub(crate) fn guard<F: Future>(core: F) -> CatchUnwind<AssertUnwindSafe<F>> {
    AssertUnwindSafe(core).catch_unwind()
}

/// What the guarded core came to: its response, if any, or (`Err`) the message's id (`id`, taken
/// before the message went to the core) when the core panicked on it (logged here).
pub(crate) fn settle(
    handled: std::thread::Result<Handled>,
    id: Value,
) -> Result<Option<JsonRpcResponse>, Panicked> {
    match handled {
        Ok(handled) => Ok(handled.response),
        Err(_) => {
            tracing::error!("the core panicked; answered -32603");
            Err(Panicked { id })
        }
    }
}

/// The 500 answering a panic in the core, on a connection of `version`.
pub(crate) fn fault(Panicked { id }: Panicked, version: http::Version) -> Response<ResponseBody> {
    Refusal::post_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal(), id).into_response(version)
}

/// The core's response to one message, if any, or (`Err`) the message's id when the core panicked on
/// it: [`guard`] and [`settle`] in one, for a core that runs in a future of its own (an SSE stream's).
pub(crate) async fn guarded(
    server: &Server,
    message: Envelope,
    inbound: Inbound,
) -> Result<Option<JsonRpcResponse>, Panicked> {
    let id = message.echoable_id();
    settle(guard(server.handle_envelope(message, inbound)).await, id)
}

/// Runs the core on one message with what the transport attached: its response, if any, or (`Err`)
/// the 500 answering a panic in it.
pub(crate) async fn run_core(
    server: &Server,
    message: Envelope,
    version: http::Version,
    inbound: Inbound,
) -> CoreOutcome {
    guarded(server, message, inbound).await.map_err(|panicked| fault(panicked, version))
}
