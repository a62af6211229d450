//! Multi-round-trip requests (MCP [S-48] to [S-50]) on `tools/call`, `resources/read` and `prompts/get`:
//! reading a retry's `inputResponses` and `requestState`, and answering a host's "input required".
//!
//! Threat: the retry is the client's to write, and an `InputRequiredResult` must never go where the
//! specification forbids it. Only the three methods above build a [`Round`], and only for a
//! `2026-07-28` request to a server with a request-state sealer; everywhere else both fields are
//! ignored as before. A legacy request whose transport attached a client channel is bridged instead
//! (`session/bridge.rs`); anywhere else a host that asks for input anyway is a host fault (-32603,
//! logged by names only). Within a round the state is verified (`state.rs`), the responses checked
//! (`responses.rs`), and input requests the client did not declare left out (`capability.rs`).
//!
//! [S-48]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-50]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use mcp_kernel_wire::ErrorObject;

use crate::contract::RequestContext;
use crate::request::capability::{askable, well_formed};
use crate::request::input::{InputRequired, RetryInput};
use crate::request::responses;
use crate::sealing::state::{Binding, Sealing, StateFault};
use crate::server::{Answer, Server};

const RESPONSES_NOT_OBJECT: &str = "inputResponses must be an object of input responses";
const STATE_NOT_STRING: &str = "requestState must be a string";
const STATE_INVALID: &str = "requestState failed verification for this request";
const STATE_EXPIRED: &str = "requestState has expired; send the request again without it";

/// One request that may take part in a multi-round trip.
pub(crate) struct Round<'a> {
    sealing: &'a Sealing,
    binding: Binding,
    declared: Option<Arc<Value>>,
    /// The expiry of the state this round was opened from (`u64::MAX`: a first round).
    not_after: AtomicU64,
}

impl Server {
    /// The round of a request: `None` without a sealer or outside `2026-07-28`.
    pub(crate) fn round(
        &self,
        context: &RequestContext,
        binding: impl FnOnce() -> Binding,
    ) -> Option<Round<'_>> {
        let sealing = self.inner.injected.sealing.as_ref()?;
        context.era.is_modern().then(|| Round {
            sealing,
            binding: binding(),
            declared: context.client_capabilities.clone(),
            not_after: AtomicU64::new(u64::MAX),
        })
    }
}

fn state_error(fault: StateFault) -> ErrorObject {
    match fault {
        StateFault::Invalid => ErrorObject::invalid_params(STATE_INVALID),
        StateFault::Expired => ErrorObject::invalid_params(STATE_EXPIRED),
        StateFault::HostPanicked => {
            tracing::error!("the request-state sealer or clock panicked; answered -32603");
            ErrorObject::internal()
        }
        StateFault::Unopenable => {
            tracing::error!("the sealed request state would not open again (too large?); answered -32603");
            ErrorObject::internal()
        }
    }
}

impl Round<'_> {
    /// Takes `inputResponses` and `requestState` out of `params` and verifies them: `None` on a first
    /// round (neither present).
    pub(crate) fn read_retry(
        &self,
        params: &mut Map<String, Value>,
    ) -> Result<Option<RetryInput>, ErrorObject> {
        let sent = params.remove("inputResponses");
        let sealed = params.remove("requestState");
        if sent.is_none() && sealed.is_none() {
            return Ok(None);
        }
        let sent = match sent {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(ErrorObject::invalid_params(RESPONSES_NOT_OBJECT)),
        };
        let input = match sealed {
            None => RetryInput::new(responses::unasked(sent)?, None),
            Some(Value::String(sealed)) => {
                let opened = self.sealing.open(&self.binding, &sealed).map_err(state_error)?;
                self.not_after.store(opened.expires_ms, Ordering::Relaxed);
                RetryInput::new(responses::asked(sent, &opened.keys)?, opened.state)
            }
            Some(_) => return Err(ErrorObject::invalid_params(STATE_NOT_STRING)),
        };
        Ok(Some(input))
    }

    /// The `InputRequiredResult` for a host's answer (decorated later like any modern result).
    fn answer(&self, required: InputRequired) -> Answer {
        let (requests, state) = required.into_parts();
        if requests.is_empty() && state.is_none() {
            tracing::error!(
                "the host asked for input but gave no input request and no state; answered -32603"
            );
            return Err(ErrorObject::internal());
        }
        if !requests.values().all(well_formed) {
            tracing::error!("the host's elicitation form has no object requestedSchema; answered -32603");
            return Err(ErrorObject::internal());
        }
        let declared = self.declared.as_deref().unwrap_or(&Value::Null);
        let requests = askable(requests, declared).map_err(ErrorObject::missing_capability)?;
        let keys = requests.iter().map(|(key, request)| (key.clone(), request.method().to_owned())).collect();
        let not_after = Some(self.not_after.load(Ordering::Relaxed)).filter(|&limit| limit != u64::MAX);
        let sealed =
            self.sealing.seal(&self.binding, keys, state.as_deref(), not_after).map_err(state_error)?;
        let mut result = Map::with_capacity(4);
        result.insert("resultType".into(), Value::from("input_required"));
        if !requests.is_empty() {
            let requests = serde_json::to_value(&requests).map_err(|_| ErrorObject::internal())?;
            result.insert("inputRequests".into(), requests);
        }
        result.insert("requestState".into(), Value::String(sealed));
        Ok(Value::Object(result))
    }
}

/// A host's "input required": an `InputRequiredResult` within a round, -32603 (logged) outside one.
pub(crate) fn input_required(round: Option<&Round<'_>>, required: InputRequired) -> Answer {
    match round {
        Some(round) => round.answer(required),
        None => {
            tracing::error!(
                "the host asked for client input on a request that cannot carry it (a 2026-07-28 request without a request-state sealer, or a 2025-11-25 one without a client channel); answered -32603"
            );
            Err(ErrorObject::internal())
        }
    }
}
