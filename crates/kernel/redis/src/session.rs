//! [`RedisSessionStore`]: the router's [`SessionStore`] over Redis, so that every instance of one
//! prefix serves every `2025-11-25` session, and a client's answer POSTed to one instance reaches the
//! instance waiting for it (`replies.rs`).
//!
//! | operation | Redis round trips | how |
//! |---|---|---|
//! | `create` | 1 | `session_create.lua`: sweep both sets by score (expired sessions count no more), both bounds (per client, by the record's counted key — its principal's digest, else its address's; a session counted under no key: the total alone, in no client's set), store the hash (`PEXPIREAT` at the idle expiry) with the owner's digest, index — atomically |
//! | `resume` | 1 | `session_resume.lua`: the record, its expiry pushed on its key and in both sets — if it is the requesting owner's (compared with the hash's owner digest, never with the client it is counted against); another owner's is nil and untouched |
//! | `edit` | 2 per attempt | `session_read.lua`, the edit in Rust, `session_swap.lua` (compare-and-swap on the record's SHA-1), at most [`MAX_SWAP_ATTEMPTS`] attempts; none when the edit changes nothing |
//! | `end` | 1 | `session_end.lua`: the record, its waiting requests and both set entries, and, if it was live, `ended` published so that every instance ends the session's waits |
//! | `expect` | 1 | `session_expect.lua` (`replies.rs`) |
//! | `deliver` | 1 | `session_deliver.lua`: the request taken and the answer published (unless the wait is here) in one step (`replies.rs`) |
//!
//! A record's key expires at the session's idle expiry; the `expiresAtMs` in its JSON is the one it
//! was created with, and `resume` answers with the pushed one.
//!
//! Threat: **an id that names another key**. Session ids come from clients (the `Mcp-Session-Id`
//! header); one that is not 1 to 128 visible ASCII characters is never sent to Redis (unknown to
//! `resume`, `edit` and `end`), and each kind of key has its own word after the prefix (`keys.rs`).

use std::sync::Arc;

use mcp_kernel_router::BoxFuture;
use mcp_kernel_router::sessions::{
    ReplyWait, SessionEdit, SessionError, SessionLimits, SessionRecord, SessionStore,
};
use mcp_kernel_router::tasks::{StoreError, now_ms};
use redis::Value;

use crate::Shared;
use crate::keys::valid_id;
use crate::replies::Notice;
use crate::scripts::{SESSION_CREATE, SESSION_END, SESSION_READ, SESSION_RESUME, SESSION_SWAP};
use crate::store::{MAX_SWAP_ATTEMPTS, backoff, unexpected, word};

/// The session store shared through Redis ([`Redis::session_store`](crate::Redis::session_store)).
/// Cheap to clone.
#[derive(Clone)]
pub struct RedisSessionStore {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore").field("key_prefix", &self.shared.prefix).finish_non_exhaustive()
    }
}

/// A duration in whole milliseconds, saturating.
pub(crate) fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn encode(record: &SessionRecord) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(record)
        .map_err(|error| StoreError::Failed(format!("a session record does not encode: {error}")))
}

/// The record stored under the session `id`: one that does not parse, or names another session
/// (written there by someone else), is a failure — never taken for another session.
fn decode(id: &str, bytes: &[u8]) -> Result<SessionRecord, StoreError> {
    // The position only: serde's message may quote the record's content.
    let record: SessionRecord = serde_json::from_slice(bytes).map_err(|error| {
        StoreError::Failed(format!(
            "a stored session record does not parse (line {}, column {})",
            error.line(),
            error.column()
        ))
    })?;
    if record.id != id {
        return Err(StoreError::Failed("a stored session record names another session".into()));
    }
    Ok(record)
}

/// What a compare-and-swap of a record did.
enum Swap {
    Done,
    Gone,
    Conflict,
}

impl RedisSessionStore {
    async fn create_session(
        &self,
        record: SessionRecord,
        limits: &SessionLimits,
    ) -> Result<(), SessionError> {
        let shared = &self.shared;
        let keys = &shared.keys;
        let id = record.id.as_str();
        let (owner, counted) = (record.owner.as_deref(), record.counted_key());
        if !valid_id(id) || !owner.is_none_or(valid_id) || !counted.is_none_or(valid_id) {
            return Err(StoreError::Failed(
                "a session id, owner or client digest that is not 1 to 128 visible ASCII characters".into(),
            )
            .into());
        }
        let bytes = encode(&record)?;
        let (session, every) = (keys.session(id), keys.sessions());
        // Counted against its client's set; a session counted under no key has none: the total alone.
        let clients = counted.map(|client| keys.client_sessions(client));
        let mut names = vec![session.as_str(), every.as_str()];
        names.extend(clients.as_deref());
        let answer = shared
            .link
            .script(
                &SESSION_CREATE,
                &names,
                &[
                    id.as_bytes(),
                    &bytes,
                    now_ms().to_string().as_bytes(),
                    record.expires_at_ms.to_string().as_bytes(),
                    limits.per_owner.to_string().as_bytes(),
                    limits.total.to_string().as_bytes(),
                    owner.unwrap_or_default().as_bytes(),
                ],
            )
            .await?;
        match word(&answer) {
            Some("ok") => Ok(()),
            Some("client") => Err(SessionError::OwnerFull),
            Some("total") => Err(SessionError::Full),
            Some("exists") => {
                Err(StoreError::Failed("a session with this id is stored already".into()).into())
            }
            _ => Err(unexpected("a session creation").into()),
        }
    }

    async fn resume_session(
        &self,
        id: &str,
        owner: Option<&str>,
        now_ms: u64,
        limits: &SessionLimits,
    ) -> Result<Option<SessionRecord>, StoreError> {
        // An owner digest that no create admits owns no session.
        if !valid_id(id) || !owner.is_none_or(valid_id) {
            return Ok(None);
        }
        let keys = &self.shared.keys;
        let expiry = now_ms.saturating_add(millis(limits.idle));
        // The script compares the owner's digest the hash keeps ('' for no principal).
        let answer = self
            .shared
            .link
            .script(
                &SESSION_RESUME,
                &[&keys.session(id), &keys.sessions()],
                &[id.as_bytes(), expiry.to_string().as_bytes(), owner.unwrap_or_default().as_bytes()],
            )
            .await?;
        match answer {
            Value::Nil => Ok(None),
            Value::BulkString(bytes) => {
                let mut record = decode(id, &bytes)?;
                if record.owner.as_deref() != owner {
                    // The hash names one owner and the record another: written by someone else.
                    return Err(StoreError::Failed("a stored session record names another owner".into()));
                }
                record.expires_at_ms = expiry;
                Ok(Some(record))
            }
            _ => Err(unexpected("a session resumption")),
        }
    }

    /// The record of `id` and its SHA-1, if it is live.
    async fn read(&self, id: &str) -> Result<Option<(SessionRecord, Vec<u8>)>, StoreError> {
        let answer = self.shared.link.script(&SESSION_READ, &[&self.shared.keys.session(id)], &[]).await?;
        match answer {
            Value::Nil => Ok(None),
            Value::Array(items) => match <[Value; 2]>::try_from(items) {
                Ok([Value::BulkString(bytes), Value::BulkString(digest)]) => {
                    Ok(Some((decode(id, &bytes)?, digest)))
                }
                _ => Err(unexpected("a session read")),
            },
            _ => Err(unexpected("a session read")),
        }
    }

    async fn swap(&self, record: &SessionRecord, digest: &[u8]) -> Result<Swap, StoreError> {
        let key = self.shared.keys.session(&record.id);
        let answer = self.shared.link.script(&SESSION_SWAP, &[&key], &[digest, &encode(record)?]).await?;
        match word(&answer) {
            Some("ok") => Ok(Swap::Done),
            Some("gone") => Ok(Swap::Gone),
            Some("conflict") => Ok(Swap::Conflict),
            _ => Err(unexpected("a session compare-and-swap")),
        }
    }

    async fn edit_session(
        &self,
        id: &str,
        edit: SessionEdit,
        limits: &SessionLimits,
    ) -> Result<bool, SessionError> {
        if !valid_id(id) {
            return Ok(false);
        }
        for attempt in 0..MAX_SWAP_ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(backoff(attempt)).await;
            }
            let Some((mut record, digest)) = self.read(id).await? else { return Ok(false) };
            if !record.apply(&edit, limits)? {
                return Ok(true);
            }
            match self.swap(&record, &digest).await? {
                Swap::Done => return Ok(true),
                Swap::Gone => return Ok(false),
                Swap::Conflict => continue,
            }
        }
        Err(StoreError::Failed(format!(
            "the session changed under each of {MAX_SWAP_ATTEMPTS} compare-and-swap attempts"
        ))
        .into())
    }

    async fn end_session(&self, id: &str) -> Result<bool, StoreError> {
        if !valid_id(id) {
            return Ok(false);
        }
        let shared = &self.shared;
        let keys = &shared.keys;
        // If it was live, the script says so on the replies channel: every instance ends its waits.
        let notice = Notice::Ended(id.to_owned()).encode();
        let answer = shared
            .link
            .script(
                &SESSION_END,
                &[&keys.session(id), &keys.sessions(), &keys.pending(id)],
                &[id.as_bytes(), keys.replies().as_bytes(), notice.as_bytes()],
            )
            .await?;
        let ended = match answer {
            Value::Int(1) => true,
            Value::Int(0) => false,
            _ => return Err(unexpected("a session end")),
        };
        shared.events.end_session(id);
        Ok(ended)
    }
}

impl SessionStore for RedisSessionStore {
    fn create<'a>(
        &'a self,
        record: SessionRecord,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(self.create_session(record, limits))
    }

    fn resume<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        now_ms: u64,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        Box::pin(self.resume_session(id, owner, now_ms, limits))
    }

    fn edit<'a>(
        &'a self,
        id: &'a str,
        edit: SessionEdit,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<bool, SessionError>> {
        Box::pin(self.edit_session(id, edit, limits))
    }

    fn end<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.end_session(id))
    }

    fn expect<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<ReplyWait, SessionError>> {
        Box::pin(self.expect_reply(session, request_id, limits))
    }

    fn deliver<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
        message: serde_json::Value,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.deliver_reply(session, request_id, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn apply(
        record: &mut SessionRecord,
        edit: &SessionEdit,
        limits: &SessionLimits,
    ) -> Result<bool, SessionError> {
        record.apply(edit, limits)
    }

    fn record() -> SessionRecord {
        SessionRecord::new("s", Some("d".into()), "2025-11-25", serde_json::json!({}), 0, Duration::ZERO)
    }

    #[test]
    fn an_edit_that_changes_nothing_is_no_write_and_subscriptions_are_bounded() {
        let mut limits = SessionLimits::default();
        limits.subscriptions = 1;
        let mut session = record();
        let subscribe = |uri: &str| SessionEdit::Subscribe(uri.into());
        assert_eq!(apply(&mut session, &subscribe("a"), &limits), Ok(true));
        assert_eq!(apply(&mut session, &subscribe("a"), &limits), Ok(false));
        assert_eq!(apply(&mut session, &subscribe("b"), &limits), Err(SessionError::SubscriptionsFull));
        assert_eq!(apply(&mut session, &SessionEdit::Unsubscribe("b".into()), &limits), Ok(false));
        assert_eq!(apply(&mut session, &SessionEdit::Unsubscribe("a".into()), &limits), Ok(true));
        assert_eq!(apply(&mut session, &SessionEdit::LogLevel("info".into()), &limits), Ok(true));
        assert_eq!(apply(&mut session, &SessionEdit::LogLevel("info".into()), &limits), Ok(false));
        assert_eq!(session.log_level.as_deref(), Some("info"));
        limits.subscriptions = 16;
        limits.subscription_bytes = 8;
        assert_eq!(apply(&mut session, &subscribe("12345678"), &limits), Ok(true));
        assert_eq!(
            apply(&mut session, &subscribe("9"), &limits),
            Err(SessionError::SubscriptionsFull),
            "bytes"
        );
        assert_eq!(apply(&mut session, &SessionEdit::Stream("t1".into()), &limits), Ok(true));
        assert_eq!(apply(&mut session, &SessionEdit::Stream("t1".into()), &limits), Ok(false));
        assert_eq!(apply(&mut session, &SessionEdit::Stream("t2".into()), &limits), Ok(true));
        assert_eq!(session.stream.as_deref(), Some("t2"), "the newer stream's");
    }

    #[test]
    fn a_record_under_another_sessions_id_or_not_json_is_a_failure_that_quotes_nothing() {
        let bytes = encode(&record()).unwrap();
        assert!(decode("s", &bytes).is_ok());
        assert!(matches!(decode("other", &bytes), Err(StoreError::Failed(_))));
        let Err(StoreError::Failed(text)) = decode("s", b"secret-content {") else { panic!("refused") };
        assert!(!text.contains("secret"), "{text}");
    }
}
