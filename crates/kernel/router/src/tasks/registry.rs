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

/// How many times a task's outcome is written to a store that is unreachable before it is given up.
pub(crate) const SETTLE_ATTEMPTS: u32 = 7;

/// The JSON-RPC error a task fails with when the server shuts down before it finished.
pub(crate) const SHUTDOWN_MESSAGE: &str = "the server shut down before the task finished";

impl TaskEngine {
    /// Applies `transition` (its watchers — the task's run, the listens naming it — are woken). A
    /// task's outcome (a terminal transition) is not given up on a store that is unreachable for a
    /// moment: it is written again, [`SETTLE_ATTEMPTS`] times in all, at doubling intervals from 100 ms
    /// (about 6 s), before it is logged lost.
    pub(crate) async fn transition(&self, id: &str, transition: Transition, now: u64) -> Option<TaskRecord> {
        let attempts = if transition.is_terminal() { SETTLE_ATTEMPTS } else { 1 };
        let mut pause = Duration::from_millis(100);
        for attempt in 1..=attempts {
            match self.tasks.store.transition(id, transition.clone(), now).await {
                Ok(changed) => return changed,
                Err(error) if error.is_unavailable() && attempt < attempts => {
                    tracing::warn!(%error, attempt, "a task's outcome could not be stored yet; trying again");
                    self.tasks.runtime.sleep(pause).await;
                    pause *= 2;
                }
                Err(error) => {
                    tracing::error!(%error, "a task transition could not be stored");
                    return None;
                }
            }
        }
        None
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
