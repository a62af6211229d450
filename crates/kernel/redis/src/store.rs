//! [`RedisTaskStore`]: the router's [`TaskStore`] over Redis, shared by every instance of one prefix.
//!
//! | operation | Redis round trips | how |
//! |---|---|---|
//! | `create` | 1 | `create.lua`: sweep, both bounds (at the owner's, its running tasks whose lease is gone are dropped from its count first), store (`PEXPIREAT`), index, lease — atomically |
//! | `read` | 1 | `read.lua`: the record, its SHA-1 and whether its lease is held |
//! | `read` of a task whose instance stopped | 2 (+1 wake-up) | then `swap.lua` fails it, refusing if the lease is back |
//! | `read`, here, of a task running here whose lease lapsed | 2 | then the lease is taken again (`SET … PX`) |
//! | `update` | 2 per attempt | in its turn among this instance's writers of the task (`writers.rs`): `read.lua`, the edit in Rust, `swap.lua` (compare-and-swap on the SHA-1), at most [`MAX_SWAP_ATTEMPTS`] attempts, with a random pause after a conflict |
//! | `wake` | ≤ 1, shared | a `PUBLISH` on `<prefix>:wake` (the task id, numbered: `sequence.rs`), pipelined with whatever else is queued |
//! | `watch`, `watch_running` | 0 | local: the subscription delivers the wake-ups; the heartbeat renews the leases |
//!
//! Threat: **a terminal status overwritten**. Two instances may race to complete and to cancel the
//! same task. Each applies its edit to the record it read; the swap succeeds only if the record is
//! still the one read, byte for byte (its SHA-1), so the loser reads again, and its edit — the
//! router's rules in `TaskRecord::apply` — refuses to change a terminal task.

use std::sync::Arc;

use mcp_kernel_router::BoxFuture;
use mcp_kernel_router::tasks::{
    Edit, LimitReached, StoreError, StoreResult, TaskLimits, TaskRecord, TaskStore, TaskWatch, Transition,
    now_ms,
};
use redis::Value;

use crate::Shared;
use crate::publish::Outgoing;
use crate::scripts::{CREATE, READ, SWAP};

/// How many compare-and-swap attempts an update makes before it reports contention as a failure.
pub const MAX_SWAP_ATTEMPTS: usize = 16;

/// The status message (and error message) of a task failed because its instance stopped.
pub const INSTANCE_STOPPED: &str = "the instance running the task stopped";

/// The task store shared through Redis ([`Redis::task_store`](crate::Redis::task_store)). Cheap to
/// clone.
#[derive(Clone)]
pub struct RedisTaskStore {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore").field("key_prefix", &self.shared.prefix).finish_non_exhaustive()
    }
}

/// A record as read: its bytes, their SHA-1 (hex) and whether its lease is held.
struct Raw {
    bytes: Vec<u8>,
    digest: Vec<u8>,
    leased: bool,
}

/// What a compare-and-swap did.
enum Swap {
    Done,
    Gone,
    Conflict,
    Leased,
}

pub(crate) fn unexpected(what: &str) -> StoreError {
    StoreError::Failed(format!("Redis answered {what} unexpectedly"))
}

fn encode(record: &TaskRecord) -> StoreResult<Vec<u8>> {
    serde_json::to_vec(record)
        .map_err(|error| StoreError::Failed(format!("a task record does not encode: {error}")))
}

/// The record stored under the task `id`: one that does not parse, or names another task (written
/// there by someone else), is a failure — it is never taken for, nor written back as, another task.
fn decode(id: &str, bytes: &[u8]) -> StoreResult<TaskRecord> {
    // The position only: serde's message may quote the record's content.
    let record: TaskRecord = serde_json::from_slice(bytes).map_err(|error| {
        StoreError::Failed(format!(
            "a stored task record does not parse (line {}, column {})",
            error.line(),
            error.column()
        ))
    })?;
    if record.id != id {
        return Err(StoreError::Failed("a stored task record names another task".into()));
    }
    Ok(record)
}

/// A random pause before the compare-and-swap attempt `attempt` (from 1): up to 0.5 ms, doubling
/// with each attempt up to 32 ms.
pub(crate) fn backoff(attempt: usize) -> std::time::Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_usize(attempt);
    let ceiling = 500u64 << attempt.min(6);
    std::time::Duration::from_micros(hasher.finish() % ceiling)
}

/// A bulk-string or status answer as text.
pub(crate) fn word(value: &Value) -> Option<&str> {
    match value {
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok(),
        Value::SimpleString(text) => Some(text),
        _ => None,
    }
}

impl RedisTaskStore {
    async fn read_raw(&self, id: &str) -> StoreResult<Option<Raw>> {
        let keys = &self.shared.keys;
        let answer = self.shared.link.script(&READ, &[&keys.task(id), &keys.lease(id)], &[]).await?;
        match answer {
            Value::Nil => Ok(None),
            Value::Array(items) => match <[Value; 3]>::try_from(items) {
                Ok([Value::BulkString(bytes), Value::BulkString(digest), Value::Int(leased)]) => {
                    Ok(Some(Raw { bytes, digest, leased: leased == 1 }))
                }
                _ => Err(unexpected("a task read")),
            },
            _ => Err(unexpected("a task read")),
        }
    }

    async fn swap(
        &self,
        record: &TaskRecord,
        digest: &[u8],
        bytes: &[u8],
        ends: bool,
        only_if_lapsed: bool,
    ) -> StoreResult<Swap> {
        let keys = &self.shared.keys;
        let id = record.id.as_str();
        let flags = |on: bool| if on { &b"1"[..] } else { &b"0"[..] };
        let answer = self
            .shared
            .link
            .script(
                &SWAP,
                &[&keys.task(id), &keys.running(record.owner.as_deref()), &keys.lease(id)],
                &[digest, bytes, flags(ends), id.as_bytes(), flags(only_if_lapsed)],
            )
            .await?;
        match word(&answer) {
            Some("ok") => Ok(Swap::Done),
            Some("gone") => Ok(Swap::Gone),
            Some("conflict") => Ok(Swap::Conflict),
            Some("leased") => Ok(Swap::Leased),
            _ => Err(unexpected("a compare-and-swap")),
        }
    }

    /// Takes the lease of `id` again, for this instance, which runs the task.
    async fn retake(&self, id: &str) -> StoreResult<()> {
        let shared = &self.shared;
        let mut pipeline = redis::pipe();
        pipeline
            .cmd("SET")
            .arg(shared.keys.lease(id))
            .arg(&shared.holder)
            .arg("PX")
            .arg(shared.lease_ms)
            .ignore();
        tracing::warn!(task = id, "the lease of a task running here had lapsed; taken again");
        shared.link.pipeline::<()>(&pipeline).await
    }

    /// Fails the task read as `raw` (`record`), still running while its lease has lapsed: its instance
    /// stopped. The swap refuses if the lease is held again; a task changed meanwhile is read again.
    async fn fail_stopped(
        &self,
        id: &str,
        mut raw: Raw,
        mut record: TaskRecord,
    ) -> StoreResult<Option<TaskRecord>> {
        for _ in 0..3 {
            let error = serde_json::json!({"code": -32603, "message": INSTANCE_STOPPED});
            let mut failed = record.clone();
            if !failed.apply(&Transition::Failed { error, message: INSTANCE_STOPPED.to_owned() }, now_ms()) {
                return Ok(Some(record));
            }
            match self.swap(&record, &raw.digest, &encode(&failed)?, true, true).await? {
                Swap::Done => {
                    tracing::warn!(task = id, "a task whose instance stopped (its lease lapsed) was failed");
                    self.wake(id);
                    return Ok(Some(failed));
                }
                Swap::Gone => return Ok(None),
                Swap::Leased => return Ok(Some(record)),
                Swap::Conflict => {
                    let Some(again) = self.read_raw(id).await? else { return Ok(None) };
                    record = decode(id, &again.bytes)?;
                    if record.status.is_terminal() || again.leased {
                        return Ok(Some(record));
                    }
                    raw = again;
                }
            }
        }
        Ok(Some(record))
    }
}

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        Box::pin(async move {
            let shared = &self.shared;
            let keys = &shared.keys;
            let id = record.id.as_str();
            let bytes = encode(&record)?;
            let deadline = record.remove_after_ms.map(|at| at.to_string()).unwrap_or_default();
            let answer = shared
                .link
                .script(
                    &CREATE,
                    &[
                        &keys.task(id),
                        &keys.lease(id),
                        &keys.running(record.owner.as_deref()),
                        &keys.stored(),
                    ],
                    &[
                        id.as_bytes(),
                        &bytes,
                        now_ms().to_string().as_bytes(),
                        deadline.as_bytes(),
                        limits.per_owner.to_string().as_bytes(),
                        limits.total.to_string().as_bytes(),
                        shared.lease_ms.to_string().as_bytes(),
                        shared.holder.as_bytes(),
                        keys.leases().as_bytes(),
                    ],
                )
                .await?;
            match word(&answer) {
                Some("ok") => Ok(Ok(())),
                Some("total") => Ok(Err(LimitReached::Total(limits.total))),
                Some("owner") => Ok(Err(LimitReached::PerOwner(limits.per_owner))),
                Some("exists") => Err(StoreError::Failed("a task with this id is stored already".into())),
                _ => Err(unexpected("a task creation")),
            }
        })
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            let Some(raw) = self.read_raw(id).await? else { return Ok(None) };
            let record = decode(id, &raw.bytes)?;
            if record.status.is_terminal() || raw.leased {
                return Ok(Some(record));
            }
            if self.shared.leases.holds(id) {
                // This instance runs the task: its lease lapsed, not its run (`lease.rs`).
                self.retake(id).await?;
                return Ok(Some(record));
            }
            self.fail_stopped(id, raw, record).await
        })
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            // This instance's writers of the task take turns: only other instances' writes conflict.
            let _turn = self.shared.writers.turn(id).await;
            for attempt in 0..MAX_SWAP_ATTEMPTS {
                if attempt > 0 {
                    // Writers that collided spread out (a random pause, doubling), so that they do not
                    // collide again in step.
                    tokio::time::sleep(backoff(attempt)).await;
                }
                let Some(raw) = self.read_raw(id).await? else { return Ok(None) };
                let mut record = decode(id, &raw.bytes)?;
                let was_running = !record.status.is_terminal();
                if !edit(&mut record) {
                    return Ok(None);
                }
                let ends = was_running && record.status.is_terminal();
                match self.swap(&record, &raw.digest, &encode(&record)?, ends, false).await? {
                    Swap::Done => return Ok(Some(record)),
                    Swap::Gone => return Ok(None),
                    Swap::Conflict | Swap::Leased => continue,
                }
            }
            Err(StoreError::Failed(format!(
                "the task changed under each of {MAX_SWAP_ATTEMPTS} compare-and-swap attempts"
            )))
        })
    }

    fn watch(&self, id: &str) -> TaskWatch {
        TaskWatch::new(self.shared.events.watch(id, None))
    }

    fn watch_running(&self, id: &str) -> TaskWatch {
        let lease = self.shared.leases.hold(id);
        TaskWatch::new(self.shared.events.watch(id, Some(lease)))
    }

    fn wake(&self, id: &str) {
        self.shared.outbox.send(Outgoing::Wake(Arc::from(id)));
    }
}
