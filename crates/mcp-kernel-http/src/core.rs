//! The core's call from the transport: one decoded message and what the transport attached, handed
//! to `Server::handle_envelope`, with a panic in it answered 500 rather than a dropped connection.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use http::{Response, StatusCode};
use mcp_kernel_router::{Inbound, Server};
use mcp_kernel_wire::{Envelope, ErrorObject, Response as JsonRpcResponse};

use crate::body::ResponseBody;
use crate::refusal::Refusal;

/// The core's answer: a response, none, or (`Err`) the 500 answering a panic.
pub(crate) type CoreOutcome = Result<Option<JsonRpcResponse>, Response<ResponseBody>>;

/// Runs the core on one message with what the transport attached: its response, if any, or (`Err`)
/// the 500 answering a panic in it.
pub(crate) async fn run_core(
    server: &Server,
    message: Envelope,
    version: http::Version,
    inbound: Inbound,
) -> CoreOutcome {
    let id = message.echoable_id();
    let handled = AssertUnwindSafe(server.handle_envelope(message, inbound)).catch_unwind().await;
    let Ok(handled) = handled else {
        tracing::error!("the core panicked; answered 500");
        return Err(Refusal::post_body(StatusCode::INTERNAL_SERVER_ERROR, ErrorObject::internal(), id)
            .into_response(version));
    };
    Ok(handled.response)
}
