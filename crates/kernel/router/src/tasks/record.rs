//! A task as a store holds it ([`TaskRecord`]), the changes a task may go through ([`Transition`]),
//! and the task as the wire shows it (the extension's `DetailedTask` and `CreateTaskResult`).
//!
//! Every rule about what may follow what is written here, once, as a pure edit of a record — a store
//! applies the edit atomically (under its lock, or as a compare-and-swap across processes), so every
//! store keeps the same rules: a terminal status (`completed`, `failed`, `cancelled`) is never
//! overwritten, input is recorded only under a key that is outstanding, and a key is never issued
//! twice over a task's life (SEP-2663: keys are unique for the lifetime of a task).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A task's status (the extension's `TaskStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The task waits for the client's answers to its input requests.
    InputRequired,
    /// The request completed (a tool error with `isError: true` included); its result is stored.
    Completed,
    /// The request failed with a JSON-RPC error; the error is stored.
    Failed,
    /// The request was cancelled before it completed.
    Cancelled,
}

impl TaskStatus {
    /// Whether nothing follows this status.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// The status as the wire names it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// One input request a task is waiting on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingInput {
    /// The key the host chose (the handler reads its answer under this key).
    pub host_key: String,
    /// The request's method (`elicitation/create`, `sampling/createMessage`, `roots/list`).
    pub method: String,
    /// The request as the client sees it in `inputRequests` (`{method, params}`).
    pub request: Value,
}

/// One answer the client gave, kept until the task's handler runs again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GivenInput {
    /// The key the host chose.
    pub host_key: String,
    /// The method of the request it answers.
    pub method: String,
    /// The response as the client sent it (its shape already checked against the method).
    pub response: Value,
}

/// A complete round's answers by the host's keys, and the host's state.
pub type TakenInput = (BTreeMap<String, GivenInput>, Option<Vec<u8>>);

/// One task, as a [`TaskStore`](crate::tasks::TaskStore) keeps it. Serializable, so that a store
/// shared by many processes can keep it as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task's id (at least 128 random bits).
    pub id: String,
    /// A digest of the principal that created it (never the principal itself); `None`: created by a
    /// request the host's owner key named nobody for.
    pub owner: Option<String>,
    /// The current status.
    pub status: TaskStatus,
    /// The handler's last status message.
    pub status_message: Option<String>,
    /// Creation, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// The last change, in milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// Time to live from creation, in milliseconds (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval, in milliseconds.
    pub poll_interval_ms: Option<u64>,
    /// When the store may forget the task, in milliseconds since the Unix epoch (`None`: never).
    pub remove_after_ms: Option<u64>,
    /// The request's result (`completed`): the `CallToolResult` as `tools/call` would have answered.
    pub result: Option<Value>,
    /// The JSON-RPC error (`failed`).
    pub error: Option<Value>,
    /// The input requests the client has not answered yet, by wire key.
    pub outstanding: BTreeMap<String, PendingInput>,
    /// The answers given and not yet handed to the handler, by wire key.
    pub given: BTreeMap<String, GivenInput>,
    /// The host's state for its next round (see [`crate::InputRequired::with_state`]).
    pub state: Option<Vec<u8>>,
    /// Every wire key issued so far: none is issued twice.
    pub issued_keys: BTreeSet<String>,
    /// Whether the client asked to cancel the task.
    pub cancel_requested: bool,
    /// Counts the changes a client can see: a status notification of a lower revision than one
    /// already sent is stale (two writers may announce in another order than they wrote).
    #[serde(default)]
    pub revision: u64,
}

/// A change of a task's status, as its handler's outcome or a client's request makes it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Transition {
    /// A new status message (the status stays).
    Message(String),
    /// The handler waits for input: these requests (by the host's keys) and the state for its next
    /// round.
    InputRequired {
        /// The requests, by the host's key: `(method, {method, params})`.
        requests: BTreeMap<String, (String, Value)>,
        /// The host's state.
        state: Option<Vec<u8>>,
    },
    /// The request completed with this result.
    Completed(Value),
    /// The request failed with this JSON-RPC error (with a status message saying why).
    Failed {
        /// The error object.
        error: Value,
        /// A diagnostic for `statusMessage`.
        message: String,
    },
    /// The client cancelled the task.
    Cancelled,
}

impl Transition {
    /// Whether the transition ends the task (`completed`, `failed`, `cancelled`).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Transition::Completed(_) | Transition::Failed { .. } | Transition::Cancelled)
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// An ISO 8601 timestamp (UTC, milliseconds) for `ms` since the Unix epoch.
fn timestamp(ms: u64) -> String {
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(ms);
    humantime::format_rfc3339_millis(at).to_string()
}

impl TaskRecord {
    /// A new `working` task created at `now` (milliseconds since the Unix epoch).
    pub fn new(id: String, owner: Option<String>, timing: Timing, now: u64) -> Self {
        let remove_after_ms =
            timing.ttl_ms.map(|ttl| now.saturating_add(ttl).saturating_add(timing.retention_ms));
        Self {
            id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: timing.ttl_ms,
            poll_interval_ms: timing.poll_interval_ms,
            remove_after_ms,
            result: None,
            error: None,
            outstanding: BTreeMap::new(),
            given: BTreeMap::new(),
            state: None,
            issued_keys: BTreeSet::new(),
            cancel_requested: false,
            revision: 0,
        }
    }

    /// When the task's time to live ends, in milliseconds since the Unix epoch.
    pub fn expires_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|ttl| self.created_ms.saturating_add(ttl))
    }

    /// Whether the task outlived its time to live at `now`.
    pub fn is_expired(&self, now: u64) -> bool {
        self.expires_ms().is_some_and(|at| now >= at)
    }

    /// Whether a store may forget the task at `now`.
    pub fn is_removable(&self, now: u64) -> bool {
        self.remove_after_ms.is_some_and(|at| now >= at)
    }

    /// Applies `transition` at `now`; `false` (and the record unchanged) when the task is terminal.
    pub fn apply(&mut self, transition: &Transition, now: u64) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        match transition {
            Transition::Message(message) => self.status_message = Some(message.clone()),
            Transition::InputRequired { requests, state } => {
                self.outstanding.clear();
                for (host_key, (method, request)) in requests {
                    let key = self.issue_key(host_key);
                    let pending = PendingInput {
                        host_key: host_key.clone(),
                        method: method.clone(),
                        request: request.clone(),
                    };
                    self.outstanding.insert(key, pending);
                }
                self.given.clear();
                self.state = state.clone();
                self.status = TaskStatus::InputRequired;
            }
            Transition::Completed(result) => {
                self.result = Some(result.clone());
                self.finish(TaskStatus::Completed);
            }
            Transition::Failed { error, message } => {
                self.error = Some(error.clone());
                self.status_message = Some(message.clone());
                self.finish(TaskStatus::Failed);
            }
            Transition::Cancelled => {
                self.cancel_requested = true;
                self.finish(TaskStatus::Cancelled);
            }
        }
        self.updated_ms = now.max(self.updated_ms);
        self.revision += 1;
        true
    }

    fn finish(&mut self, status: TaskStatus) {
        self.status = status;
        self.outstanding.clear();
        self.given.clear();
        self.state = None;
    }

    /// A wire key for the host's `key` that was never issued in this task: the key itself the first
    /// time, then `key.2`, `key.3`, … (the first of those not issued yet).
    fn issue_key(&mut self, key: &str) -> String {
        let mut candidate = key.to_owned();
        let mut n = 1u64;
        while self.issued_keys.contains(&candidate) {
            n += 1;
            candidate = format!("{key}.{n}");
        }
        self.issued_keys.insert(candidate.clone());
        candidate
    }

    /// Records the client's answers to outstanding keys (anything else is ignored); when none remains
    /// outstanding, the task is `working` again and its handler may run. `false` when nothing was
    /// recorded.
    pub fn record_input(&mut self, answers: BTreeMap<String, Value>, now: u64) -> bool {
        if self.status != TaskStatus::InputRequired {
            return false;
        }
        let mut recorded = false;
        for (key, response) in answers {
            if let Some(pending) = self.outstanding.remove(&key) {
                let given = GivenInput { host_key: pending.host_key, method: pending.method, response };
                self.given.insert(key, given);
                recorded = true;
            }
        }
        if recorded {
            if self.outstanding.is_empty() {
                self.status = TaskStatus::Working;
            }
            self.updated_ms = now.max(self.updated_ms);
            self.revision += 1;
        }
        recorded
    }

    /// Takes the answers of a round that is complete (the task is `working` again and holds answers):
    /// the answers by the host's keys, and the host's state.
    pub fn take_input(&mut self) -> Option<TakenInput> {
        if self.status != TaskStatus::Working || !self.outstanding.is_empty() || self.given.is_empty() {
            return None;
        }
        let given = std::mem::take(&mut self.given);
        let by_host_key = given.into_values().map(|given| (given.host_key.clone(), given)).collect();
        Some((by_host_key, self.state.take()))
    }

    /// The members every shape of the task shares (the extension's `Task`).
    fn task_members(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), Value::from(self.id.as_str()));
        task.insert("status".into(), Value::from(self.status.as_str()));
        if let Some(message) = &self.status_message {
            task.insert("statusMessage".into(), Value::from(message.as_str()));
        }
        task.insert("createdAt".into(), Value::from(timestamp(self.created_ms)));
        task.insert("lastUpdatedAt".into(), Value::from(timestamp(self.updated_ms)));
        task.insert("ttlMs".into(), self.ttl_ms.map_or(Value::Null, Value::from));
        if let Some(interval) = self.poll_interval_ms {
            task.insert("pollIntervalMs".into(), Value::from(interval));
        }
        task
    }

    /// The extension's `DetailedTask`: the task with what its status carries — every outstanding
    /// input request (`input_required`), the result (`completed`) or the error (`failed`).
    pub fn detailed(&self) -> Map<String, Value> {
        let mut task = self.task_members();
        match self.status {
            TaskStatus::InputRequired => {
                let requests: Map<String, Value> = self
                    .outstanding
                    .iter()
                    .map(|(key, pending)| (key.clone(), pending.request.clone()))
                    .collect();
                task.insert("inputRequests".into(), Value::Object(requests));
            }
            TaskStatus::Completed => {
                task.insert(
                    "result".into(),
                    self.result.clone().unwrap_or_else(|| Value::Object(Map::new())),
                );
            }
            TaskStatus::Failed => {
                let error = self
                    .error
                    .clone()
                    .unwrap_or_else(|| serde_json::json!({"code": -32603, "message": "Internal error"}));
                task.insert("error".into(), error);
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        task
    }

    /// The `CreateTaskResult` announcing the task (`resultType: "task"`, the task's members only).
    pub(crate) fn created(&self) -> Value {
        let mut result = self.task_members();
        result.insert("resultType".into(), Value::from("task"));
        Value::Object(result)
    }
}

/// The times a new task is created with (a store's own tests build records with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Time to live from creation, in milliseconds (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval, in milliseconds.
    pub poll_interval_ms: Option<u64>,
    /// How long a task is kept after its time to live, in milliseconds.
    pub retention_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> TaskRecord {
        let timing = Timing { ttl_ms: Some(60_000), poll_interval_ms: Some(500), retention_ms: 1_000 };
        TaskRecord::new("t1".into(), None, timing, 1_000)
    }

    fn ask(keys: &[&str]) -> Transition {
        let requests = keys
            .iter()
            .map(|k| {
                (k.to_string(), ("elicitation/create".to_owned(), json!({"method": "elicitation/create"})))
            })
            .collect();
        Transition::InputRequired { requests, state: Some(b"s".to_vec()) }
    }

    #[test]
    fn a_terminal_status_is_never_overwritten() {
        let mut task = record();
        assert!(task.apply(&Transition::Completed(json!({"content": []})), 2_000));
        for later in [
            Transition::Cancelled,
            Transition::Failed { error: json!({"code": -32603}), message: "x".into() },
            Transition::Message("late".into()),
            ask(&["a"]),
        ] {
            assert!(!task.apply(&later, 3_000), "{later:?}");
        }
        assert_eq!(task.status, TaskStatus::Completed);
        assert_eq!(task.updated_ms, 2_000);
        assert!(task.status_message.is_none());
    }

    #[test]
    fn input_is_recorded_only_under_outstanding_keys_and_a_partial_answer_keeps_waiting() {
        let mut task = record();
        task.apply(&ask(&["a", "b"]), 2_000);
        let answers =
            |pairs: &[&str]| pairs.iter().map(|k| (k.to_string(), json!({"action": "accept"}))).collect();
        assert!(!task.record_input(answers(&["never-issued"]), 2_100));
        assert!(task.record_input(answers(&["a"]), 2_200));
        assert_eq!(task.status, TaskStatus::InputRequired);
        assert_eq!(task.outstanding.keys().collect::<Vec<_>>(), ["b"]);
        assert!(task.take_input().is_none(), "not before every key is answered");
        assert!(!task.record_input(answers(&["a"]), 2_300), "an answered key is ignored");
        assert!(task.record_input(answers(&["b"]), 2_400));
        assert_eq!(task.status, TaskStatus::Working);
        let (given, state) = task.take_input().expect("the round is complete");
        assert_eq!(given.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(state.as_deref(), Some(&b"s"[..]));
        assert!(task.take_input().is_none(), "taken once");
    }

    #[test]
    fn a_key_is_never_issued_twice_over_a_tasks_life() {
        let mut task = record();
        task.apply(&ask(&["name"]), 2_000);
        task.record_input([("name".to_owned(), json!({}))].into(), 2_100);
        task.take_input();
        task.apply(&ask(&["name", "name.2"]), 2_200);
        let keys: Vec<_> = task.outstanding.keys().cloned().collect();
        assert_eq!(keys.len(), 2);
        assert!(!keys.contains(&"name".to_owned()), "{keys:?}");
        assert_eq!(
            task.outstanding.values().map(|p| p.host_key.as_str()).collect::<BTreeSet<_>>(),
            ["name", "name.2"].into()
        );
    }

    #[test]
    fn the_detailed_task_carries_what_its_status_carries() {
        let mut task = record();
        let working = task.detailed();
        assert_eq!(working["status"], "working");
        assert_eq!(working["ttlMs"], 60_000);
        assert_eq!(working["pollIntervalMs"], 500);
        assert!(!working.contains_key("result") && !working.contains_key("error"));
        assert!(working["createdAt"].as_str().unwrap().starts_with("1970-01-01T00:00:01"));
        task.apply(&ask(&["k"]), 2_000);
        assert_eq!(task.detailed()["inputRequests"], json!({"k": {"method": "elicitation/create"}}));
        task.apply(
            &Transition::Failed { error: json!({"code": -32603, "message": "m"}), message: "why".into() },
            3_000,
        );
        let failed = task.detailed();
        assert_eq!(failed["error"]["code"], -32603);
        assert_eq!(failed["statusMessage"], "why");
        assert!(!failed.contains_key("inputRequests"));
        let created = record().created();
        assert_eq!(created["resultType"], "task");
        assert!(created.get("result").is_none() && created.get("requestState").is_none());
    }

    #[test]
    fn an_unlimited_task_never_expires_and_is_never_removed() {
        let timing = Timing { ttl_ms: None, poll_interval_ms: None, retention_ms: 5 };
        let task = TaskRecord::new("t".into(), None, timing, 0);
        assert!(!task.is_expired(u64::MAX) && !task.is_removable(u64::MAX));
        assert_eq!(task.detailed()["ttlMs"], Value::Null);
        let task = record();
        assert!(!task.is_expired(60_999) && task.is_expired(61_000));
        assert!(!task.is_removable(61_999) && task.is_removable(62_000));
    }

    #[test]
    fn a_record_round_trips_through_json_for_a_shared_store() {
        let mut task = record();
        task.apply(&ask(&["a"]), 2_000);
        let text = serde_json::to_string(&task).unwrap();
        assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), task);
    }
}
