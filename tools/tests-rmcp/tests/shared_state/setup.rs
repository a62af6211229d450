//! One Redis and three `cluster-host` instances sharing it, behind nginx: what every shared-state test
//! starts, and stops when dropped.
//!
//! The Redis is a real `redis-server` (`mcp_kernel_test_support::redis`: a free 127.0.0.1 port, a
//! temporary directory, no persistence) that requires a password made for the run. `a` and `b` are
//! given it through the environment (`CLUSTER_REDIS_PASSWORD`), `c` inside its URL, so both ways of
//! passing credentials run in every test. The times are short, so the faults show quickly:

use std::hash::BuildHasher;
use std::time::Duration;

use mcp_kernel_test_support::redis::{RedisOptions, RedisServer};

use crate::cluster::{Cluster, Instance, key};

/// A running task's lease (`CLUSTER_REDIS_LEASE_MS`): a task whose instance died is failed this long
/// after its last renewal.
pub const LEASE: Duration = Duration::from_millis(2000);
/// The lease of the test that pauses Redis: longer than the pause, which a task outlives only then (a
/// read after a longer one, before the running instance's next heartbeat, fails the task).
pub const PAUSED_LEASE: Duration = Duration::from_millis(6000);
/// How long a Redis command may take before it counts as unavailable (`CLUSTER_REDIS_TIMEOUT_MS`).
pub const TIMEOUT: Duration = Duration::from_millis(500);
/// How long a call runs before it becomes a task (`CLUSTER_TASK_THRESHOLD_MS`).
pub const THRESHOLD: Duration = Duration::from_millis(100);

/// A value no other run shares: the password, the key prefix and the bearer tokens carry it.
pub fn nonce() -> String {
    let hash = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
    format!("{hash:016x}")
}

/// The Redis, the password it requires, and the cluster over it.
pub struct Shared {
    /// The cluster: `a`, `b`, `c` and their proxy (dropped first: the instances go before Redis).
    pub cluster: Cluster,
    /// The one Redis.
    pub redis: RedisServer,
    /// The password Redis requires.
    pub password: String,
    /// The key prefix the instances share.
    pub prefix: String,
}

impl Shared {
    /// Starts Redis, then the three instances sharing it, then nginx in front of them.
    pub async fn start() -> Self {
        Self::start_with_lease(LEASE).await
    }

    /// The same, with running tasks' leases `lease` long.
    pub async fn start_with_lease(lease: Duration) -> Self {
        Self::start_with(lease, &[]).await
    }

    /// The same, with `2025-11-25` sessions on (`CLUSTER_LEGACY_SESSIONS=1`), kept in the Redis
    /// session store every instance shares.
    pub async fn start_with_sessions() -> Self {
        Self::start_with(LEASE, &[("CLUSTER_LEGACY_SESSIONS", "1")]).await
    }

    /// Starts Redis, then the instances (with `extra` in their environments too), then nginx.
    async fn start_with(lease: Duration, extra: &[(&str, &str)]) -> Self {
        let password = format!("pw-{}", nonce());
        let options = RedisOptions::default().password(&password);
        let redis = tokio::task::block_in_place(|| RedisServer::start_with(options)).expect("redis-server");
        let prefix = format!("shared-{}", nonce());
        let extra = extra.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned()));
        let mut by_env = env(&redis.url(), &prefix, Some(&password), lease);
        by_env.extend(extra.clone());
        let mut with_url = env(&url_with_password(redis.port(), &password), &prefix, None, lease);
        with_url.extend(extra);
        let cluster = Cluster::start_with([&key(1), &key(1), &key(1)], [&by_env, &by_env, &with_url]).await;
        Self { cluster, redis, password, prefix }
    }

    /// One more instance, `name`, sharing this Redis (outside the proxy), given `password` in its URL
    /// (`in_url`) or through the environment.
    pub async fn extra_instance(&self, name: &str, password: &str, in_url: bool) -> Instance {
        let env = if in_url {
            env(&url_with_password(self.redis.port(), password), &self.prefix, None, LEASE)
        } else {
            env(&self.redis.url(), &self.prefix, Some(password), LEASE)
        };
        Instance::start_with(name, &key(1), &env).await
    }

    /// The MCP endpoint through the proxy.
    pub fn url(&self) -> String {
        self.cluster.url()
    }

    /// The MCP endpoint of instance `index` (0 = `a`), without the proxy: for a request that must
    /// reach that instance.
    pub fn direct(&self, index: usize) -> String {
        format!("http://{}/mcp", self.cluster.instances[index].addr)
    }

    /// Stops Redis (SIGKILL) and starts it again, empty, on its port (blocking briefly).
    pub fn restart_redis_empty(&mut self) {
        tokio::task::block_in_place(|| self.redis.restart()).expect("redis-server restarts");
    }

    /// Every line every instance wrote, on stdout and stderr.
    pub fn output(&self) -> Vec<String> {
        let instances = self.cluster.instances.iter();
        instances.flat_map(|instance| [instance.stderr.all(), instance.stdout.all()].concat()).collect()
    }
}

/// `redis://:<password>@127.0.0.1:<port>`.
fn url_with_password(port: u16, password: &str) -> String {
    format!("redis://:{password}@127.0.0.1:{port}")
}

/// The environment of an instance sharing the Redis at `url`.
fn env(url: &str, prefix: &str, password: Option<&str>, lease: Duration) -> Vec<(String, String)> {
    let ms = |duration: Duration| duration.as_millis().to_string();
    let mut env = vec![
        ("CLUSTER_REDIS_URL".to_owned(), url.to_owned()),
        ("CLUSTER_REDIS_PREFIX".to_owned(), prefix.to_owned()),
        ("CLUSTER_REDIS_LEASE_MS".to_owned(), ms(lease)),
        ("CLUSTER_REDIS_TIMEOUT_MS".to_owned(), ms(TIMEOUT)),
        ("CLUSTER_TASK_THRESHOLD_MS".to_owned(), ms(THRESHOLD)),
        ("CLUSTER_LOG".to_owned(), "info,mcp_kernel_redis=debug".to_owned()),
    ];
    if let Some(password) = password {
        env.push(("CLUSTER_REDIS_PASSWORD".to_owned(), password.to_owned()));
    }
    env
}
