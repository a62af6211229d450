//! Change notifications, tasks and `2025-11-25` sessions of an mcp-kernel server shared through Redis,
//! so that many instances behind a proxy serve as one: a listen stream held by one instance hears a
//! change made through another, a task created through one is read, answered and cancelled through
//! any, and a legacy session initialized on one is served by every one — a client's answer to a
//! server-to-client request POSTed to one reaching the instance waiting for it.
//!
//! ```no_run
//! # async fn host(runtime: impl mcp_kernel_router::tasks::TaskRuntime) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_kernel_redis::{Redis, RedisConfig};
//! use mcp_kernel_router::notify::Notifications;
//! use mcp_kernel_router::tasks::Tasks;
//!
//! let config = RedisConfig::from_url("redis://redis.internal:6379/0")?
//!     .password_from_env("REDIS_PASSWORD")
//!     .key_prefix("notes");
//! let redis = Redis::start(config); // inside a tokio runtime; connects in the background
//! let tasks = Tasks::with_store(redis.task_store(), runtime);
//! let notifications = Notifications::with_hub(redis.change_hub());
//! # drop((tasks, notifications)); Ok(()) }
//! ```
//!
//! The in-process hub and store stay the default: a host on one machine needs none of this.
//!
//! # What is stored, and for how long
//!
//! Every key and channel starts with the key prefix (`"mcp-kernel"` by default), so several servers
//! share one Redis without seeing each other (the table is in `keys.rs`):
//!
//! - `<prefix>:task:<id>` — the task record as JSON (`TaskRecord`): status, status message, times,
//!   result or error, outstanding input requests, answers not yet taken, the handler's state, the
//!   cancellation request, and the owner **as the router's SHA-256 digest of the principal, never a
//!   token**. It expires at the task's removal deadline (`PEXPIREAT`: creation + `ttlMs` +
//!   retention); a task with no time to live has no expiry. A record is about 1 KiB plus its result
//!   and input.
//! - `<prefix>:lease:<id>` — the running instance's lease, `lease` long (10 s), renewed every third
//!   of it while the task runs there.
//! - `<prefix>:tasks` and `<prefix>:running:…` — sorted sets of task ids (the store's bound and each
//!   owner's), scored by removal deadline and swept by score at each create.
//! - `<prefix>:session:<id>` — a legacy session ([`RedisSessionStore`]): a hash of its record as
//!   JSON (`SessionRecord`: the revision and the client's capabilities from `initialize`, its
//!   subscriptions, its log level, the owner **as the digest the transport gives, never a
//!   principal**) and the name of its owner's set. It expires at the idle expiry (`PEXPIREAT`),
//!   pushed by every request of the session. About 0.9 KiB with its index entries.
//! - `<prefix>:pending:<id>` — the session's server-to-client requests waiting for an answer, a
//!   sorted set scored by when each is forgotten (one idle period after it was sent).
//! - `<prefix>:sessions` and `<prefix>:sessions:…` — sorted sets of session ids (the store's bound
//!   and each owner's), scored by idle expiry and swept by score at each create.
//! - Channels `<prefix>:changes` and `<prefix>:wake`, every message JSON naming its instance and its
//!   number: `{"from": "<instance>", "seq": 7, "change": {…}}` (a change carries no content: a kind,
//!   a uri, a caller key), `{"from": …, "seq": 8, "task": "<id>"}` (a wake-up) and each instance's
//!   beat `{"from": …, "seq": 8, "beat": true}`; the first message after a loss adds `"lost": <the
//!   number dropped>`. Channel `<prefix>:replies`: `{"session": …, "id": …, "message": {…}}` (a
//!   client's answer, whole) and `{"ended": "<session id>"}`. Nothing is kept for a channel.
//!
//! # How it behaves
//!
//! - **One subscription per instance.** [`Redis::start`] opens one pub/sub connection (the three
//!   channels) and one multiplexed command connection, each made in the background and again with
//!   exponential backoff (`reconnect_backoff`, 100 ms to 5 s); a server may start while Redis is down
//!   and serves as soon as it is up. [`Redis::connect`] waits for both, for hosts that want to fail at
//!   start.
//! - **Changes** ([`RedisHub`]): `publish` never blocks (a bounded queue to one publishing task) and
//!   every change comes back through the subscription, so local subscribers receive each change once,
//!   their own instance's included. A subscriber that falls `hub_capacity` behind has its feed ended.
//! - **No instance silently deaf.** Every publication — changes and wake-ups — carries its
//!   instance's id and a number from one counter per [`Redis`] family, taken also by one that is then
//!   dropped (the queue full, or its `PUBLISH` refused or unanswered after the task's compare-and-swap
//!   succeeded); at every heartbeat beat each instance publishes the number of its last publication
//!   sent or dropped, and its first message after a loss names the number dropped. Each
//!   subscription keeps the last number heard from each publisher (at most 4,096; one silent for 30
//!   beats, and at least 60 s, is forgotten): a number skipped ends every local listen stream and
//!   watch, as when the subscription drops — clients listen again, runners read their tasks again —
//!   at the latest at the publisher's next beat; the publishing instance ends its own at once. So a
//!   runner on another instance learns of a `tasks/cancel` or `tasks/update` whose wake-up was lost.
//! - **Tasks** ([`RedisTaskStore`]): `create` is one Lua script checking both bounds (per owner: its
//!   running tasks, a task whose lease lapsed counting no more; in all: the stored ones; nothing is
//!   evicted), storing the record and taking the lease; it resolves only once Redis acknowledged, so
//!   `CreateTaskResult` follows a durable write. `read` is **one round trip**. `update` reads, applies the router's edit in Rust and writes with
//!   a compare-and-swap on the record's SHA-1, retried up to [`MAX_SWAP_ATTEMPTS`] times: a terminal
//!   status is never overwritten, by any instance. One instance's writers of a task take turns, so
//!   only other instances' writes conflict (a burst of status messages cannot starve the task's
//!   outcome). `wake` publishes the task id; each instance wakes
//!   its own watchers — no instance polls Redis for a task.
//! - **Sessions** ([`RedisSessionStore`]): `create` is one Lua script checking both bounds (live
//!   sessions per owner and in all; expired ones count no more); `resume` is **one round trip**,
//!   reading the record and pushing its expiry; `edit` a compare-and-swap like a task's; `end`
//!   deletes the session and, in the same script, tells every instance to end its waits. A
//!   server-to-client request is registered before it is sent (`expect`, within the session's
//!   bound); `deliver`, on any instance, takes it out and publishes the answer in one script, so that
//!   it is handed over once and only for the session it was issued to. A wait resolves `None` when
//!   its session ends or this instance's subscription drops; dropping it forgets it (best effort).
//! - **A stopped instance** (killed, partitioned away for longer than its lease) stops renewing its
//!   leases; the next read of each of its running tasks, through any instance, fails it with
//!   `{"code": -32603, "message": "the instance running the task stopped"}`. So is a creation
//!   answered retry-later that reached Redis all the same (sent before a partition, delivered once it
//!   healed): it runs nowhere, and once its lease lapses it holds no place of its owner's.
//! - **Redis unreachable.** Every command is bounded by `response_timeout` (1 s) and fails at once
//!   while there is no connection: the router answers a task request retry-later (over HTTP, 503 with
//!   `retry-after`), never a hang and never a wrong status, and a tool call that needs no task is
//!   served as usual. A write whose answer timed out may still be applied (a paused Redis resumes):
//!   a retry is safe — a new task id; a cancel or an answer applied twice changes nothing — and a task
//!   created so, which no instance runs, is failed by its first read once its lease has lapsed.
//!   When the subscription drops — or its ping, sent at every heartbeat, goes
//!   unanswered — every local listen stream ends with its completion result and every watch ends
//!   (the router reads its tasks again); until it is back, a listen is refused retry-later.
//! - **Redis restarted empty** loses every task and lease: reads answer "not found". Persistence
//!   (AOF or RDB) keeps them across a restart; `docs/deploy.md` has the table.
//!
//! # Round trips
//!
//! Measured by [`Redis::round_trips`] in this crate's tests (`tests/integration/store.rs`,
//! `router.rs`, `losses.rs` and `sessions.rs`): a `tasks/get` is exactly **1**, and so is a legacy
//! session's `resume` (every request of the session), `create`, `end`, `expect` and `deliver`; an
//! `edit` is 2 (read, compare-and-swap). A task's whole life through the router — created by a
//! `tools/call` on one instance, completed there, polled through another — is **5 plus 1 per
//! `tasks/get`**: the create script 1, the run's first look at its task 1, the completion's read and
//! compare-and-swap 2, its wake-up 1. Each further transition (a status message, input requested or
//! recorded, a cancellation) is 3: read, swap, wake-up. An idle instance makes two round trips per
//! heartbeat (a third of the lease): its subscription's ping, and one pipeline publishing its beat and
//! renewing all of its running tasks' leases together (the beat costs an instance running no task
//! one round trip per beat, 0.3 a second at the default lease); a waiting task costs nothing more.
//!
//! # Threats
//!
//! - *Credentials*: the password, from the URL or the environment, never appears in `Debug`, in an
//!   error or in a log line this crate writes (each is passed through a redactor).
//! - *Who may write Redis is trusted*: anyone who can write the prefix's keys or publish on its
//!   channels can change any task, announce any change, or end every instance's listens (a number
//!   skipped). Use ACLs restricting the instances' user to
//!   `~<prefix>:*` and `&<prefix>:*`, TLS (`rediss://`) across untrusted networks, and a password.
//! - *A deaf listener*: see "No instance silently deaf" and "Redis unreachable" — a feed or watch that
//!   can no longer hear, or missed a publication, ends; a wait for an answer ends when the
//!   subscription drops.
//! - *Answers in transit*: a client's answer to a server-to-client request (an elicitation's content,
//!   a sampled message) crosses Redis pub/sub to every instance, stored nowhere; whoever may subscribe
//!   to the prefix's channels reads it.
//! - Redis Cluster is not supported (the scripts touch several keys of one prefix, and `create` the
//!   leases of the owner's running tasks, which it is not given); one primary is, Redis 6.2 or later.
//!   An acknowledged write is durable only as the primary's persistence makes it (`appendfsync
//!   always` for the tasks extension's "durably created"); no `WAIT` is issued, so a failover to a
//!   replica may lose the last acknowledged writes (`docs/deploy.md`).
#![forbid(unsafe_code)]

mod config;
mod events;
mod hub;
mod keys;
mod lease;
mod link;
mod publish;
mod replies;
mod scripts;
mod sequence;
mod session;
mod store;
mod subscription;
mod writers;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

pub use config::{
    ConfigError, DEFAULT_BACKOFF_MAX, DEFAULT_BACKOFF_MIN, DEFAULT_CONNECT_TIMEOUT, DEFAULT_HUB_CAPACITY,
    DEFAULT_KEY_PREFIX, DEFAULT_LEASE, DEFAULT_RESPONSE_TIMEOUT, RedisConfig,
};
pub use hub::RedisHub;
pub use session::RedisSessionStore;
pub use store::{INSTANCE_STOPPED, MAX_SWAP_ATTEMPTS, RedisTaskStore};

use events::Events;
use keys::Keys;
use lease::Leases;
use link::{Link, Settings};
use publish::Outbox;
use writers::Writers;

/// Redis was not reachable within the time given. The reason never holds the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Redis was not reachable within {within:?}: {reason}")]
pub struct ConnectError {
    /// How long it was waited for.
    pub within: Duration,
    /// The last failure seen.
    pub reason: String,
}

/// What every handle of one family shares; dropping the last one stops its background work.
pub(crate) struct Shared {
    pub(crate) prefix: String,
    pub(crate) keys: Keys,
    pub(crate) settings: Arc<Settings>,
    pub(crate) link: Arc<Link>,
    pub(crate) events: Arc<Events>,
    pub(crate) leases: Arc<Leases>,
    pub(crate) outbox: Outbox,
    pub(crate) lease_ms: u64,
    /// This instance's name: in its leases and in its publications.
    pub(crate) holder: String,
    /// This instance's writers of each task, one at a time.
    pub(crate) writers: Writers,
    background: Vec<tokio::task::AbortHandle>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        for task in &self.background {
            task.abort();
        }
    }
}

/// One instance's use of Redis: one pub/sub connection, one command connection and the heartbeat,
/// shared by its [`RedisHub`], [`RedisTaskStore`] and [`RedisSessionStore`]. Cheap to clone (clones are the same family);
/// the background work stops when the last handle is dropped.
#[derive(Clone)]
pub struct Redis {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("key_prefix", &self.shared.prefix)
            .field("round_trips", &self.round_trips())
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Starts using the Redis of `config`: spawns the background work (connections made lazily and
    /// again with backoff, the heartbeat) and returns at once, Redis reachable or not.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (it spawns its background tasks there).
    pub fn start(config: RedisConfig) -> Redis {
        for var in &config.unset_env {
            tracing::info!(variable = %var, "a Redis credential variable is not set; the URL's credentials, if any, are used");
        }
        let settings = Arc::new(Settings::new(&config));
        let link = Arc::new(Link::new(Arc::clone(&settings)));
        let events = Arc::new(Events::new(config.hub_capacity));
        let leases = Arc::new(Leases::default());
        let keys = Keys::new(&config.key_prefix);
        let counter = Arc::new(sequence::Counter::default());
        let (outbox, queue) = Outbox::new(Arc::clone(&events), Arc::clone(&counter));
        let holder = sequence::instance_id();
        let beat = config.lease / 3;
        let background = vec![
            tokio::spawn(Arc::clone(&link).maintain()).abort_handle(),
            tokio::spawn(subscription::subscribe_forever(
                Arc::clone(&settings),
                Arc::clone(&events),
                Arc::clone(&link),
                keys.clone(),
                beat,
                holder.clone(),
            ))
            .abort_handle(),
            tokio::spawn(publish::publish_forever(
                queue,
                Arc::clone(&link),
                Arc::clone(&events),
                keys.clone(),
                Arc::clone(&counter),
                holder.clone(),
            ))
            .abort_handle(),
            tokio::spawn(lease::heartbeat(
                Arc::clone(&leases),
                Arc::clone(&link),
                keys.clone(),
                config.lease,
                holder.clone(),
                counter,
            ))
            .abort_handle(),
        ];
        let lease_ms = u64::try_from(config.lease.as_millis()).unwrap_or(u64::MAX);
        let shared = Shared {
            prefix: config.key_prefix,
            keys,
            settings,
            link,
            events,
            leases,
            outbox,
            lease_ms,
            holder,
            writers: Writers::default(),
            background,
        };
        Redis { shared: Arc::new(shared) }
    }

    /// [`Redis::start`], then waits until both connections are up, at most the configured connect
    /// timeout: for hosts that want to fail at start rather than serve retry-later.
    pub async fn connect(config: RedisConfig) -> Result<Redis, ConnectError> {
        let within = config.connect_timeout;
        let redis = Redis::start(config);
        redis.ready(within).await?;
        Ok(redis)
    }

    /// Waits until both connections are up, at most `within`.
    pub async fn ready(&self, within: Duration) -> Result<(), ConnectError> {
        let mut link = self.shared.link.up();
        let mut events = self.shared.events.up();
        let both = async {
            let _ = link.wait_for(|up| *up).await;
            let _ = events.wait_for(|up| *up).await;
        };
        match tokio::time::timeout(within, both).await {
            Ok(()) => Ok(()),
            Err(_) => {
                let reason = match self.shared.link.down_reason() {
                    Some(reason) => reason,
                    None => self.shared.events.down_reason().unwrap_or_else(|| "not connected yet".into()),
                };
                Err(ConnectError { within, reason })
            }
        }
    }

    /// The change hub of this instance, for `Notifications::with_hub`.
    pub fn change_hub(&self) -> RedisHub {
        RedisHub { shared: Arc::clone(&self.shared) }
    }

    /// The task store of this instance, for `Tasks::with_store`.
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore { shared: Arc::clone(&self.shared) }
    }

    /// The store of this instance's `2025-11-25` HTTP sessions, shared with every instance of the
    /// prefix: any instance serves any session, and a client's answer POSTed to one reaches the one
    /// waiting for it.
    pub fn session_store(&self) -> RedisSessionStore {
        RedisSessionStore { shared: Arc::clone(&self.shared) }
    }

    /// How many Redis round trips this family has made (commands, pipelines, scripts, pings and
    /// subscriptions), for benchmarks and tests.
    pub fn round_trips(&self) -> u64 {
        self.shared.settings.round_trips.load(Ordering::Relaxed)
    }
}
