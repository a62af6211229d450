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
        entry.record.apply(&edit, limits)?;
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
mod tests;
