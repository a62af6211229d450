//! The core's call from the transport: one decoded message and what the transport attached, handed
//! to `Server::handle_envelope` behind the one panic guard, so that a panic in it is answered (500, or
//! -32603 on a stream already open) rather than a dropped connection.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use http::{Response, StatusCode};
use serde_json::Value;

use mcp_kernel_router::Server;
use mcp_kernel_router::transport::Inbound;
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

/// The one panic guard: the core's response to one message, if any, or (`Err`) the message's id when
/// the core panicked on it (logged here).
///
/// A plain function returning the core's future wrapped, not an `async fn`: the message and its
/// surroundings move straight into the core's future, instead of being kept a second time in a state
/// machine of this layer (the request's future is copied whole into its allocation, so every byte of it
/// costs on every request).
pub(crate) fn guarded<'s>(
    server: &'s Server,
    message: Envelope,
    inbound: Inbound,
) -> impl Future<Output = Result<Option<JsonRpcResponse>, Panicked>> + Send + use<'s> {
    let id = message.echoable_id();
    AssertUnwindSafe(server.handle_envelope(message, inbound)).catch_unwind().map(
        move |handled| match handled {
            Ok(handled) => Ok(handled.response),
            Err(_) => {
                tracing::error!("the core panicked; answered -32603");
                Err(Panicked { id })
            }
        },
    )
}

/// Runs the core on one message with what the transport attached: its response, if any, or (`Err`)
/// the 500 answering a panic in it.
#[allow(
    clippy::result_large_err,
    reason = "the outcome is built once per request and handed straight to the caller (`CoreOutcome`)"
)]
pub(crate) fn run_core<'s>(
    server: &'s Server,
    message: Envelope,
    version: http::Version,
    inbound: Inbound,
) -> impl Future<Output = CoreOutcome> + Send + use<'s> {
    guarded(server, message, inbound).map(move |outcome| {
        outcome.map_err(|Panicked { id }| {
            Refusal::post_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal(), id)
                .into_response(version)
        })
    })
}
