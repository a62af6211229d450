//! The command connection of one [`Redis`](crate::Redis) family: one multiplexed connection shared by
//! every command, made in the background and replaced with exponential backoff when it breaks.
//!
//! A command never waits for a connection: while there is none it fails at once as
//! [`StoreError::Unavailable`], and every command is bounded by the response timeout. A command that
//! times out or fails on the connection itself (an I/O error, a dropped connection) hands the
//! connection back for replacement, so a Redis that was paused, restarted or partitioned away is
//! reconnected without any request waiting for it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt;
use mcp_kernel_router::tasks::StoreError;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, FromRedisValue, RetryMethod, ServerErrorKind};
use tokio::sync::{Notify, watch};

use crate::config::{Redactor, RedisConfig};
use crate::scripts::{ALL, LuaScript};

/// What every background part of a family shares: the client, the timeouts and the counter.
pub(crate) struct Settings {
    pub(crate) client: Client,
    pub(crate) redactor: Redactor,
    pub(crate) connect_timeout: Duration,
    pub(crate) response_timeout: Duration,
    pub(crate) backoff: (Duration, Duration),
    /// Redis round trips made by this family.
    pub(crate) round_trips: AtomicU64,
}

impl Settings {
    pub(crate) fn new(config: &RedisConfig) -> Self {
        Self {
            client: config.client.clone(),
            redactor: config.redactor.clone(),
            connect_timeout: config.connect_timeout,
            response_timeout: config.response_timeout,
            backoff: config.backoff,
            round_trips: AtomicU64::new(0),
        }
    }

    /// Runs a connection attempt (`future`) within the connect timeout. A panic inside it — rustls
    /// finding no crypto provider because the host's build enables two and installed neither — is a
    /// failure like another, with the reason.
    pub(crate) async fn attempt<T>(
        &self,
        future: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, String> {
        let guarded = std::panic::AssertUnwindSafe(future).catch_unwind();
        match tokio::time::timeout(self.connect_timeout, guarded).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(Fault::of(&error, &self.redactor).text),
            Ok(Err(_)) => Err("the connection attempt panicked (with TLS: is a rustls CryptoProvider installed as the process default?)".into()),
            Err(_) => Err(format!("no connection within the connect timeout ({:?})", self.connect_timeout)),
        }
    }

    /// Counts one round trip.
    pub(crate) fn count(&self) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
    }

    /// The pause after `delay`: doubled, within the backoff's bounds.
    pub(crate) fn next_delay(&self, delay: Duration) -> Duration {
        delay.saturating_mul(2).clamp(self.backoff.0, self.backoff.1)
    }
}

/// A Redis error as this crate reports it.
pub(crate) struct Fault {
    /// Whether it is a connection problem (unreachable, timed out, dropped): retryable.
    pub(crate) unavailable: bool,
    /// Whether the connection must be replaced.
    pub(crate) broken: bool,
    /// The reason, without secrets.
    pub(crate) text: String,
}

impl Fault {
    pub(crate) fn of(error: &redis::RedisError, redactor: &Redactor) -> Self {
        let broken = error.is_io_error() || error.is_unrecoverable_error() || error.is_timeout();
        let unavailable = broken
            || matches!(
                error.retry_method(),
                RetryMethod::Reconnect
                    | RetryMethod::ReconnectFromInitialConnections
                    | RetryMethod::WaitAndRetry
                    | RetryMethod::RetryImmediately
            )
            || matches!(
                error.kind(),
                redis::ErrorKind::Server(
                    ServerErrorKind::BusyLoading
                        | ServerErrorKind::TryAgain
                        | ServerErrorKind::MasterDown
                        | ServerErrorKind::ReadOnly
                )
            );
        Self { unavailable, broken, text: redactor.clean(&error.to_string()) }
    }

    pub(crate) fn into_store_error(self) -> StoreError {
        if self.unavailable { StoreError::Unavailable(self.text) } else { StoreError::Failed(self.text) }
    }
}

/// The connection now, and which one it is.
struct Current {
    connection: MultiplexedConnection,
    generation: u64,
}

/// The command connection.
pub(crate) struct Link {
    pub(crate) settings: Arc<Settings>,
    current: Mutex<Option<Current>>,
    /// Why there is no connection (for the error of a command that finds none).
    down_reason: Mutex<String>,
    generation: AtomicU64,
    /// Wakes the connector when the connection broke.
    broke: Notify,
    up: watch::Sender<bool>,
}

impl Link {
    pub(crate) fn new(settings: Arc<Settings>) -> Self {
        Self {
            settings,
            current: Mutex::new(None),
            down_reason: Mutex::new("not connected to Redis yet".into()),
            generation: AtomicU64::new(0),
            broke: Notify::new(),
            up: watch::Sender::new(false),
        }
    }

    /// Whether a connection is up now (watchable).
    pub(crate) fn up(&self) -> watch::Receiver<bool> {
        self.up.subscribe()
    }

    /// Gives up the connection `generation` (if it is still the current one) for `reason`: the
    /// connector makes a new one.
    pub(crate) fn broken(&self, generation: Option<u64>, reason: &str) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let matches = match (&*current, generation) {
            (Some(now), Some(generation)) => now.generation == generation,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if matches {
            *current = None;
            *self.down_reason.lock().unwrap_or_else(PoisonError::into_inner) = reason.to_owned();
            self.up.send_replace(false);
            tracing::warn!(reason, "the Redis command connection is lost; reconnecting");
            self.broke.notify_one();
        }
    }

    /// Keeps a connection up for as long as the family lives (the connector task).
    pub(crate) async fn maintain(self: Arc<Self>) {
        let settings = Arc::clone(&self.settings);
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(settings.connect_timeout))
            .set_response_timeout(Some(settings.response_timeout));
        let mut delay = settings.backoff.0;
        let mut failures = 0u64;
        loop {
            let attempt = settings
                .attempt(async {
                    let mut connection =
                        settings.client.get_multiplexed_async_connection_with_config(&config).await?;
                    load_scripts(&mut connection, &settings).await?;
                    Ok(connection)
                })
                .await;
            match attempt {
                Ok(connection) => {
                    let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
                    *self.current.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(Current { connection, generation });
                    self.up.send_replace(true);
                    if failures > 0 {
                        tracing::info!(after = failures, "the Redis command connection is up again");
                    }
                    failures = 0;
                    delay = settings.backoff.0;
                    self.broke.notified().await;
                }
                Err(reason) => {
                    self.failed(&reason, &mut failures);
                    if failures > 1 {
                        delay = settings.next_delay(delay);
                    }
                }
            }
            tokio::time::sleep(delay).await;
        }
    }

    /// Why there is no connection now (`None`: there is one).
    pub(crate) fn down_reason(&self) -> Option<String> {
        let up = self.current.lock().unwrap_or_else(PoisonError::into_inner).is_some();
        (!up).then(|| self.down_reason.lock().unwrap_or_else(PoisonError::into_inner).clone())
    }

    fn failed(&self, reason: &str, failures: &mut u64) {
        *failures += 1;
        *self.down_reason.lock().unwrap_or_else(PoisonError::into_inner) = reason.to_owned();
        // The first failure of a streak is a warning; the ones after it, while Redis stays away, debug.
        if *failures == 1 {
            tracing::warn!(reason, "cannot connect to Redis; retrying with backoff");
        } else {
            tracing::debug!(reason, failures = *failures, "cannot connect to Redis yet");
        }
    }

    /// The connection now, or why there is none.
    fn connection(&self) -> Result<(MultiplexedConnection, u64), StoreError> {
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        match &*current {
            Some(now) => Ok((now.connection.clone(), now.generation)),
            None => {
                let reason = self.down_reason.lock().unwrap_or_else(PoisonError::into_inner).clone();
                Err(StoreError::Unavailable(format!("no connection to Redis: {reason}")))
            }
        }
    }

    /// Sends `pipeline` (one round trip), bounded by the response timeout.
    pub(crate) async fn pipeline<T: FromRedisValue>(
        &self,
        pipeline: &redis::Pipeline,
    ) -> Result<T, StoreError> {
        let (mut connection, generation) = self.connection()?;
        self.bounded(generation, pipeline.query_async(&mut connection)).await
    }

    /// Runs `script` with `keys` and `args` (one round trip; two when Redis had forgotten it).
    pub(crate) async fn script(
        &self,
        script: &LuaScript,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<redis::Value, StoreError> {
        let (mut connection, generation) = self.connection()?;
        let first = script.invocation(keys, args, false);
        let answer = self.bounded_raw(generation, first.query_async(&mut connection)).await?;
        match answer {
            Err(error) if error.kind() == redis::ErrorKind::Server(ServerErrorKind::NoScript) => {
                tracing::debug!(script = script.name, "Redis had forgotten a script; sent whole");
                let whole = script.invocation(keys, args, true);
                self.bounded(generation, whole.query_async(&mut connection)).await
            }
            answer => self.settle(generation, answer),
        }
    }

    async fn bounded<T>(
        &self,
        generation: u64,
        future: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StoreError> {
        let answer = self.bounded_raw(generation, future).await?;
        self.settle(generation, answer)
    }

    /// Counts the round trip and bounds it; `Err` only for the timeout.
    async fn bounded_raw<T>(
        &self,
        generation: u64,
        future: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<redis::RedisResult<T>, StoreError> {
        self.settings.count();
        let timeout = self.settings.response_timeout;
        match tokio::time::timeout(timeout, future).await {
            Ok(answer) => Ok(answer),
            Err(_) => {
                let reason = format!("Redis did not answer within the response timeout ({timeout:?})");
                self.broken(Some(generation), &reason);
                Err(StoreError::Unavailable(reason))
            }
        }
    }

    fn settle<T>(&self, generation: u64, answer: redis::RedisResult<T>) -> Result<T, StoreError> {
        answer.map_err(|error| {
            let fault = Fault::of(&error, &self.settings.redactor);
            if fault.broken {
                self.broken(Some(generation), &fault.text);
            }
            fault.into_store_error()
        })
    }
}

/// Loads every script on a new connection (one round trip), learning their SHA-1s.
pub(crate) async fn load_scripts(
    connection: &mut MultiplexedConnection,
    settings: &Settings,
) -> redis::RedisResult<()> {
    let mut pipeline = redis::pipe();
    for script in ALL {
        pipeline.cmd("SCRIPT").arg("LOAD").arg(script.source);
    }
    settings.count();
    let shas: Vec<String> = pipeline.query_async(connection).await?;
    for (script, sha) in ALL.iter().zip(shas) {
        script.loaded(sha);
    }
    Ok(())
}
