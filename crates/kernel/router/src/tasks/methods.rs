//! `tasks/get`, `tasks/update` and `tasks/cancel` (SEP-2663), served only to `2026-07-28` requests of a
//! server with the tasks opt-in (elsewhere -32601, like `tasks/result` and `tasks/list`, which the
//! extension does not have).
//!
//! Threats: **guessing and cross-principal access**. A task id is 128 random bits; a task is found
//! only by a request whose owner is the task's creator, and every way of not finding it — no such id,
//! an id of another principal's task, a removed task, an id too long to be one — is answered with the
//! same bytes (-32602 "Task not found"), so the answer tells a prober nothing. The caller's answers to
//! input requests are checked against the request each answers before they are stored.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use mcp_kernel_wire::{ErrorObject, Method};

use crate::contract::RequestContext;
use crate::request::responses;
use crate::server::{Answer, Server};
use crate::tasks::record::{TaskRecord, now_ms};
use crate::tasks::registry::TaskEngine;
use crate::tasks::run::{declares_tasks, tasks_capability};

/// The longest task id looked up, in bytes (ours are 32): a longer one is not a task.
const MAX_TASK_ID_BYTES: usize = 128;

/// The one answer for every task a request may not see.
pub(crate) fn task_not_found() -> ErrorObject {
    ErrorObject::new(-32602, "Failed to retrieve task: Task not found")
}

impl Server {
    /// The tasks engine, when the server was built with tasks.
    pub(crate) fn task_engine(&self) -> Option<TaskEngine> {
        let tasks = self.inner.injected.tasks.clone()?;
        Some(TaskEngine { tasks })
    }

    /// One of the three task methods (the router sends only `2026-07-28` requests of a server with
    /// tasks here).
    pub(crate) async fn task_request(
        &self,
        method: &Method,
        params: Option<&Value>,
        context: &RequestContext,
    ) -> Answer {
        let Some(engine) = self.task_engine() else { return Err(ErrorObject::method_not_found()) };
        if !declares_tasks(context) {
            return Err(ErrorObject::missing_capability(tasks_capability()));
        }
        let Some(Value::String(id)) = params.and_then(|p| p.get("taskId")) else {
            return Err(ErrorObject::invalid_params("a task request requires a string taskId"));
        };
        let record = self.visible_task(&engine, id, context).await?;
        match method {
            Method::TasksGet => Ok(detailed_result(&record)),
            Method::TasksUpdate => {
                let responses = match params.and_then(|p| p.get("inputResponses")) {
                    Some(Value::Object(responses)) => responses.clone(),
                    _ => {
                        return Err(ErrorObject::invalid_params(
                            "tasks/update requires an inputResponses object",
                        ));
                    }
                };
                self.record_answers(&engine, &record, responses).await?;
                Ok(Value::Object(Map::new()))
            }
            Method::TasksCancel => {
                if !record.status.is_terminal()
                    && let Err(error) = engine.tasks.store.request_cancel(&record.id, now_ms()).await
                {
                    return Err(error.to_answer("tasks/cancel"));
                }
                Ok(Value::Object(Map::new()))
            }
            _ => Err(ErrorObject::method_not_found()),
        }
    }

    /// The task `id` if the caller of `context` may see it (expired tasks are failed first).
    async fn visible_task(
        &self,
        engine: &TaskEngine,
        id: &str,
        context: &RequestContext,
    ) -> Result<TaskRecord, ErrorObject> {
        if id.len() > MAX_TASK_ID_BYTES {
            return Err(task_not_found());
        }
        let owner = engine.tasks.owner_of(context).map_err(|_| ErrorObject::internal())?;
        let stored = engine.tasks.store.read(id).await.map_err(|error| error.to_answer("a task request"))?;
        let record = stored.filter(|record| record.owner == owner).ok_or_else(task_not_found)?;
        let now = now_ms();
        if record.is_expired(now) && !record.status.is_terminal() {
            // Its run fails it too, at its deadline; this covers a run that is gone (another instance).
            let error = serde_json::json!({"code": -32603, "message": "the task outlived its time to live"});
            if let Ok(Some(expired)) = engine.tasks.store.expire(id, error, now).await {
                return Ok(expired);
            }
        }
        Ok(record)
    }

    /// Whether `id` names a task of the caller of `context` that is still running (a listen may ask
    /// for its status notifications).
    /// `Err` only when the store is unreachable (the listen is refused, retryable).
    pub(crate) async fn is_live_task_of(
        &self,
        id: &str,
        context: &RequestContext,
    ) -> Result<bool, ErrorObject> {
        let Some(engine) = self.task_engine() else { return Ok(false) };
        match self.visible_task(&engine, id, context).await {
            Ok(record) => Ok(!record.status.is_terminal()),
            Err(error) if error.retry_after().is_some() => Err(error),
            Err(_) => Ok(false),
        }
    }

    /// Stores the answers to outstanding requests (others are ignored), each checked against the
    /// request it answers (-32602 for one that does not fit, before anything is stored).
    async fn record_answers(
        &self,
        engine: &TaskEngine,
        record: &TaskRecord,
        mut sent: Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        let keys: BTreeMap<String, String> =
            record.outstanding.iter().map(|(key, pending)| (key.clone(), pending.method.clone())).collect();
        sent.retain(|key, _| keys.contains_key(key));
        if sent.is_empty() {
            return Ok(());
        }
        responses::asked(sent.clone(), &keys)?;
        let answers: BTreeMap<String, Value> = sent.into_iter().collect();
        match engine.tasks.store.record_input(&record.id, answers, now_ms()).await {
            Ok(_) => Ok(()),
            Err(error) => Err(error.to_answer("tasks/update")),
        }
    }
}

/// `GetTaskResult`: the detailed task (decorated with `resultType: "complete"` like any result).
fn detailed_result(record: &TaskRecord) -> Value {
    Value::Object(record.detailed())
}
