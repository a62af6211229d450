//! The bridge: a host that asks for input the `2026-07-28` way (an "input required" answer from
//! dispatch or a reader) serves a `2025-11-25` client too. The core sends the host's requests to the
//! client itself through the request's [`ClientChannel`](crate::transport::ClientChannel),
//! concurrently, checks each answer's shape as a retry's `inputResponses` are checked, and calls the
//! host again with them as its [`RetryInput`] (the host's state kept in memory: no sealer is
//! involved). The host may ask again, up to [`MAX_BRIDGE_ROUNDS`] times; it never learns which
//! revision it served.
//!
//! Only `tools/call`, `resources/read` and `prompts/get` of a legacy request (bare or declaring
//! `2025-11-25`) whose transport attached a channel are bridged; anything else keeps its answer.
//!
//! | what happens | the original request's answer |
//! |---|---|
//! | no input request the client declared in `initialize` remains | -32021, `requiredCapabilities` |
//! | a request `2025-11-25` cannot express, an empty ask, a malformed form, past [`MAX_BRIDGE_ROUNDS`] | -32603 (a host fault, logged by names only) |
//! | the client's answer is not a result of the request it answers | -32602, a fixed message |
//! | [`ClientFault::Refused`], `TimedOut`, `Closed`, `Busy`, `TooLarge` | -32000, `data.fault` naming it |
//! | [`ClientFault::Unavailable`] | -32603 with `data.retryAfter` 1 ([`ErrorObject::unavailable`]) |
//!
//! Threat: **the client writes the answers**, and the host acts on them: each is checked against the
//! shape of the request it answers before the host sees it, and no error repeats anything the client
//! sent. **A host that never stops asking** would hold the connection's requests: the rounds are
//! bounded. **A cancelled request** must not leave questions open: dropping the request's future drops
//! the channel's futures, and the channel forgets them (telling the client where it can).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Value, json};

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::types::InputResponse;

use crate::contract::{ReaderError, RequestContext, ToolOutput};
use crate::request::capability::{askable, well_formed};
use crate::request::guard::Panicked;
use crate::request::input::{InputRequired, RetryInput};
use crate::request::responses;
use crate::session::channel::{ClientFault, SharedChannel};
use crate::session::legacy_input::legacy_params;

/// The most rounds of questions the bridge asks for one request: the host's ninth "input required"
/// in a row is a host fault (-32603, logged).
pub const MAX_BRIDGE_ROUNDS: usize = 8;

/// The message of an answer that is not a result of the request it answers.
const MALFORMED: &str = "the client's answer is not a valid result of the request the server sent it";

/// The code of the client faults the bridge answers (the implementation-defined range, as for every
/// bound this package enforces).
const CLIENT_FAULT: i64 = -32000;

/// Why the bridge stopped before the host finished.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stopped {
    /// The original request's answer.
    pub(crate) error: ErrorObject,
    /// The host asked for what cannot be asked (its fault, not the client's).
    pub(crate) host_fault: bool,
}

impl Stopped {
    fn host() -> Self {
        Self { error: ErrorObject::internal(), host_fault: true }
    }

    fn client(error: ErrorObject) -> Self {
        Self { error, host_fault: false }
    }
}

/// A host's finished call that may be an "input required".
pub(crate) trait AsksInput: Sized {
    /// The input asked for, or the outcome itself.
    fn into_input(self) -> Result<InputRequired, Self>;
}

impl AsksInput for Result<Result<ToolOutput, crate::contract::ToolError>, Panicked> {
    fn into_input(self) -> Result<InputRequired, Self> {
        match self {
            Ok(Ok(ToolOutput::InputRequired(required))) => Ok(required),
            other => Err(other),
        }
    }
}

impl<T> AsksInput for Result<Result<T, ReaderError>, Panicked> {
    fn into_input(self) -> Result<InputRequired, Self> {
        match self {
            Ok(Err(refusal)) if refusal.as_input_required().is_some() => {
                refusal.into_input_required().map_err(|refusal| Ok(Err(refusal)))
            }
            other => Err(other),
        }
    }
}

/// One legacy request's way to its client.
pub(crate) struct Bridge<'a> {
    channel: &'a SharedChannel,
}

/// The bridge of a request: present for a legacy request whose transport attached a channel.
pub(crate) fn bridge<'a>(context: &RequestContext, client: Option<&'a SharedChannel>) -> Option<Bridge<'a>> {
    client.filter(|_| !context.era.is_modern()).map(|channel| Bridge { channel })
}

impl Bridge<'_> {
    /// Calls the host (`attempt(None)`), and while it asks for input, asks the client and calls it again
    /// with the answers, at most [`MAX_BRIDGE_ROUNDS`] times.
    pub(crate) async fn run<O, F, Fut>(&self, mut attempt: F) -> Result<O, Stopped>
    where
        O: AsksInput,
        F: FnMut(Option<Arc<RetryInput>>) -> Fut,
        Fut: Future<Output = O>,
    {
        let mut outcome = attempt(None).await;
        for _ in 0..MAX_BRIDGE_ROUNDS {
            let required = match outcome.into_input() {
                Ok(required) => required,
                Err(done) => return Ok(done),
            };
            let retry = self.ask(required).await?;
            outcome = attempt(Some(Arc::new(retry))).await;
        }
        match outcome.into_input() {
            Err(done) => Ok(done),
            Ok(_) => {
                tracing::error!(
                    rounds = MAX_BRIDGE_ROUNDS,
                    "the host kept asking a 2025-11-25 client for input past the bridge's bound; answered -32603"
                );
                Err(Stopped::host())
            }
        }
    }

    /// One round: the host's requests the client can take, sent at once; their checked answers and the
    /// host's state.
    async fn ask(&self, required: InputRequired) -> Result<RetryInput, Stopped> {
        let (requests, state) = required.into_parts();
        if requests.is_empty() && state.is_none() {
            tracing::error!(
                "the host asked for input but gave no input request and no state; answered -32603"
            );
            return Err(Stopped::host());
        }
        if !requests.values().all(well_formed) {
            tracing::error!("the host's elicitation form has no object requestedSchema; answered -32603");
            return Err(Stopped::host());
        }
        let declared = self.channel.capabilities();
        let declared = declared.as_deref().unwrap_or(&Value::Null);
        let requests = askable(requests, declared)
            .map_err(|missing| Stopped::client(ErrorObject::missing_capability(missing)))?;
        let mut sends = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let method = request.method();
            let params = legacy_params(&request).map_err(|reason| {
                tracing::error!(
                    method,
                    reason = reason.0,
                    "the host's input request cannot be sent to a 2025-11-25 client; answered -32603"
                );
                Stopped::host()
            })?;
            let channel = Arc::clone(self.channel);
            sends.push(async move {
                let answer =
                    channel.request(method, params).await.map_err(|fault| fault_error(method, fault))?;
                let response = checked(method, answer)?;
                Ok::<(String, InputResponse), Stopped>((key, response))
            });
        }
        // The first failure drops the others: the channel forgets them.
        let answers = futures_util::future::try_join_all(sends).await?;
        Ok(RetryInput::new(answers.into_iter().collect::<BTreeMap<_, _>>(), state))
    }
}

/// The client's answer to `method`, checked as a retry's entry for that method is.
fn checked(method: &'static str, answer: Value) -> Result<InputResponse, Stopped> {
    responses::for_method(method, answer).ok_or_else(|| {
        tracing::debug!(method, "a 2025-11-25 client's answer is not a result of the request it answers");
        Stopped::client(ErrorObject::invalid_params(MALFORMED))
    })
}

/// The original request's answer when the client did not answer `method`.
fn fault_error(method: &'static str, fault: ClientFault) -> Stopped {
    let (name, message) = match &fault {
        ClientFault::Refused(error) => {
            tracing::debug!(
                method,
                code = error.code,
                "the client answered the server's request with an error"
            );
            ("refused", "The client answered the server's request for input with an error")
        }
        ClientFault::TimedOut => {
            tracing::debug!(method, "the client did not answer the server's request in time");
            ("timedOut", "The client did not answer the server's request for input in time")
        }
        ClientFault::Closed => {
            tracing::debug!(method, "the client's connection ended before it answered");
            ("closed", "The client's connection ended before it answered the server's request for input")
        }
        ClientFault::Busy => {
            tracing::warn!(method, "too many server-to-client requests wait on this connection");
            ("busy", "Too many requests to this client are waiting; try again when one is answered")
        }
        ClientFault::TooLarge => {
            tracing::debug!(method, "the client's answer was larger than the transport's bound");
            ("tooLarge", "The client's answer to the server's request for input was too large")
        }
        ClientFault::Unavailable => {
            tracing::warn!(method, "the session store is unreachable; answered -32603, retryable");
            return Stopped::client(ErrorObject::unavailable(1));
        }
    };
    Stopped::client(ErrorObject::new(CLIENT_FAULT, message).with_data(json!({"fault": name})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_fault_has_its_own_name_and_no_client_text() {
        let refused = ErrorObject::new(-1, "the client's own words").with_data(json!({"secret": 1}));
        let faults = [
            (ClientFault::Refused(refused), "refused"),
            (ClientFault::TimedOut, "timedOut"),
            (ClientFault::Closed, "closed"),
            (ClientFault::Busy, "busy"),
            (ClientFault::TooLarge, "tooLarge"),
        ];
        for (fault, name) in faults {
            let stopped = fault_error("elicitation/create", fault);
            assert!(!stopped.host_fault);
            assert_eq!(stopped.error.code, CLIENT_FAULT);
            assert_eq!(stopped.error.data, Some(json!({"fault": name})));
            assert!(!stopped.error.message.contains("own words"));
        }
        let unavailable = fault_error("roots/list", ClientFault::Unavailable).error;
        assert_eq!(unavailable, ErrorObject::unavailable(1));
    }
}
