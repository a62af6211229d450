//! A client's answer to a server-to-client request, from the instance it was POSTed to to the
//! instance waiting for it.
//!
//! `expect` registers the wait here (in [`Events`], by session and request id) and then the request
//! id in `<prefix>:pending:<session>` (`session_expect.lua`: within the session's bound, each entry
//! scored by when it is forgotten — one idle period after it was registered — and the set expiring
//! with its last entry). `deliver`, on any instance, takes the id out of that set and publishes the
//! answer on `<prefix>:replies` **in one script** (`session_deliver.lua`), so that an answer is handed
//! over once, only for the session the request was issued to, and is never taken without being
//! published; each instance's subscription hands it to its local wait, if it holds it. When the wait
//! is on the delivering instance itself, the script publishes nothing and the answer is handed over
//! there.
//!
//! These messages are not numbered like changes and wake-ups (`sequence.rs`): those are numbered
//! because a publication queued after a write may be dropped, while an answer leaves Redis in the
//! step that takes it. Pub/sub loses a message only with the subscriber's connection, and when this
//! instance's subscription drops, every wait here resolves `None` (its request is answered
//! retry-later by its bridge), and a new `expect` is refused as unavailable until it is back.
//! Ending a session publishes `{"ended": <id>}` on the same channel in the step that deletes it: its
//! waits on every instance resolve `None`.
//!
//! **Dropping a wait forgets it, best effort**: its local entry at once, and its Redis entry by a
//! spawned `ZREM` (while Redis is unreachable, tried again once it is back, for at most
//! [`FORGET_WITHIN`]); an entry that could not be removed so is forgotten at its deadline, and
//! counts toward the session's bound until then. An answer to a forgotten request is refused
//! (`deliver` answers `false`).
//!
//! On the wire: `{"session": "<id>", "id": "<request id>", "message": {…}}` or `{"ended": "<id>"}`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use mcp_kernel_router::sessions::{ReplyWait, SessionError, SessionLimits};
use mcp_kernel_router::tasks::{StoreError, now_ms};
use redis::Value;

use crate::events::{Events, NotWaiting};
use crate::keys::valid_id;
use crate::link::Link;
use crate::scripts::{SESSION_DELIVER, SESSION_EXPECT};
use crate::session::{RedisSessionStore, millis};
use crate::store::{unexpected, word};

/// How long a dropped wait's entry is tried to be removed while Redis is unreachable.
pub(crate) const FORGET_WITHIN: Duration = Duration::from_secs(30);
/// How many times a dropped wait's entry is tried to be removed.
const FORGET_ATTEMPTS: usize = 5;

/// A message of `<prefix>:replies`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Notice {
    /// The answer `message` to the request `id` of `session`.
    Reply { session: String, id: String, message: serde_json::Value },
    /// The session was ended.
    Ended(String),
}

impl Notice {
    /// The message as published.
    pub(crate) fn encode(&self) -> String {
        match self {
            Notice::Reply { session, id, message } => {
                serde_json::json!({"session": session, "id": id, "message": message}).to_string()
            }
            Notice::Ended(session) => serde_json::json!({"ended": session}).to_string(),
        }
    }

    /// Reads a message of `<prefix>:replies`.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Notice, String> {
        let mut value: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|error| format!("not JSON (line {}, column {})", error.line(), error.column()))?;
        if let Some(ended) = value.get("ended") {
            let session = ended.as_str().ok_or("an ended session that is not a string")?;
            return Ok(Notice::Ended(session.to_owned()));
        }
        let text = |field: &str| value.get(field).and_then(serde_json::Value::as_str).map(str::to_owned);
        let (Some(session), Some(id)) = (text("session"), text("id")) else {
            return Err("neither an answer with its session and id nor an ended session".into());
        };
        let message =
            value.get_mut("message").map(serde_json::Value::take).ok_or("an answer without its message")?;
        Ok(Notice::Reply { session, id, message })
    }
}

/// One registered wait; dropping it forgets it (here at once, in Redis best effort).
struct Pending {
    events: Weak<Events>,
    link: Weak<Link>,
    /// `<prefix>:pending:<session>`.
    key: String,
    session: Arc<str>,
    id: Arc<str>,
    /// The key of the local registration.
    registration: u64,
    /// Whether the Redis entry may be this wait's and still there (not taken by an answer, not
    /// refused by the script).
    in_redis: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(events) = self.events.upgrade() {
            events.forget_reply(&self.session, &self.id, self.registration);
        }
        if !self.in_redis {
            return;
        }
        let (Some(link), Ok(runtime)) = (self.link.upgrade(), tokio::runtime::Handle::try_current()) else {
            return;
        };
        runtime.spawn(forget(link, std::mem::take(&mut self.key), Arc::clone(&self.id)));
    }
}

/// Removes the entry `id` of `key`, trying again while Redis is unreachable (at most
/// [`FORGET_ATTEMPTS`] times, within [`FORGET_WITHIN`]).
async fn forget(link: Arc<Link>, key: String, id: Arc<str>) {
    let mut pipeline = redis::pipe();
    pipeline.cmd("ZREM").arg(&key).arg(&*id).ignore();
    let deadline = tokio::time::Instant::now() + FORGET_WITHIN;
    for _ in 0..FORGET_ATTEMPTS {
        match link.pipeline::<()>(&pipeline).await {
            Err(error) if error.is_unavailable() => {
                let mut up = link.up();
                let back =
                    tokio::time::timeout_at(deadline, async { up.wait_for(|up| *up).await.is_ok() }).await;
                if back != Ok(true) {
                    break;
                }
                // A connection reported up may be the one about to be found broken: a pause.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(error) => {
                tracing::debug!(%error, "a dropped wait's entry could not be removed; forgotten at its deadline");
                return;
            }
            Ok(()) => return,
        }
    }
    tracing::debug!("Redis stayed unreachable; a dropped wait's entry is forgotten at its deadline");
}

impl RedisSessionStore {
    pub(crate) async fn expect_reply(
        &self,
        session: &str,
        request_id: &str,
        limits: &SessionLimits,
    ) -> Result<ReplyWait, SessionError> {
        if !valid_id(session) || !valid_id(request_id) {
            return Err(StoreError::Failed(
                "a session id or request id that is not 1 to 128 visible ASCII characters".into(),
            )
            .into());
        }
        let shared = &self.shared;
        let (registration, receiver) = match shared.events.expect_reply(session, request_id) {
            Ok(registered) => registered,
            Err(NotWaiting::Down(reason)) => {
                let reason = format!("no answer can be heard while the Redis subscription is down: {reason}");
                return Err(StoreError::Unavailable(reason).into());
            }
            Err(NotWaiting::Duplicate) => {
                return Err(
                    StoreError::Failed("this request of this session is waited for already".into()).into()
                );
            }
        };
        let mut pending = Pending {
            events: Arc::downgrade(&shared.events),
            link: Arc::downgrade(&shared.link),
            key: shared.keys.pending(session),
            session: Arc::from(session),
            id: Arc::from(request_id),
            registration,
            // Until Redis answers: a script that timed out may still be applied.
            in_redis: true,
        };
        let now = now_ms();
        let forgotten_at = now.saturating_add(millis(limits.idle));
        let answer = shared
            .link
            .script(
                &SESSION_EXPECT,
                &[&shared.keys.session(session), &pending.key],
                &[
                    request_id.as_bytes(),
                    now.to_string().as_bytes(),
                    forgotten_at.to_string().as_bytes(),
                    limits.pending_per_session.to_string().as_bytes(),
                ],
            )
            .await?;
        let outcome = word(&answer);
        if outcome != Some("ok") {
            pending.in_redis = false;
        }
        match outcome {
            Some("ok") => Ok(Box::pin(async move {
                let mut pending = pending;
                let answer = receiver.await.ok();
                // An answer was taken out of Redis by `deliver`: nothing to forget there.
                pending.in_redis = answer.is_none();
                answer
            })),
            // The session ended (or expired) before: its waits end, this one at once.
            Some("gone") => Ok(Box::pin(std::future::ready(None))),
            Some("full") => Err(SessionError::PendingFull),
            Some("exists") => {
                Err(StoreError::Failed("this request of this session is waited for already".into()).into())
            }
            _ => Err(unexpected("a request registration").into()),
        }
    }

    pub(crate) async fn deliver_reply(
        &self,
        session: &str,
        request_id: &str,
        message: serde_json::Value,
    ) -> Result<bool, StoreError> {
        if !valid_id(session) || !valid_id(request_id) {
            return Ok(false);
        }
        let shared = &self.shared;
        let keys = &shared.keys;
        // The wait is here: the script publishes nothing, and the answer is handed over here.
        let here = shared.events.waits_for(session, request_id);
        let (notice, local) = if here {
            (String::new(), Some(message))
        } else {
            (Notice::Reply { session: session.to_owned(), id: request_id.to_owned(), message }.encode(), None)
        };
        let answer = shared
            .link
            .script(
                &SESSION_DELIVER,
                &[&keys.session(session), &keys.pending(session)],
                &[
                    request_id.as_bytes(),
                    now_ms().to_string().as_bytes(),
                    keys.replies().as_bytes(),
                    notice.as_bytes(),
                ],
            )
            .await?;
        match answer {
            Value::Int(1) => {}
            Value::Int(0) => return Ok(false),
            _ => return Err(unexpected("an answer's delivery")),
        }
        if let Some(message) = local {
            // Gone meanwhile only if the wait was dropped or ended: no one wants the answer then.
            shared.events.deliver_reply(session, request_id, message);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_notice_reads_back_and_a_malformed_one_is_refused() {
        let reply =
            Notice::Reply { session: "s".into(), id: "r".into(), message: json!({"id": "r", "result": {}}) };
        assert_eq!(Notice::decode(reply.encode().as_bytes()), Ok(reply));
        let ended = Notice::Ended("s".into());
        assert_eq!(Notice::decode(ended.encode().as_bytes()), Ok(ended));
        for bad in [
            &b"{"[..],
            br#"{"session":"s","message":{}}"#,
            br#"{"session":"s","id":7,"message":{}}"#,
            br#"{"session":"s","id":"r"}"#,
            br#"{"ended":["s"]}"#,
        ] {
            assert!(Notice::decode(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
