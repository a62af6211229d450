//! A request served in a stored `2025-11-25` session ([`StoredSession`], attached with
//! [`Inbound::stored_session`](crate::transport::Inbound::stored_session)), and what a transport needs
//! to keep one: unguessable ids ([`new_session_id`]) and the digest naming a session's principal
//! (`principal_digest`, beside the digest of a task's owner in `tasks/owner.rs`).
//!
//! With a stored session attached, a legacy request is served as one of that session: its revision and
//! client capabilities are the ones the session remembers from `initialize`, `resources/subscribe` and
//! `resources/unsubscribe` edit the session's subscriptions in the store (the uri checked as on stdio:
//! only one the caller may read), and `logging/setLevel` stores the session's level, at which every
//! later request of the session is sent its log notifications.

use std::sync::Arc;

use serde_json::Value;

use mcp_kernel_wire::ProtocolVersion;

use crate::notify::log::{LogLevel, parse_level};
use crate::session::store::{SessionLimits, SessionRecord, SessionStore};

/// One legacy session as a transport found it for a request (resumed from its store), with the store
/// and bounds that later edits go through. Cheap to clone.
#[derive(Clone)]
pub struct StoredSession {
    record: Arc<SessionRecord>,
    capabilities: Arc<Value>,
    store: Arc<dyn SessionStore>,
    limits: SessionLimits,
}

impl std::fmt::Debug for StoredSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The id is a bearer secret: never written to a log.
        f.debug_struct("StoredSession")
            .field("protocol_version", &self.record.protocol_version)
            .field("subscriptions", &self.record.subscriptions.len())
            .field("log_level", &self.record.log_level)
            .finish_non_exhaustive()
    }
}

impl StoredSession {
    /// The session `record` (as its store resumed it), kept in `store` within `limits`.
    pub fn new(record: SessionRecord, store: Arc<dyn SessionStore>, limits: SessionLimits) -> Self {
        let capabilities = Arc::new(record.client_capabilities.clone());
        Self { record: Arc::new(record), capabilities, store, limits }
    }

    /// The session as it was resumed.
    pub fn record(&self) -> &SessionRecord {
        &self.record
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.record.id
    }

    /// The store the session is kept in.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    /// The bounds the session is kept within.
    pub fn limits(&self) -> &SessionLimits {
        &self.limits
    }

    /// The capabilities the client declared in `initialize`.
    pub fn capabilities(&self) -> &Arc<Value> {
        &self.capabilities
    }

    /// The revision agreed at `initialize` (the legacy revision when the record names none this
    /// package knows).
    pub(crate) fn version(&self) -> ProtocolVersion {
        ProtocolVersion::parse(&self.record.protocol_version)
            .filter(|version| !version.is_modern())
            .unwrap_or(ProtocolVersion::V2025_11_25)
    }

    /// The level the client set with `logging/setLevel`, if any.
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        self.record.log_level.as_deref().and_then(|level| parse_level(&Value::from(level)))
    }
}

/// A new session id: 128 bits from the system's random source, as 32 lowercase hex digits (visible
/// ASCII only, as MCP requires of `Mcp-Session-Id`); `None` when the random source failed. Server-to-
/// client request ids are minted the same way.
pub fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        tracing::error!("the system's random source failed; no id minted");
        return None;
    }
    Some(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_is_128_random_bits_in_visible_ascii() {
        let ids: std::collections::HashSet<_> = (0..64).map(|_| new_session_id().expect("an id")).collect();
        assert_eq!(ids.len(), 64, "never twice");
        for id in &ids {
            assert_eq!(id.len(), 32);
            assert!(id.bytes().all(|byte| (0x21..=0x7e).contains(&byte)), "{id}");
        }
    }
}
