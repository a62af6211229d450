//! The names of every key and channel, all under the configured prefix (`<prefix>:…`), so that
//! servers with different prefixes share one Redis without meeting.
//!
//! | key | type | holds | removed |
//! |---|---|---|---|
//! | `<prefix>:task:<id>` | string | the task record as JSON | at its `remove_after_ms` (`PEXPIREAT`); never without a time to live |
//! | `<prefix>:lease:<id>` | string | the running instance's name | `lease` after its last renewal (`PX`) |
//! | `<prefix>:tasks` | sorted set | every stored task id, scored by its removal deadline | swept by score at each create |
//! | `<prefix>:running:owner:<digest>` / `<prefix>:running:nobody` | sorted set | the owner's running task ids, same scores | a task leaves it when it ends, or when a create finds the owner at its bound and the task's lease lapsed; swept by score |
//!
//! Channels: `<prefix>:changes` (a change as JSON) and `<prefix>:wake` (a task id).

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

    /// The channel of changes.
    pub(crate) fn changes(&self) -> String {
        format!("{}:changes", self.prefix)
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
        for name in [keys.task("t"), keys.lease("t"), keys.stored(), keys.changes(), keys.wake()] {
            assert!(name.starts_with("p:"), "{name}");
        }
        assert_ne!(keys.running(Some("nobody")), keys.running(None));
    }
}
