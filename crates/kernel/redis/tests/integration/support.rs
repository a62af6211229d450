//! What the tests share: a server, configurations with short times, records, bounded waits.

use std::future::Future;
use std::time::{Duration, Instant};

use mcp_kernel_redis::{Redis, RedisConfig};
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
    RedisConfig::from_url(url)
        .expect("a URL")
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
