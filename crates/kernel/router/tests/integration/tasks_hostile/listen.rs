//! `subscriptions/listen` with `taskIds` under hostile input and timing: too many or too long ids,
//! a thousand ids of which one is the caller's, other principals' ids, a task that ends while its
//! listen is being opened, and another principal's task churn.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcp_kernel_router::notify::{InProcessHub, Notifications};
use mcp_kernel_router::tasks::{
    Edit, InProcessTaskStore, LimitReached, StoreResult, TaskLimits, TaskRecord, TaskStore, TaskWatch, Tasks,
};
use mcp_kernel_router::transport::Listen;
use mcp_kernel_router::{BoxFuture, Extensions, Server};
use serde_json::{Value, json};

use super::{SECRET, Tokio, User, call, cancel, configure, request, server_with, task_id, tasks};
use crate::support::code;

async fn open_listen_as(server: &Server, user: Option<&'static str>, filter: Value) -> Result<Listen, Value> {
    let mut extensions = Extensions::new();
    if let Some(user) = user {
        extensions.insert(User(user));
    }
    let message = request(9, "subscriptions/listen", json!({ "notifications": filter }));
    let envelope = mcp_kernel_router::wire::Envelope::from_value(message).expect("an envelope");
    let inbound = mcp_kernel_router::transport::Inbound::new().extensions(extensions);
    server
        .open_listen(envelope, inbound)
        .await
        .map_err(|handled| handled.response.expect("answered").to_value())
}

fn notifying(tasks: Tasks) -> Server {
    server_with(tasks, Some(Notifications::in_process())).0
}

fn random_ids(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{i:032x}")).collect()
}

#[tokio::test]
async fn a_listen_past_the_task_id_bound_or_with_a_long_or_odd_id_is_refused_without_echo() {
    let server = notifying(tasks());
    let too_many = json!({"taskIds": random_ids(1_025)});
    let long = json!({"taskIds": [format!("{SECRET}{}", "x".repeat(200))]});
    for filter in
        [too_many, long, json!({"taskIds": [7]}), json!({"taskIds": SECRET}), json!({"taskIds": [null]})]
    {
        let refused = open_listen_as(&server, Some("alice"), filter).await.expect_err("refused");
        assert_eq!(code(&refused), -32602, "{refused}");
        assert!(!refused.to_string().contains(SECRET), "{refused}");
    }
}

#[tokio::test]
async fn a_thousand_task_ids_are_honoured_quickly_and_only_for_the_callers_live_task() {
    let server = notifying(tasks());
    let alices = task_id(&call(&server, Some("alice"), "slow", json!({"ms": 300})).await);
    let bobs = task_id(&call(&server, Some("bob"), "slow", json!({"ms": 300})).await);
    let nobodys = task_id(&call(&server, None, "slow", json!({"ms": 300})).await);
    let mut ids = random_ids(1_020);
    ids.extend([bobs.clone(), nobodys.clone(), format!("{SECRET}ü"), alices.clone()]);
    let started = Instant::now();
    let mut listen = open_listen_as(&server, Some("alice"), json!({"taskIds": ids})).await.expect("a listen");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(listen.acknowledgment()["params"]["notifications"], json!({"taskIds": [alices]}));
    assert!(!listen.acknowledgment().to_string().contains(SECRET));
    let told =
        tokio::time::timeout(Duration::from_secs(3), listen.next()).await.expect("in time").expect("told");
    assert_eq!(told["params"]["taskId"], alices.as_str());
    assert_eq!(told["params"]["status"], "completed");
    // Her only task ended: the stream ends with nothing of Bob's or nobody's task.
    let ended = tokio::time::timeout(Duration::from_millis(1_000), listen.next()).await;
    assert_eq!(ended.expect("ends at once"), None, "nothing of Bob's or nobody's task");
}

#[tokio::test]
async fn a_listen_without_a_principal_is_never_told_of_an_owned_task() {
    let server = notifying(tasks());
    let alices = task_id(&call(&server, Some("alice"), "slow", json!({"ms": 200})).await);
    let listen = open_listen_as(&server, None, json!({"taskIds": [alices]})).await.expect("a listen");
    assert_eq!(listen.acknowledgment()["params"]["notifications"], json!({}));
    assert!(listen.completes_at_once());
    // Nor does a principal hear of a task nobody owns.
    let nobodys = task_id(&call(&server, None, "slow", json!({"ms": 200})).await);
    let listen =
        open_listen_as(&server, Some("alice"), json!({"taskIds": [nobodys]})).await.expect("a listen");
    assert!(listen.completes_at_once());
}

/// The in-process store, whose reads (once armed) answer 200 ms late with what they read: a store
/// across the network, whose answer travels while the task moves on.
#[derive(Clone, Default)]
struct LateReads {
    inner: InProcessTaskStore,
    armed: Arc<AtomicBool>,
}

impl TaskStore for LateReads {
    fn create(
        &self,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, StoreResult<Result<(), LimitReached>>> {
        self.inner.create(record, limits)
    }

    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        Box::pin(async move {
            let read = self.inner.read(id).await;
            if self.armed.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            read
        })
    }

    fn update<'a>(&'a self, id: &'a str, edit: Edit<'a>) -> BoxFuture<'a, StoreResult<Option<TaskRecord>>> {
        self.inner.update(id, edit)
    }

    fn watch(&self, id: &str) -> TaskWatch {
        self.inner.watch(id)
    }

    fn wake(&self, id: &str) {
        self.inner.wake(id);
    }
}

#[tokio::test]
async fn a_task_that_ends_while_its_listen_is_being_opened_is_still_told() {
    let store = LateReads::default();
    let server = notifying(configure(Tasks::with_store(store.clone(), Tokio)));
    let id = task_id(&call(&server, Some("alice"), "slow", json!({"ms": 150})).await);
    // The listen reads the task `working`; it completes before the listen has subscribed.
    store.armed.store(true, Ordering::SeqCst);
    let mut listen =
        open_listen_as(&server, Some("alice"), json!({"taskIds": [id]})).await.expect("a listen");
    store.armed.store(false, Ordering::SeqCst);
    assert_eq!(listen.acknowledgment()["params"]["notifications"], json!({"taskIds": [id]}));
    let told = tokio::time::timeout(Duration::from_secs(2), listen.next()).await;
    let told = told.expect("the acknowledged task's end is told").expect("a notification");
    assert_eq!(told["params"]["status"], "completed", "{told}");
}

/// Task statuses never travel through the change hub: a client driving its own tasks cannot fill —
/// and so end — the bounded feed of a listener that never asked for tasks.
#[tokio::test]
async fn another_principals_task_churn_does_not_end_a_listen_that_never_asked_for_tasks() {
    let hub = InProcessHub::with_capacity(16);
    let (server, _) = server_with(tasks().max_tasks_per_owner(64), Some(Notifications::with_hub(hub)));
    let mut bobs =
        open_listen_as(&server, Some("bob"), json!({"toolsListChanged": true})).await.expect("a listen");
    // Bob's client reads nothing for a while; Alice creates and cancels tasks of her own.
    let mut cancelled = BTreeMap::new();
    for _ in 0..40 {
        let id = task_id(&call(&server, Some("alice"), "slow", json!({})).await);
        cancelled.insert(id.clone(), cancel(&server, &id).await);
    }
    assert_eq!(cancelled.len(), 40);
    let still = tokio::time::timeout(Duration::from_millis(200), bobs.next()).await;
    assert!(still.is_err(), "Bob's listen ended because of Alice's tasks: {still:?}");
}
