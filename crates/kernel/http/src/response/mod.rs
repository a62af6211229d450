//! What the service answers with: the response body, refusals and the status of a core answer — the
//! shapes every other folder builds its answers from (the statuses of
//! [`McpService`](crate::McpService)'s table).
//!
//! Threats: a refusal or a fault that leaks (a hook's reason, a host's message, a stack trace: each is
//! logged, never returned); a refused caller's body drained by the server (a refusal issued before the
//! body is read closes an HTTP/1.x connection); a status that disagrees with the JSON-RPC error it
//! carries; a refused client not told how to sign in; a request's share of the body budget given back
//! before its answer has left (or held by a listen stream for its whole life); a listen stream that
//! falls silent for so long that a proxy cuts it.
//!
//! | module | what lives there |
//! |---|---|
//! | `body.rs` | [`ResponseBody`](crate::ResponseBody): one JSON message, nothing, or an SSE stream, holding the request's share of the body budget until the transport drops it |
//! | `event_stream.rs` | the SSE stream as a body: its queued notifications, then its response (`dispatch/sse.rs` decides when a request gets one); the event framing and the SSE response head |
//! | `listen_stream.rs` | a `subscriptions/listen` stream as a body: the acknowledgment, the queued notifications, the completion, keep-alive comment lines; it holds the stream's listen slot |
//! | `refusal.rs` | a refusal's status, JSON-RPC error object and connection handling |
//! | `challenge.rs` | what a refusal of the host's hooks asks of the client: its status and its `WWW-Authenticate` challenge (RFC 6750 §3) |
//! | `status.rs` | the HTTP status of a core answer |
//! | `legacy_answer.rs` | a 2025-11-25 answer: 200 for every JSON-RPC response but a host fault, results without cache hints |

pub(crate) mod body;
pub(crate) mod challenge;
pub(crate) mod event_stream;
pub(crate) mod legacy_answer;
pub(crate) mod listen_stream;
pub(crate) mod refusal;
pub(crate) mod status;
