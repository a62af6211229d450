//! What a host asks for when it needs the client's input before it can finish a request, and what it
//! gets back on the retry (MCP [S-48], [S-49]; 2026-07-28 only, opt-in through a request-state sealer).
//!
//! Threat: the retry is written by the client. Nothing here is trusted because the client sent it: the
//! responses reach the host only after the core has checked each one's shape, and the state only after
//! the host's sealer has verified it and the core has checked its expiry and what it is bound to
//! (see `state.rs`). These are plain data types; the checks live in the core.
//!
//! [S-48]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-49]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::collections::BTreeMap;

use serde_json::Value;

use mcp_kernel_wire::types::{
    CreateMessageResult, ElicitAction, ElicitFormParams, ElicitRequestParams, ElicitResult, InputRequest,
    InputResponse, JsonObject, ListRootsResult,
};

/// A host's "not yet": the input it needs (keyed by names it chooses) and the state it wants back.
///
/// Returned as [`crate::ToolOutput::InputRequired`] or [`crate::ReaderError::input_required`]. The
/// core sends it as an `InputRequiredResult` whose `requestState` is sealed; requests for a capability
/// the client did not declare are left out (see the host contract).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    requests: BTreeMap<String, InputRequest>,
    state: Option<Vec<u8>>,
}

impl InputRequired {
    /// Nothing asked yet and no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one input request under `key` (a later request under the same key replaces it).
    pub fn request(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.requests.insert(key.into(), request);
        self
    }

    /// Adds a form-mode `elicitation/create` (`"mode": "form"`): `message` and a flat `requestedSchema`
    /// object (`{"type": "object", "properties": {..}}`).
    pub fn elicit(self, key: impl Into<String>, message: impl Into<String>, requested_schema: Value) -> Self {
        let params = ElicitFormParams::new(message, requested_schema);
        self.request(key, InputRequest::Elicitation(ElicitRequestParams::Form(params)))
    }

    /// Adds a `roots/list` request.
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.request(key, InputRequest::ListRoots(Some(Default::default())))
    }

    /// Sets the state handed back to the host on the retry (sealed, so integrity-protected, but not
    /// encrypted by [`crate::sealing::HmacSealer`]: the client can read it).
    pub fn with_state(mut self, state: impl Into<Vec<u8>>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// The requests, by key.
    pub fn requests(&self) -> &BTreeMap<String, InputRequest> {
        &self.requests
    }

    /// The state, if any.
    pub fn state(&self) -> Option<&[u8]> {
        self.state.as_deref()
    }

    pub(crate) fn into_parts(self) -> (BTreeMap<String, InputRequest>, Option<Vec<u8>>) {
        (self.requests, self.state)
    }
}

/// A retry's verified input: the client's responses, each checked against the shape of the request it
/// answers, and the host's own state from the previous round.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RetryInput {
    /// The responses by key. With a `requestState`, only the keys the previous round asked for; without
    /// one, every key the client sent (each a valid elicitation, sampling or roots result).
    pub responses: BTreeMap<String, InputResponse>,
    /// The state the host gave in the previous round; `None` when the retry carried no `requestState`
    /// or the host gave none.
    pub state: Option<Vec<u8>>,
}

impl RetryInput {
    pub(crate) fn new(responses: BTreeMap<String, InputResponse>, state: Option<Vec<u8>>) -> Self {
        Self { responses, state }
    }

    /// The elicitation result under `key`, if that is what the client sent there.
    pub fn elicitation(&self, key: &str) -> Option<&ElicitResult> {
        match self.responses.get(key) {
            Some(InputResponse::Elicitation(result)) => Some(result),
            _ => None,
        }
    }

    /// The submitted form under `key` when the user accepted the elicitation.
    pub fn accepted(&self, key: &str) -> Option<&JsonObject> {
        self.elicitation(key)
            .filter(|result| result.action == ElicitAction::Accept)
            .and_then(|result| result.content.as_ref())
    }

    /// The sampling result under `key`, if that is what the client sent there.
    pub fn sampling(&self, key: &str) -> Option<&CreateMessageResult> {
        match self.responses.get(key) {
            Some(InputResponse::Sampling(result)) => Some(result),
            _ => None,
        }
    }

    /// The roots result under `key`, if that is what the client sent there.
    pub fn roots(&self, key: &str) -> Option<&ListRootsResult> {
        match self.responses.get(key) {
            Some(InputResponse::ListRoots(result)) => Some(result),
            _ => None,
        }
    }
}
