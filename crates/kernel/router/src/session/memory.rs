//! The in-process session store: every legacy session of this process in one map, behind one lock,
//! with the server-to-client requests each one waits on.
//!
//! Threat: **session exhaustion**. A client that initializes again and again, and never ends what it
//! opened, would grow the map without bound; so `create` refuses past the client's bound and the
//! store's ([`SessionLimits`]), counting live sessions only: an expired session is swept before any
//! count is taken, and nothing live is evicted to make room. A client is the session's
//! [`SessionRecord::counted_key`] — over HTTP its principal, else its address — so one client past its
//! bound leaves the rest of the total to the others; a session counted under no key (no principal, no
//! address) is held to the store's bound alone. A session's subscriptions and the requests waiting on
//! it are bounded too
//! ([`SessionLimits::subscriptions`], [`SessionLimits::pending_per_session`]).
//!
//! Threat: **an answer the server did not ask for**. `deliver` hands an answer only to a wait
//! registered for that request id *of that session* and still waiting; the wait is taken as it is
//! delivered, so a second answer for the same id finds nothing. Dropping a wait forgets its request.
//!
//! What it costs and loses: one record per session (measured in `docs/http.md`), and everything when
//! the process ends; many instances share sessions through a store of their own behind the same trait.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use futures_channel::oneshot;
use serde_json::Value;

use crate::contract::BoxFuture;
use crate::session::store::{
    ReplyWait, SessionEdit, SessionError, SessionLimits, SessionRecord, SessionStore,
};
use crate::tasks::StoreError;
use crate::tasks::record::now_ms;

/// Legacy sessions kept in this process (the default store).
#[derive(Clone, Default)]
pub struct InProcessSessionStore {
    inner: Arc<Mutex<Sessions>>,
}

impl std::fmt::Debug for InProcessSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessSessionStore").field("sessions", &self.len()).finish()
    }
}

/// One session and the requests waiting on it.
struct Entry {
    /// The session, its capabilities taken out (`Value::Null` here).
    record: SessionRecord,
    /// The client's capabilities, as compact JSON: a tree of maps costs about ten times its text, and
    /// a session is read whole at every request anyway.
    capabilities: Box<str>,
    /// The server-to-client requests of this session waiting for an answer, by request id, each with
    /// the token of the wait that registered it.
    pending: HashMap<String, (u64, oneshot::Sender<Value>)>,
}

#[derive(Default)]
struct Sessions {
    entries: HashMap<String, Entry>,
    /// Live sessions per client, by [`SessionRecord::counted_key`] (sessions counted under no key are
    /// not counted here).
    per_client: HashMap<String, usize>,
    /// `(expiry, id)`, earliest first.
    expiries: BTreeSet<(u64, String)>,
    /// The token of the next registered wait.
    next_wait: u64,
}

impl Entry {
    /// The entry of `record`, its capabilities encoded.
    fn new(mut record: SessionRecord) -> Self {
        let capabilities = std::mem::take(&mut record.client_capabilities);
        let capabilities = serde_json::to_string(&capabilities).unwrap_or_else(|_| "{}".into()).into();
        Self { record, capabilities, pending: HashMap::new() }
    }

    /// The session as it was stored (its capabilities read back).
    fn read(&self) -> SessionRecord {
        let mut record = self.record.clone();
        record.client_capabilities = serde_json::from_str(&self.capabilities).unwrap_or(Value::Null);
        record
    }
}

impl Sessions {
    /// Removes every session whose expiry is at or before `now` (their waits resolve `None`).
    fn sweep(&mut self, now: u64) {
        while let Some((at, _)) = self.expiries.first() {
            if *at > now {
                return;
            }
            let Some((_, id)) = self.expiries.pop_first() else { return };
            self.forget(&id);
        }
    }

    /// Removes session `id` and its client's count; its expiry entry must be gone already or removed
    /// by the caller. `true` when it was stored.
    fn forget(&mut self, id: &str) -> bool {
        let Some(entry) = self.entries.remove(id) else { return false };
        if let Some(client) = entry.record.counted_key()
            && let Some(count) = self.per_client.get_mut(client)
        {
            *count -= 1;
            if *count == 0 {
                self.per_client.remove(client);
            }
        }
        true
    }

    /// The live entry `id` at `now` (an expired one is removed).
    fn live(&mut self, id: &str, now: u64) -> Option<&mut Entry> {
        let expires = self.entries.get(id)?.record.expires_at_ms;
        if expires <= now {
            self.expiries.remove(&(expires, id.to_owned()));
            self.forget(id);
            return None;
        }
        self.entries.get_mut(id)
    }
}

impl InProcessSessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many sessions are stored (expired ones included until swept).
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no session is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Sessions> {
        // Every edit under the lock leaves whole records.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn create_now(&self, record: SessionRecord, limits: &SessionLimits) -> Result<(), SessionError> {
        let mut sessions = self.lock();
        sessions.sweep(now_ms());
        if sessions.entries.contains_key(&record.id) {
            // Ids are minted from 128 random bits: a clash is a caller's fault, never a silent swap.
            return Err(SessionError::Store(StoreError::Failed("a session id was stored twice".into())));
        }
        if sessions.entries.len() >= limits.total {
            return Err(SessionError::Full);
        }
        if let Some(client) = record.counted_key() {
            let held = sessions.per_client.get(client).copied().unwrap_or(0);
            if held >= limits.per_owner {
                return Err(SessionError::OwnerFull);
            }
            *sessions.per_client.entry(client.to_owned()).or_insert(0) += 1;
        }
        sessions.expiries.insert((record.expires_at_ms, record.id.clone()));
        let id = record.id.clone();
        sessions.entries.insert(id, Entry::new(record));
        Ok(())
    }

    fn resume_now(
        &self,
        id: &str,
        owner: Option<&str>,
        now: u64,
        limits: &SessionLimits,
    ) -> Option<SessionRecord> {
        let mut sessions = self.lock();
        sessions.sweep(now);
        let entry = sessions.live(id, now)?;
        if entry.record.owner.as_deref() != owner {
            // Another principal's request: no use of the session, whose expiry stays.
            return None;
        }
        let before = entry.record.expires_at_ms;
        let after = now.saturating_add(crate::session::store::duration_ms(limits.idle)).max(before);
        entry.record.expires_at_ms = after;
        let record = entry.read();
        if after != before {
            sessions.expiries.remove(&(before, id.to_owned()));
            sessions.expiries.insert((after, id.to_owned()));
        }
        Some(record)
    }

    fn edit_now(&self, id: &str, edit: SessionEdit, limits: &SessionLimits) -> Result<bool, SessionError> {
        let mut sessions = self.lock();
        let Some(entry) = sessions.live(id, now_ms()) else { return Ok(false) };
        let record = &mut entry.record;
        match edit {
            SessionEdit::Subscribe(uri) => {
                if !record.admits_subscription(&uri, limits) {
                    return Err(SessionError::SubscriptionsFull);
                }
                record.subscriptions.insert(uri);
            }
            SessionEdit::Unsubscribe(uri) => {
                record.subscriptions.remove(&uri);
            }
            SessionEdit::LogLevel(level) => record.log_level = Some(level),
            SessionEdit::Stream(token) => record.stream = Some(token),
        }
        Ok(true)
    }

    fn end_now(&self, id: &str) -> bool {
        let mut sessions = self.lock();
        let now = now_ms();
        if sessions.live(id, now).is_none() {
            return false;
        }
        let expires = sessions.entries.get(id).map(|entry| entry.record.expires_at_ms);
        if let Some(expires) = expires {
            sessions.expiries.remove(&(expires, id.to_owned()));
        }
        sessions.forget(id)
    }

    fn expect_now(
        &self,
        session: &str,
        request_id: &str,
        limits: &SessionLimits,
    ) -> Result<ReplyWait, SessionError> {
        let mut sessions = self.lock();
        let token = sessions.next_wait;
        sessions.next_wait = token.wrapping_add(1);
        let Some(entry) = sessions.live(session, now_ms()) else {
            // No such session: the wait ends at once, as if the session ended while it waited.
            return Ok(Box::pin(std::future::ready(None)));
        };
        if !entry.pending.contains_key(request_id) && entry.pending.len() >= limits.pending_per_session {
            return Err(SessionError::PendingFull);
        }
        let (sender, receiver) = oneshot::channel();
        // A request id registered again replaces the older wait (which then resolves `None`).
        entry.pending.insert(request_id.to_owned(), (token, sender));
        let forget = Forget {
            sessions: Arc::downgrade(&self.inner),
            session: session.to_owned(),
            request_id: request_id.to_owned(),
            token,
        };
        Ok(Box::pin(async move {
            let _forget = forget;
            receiver.await.ok()
        }))
    }

    fn deliver_now(&self, session: &str, request_id: &str, message: Value) -> bool {
        let mut sessions = self.lock();
        let Some(entry) = sessions.live(session, now_ms()) else { return false };
        match entry.pending.remove(request_id) {
            Some((_, sender)) => sender.send(message).is_ok(),
            None => false,
        }
    }

    /// How many requests wait on session `id` (0 when unknown).
    #[cfg(test)]
    fn pending(&self, id: &str) -> usize {
        self.lock().entries.get(id).map_or(0, |entry| entry.pending.len())
    }
}

/// Forgets one registered request when its wait is dropped (answered, cancelled or timed out).
struct Forget {
    sessions: Weak<Mutex<Sessions>>,
    session: String,
    request_id: String,
    token: u64,
}

impl Drop for Forget {
    fn drop(&mut self) {
        let Some(sessions) = self.sessions.upgrade() else { return };
        let mut sessions = sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = sessions.entries.get_mut(&self.session)
            && entry.pending.get(&self.request_id).is_some_and(|(token, _)| *token == self.token)
        {
            entry.pending.remove(&self.request_id);
        }
    }
}

impl SessionStore for InProcessSessionStore {
    fn create<'a>(
        &'a self,
        record: SessionRecord,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(std::future::ready(self.create_now(record, limits)))
    }

    fn resume<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        now_ms: u64,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        Box::pin(std::future::ready(Ok(self.resume_now(id, owner, now_ms, limits))))
    }

    fn edit<'a>(
        &'a self,
        id: &'a str,
        edit: SessionEdit,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<bool, SessionError>> {
        Box::pin(std::future::ready(self.edit_now(id, edit, limits)))
    }

    fn end<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.end_now(id))))
    }

    fn expect<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
        limits: &'a SessionLimits,
    ) -> BoxFuture<'a, Result<ReplyWait, SessionError>> {
        Box::pin(std::future::ready(self.expect_now(session, request_id, limits)))
    }

    fn deliver<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
        message: Value,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.deliver_now(session, request_id, message))))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::FutureExt;
    use serde_json::{Value, json};

    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    fn limits(per_owner: usize, total: usize, pending: usize) -> SessionLimits {
        SessionLimits::new(per_owner, total, HOUR, pending)
    }

    fn session(id: &str, owner: Option<&str>) -> SessionRecord {
        SessionRecord::new(
            id,
            owner.map(str::to_owned),
            "2025-11-25",
            json!({"elicitation": {}}),
            now_ms(),
            HOUR,
        )
    }

    /// A session that expired a second ago.
    fn expired(id: &str, owner: Option<&str>) -> SessionRecord {
        let long_ago = now_ms() - 2_000;
        SessionRecord::new(
            id,
            owner.map(str::to_owned),
            "2025-11-25",
            json!({}),
            long_ago,
            Duration::from_secs(1),
        )
    }

    fn create(
        store: &InProcessSessionStore,
        record: SessionRecord,
        limits: &SessionLimits,
    ) -> Result<(), SessionError> {
        store.create(record, limits).now_or_never().expect("ready")
    }

    /// Session `id` resumed by `owner`.
    fn resume_as(
        store: &InProcessSessionStore,
        id: &str,
        owner: Option<&str>,
        now: u64,
        limits: &SessionLimits,
    ) -> Option<SessionRecord> {
        store.resume(id, owner, now, limits).now_or_never().expect("ready").expect("in process")
    }

    /// Session `id` resumed by alice.
    fn resume(
        store: &InProcessSessionStore,
        id: &str,
        now: u64,
        limits: &SessionLimits,
    ) -> Option<SessionRecord> {
        resume_as(store, id, Some("alice"), now, limits)
    }

    fn edit(
        store: &InProcessSessionStore,
        id: &str,
        edit: SessionEdit,
        limits: &SessionLimits,
    ) -> Result<bool, SessionError> {
        store.edit(id, edit, limits).now_or_never().expect("ready")
    }

    fn deliver(store: &InProcessSessionStore, session: &str, request: &str, message: Value) -> bool {
        store.deliver(session, request, message).now_or_never().expect("ready").expect("in process")
    }

    fn expect(
        store: &InProcessSessionStore,
        session: &str,
        request: &str,
        limits: &SessionLimits,
    ) -> Result<ReplyWait, SessionError> {
        store.expect(session, request, limits).now_or_never().expect("ready")
    }

    #[test]
    fn one_principal_holds_at_most_its_bound_and_another_is_still_admitted() {
        let store = InProcessSessionStore::new();
        let bounds = limits(16, 10_000, 16);
        for n in 0..16 {
            create(&store, session(&format!("a{n}"), Some("alice")), &bounds).expect("within alice's bound");
        }
        assert_eq!(create(&store, session("a16", Some("alice")), &bounds), Err(SessionError::OwnerFull));
        create(&store, session("b0", Some("bob")), &bounds).expect("bob is not starved by alice");
        assert!(store.end("a3").now_or_never().unwrap().unwrap(), "alice ends one");
        create(&store, session("a16", Some("alice")), &bounds).expect("and gets its place back");
        assert_eq!(store.len(), 17);
    }

    #[test]
    fn the_store_holds_at_most_its_total_and_sessions_of_nobody_count_against_it_alone() {
        let store = InProcessSessionStore::new();
        let bounds = limits(2, 5, 16);
        for n in 0..4 {
            create(&store, session(&format!("n{n}"), None), &bounds).expect("nobody's: the total alone");
        }
        create(&store, session("a0", Some("alice")), &bounds).expect("the fifth");
        assert_eq!(create(&store, session("b0", Some("bob")), &bounds), Err(SessionError::Full));
        assert_eq!(create(&store, session("n4", None), &bounds), Err(SessionError::Full));
        assert_eq!(store.len(), 5, "nothing live was evicted");
    }

    #[test]
    fn sessions_of_no_principal_are_counted_per_client_and_one_past_its_bound_starves_no_other() {
        let store = InProcessSessionStore::new();
        let bounds = SessionLimits::default();
        let of = |id: &str, client: &str| session(id, None).counted_as(Some(client.to_owned()));
        for n in 0..bounds.per_owner {
            create(&store, of(&format!("a{n}"), "net-a"), &bounds).expect("within the client's bound");
        }
        assert_eq!(create(&store, of("a16", "net-a"), &bounds), Err(SessionError::OwnerFull), "the 17th");
        create(&store, of("b0", "net-b"), &bounds).expect("a second client is still admitted");
        create(&store, session("n0", None), &bounds).expect("a session counted under no key: the total");
        assert!(store.end("a3").now_or_never().unwrap().unwrap(), "the first client ends one");
        create(&store, of("a16", "net-a"), &bounds).expect("and gets its place back");
        assert_eq!(store.len(), 18);
    }

    #[test]
    fn a_session_is_counted_by_its_quota_and_by_its_owner_only_when_it_has_none() {
        let store = InProcessSessionStore::new();
        let bounds = limits(2, 100, 16);
        let of = |id: &str, quota: &str| session(id, Some("alice")).counted_as(Some(quota.to_owned()));
        create(&store, of("q0", "q"), &bounds).expect("stored");
        create(&store, of("q1", "q"), &bounds).expect("stored");
        assert_eq!(create(&store, of("q2", "q"), &bounds), Err(SessionError::OwnerFull));
        create(&store, session("o0", Some("alice")), &bounds).expect("counted under alice, not q");
        create(&store, session("o1", Some("alice")), &bounds).expect("stored");
        assert_eq!(create(&store, session("o2", Some("alice")), &bounds), Err(SessionError::OwnerFull));
        assert_eq!(of("x", "q").counted_key(), Some("q"));
        assert_eq!(session("x", Some("alice")).counted_key(), Some("alice"));
        assert_eq!(session("x", None).counted_key(), None);
    }

    #[test]
    fn expired_sessions_do_not_count_against_either_bound() {
        let store = InProcessSessionStore::new();
        let bounds = limits(1, 2, 16);
        store.create_now(expired("old1", Some("alice")), &bounds).expect("stored");
        store.create_now(expired("old2", Some("bob")), &bounds).expect("stored (swept on the next create)");
        create(&store, session("new1", Some("alice")), &bounds).expect("alice's expired session is gone");
        create(&store, session("new2", Some("bob")), &bounds).expect("and the total counts live sessions");
        assert_eq!(store.len(), 2);
        assert!(resume(&store, "old1", now_ms(), &bounds).is_none());
    }

    #[test]
    fn resume_pushes_the_idle_expiry_and_an_idle_session_ends() {
        let store = InProcessSessionStore::new();
        let idle = Duration::from_millis(1_000);
        let bounds = SessionLimits::new(16, 100, idle, 16);
        let start = now_ms();
        let record = SessionRecord::new("s", Some("alice".into()), "2025-11-25", json!({}), start, idle);
        create(&store, record, &bounds).expect("stored");
        let resumed = resume(&store, "s", start + 900, &bounds).expect("used within its idle time");
        assert_eq!(resumed.expires_at_ms, start + 1_900, "pushed to now + idle");
        assert!(resume(&store, "s", start + 1_800, &bounds).is_some(), "still live: the expiry moved");
        assert!(resume(&store, "s", start + 2_800, &bounds).is_none(), "a full idle period unused: gone");
        assert!(store.is_empty(), "and removed");
        assert!(resume(&store, "never", start, &bounds).is_none());
    }

    #[test]
    fn another_principals_resume_is_none_and_keeps_nothing_alive() {
        let store = InProcessSessionStore::new();
        let idle = Duration::from_millis(1_000);
        let bounds = SessionLimits::new(16, 100, idle, 16);
        let start = now_ms();
        for (id, owner) in [("s", Some("alice".to_owned())), ("n", None)] {
            let record = SessionRecord::new(id, owner, "2025-11-25", json!({}), start, idle);
            create(&store, record, &bounds).expect("stored");
        }
        for (id, owner) in [("s", Some("bob")), ("s", None), ("n", Some("alice"))] {
            assert_eq!(resume_as(&store, id, owner, start + 900, &bounds), None, "{id} as {owner:?}");
        }
        assert!(resume(&store, "s", start + 1_100, &bounds).is_none(), "expired on time: nothing pushed it");
        assert!(resume_as(&store, "n", None, start + 1_100, &bounds).is_none(), "nobody's alike");
        assert!(store.is_empty());
    }

    #[test]
    fn subscriptions_and_the_log_level_are_kept_within_the_subscription_bound() {
        let store = InProcessSessionStore::new();
        let bounds = limits(16, 100, 16);
        create(&store, session("s", Some("alice")), &bounds).expect("stored");
        for n in 0..bounds.subscriptions {
            assert_eq!(edit(&store, "s", SessionEdit::Subscribe(format!("test://{n}")), &bounds), Ok(true));
        }
        let one_more = SessionEdit::Subscribe("test://past".into());
        assert_eq!(edit(&store, "s", one_more, &bounds), Err(SessionError::SubscriptionsFull));
        let again = SessionEdit::Subscribe("test://0".into());
        assert_eq!(edit(&store, "s", again, &bounds), Ok(true), "a uri held already is no new one");
        assert_eq!(edit(&store, "s", SessionEdit::Unsubscribe("test://0".into()), &bounds), Ok(true));
        assert_eq!(edit(&store, "s", SessionEdit::Subscribe("test://past".into()), &bounds), Ok(true));
        assert_eq!(edit(&store, "s", SessionEdit::LogLevel("debug".into()), &bounds), Ok(true));
        let record = resume(&store, "s", now_ms(), &bounds).expect("live");
        assert_eq!(record.subscriptions.len(), bounds.subscriptions);
        assert!(record.subscriptions.contains("test://past") && !record.subscriptions.contains("test://0"));
        assert_eq!(record.log_level.as_deref(), Some("debug"));
        assert_eq!(edit(&store, "gone", SessionEdit::LogLevel("info".into()), &bounds), Ok(false));
    }

    #[test]
    fn subscriptions_are_bounded_in_bytes_as_well_as_in_number() {
        let store = InProcessSessionStore::new();
        let mut bounds = limits(16, 100, 16);
        bounds.subscription_bytes = 100;
        create(&store, session("s", Some("alice")), &bounds).expect("stored");
        let uri = |n: usize| format!("test://{n}{}", "x".repeat(40));
        assert_eq!(edit(&store, "s", SessionEdit::Subscribe(uri(1)), &bounds), Ok(true));
        assert_eq!(edit(&store, "s", SessionEdit::Subscribe(uri(2)), &bounds), Ok(true), "96 bytes held");
        let third = SessionEdit::Subscribe(uri(3));
        assert_eq!(edit(&store, "s", third.clone(), &bounds), Err(SessionError::SubscriptionsFull));
        assert_eq!(
            edit(&store, "s", SessionEdit::Subscribe("a://b".into()), &bounds),
            Err(SessionError::SubscriptionsFull),
            "past 100 bytes by one"
        );
        assert_eq!(
            edit(&store, "s", SessionEdit::Subscribe("a://".into()), &bounds),
            Ok(true),
            "exactly 100"
        );
        assert_eq!(edit(&store, "s", SessionEdit::Subscribe(uri(2)), &bounds), Ok(true), "held already");
        assert_eq!(edit(&store, "s", SessionEdit::Unsubscribe(uri(1)), &bounds), Ok(true));
        assert_eq!(edit(&store, "s", third, &bounds), Ok(true), "room came back");
    }

    #[test]
    fn an_answer_reaches_only_the_wait_of_its_own_session_and_only_once() {
        let store = InProcessSessionStore::new();
        let bounds = limits(16, 100, 16);
        create(&store, session("s1", Some("alice")), &bounds).expect("stored");
        create(&store, session("s2", Some("alice")), &bounds).expect("stored");
        let wait = expect(&store, "s1", "r1", &bounds).expect("registered");
        let answer = json!({"jsonrpc": "2.0", "id": "r1", "result": {"action": "accept"}});
        assert!(!deliver(&store, "s2", "r1", answer.clone()), "issued to another session");
        assert!(!deliver(&store, "s1", "guessed", answer.clone()), "never issued");
        assert!(deliver(&store, "s1", "r1", answer.clone()), "its own");
        assert!(!deliver(&store, "s1", "r1", answer.clone()), "already answered");
        assert_eq!(wait.now_or_never(), Some(Some(answer)));
    }

    #[test]
    fn pending_requests_are_bounded_per_session_and_a_dropped_wait_is_forgotten() {
        let store = InProcessSessionStore::new();
        let bounds = limits(16, 100, 16);
        create(&store, session("s", Some("alice")), &bounds).expect("stored");
        create(&store, session("t", Some("alice")), &bounds).expect("stored");
        let waits: Vec<_> =
            (0..16).map(|n| expect(&store, "s", &format!("r{n}"), &bounds).expect("within")).collect();
        assert_eq!(expect(&store, "s", "r16", &bounds).err(), Some(SessionError::PendingFull));
        let other = expect(&store, "t", "r0", &bounds).expect("another session has its own bound");
        assert_eq!(store.pending("s"), 16);
        drop(waits);
        assert_eq!(store.pending("s"), 0, "every dropped wait was forgotten");
        assert!(!deliver(&store, "s", "r3", json!({})), "a forgotten request takes no answer");
        let again = expect(&store, "s", "r16", &bounds).expect("room again");
        drop((again, other));
    }

    #[tokio::test]
    async fn ending_a_session_ends_its_waits_and_a_wait_on_an_unknown_session_ends_at_once() {
        let store = InProcessSessionStore::new();
        let bounds = limits(16, 100, 16);
        create(&store, session("s", Some("alice")), &bounds).expect("stored");
        let wait = expect(&store, "s", "r1", &bounds).expect("registered");
        assert!(store.end("s").await.expect("in process"));
        assert!(!store.end("s").await.expect("in process"), "ended once");
        assert_eq!(tokio::time::timeout(HOUR, wait).await.expect("ends at once"), None);
        let orphan = expect(&store, "gone", "r1", &bounds).expect("a wait");
        assert_eq!(orphan.now_or_never(), Some(None));
        assert!(resume(&store, "s", now_ms(), &bounds).is_none(), "404 from now on");
    }

    #[test]
    fn a_request_id_registered_again_replaces_the_older_wait() {
        let store = InProcessSessionStore::new();
        let bounds = limits(16, 100, 1);
        create(&store, session("s", None), &bounds).expect("stored");
        let first = expect(&store, "s", "r", &bounds).expect("registered");
        let second = expect(&store, "s", "r", &bounds).expect("the same id: no new place taken");
        assert_eq!(
            first.now_or_never(),
            Some(None),
            "the older wait ends (and forgets nothing of the newer)"
        );
        assert_eq!(store.pending("s"), 1);
        assert!(deliver(&store, "s", "r", json!(1)));
        assert_eq!(second.now_or_never(), Some(Some(json!(1))));
    }
}
