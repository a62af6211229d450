//! The tasks a drain ends (the tasks extension, SEP-2663): the servers `serve` served a `tools/call`
//! for, whose running tasks it ends once its connections are done.
//!
//! Threat: **a task left `working` forever**. A task outlives the request that created it: its handler
//! runs on after the `CreateTaskResult`, outside every connection. A drain that only waited for the
//! connections would return with such a handler still running, the process would exit under it, and a
//! store shared with other instances would keep the task `working` for its pollers until its time to
//! live. So each `tools/call` that comes through `serve` names its service's server here (once per
//! service), and when the connections are done the drain calls
//! [`Server::drain_tasks`](mcp_kernel_router::Server::drain_tasks) on each one's current server with
//! what is left of the grace period: a task that finishes by then keeps its result, one still running
//! is failed with the shutdown reason and its handler cancelled.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mcp_kernel_router::transport::LiveServer;

/// The servers whose tasks one `serve`'s drain ends, each named once by the key of its service.
#[derive(Debug)]
pub(crate) struct TaskDrain {
    /// Unique in the process (never 0), so that a service can tell the drain it was named to.
    id: u64,
    servers: Mutex<Vec<(usize, LiveServer)>>,
}

impl Default for TaskDrain {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self { id, servers: Mutex::default() }
    }
}

impl TaskDrain {
    /// This drain's id, unique in the process.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Names `live`, the server of the service `key`, as one whose tasks the drain ends (a service
    /// already named is not named again).
    pub(crate) fn register(&self, key: usize, live: &LiveServer) {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        if !servers.iter().any(|(named, _)| *named == key) {
            servers.push((key, live.clone()));
        }
    }

    /// Ends the tasks of every server named, at once: each current server waits up to `grace` for its
    /// tasks, then fails those still running.
    pub(crate) async fn run(&self, grace: Duration) {
        let servers: Vec<LiveServer> = {
            let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
            servers.drain(..).map(|(_, live)| live).collect()
        };
        let drains = servers.iter().map(|live| {
            let server = live.current();
            async move { server.drain_tasks(grace).await }
        });
        futures_util::future::join_all(drains).await;
    }
}
