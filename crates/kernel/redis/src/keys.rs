//! The names of every key and channel, all under the configured prefix (`<prefix>:…`), so that
//! servers with different prefixes share one Redis without meeting.
//!
//! | key | type | holds | removed |
//! |---|---|---|---|
//! | `<prefix>:task:<id>` | string | the task record as JSON | at its `remove_after_ms` (`PEXPIREAT`); never without a time to live |
//! | `<prefix>:lease:<id>` | string | the running instance's name | `lease` after its last renewal (`PX`) |
//! | `<prefix>:tasks` | sorted set | every stored task id, scored by its removal deadline | swept by score at each create |
//! | `<prefix>:running:owner:<digest>` / `<prefix>:running:nobody` | sorted set | the owner's running task ids, same scores | a task leaves it when it ends, or when a create finds the owner at its bound and the task's lease lapsed; swept by score |
//! | `<prefix>:session:<id>` | hash | a legacy session: `record` (JSON), for a session of a principal `owner` (its digest, which binds the session), and for a session counted against a client `clients` (the name of its client's set) | at its idle expiry (`PEXPIREAT`), pushed by each `resume`; at `end` |
//! | `<prefix>:pending:<id>` | sorted set | the session's server-to-client request ids waiting for an answer, scored by when each is forgotten | when its last entry is forgotten (`PEXPIREAT`); at `end` |
//! | `<prefix>:sessions` | sorted set | every session id, scored by its idle expiry (the store's bound) | swept by score at each create; at `end` |
//! | `<prefix>:sessions:client:<digest>` | sorted set | one client's session ids, same scores (the per-client bound): the client is the session's quota, its principal's digest, else its address prefix's (`SessionRecord::counted_key`); a session counted under no key has no such set and counts against the store's bound alone | swept by score at each create; at `end`; when its last session expires (`PEXPIREAT`) |
//!
//! A session id and a request id are key parts and set members only once checked ([`valid_id`]):
//! visible ASCII, at most [`MAX_ID_LEN`] bytes. Each kind of key has its own word after the prefix
//! (`session:`, `pending:`, `sessions`), so no id, whatever its colons, names another kind's key.
//!
//! Channels: `<prefix>:changes` (a change) and `<prefix>:wake` (a task id, or an instance's beat),
//! each message JSON with its instance and number (`sequence.rs`); `<prefix>:replies` (a client's
//! answer for the instance waiting for it, or a session ended), published by the script that takes
//! the answer or ends the session, in the same step (`replies.rs`).

/// The longest session id, request id or owner digest used in a key or a set.
pub(crate) const MAX_ID_LEN: usize = 128;

/// Whether `id` may be used as a key part or a set member: 1 to [`MAX_ID_LEN`] bytes, each visible
/// ASCII (0x21–0x7E).
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_LEN && id.bytes().all(|byte| byte.is_ascii_graphic())
}

/// The key and channel names of one prefix.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Self {
        Self { prefix: prefix.to_owned() }
    }

    /// The task record.
    pub(crate) fn task(&self, id: &str) -> String {
        format!("{}:task:{id}", self.prefix)
    }

    /// The running instance's lease on a task.
    pub(crate) fn lease(&self, id: &str) -> String {
        format!("{}{id}", self.leases())
    }

    /// What every lease key starts with (for a script that finds a task's lease from its id).
    pub(crate) fn leases(&self) -> String {
        format!("{}:lease:", self.prefix)
    }

    /// Every stored task (the store's bound).
    pub(crate) fn stored(&self) -> String {
        format!("{}:tasks", self.prefix)
    }

    /// One owner's running tasks (the owner's bound); `None`: tasks created for nobody.
    pub(crate) fn running(&self, owner: Option<&str>) -> String {
        match owner {
            Some(owner) => format!("{}:running:owner:{owner}", self.prefix),
            None => format!("{}:running:nobody", self.prefix),
        }
    }

    /// A legacy session (a hash: its record, its owner's digest and the name of its client's set).
    pub(crate) fn session(&self, id: &str) -> String {
        format!("{}:session:{id}", self.prefix)
    }

    /// The server-to-client requests of the session `id` waiting for an answer.
    pub(crate) fn pending(&self, id: &str) -> String {
        format!("{}:pending:{id}", self.prefix)
    }

    /// Every live session (the store's bound).
    pub(crate) fn sessions(&self) -> String {
        format!("{}:sessions", self.prefix)
    }

    /// One client's live sessions (the per-client bound), by the sessions' counted key. Sessions
    /// counted under no key have no such set: they count against the store's bound alone.
    pub(crate) fn client_sessions(&self, client: &str) -> String {
        format!("{}:sessions:client:{client}", self.prefix)
    }

    /// The channel of changes.
    pub(crate) fn changes(&self) -> String {
        format!("{}:changes", self.prefix)
    }

    /// The channel of clients' answers and ended sessions.
    pub(crate) fn replies(&self) -> String {
        format!("{}:replies", self.prefix)
    }

    /// The channel of task wake-ups.
    pub(crate) fn wake(&self) -> String {
        format!("{}:wake", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_starts_with_the_prefix_and_owners_cannot_collide_with_nobody() {
        let keys = Keys::new("p");
        for name in [
            keys.task("t"),
            keys.lease("t"),
            keys.stored(),
            keys.changes(),
            keys.wake(),
            keys.replies(),
            keys.session("s"),
            keys.pending("s"),
            keys.sessions(),
            keys.client_sessions("o"),
        ] {
            assert!(name.starts_with("p:"), "{name}");
        }
        assert_ne!(keys.running(Some("nobody")), keys.running(None));
    }

    #[test]
    fn no_valid_session_id_names_another_kinds_key() {
        let keys = Keys::new("p");
        let others = [keys.sessions(), keys.client_sessions("o")];
        for id in ["x:pending", "s", ":", "sessions", "x:session:y", "client:o"] {
            assert!(valid_id(id));
            for other in &others {
                assert_ne!(&keys.session(id), other, "{id}");
                assert_ne!(&keys.pending(id), other, "{id}");
            }
            assert_ne!(keys.session(id), keys.pending("x"), "{id}");
        }
    }

    #[test]
    fn an_id_is_visible_ascii_and_bounded() {
        assert!(valid_id("!~") && valid_id(&"a".repeat(MAX_ID_LEN)));
        for bad in ["", " ", "a b", "new\nline", "nul\0", "é", "\x7f"] {
            assert!(!valid_id(bad), "{bad:?}");
        }
        assert!(!valid_id(&"a".repeat(MAX_ID_LEN + 1)));
    }
}
