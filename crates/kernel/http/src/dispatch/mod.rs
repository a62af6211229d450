//! The pipeline's tail, one for both paths: the 2026-07-28 path (`service.rs`) and the 2025-11-25 path
//! (`legacy.rs`) each check a message by their own rules, then hand it here, where the request's
//! [`Inbound`] is assembled, the core run (as an SSE stream when it notifies, `sse.rs`), and its answer
//! mapped to HTTP by the path's rules (the statuses of `response/status.rs`).
//!
//! This folder is what runs a checked message, after every refusal layer has passed (steps 11 to 11b
//! of [`McpService`](crate::McpService)'s table): `core.rs` hands it to the core behind the one panic
//! guard, `sse.rs` decides when a request is answered as an SSE stream and runs the core for it, and
//! `listen/` serves `subscriptions/listen` as a stream that stays open (its bounds, its pump, its end).
//!
//! Threats: a panic in the host's code or the core dropping the connection instead of being answered
//! (500, or -32603 on a stream already open), a stream that speaks out of turn (only the request's
//! own notifications, then its response), and listen streams that hold the server: too many of them,
//! a reader that never reads, a shutdown that cuts them (`listen/`).

pub(crate) mod core;
pub(crate) mod listen;
pub(crate) mod sse;

use std::future::Future;

use http::Response;

use mcp_kernel_router::sessions::StoredSession;
use mcp_kernel_router::transport::{Admitted, Inbound, Revisions};
use mcp_kernel_router::{Extensions, Server};
use mcp_kernel_wire::trace::TraceCarrier;
use mcp_kernel_wire::{Envelope, ErrorObject, Response as JsonRpcResponse};

use crate::response::body::ResponseBody;
use crate::response::legacy_answer;
use crate::response::refusal::accepted;
use crate::response::status;
pub(crate) use sse::MakeChannel;
use sse::Outcome;

/// The path a message was admitted on: what the core serves it, and how its answer becomes HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// 2026-07-28: the status follows the JSON-RPC error (`response/status.rs`).
    Modern,
    /// 2025-11-25, sessionless: no cache hints, 200 whatever the error (a host fault, 500), and a
    /// request the core leaves silent answered -32601.
    Legacy,
}

/// What the transport attaches to a checked message.
pub(crate) struct Attached<'a> {
    /// The caller's principal and whatever the hooks added.
    pub(crate) extensions: Extensions,
    /// The request's W3C trace context, from its headers.
    pub(crate) carrier: TraceCarrier,
    /// What the core answered about the message before the header checks (`Server::admit`): handed
    /// back to it, so that the visibility filter decides once per request.
    pub(crate) admitted: Admitted<'a>,
    /// The stored session a legacy request is served in (`session/`), if any.
    pub(crate) session: Option<InSession>,
}

/// A legacy request's stored session, and how its server-to-client requests reach the client.
pub(crate) struct InSession {
    /// The session, as resumed for this request.
    pub(crate) stored: StoredSession,
    /// Makes the request's client channel from the sender of its SSE stream (`sse.rs`): a request
    /// that may stream then streams, so that a server-to-client request has a stream to go on.
    pub(crate) channel: Option<MakeChannel>,
}

/// Runs the core on a checked message and answers it as `path` answers.
///
/// The request's future is as large as its largest path (and a debug build copies it whole into its
/// allocation), so this layer keeps little beside the core's future: the message and what is
/// attached are its own (moved from, not copied into locals), and the core is awaited right here,
/// behind the panic guard (`core.rs`), so that its future is built in place.
#[inline]
#[allow(
    clippy::manual_async_fn,
    reason = "an `async fn` would keep a second copy of the message (see above)"
)]
pub(crate) fn dispatch<'s, 'a>(
    server: &'s Server,
    message: Envelope,
    version: http::Version,
    attached: Attached<'a>,
    path: Path,
) -> impl Future<Output = Response<ResponseBody>> + Send + use<'s, 'a> {
    // A block, not an `async fn`: its arguments are used where they are, not moved into locals first
    // (an `async fn` would keep both the argument and the local of every one borrowed before it moves).
    async move {
        let (revisions, finish): (Revisions, fn(&mut JsonRpcResponse)) = match path {
            Path::Modern => (Revisions::Stateless, |_| {}),
            Path::Legacy => (Revisions::Legacy, legacy_answer::strip_cache_hints),
        };
        // The core stays silent for `notifications/initialized` and `exit` even when they carry an id
        // (protocol.md B-3); over 2025-11-25 HTTP a request always gets an answer (S-61).
        let silent_request = (path == Path::Legacy && message.has_id()).then(|| message.echoable_id());
        let mut inbound = Inbound::new()
            .admitted(&attached.admitted)
            .extensions(attached.extensions)
            .revisions(revisions)
            .sessionless()
            .trace_carrier(attached.carrier)
            .network(crate::trace::network(version));
        let channel = match attached.session {
            Some(InSession { stored, channel }) => {
                inbound = inbound.stored_session(stored);
                channel
            }
            None => None,
        };
        let streams = sse::Streams { may_notify: attached.admitted.may_notify(), channel };
        let outcome = if sse::wants_stream(&message, &streams) {
            match sse::stream(server, message, inbound, streams, finish).await {
                Outcome::Streaming(stream) => return stream,
                Outcome::Done(outcome) => outcome,
            }
        } else {
            let id = message.echoable_id();
            let handled = core::guard(server.handle_envelope(message, inbound)).await;
            core::settle(handled, id).map_err(|panicked| core::fault(panicked, version))
        };
        match (outcome, path) {
            (Err(fault), _) => fault,
            (Ok(None), _) => match silent_request {
                Some(id) => {
                    legacy_answer::answer(JsonRpcResponse::error(id, ErrorObject::method_not_found()))
                }
                None => accepted(),
            },
            (Ok(Some(mut response)), Path::Legacy) => {
                finish(&mut response);
                legacy_answer::answer(response)
            }
            (Ok(Some(response)), Path::Modern) => modern_answer(response),
        }
    }
}

/// A 2026-07-28 answer as JSON, its status following its error (`response/status.rs`).
/// A large result is sent from the buffer it was encoded into (`status::json_answer`).
pub(crate) fn modern_answer(response: JsonRpcResponse) -> Response<ResponseBody> {
    status::json_answer(response, status::for_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::body::COPY_BELOW;
    use crate::response::body::tests::frames;
    use http::StatusCode;
    use serde_json::json;

    /// An encoded result of `len` bytes or more, and where its bytes are.
    fn encoded_result(len: usize) -> (JsonRpcResponse, *const u8) {
        let raw = serde_json::value::to_raw_value(&json!({"text": "x".repeat(len)})).unwrap();
        let at = raw.get().as_ptr();
        (JsonRpcResponse::encoded(json!(9), raw), at)
    }

    #[tokio::test]
    async fn a_large_result_is_answered_from_the_buffer_it_was_encoded_into() {
        for answer in [modern_answer, legacy_answer::answer] {
            let (response, at) = encoded_result(COPY_BELOW);
            let whole = response.to_bytes();
            let answer = answer(response);
            assert_eq!(answer.status(), StatusCode::OK);
            let frames = frames(answer.into_body()).await;
            assert!(frames.iter().any(|frame| frame.as_ptr() == at), "copied: {} frames", frames.len());
            assert_eq!(frames.concat(), whole);
        }
    }

    #[tokio::test]
    async fn a_small_result_is_answered_in_one_frame() {
        for answer in [modern_answer, legacy_answer::answer] {
            let (response, _) = encoded_result(16);
            let whole = response.to_bytes();
            let frames = frames(answer(response).into_body()).await;
            assert_eq!(frames, [bytes::Bytes::from(whole)]);
        }
    }
}
