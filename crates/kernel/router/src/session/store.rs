//! Where an HTTP transport keeps its `2025-11-25` sessions: the [`SessionStore`] trait, shaped so that
//! a store shared by many instances (Redis) fits it as well as the in-process default.
//!
//! Threat: **a session id as a bearer token**. A session id reaches the client in a header and comes
//! back on every request, so the store keeps, beside what the legacy protocol needs (the client's
//! revision and capabilities, its subscriptions, its log level), the digest of the principal that
//! initialized it: a request whose principal differs is answered as for an unknown session, and keeps
//! nothing alive ([`SessionStore::resume`] compares the owners before it pushes an expiry). The store
//! never holds the principal itself or any credential. Sessions are bounded per client and in total,
//! expire when idle, and bound how many server-to-client requests wait on each.
//!
//! Threat: **one client starving the others**. The per-client bound counts sessions by
//! [`SessionRecord::counted_key`], the client that opened the session as the transport names it — the
//! principal's digest when there is one, else its [`quota`](SessionRecord::quota), over HTTP a digest
//! of the client's address prefix — so a host whose `authorize` names nobody still holds each address
//! to its bound, and no client can take the whole total. A session stays *bound* only to its owner (the principal): binding it to an address would
//! refuse a client that changes networks (a laptop moving from Wi-Fi to a phone's connection).

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::BoxFuture;
use crate::tasks::StoreError;

/// One legacy session, as a store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionRecord {
    /// The session id: 0x21–0x7E only, unguessable (minted by the transport).
    pub id: String,
    /// The digest of the principal that initialized the session (`None`: no principal).
    pub owner: Option<String>,
    /// The revision `initialize` agreed on.
    pub protocol_version: String,
    /// The capabilities the client declared in `initialize`.
    pub client_capabilities: Value,
    /// The uris the client subscribed to with `resources/subscribe`.
    pub subscriptions: BTreeSet<String>,
    /// The level the client set with `logging/setLevel`, if any.
    pub log_level: Option<String>,
    /// When the session ends unless used again (ms since the Unix epoch).
    pub expires_at_ms: u64,
    /// The token of the session's stream of notifications (its GET stream over HTTP), set by
    /// [`SessionEdit::Stream`] as one opens: the one stream, on whichever instance, that may carry the
    /// session's notifications (`None`: none opened yet). Absent from a record stored without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// The client the session is counted against for [`SessionLimits::per_owner`] when that is not
    /// its owner, as a digest the transport computes (over HTTP: its address prefix's, for a session
    /// of no principal); `None`: counted by [`owner`](SessionRecord::owner), and with no owner either
    /// against [`SessionLimits::total`] alone. Never compared to admit a request: only
    /// [`owner`](SessionRecord::owner) binds the session. Absent from a record stored without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<String>,
}

/// The most bytes of uris one stored session may be subscribed to, in all, by default
/// ([`SessionLimits::subscription_bytes`]).
pub const MAX_STORED_SUBSCRIPTION_BYTES: usize = 64 * 1024;

impl SessionRecord {
    /// Whether subscribing to `uri` keeps the session within `limits`, in number and in bytes (a uri
    /// held already always does). Every store checks an edit with it.
    pub fn admits_subscription(&self, uri: &str, limits: &SessionLimits) -> bool {
        if self.subscriptions.contains(uri) {
            return true;
        }
        let held: usize = self.subscriptions.iter().map(String::len).sum();
        self.subscriptions.len() < limits.subscriptions
            && held.saturating_add(uri.len()) <= limits.subscription_bytes
    }

    /// Applies `edit` within `limits`: whether it changed the record. Every store edits through it, so
    /// a session follows the same rules in process and in a shared store.
    pub fn apply(&mut self, edit: &SessionEdit, limits: &SessionLimits) -> Result<bool, SessionError> {
        match edit {
            SessionEdit::Subscribe(uri) => {
                if self.subscriptions.contains(uri) {
                    return Ok(false);
                }
                if !self.admits_subscription(uri, limits) {
                    return Err(SessionError::SubscriptionsFull);
                }
                Ok(self.subscriptions.insert(uri.clone()))
            }
            SessionEdit::Unsubscribe(uri) => Ok(self.subscriptions.remove(uri)),
            SessionEdit::LogLevel(level) => Ok(replace(&mut self.log_level, level)),
            SessionEdit::Stream(token) => Ok(replace(&mut self.stream, token)),
        }
    }

    /// A new session, expiring `idle` after `now_ms` unless used again.
    pub fn new(
        id: impl Into<String>,
        owner: Option<String>,
        protocol_version: impl Into<String>,
        client_capabilities: Value,
        now_ms: u64,
        idle: Duration,
    ) -> Self {
        Self {
            id: id.into(),
            owner,
            protocol_version: protocol_version.into(),
            client_capabilities,
            subscriptions: BTreeSet::new(),
            log_level: None,
            expires_at_ms: now_ms.saturating_add(duration_ms(idle)),
            stream: None,
            quota: None,
        }
    }

    /// The session counted against the client `quota` ([`SessionRecord::quota`]).
    pub fn counted_as(mut self, quota: Option<String>) -> Self {
        self.quota = quota;
        self
    }

    /// The key the session is counted under for [`SessionLimits::per_owner`]: its
    /// [`quota`](SessionRecord::quota), else its [`owner`](SessionRecord::owner); `None`: the total
    /// alone. Every store counts by it.
    pub fn counted_key(&self) -> Option<&str> {
        self.quota.as_deref().or(self.owner.as_deref())
    }
}

/// Sets `slot` to `value`: whether it held another value.
fn replace(slot: &mut Option<String>, value: &str) -> bool {
    if slot.as_deref() == Some(value) {
        return false;
    }
    *slot = Some(value.to_owned());
    true
}

/// A duration in whole milliseconds, saturating.
pub(crate) fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The bounds sessions are kept within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLimits {
    /// The most live sessions one client may hold, counted by [`SessionRecord::counted_key`] (over
    /// HTTP: one principal, else one address prefix). Sessions counted under no key are held to
    /// [`SessionLimits::total`] alone.
    pub per_owner: usize,
    /// The most live sessions in the store.
    pub total: usize,
    /// How long an unused session lives.
    pub idle: Duration,
    /// The most server-to-client requests waiting on one session at once.
    pub pending_per_session: usize,
    /// The most uris one session may be subscribed to.
    pub subscriptions: usize,
    /// The most bytes of uris one session may be subscribed to, in all: a session keeps them as long
    /// as it lives, and each may be 4 KiB long (default [`MAX_STORED_SUBSCRIPTION_BYTES`], 64 KiB).
    pub subscription_bytes: usize,
}

impl SessionLimits {
    /// Bounds of your choosing; each must be at least 1 (a zero is raised to 1).
    pub const fn new(per_owner: usize, total: usize, idle: Duration, pending_per_session: usize) -> Self {
        Self {
            per_owner: if per_owner == 0 { 1 } else { per_owner },
            total: if total == 0 { 1 } else { total },
            idle,
            pending_per_session: if pending_per_session == 0 { 1 } else { pending_per_session },
            subscriptions: crate::notify::session::MAX_SESSION_SUBSCRIPTIONS,
            subscription_bytes: MAX_STORED_SUBSCRIPTION_BYTES,
        }
    }
}

impl Default for SessionLimits {
    /// 16 per client, 10,000 in all, 30 minutes idle, 16 waiting requests per session.
    fn default() -> Self {
        Self::new(16, 10_000, Duration::from_secs(30 * 60), 16)
    }
}

/// Why a store did not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The client (the session's [`SessionRecord::counted_key`]) already holds
    /// [`SessionLimits::per_owner`] live sessions.
    #[error("the client holds as many sessions as its bound allows")]
    OwnerFull,
    /// The store already holds [`SessionLimits::total`] live sessions.
    #[error("the server holds as many sessions as its bound allows")]
    Full,
    /// The session already has [`SessionLimits::pending_per_session`] requests waiting.
    #[error("the session has as many requests waiting as its bound allows")]
    PendingFull,
    /// The session already holds [`SessionLimits::subscriptions`] uris, or
    /// [`SessionLimits::subscription_bytes`] of them.
    #[error("the session holds as many subscriptions as its bound allows")]
    SubscriptionsFull,
    /// The store itself failed or was unreachable.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One edit of a live session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEdit {
    /// `resources/subscribe`: add the uri (within [`SessionLimits::subscriptions`] and
    /// [`SessionLimits::subscription_bytes`]).
    Subscribe(String),
    /// `resources/unsubscribe`: remove the uri, subscribed or not.
    Unsubscribe(String),
    /// `logging/setLevel`.
    LogLevel(String),
    /// A stream of the session's notifications opened with this token (fresh random bits): it becomes
    /// the session's one stream, and the older one, on whichever instance, delivers nothing more.
    Stream(String),
}

/// The wait for one client answer: resolves with the answer's JSON-RPC message (the whole response
/// object), or `None` when the store lost the wait (its connection ended).
pub type ReplyWait = BoxFuture<'static, Option<Value>>;

/// Where HTTP legacy sessions are kept, and through which a client's answers reach the instance that
/// asked.
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a new session, within `limits` (per client, by [`SessionRecord::counted_key`], and in
    /// total; expired sessions do not count).
    fn create<'a>(
        &'a self,
        record: SessionRecord,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<(), SessionError>>;

    /// The live session `id` of `owner` (the digest of the requesting principal; `None`: no
    /// principal), its idle expiry pushed to `now_ms + limits.idle`; `None` when unknown, expired or
    /// another owner's. Another owner's session is left as it was, its expiry untouched: a request of
    /// another principal is no use of a session, and its answer must not tell the session apart from
    /// an unknown one.
    fn resume<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        now_ms: u64,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>>;

    /// Applies one edit to the live session `id`: `false` when it is unknown or expired.
    fn edit<'a>(
        &'a self,
        id: &'a str,
        edit: SessionEdit,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<bool, SessionError>>;

    /// Ends the session `id` (`DELETE`): `false` when it was unknown or expired. Its waiting requests
    /// end too.
    fn end<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Registers a server-to-client request `request_id` of session `session` before it is sent
    /// (within [`SessionLimits::pending_per_session`]); dropping the returned wait forgets it. For a
    /// session unknown or expired, the wait resolves `None` at once.
    fn expect<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<ReplyWait, SessionError>>;

    /// Hands a client's answer (`message`, the whole JSON-RPC response) to whichever instance waits for
    /// `request_id` of `session`: `false` when no such request is waiting (never issued, issued to
    /// another session, already answered, or forgotten).
    fn deliver<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
        message: Value,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_without_a_stream_token_reads_and_writes_as_before_one_existed() {
        let record = SessionRecord::new("s", None, "2025-11-25", serde_json::json!({}), 0, Duration::ZERO);
        let bytes = serde_json::to_value(&record).expect("encodes");
        assert!(bytes.get("stream").is_none(), "no token, no field: {bytes}");
        let read: SessionRecord = serde_json::from_value(bytes).expect("a record stored before tokens");
        assert_eq!(read, record);
        let mut streamed = record;
        streamed.stream = Some("t".into());
        let bytes = serde_json::to_value(&streamed).expect("encodes");
        assert_eq!(bytes["stream"], "t");
        assert_eq!(serde_json::from_value::<SessionRecord>(bytes).expect("decodes"), streamed);
    }

    #[test]
    fn a_record_without_a_quota_reads_and_writes_as_before_and_is_counted_by_its_owner() {
        let record =
            SessionRecord::new("s", Some("o".into()), "2025-11-25", serde_json::json!({}), 0, Duration::ZERO);
        let bytes = serde_json::to_value(&record).expect("encodes");
        assert!(bytes.get("quota").is_none(), "no quota, no field: {bytes}");
        let read: SessionRecord = serde_json::from_value(bytes).expect("a record stored before quotas");
        assert_eq!((read.counted_key(), &read), (Some("o"), &record));
        let counted = record.counted_as(Some("q".into()));
        let bytes = serde_json::to_value(&counted).expect("encodes");
        assert_eq!(bytes["quota"], "q");
        let read: SessionRecord = serde_json::from_value(bytes).expect("decodes");
        assert_eq!((read.counted_key(), &read), (Some("q"), &counted));
    }
}
