//! The tasks this instance runs ([`Running`]), and the engine every task operation goes through
//! ([`TaskEngine`]): a store operation, then the status notification of what it changed.
//!
//! Threat: **a task left `working` forever**. A handler that outlives the server would leave its task
//! `working` for a poller to wait on until its time to live; so the server's drain
//! ([`Server::drain_tasks`](crate::Server::drain_tasks)) gives running tasks the grace period, then
//! fails each one still running with a reason and cancels its handler.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;

use crate::tasks::handle::TaskHandle;
use crate::tasks::options::Tasks;
use crate::tasks::record::{TaskRecord, Transition, now_ms};

/// The handles of the tasks this instance runs, by id.
#[derive(Default)]
pub(crate) struct Running {
    handles: Mutex<HashMap<String, TaskHandle>>,
}

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskHandle>> {
        self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn insert(&self, id: &str, handle: TaskHandle) {
        self.lock().insert(id.to_owned(), handle);
    }

    pub(crate) fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn all(&self) -> Vec<(String, TaskHandle)> {
        self.lock().iter().map(|(id, handle)| (id.clone(), handle.clone())).collect()
    }
}

/// One server's tasks: the opt-in, through which every task operation goes.
#[derive(Clone)]
pub(crate) struct TaskEngine {
    pub(crate) tasks: Tasks,
}

/// The JSON-RPC error a task fails with when the server shuts down before it finished.
pub(crate) const SHUTDOWN_MESSAGE: &str = "the server shut down before the task finished";

impl TaskEngine {
    /// Applies `transition` (its watchers — the task's run, the listens naming it — are woken).
    pub(crate) async fn transition(&self, id: &str, transition: Transition, now: u64) -> Option<TaskRecord> {
        match self.tasks.store.transition(id, transition, now).await {
            Ok(changed) => changed,
            Err(error) => {
                tracing::error!(%error, "a task transition could not be stored");
                None
            }
        }
    }

    /// The same, from a handler's synchronous call: at once when the store answers at once (the
    /// in-process store does, so two messages are written in the order set), else in the background.
    pub(crate) fn spawn_transition(&self, id: String, transition: Transition, now: u64) {
        let engine = self.clone();
        let mut write: crate::contract::BoxFuture<'static, ()> = Box::pin(async move {
            engine.transition(&id, transition, now).await;
        });
        let waker = futures_util::task::noop_waker();
        let mut context = std::task::Context::from_waker(&waker);
        if write.as_mut().poll(&mut context).is_pending() {
            self.tasks.runtime.spawn(write);
        }
    }

    /// Waits up to `grace` for the tasks this instance runs to finish, then fails each one still
    /// running (a JSON-RPC error naming the shutdown) and cancels its handler. Cancel-safe: a task
    /// leaves the running set only once it is failed, so a drain dropped midway (a transport's hard
    /// deadline) leaves the rest to the next one.
    pub(crate) async fn drain(&self, grace: Duration) {
        let step = Duration::from_millis(10);
        let mut waited = Duration::ZERO;
        while self.tasks.running.len() > 0 && waited < grace {
            self.tasks.runtime.sleep(step).await;
            waited += step;
        }
        for (id, handle) in self.tasks.running.all() {
            let error = json!({"code": -32603, "message": SHUTDOWN_MESSAGE});
            let failed = Transition::Failed { error, message: SHUTDOWN_MESSAGE.to_owned() };
            self.transition(&id, failed, now_ms()).await;
            handle.cancel();
            self.tasks.running.remove(&id);
        }
    }
}
