//! What the tests share: a server, configurations with short times, records, bounded waits.

use std::future::Future;
use std::time::{Duration, Instant};

use mcp_kernel_redis::{Redis, RedisConfig};
use mcp_kernel_router::sessions::{SessionLimits, SessionRecord};
use mcp_kernel_router::tasks::{TaskLimits, TaskRecord, Timing, now_ms};
use mcp_kernel_test_support::redis::RedisServer;

/// Generous bounds for the tests (the store's own bounds are tested on their own).
pub const LIMITS: TaskLimits = TaskLimits::new(64, 1024);

/// A fresh redis-server.
pub fn server() -> RedisServer {
    RedisServer::start().expect("a redis-server (set MCP_KERNEL_REDIS_SERVER or install redis-server)")
}

/// A configuration for `server` with short times: 300 ms response timeout, a 600 ms lease (a beat
/// every 200 ms), reconnection from 20 ms to 200 ms.
pub fn config(server: &RedisServer) -> RedisConfig {
    config_for(&server.url())
}

/// [`config`]'s short times for the Redis at `url` (a relay in front of a server, say).
pub fn config_for(url: &str) -> RedisConfig {
    short(RedisConfig::from_url(url).expect("a URL"))
}

/// `config` with the short times of [`config`].
pub fn short(config: RedisConfig) -> RedisConfig {
    config
        .response_timeout(Duration::from_millis(300))
        .connect_timeout(Duration::from_millis(500))
        .lease(Duration::from_millis(600))
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
}

/// An instance connected to `config`'s Redis.
pub async fn instance(config: RedisConfig) -> Redis {
    Redis::connect(config).await.expect("connected")
}

/// A new task record (`ttl_ms` from now, no retention).
pub fn task(id: &str, owner: Option<&str>, ttl_ms: Option<u64>) -> TaskRecord {
    let timing = Timing { ttl_ms, poll_interval_ms: None, retention_ms: 0 };
    TaskRecord::new(id.to_owned(), owner.map(str::to_owned), timing, now_ms())
}

/// A new legacy session of `owner`, idle for `idle` from now.
pub fn session(id: &str, owner: Option<&str>, idle: Duration) -> SessionRecord {
    let capabilities = serde_json::json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}});
    SessionRecord::new(id, owner.map(str::to_owned), "2025-11-25", capabilities, now_ms(), idle)
}

/// Session bounds: `per_owner`, `total`, `idle`, `pending` waiting requests per session.
pub fn session_limits(per_owner: usize, total: usize, idle: Duration, pending: usize) -> SessionLimits {
    SessionLimits::new(per_owner, total, idle, pending)
}

/// Polls `probe` every 20 ms until it is true, at most `within`; whether it became true.
pub async fn eventually<F: Future<Output = bool>>(within: Duration, mut probe: impl FnMut() -> F) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if probe().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A plain connection to `server`, for looking at what is stored.
pub async fn raw(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(server.url()).expect("a client");
    client.get_multiplexed_async_connection().await.expect("a connection")
}

/// The runtime the router's tasks run on in these tests.
pub struct Tokio;

impl mcp_kernel_router::tasks::TaskRuntime for Tokio {
    fn spawn(&self, task: mcp_kernel_router::BoxFuture<'static, ()>) {
        tokio::spawn(task);
    }

    fn sleep(&self, duration: Duration) -> mcp_kernel_router::BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Log lines written into memory.
#[derive(Clone, Default)]
pub struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            .into_owned()
    }
}

/// Captures what this thread logs at `level` and above until the guard is dropped.
pub fn capture(level: tracing::Level) -> (Captured, tracing::subscriber::DefaultGuard) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    (captured, tracing::subscriber::set_default(subscriber))
}
