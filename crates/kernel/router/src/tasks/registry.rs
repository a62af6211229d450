//! The tasks this instance runs ([`Running`]), and the engine every task operation goes through
//! ([`TaskEngine`]): a store operation, then the status notification of what it changed.
//!
//! Threat: **a task left `working` forever**. A handler that outlives the server would leave its task
//! `working` for a poller to wait on until its time to live; so the server's drain
//! ([`Server::drain_tasks`](crate::Server::drain_tasks)) gives running tasks the grace period, then
//! fails each one still running with a reason and cancels its handler.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use mcp_kernel_wire::types::method::NOTIFICATION_TASKS;

use crate::notify::change::{Change, ChangeKind};
use crate::notify::hub::ChangeHub;
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

/// One server's tasks: the opt-in and the hub its status notifications go through.
#[derive(Clone)]
pub(crate) struct TaskEngine {
    pub(crate) tasks: Tasks,
    pub(crate) hub: Option<Arc<dyn ChangeHub>>,
}

/// The JSON-RPC error a task fails with when the server shuts down before it finished.
pub(crate) const SHUTDOWN_MESSAGE: &str = "the server shut down before the task finished";

impl TaskEngine {
    /// Applies `transition` and announces the task as it became.
    pub(crate) async fn transition(&self, id: &str, transition: Transition, now: u64) -> Option<TaskRecord> {
        match self.tasks.store.transition(id, transition, now).await {
            Ok(changed) => {
                if let Some(record) = &changed {
                    self.announce(record);
                }
                changed
            }
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

    /// Tells listeners of the task of its state (`notifications/tasks` carries the detailed task).
    pub(crate) fn announce(&self, record: &TaskRecord) {
        let Some(hub) = &self.hub else { return };
        let params = Value::Object(record.detailed());
        let task = serde_json::to_string(&params).unwrap_or_default();
        let kind = ChangeKind::TaskStatus {
            task_id: record.id.as_str().into(),
            revision: record.revision,
            task: task.into(),
        };
        hub.publish(Change::to_everyone(kind));
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

/// A `notifications/tasks` message for one listener: the detailed task as announced, tagged.
pub(crate) fn task_notification(subscription: &Value, task: &str) -> Value {
    let mut params = match serde_json::from_str::<Value>(task) {
        Ok(Value::Object(params)) => params,
        _ => serde_json::Map::new(),
    };
    params.insert("_meta".into(), json!({ mcp_kernel_wire::version::META_SUBSCRIPTION_ID: subscription }));
    json!({ "jsonrpc": "2.0", "method": NOTIFICATION_TASKS, "params": params })
}
