//! What the service answers: the response body, refusals, the status of a core answer, and the SSE
//! stream of a request that is sent notifications (the statuses of [`McpService`](crate::McpService)'s
//! table).
//!
//! Threats: a refusal or a fault that leaks (a hook's reason, a host's message, a stack trace: each is
//! logged, never returned); a refused caller's body drained by the server (a refusal issued before the
//! body is read closes an HTTP/1.x connection); a status that disagrees with the JSON-RPC error it
//! carries; a stream that speaks out of turn (only the request's own notifications, then its response).
//!
//! | module | what lives there |
//! |---|---|
//! | `body.rs` | [`ResponseBody`](crate::ResponseBody): one JSON message, nothing, or an SSE stream, holding the request's share of the body budget until the transport drops it |
//! | `refusal.rs` | a refusal's status, JSON-RPC error object and connection handling |
//! | `status.rs` | the HTTP status of a core answer |
//! | `sse.rs` | when a request is answered as an SSE stream, and running the core for it |
//! | `event_stream.rs` | that stream as a body: its queued notifications, then its response |

pub(crate) mod body;
pub(crate) mod event_stream;
pub(crate) mod refusal;
pub(crate) mod sse;
pub(crate) mod status;
