//! Two `notes` instances sharing one real `redis-server` (`NOTES_REDIS_URL`), driven by rmcp's client
//! over HTTP: a listen held by one instance hears the note alice adds through the other, and alice's
//! export task, created through one, is polled, answered and read to completion through the other —
//! while each instance keeps its own notes (bob's note added through one is not listed by the other).
//!
//! It needs `redis-server`, so it is ignored in the ordinary run; `cargo xtask edge redis` runs it
//! (`MCP_KERNEL_REDIS_SERVER`, else `/usr/bin/redis-server`). The binary is `target/<profile>/examples/notes`
//! built with the facade's `redis` feature (`cargo xtask ci` builds the examples so). Every process
//! binds 127.0.0.1 on a port picked free, every wait is bounded, and every child is killed when the
//! test ends.

#[allow(dead_code)]
mod common;
mod notes_example;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{Transcript, step, to_json};
use mcp_kernel_test_support::redis::RedisServer;
use notes_example::{modern, start_http, transport_with_token};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitationCapability,
    GetTaskParams, Implementation, ServerNotification, SubscriptionFilter, TASKS_EXTENSION_ID, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use rmcp::service::{ClientServiceExt, RoleClient, RunningService, Service};
use serde_json::json;

/// How long a notification or a task's next status may take.
const ARRIVES: Duration = Duration::from_secs(10);
/// The most `tasks/get` of one wait (a bound beside [`ARRIVES`]).
const MAX_POLLS: usize = 200;

/// A client that takes tasks and answers forms.
fn client_config() -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    capabilities.extensions = Some(BTreeMap::from([(TASKS_EXTENSION_ID.to_owned(), Default::default())]));
    capabilities.elicitation = Some(ElicitationCapability::new());
    ClientConfig::new(capabilities, Implementation::new("rmcp-notes-redis", "0.0.0"))
}

/// Polls `tasks/get` through `client` until the task is `status` (or terminal), bounded.
async fn until_status<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    id: &str,
    status: TaskStatus,
) -> rmcp::model::GetTaskResult {
    let started = Instant::now();
    for _ in 0..MAX_POLLS {
        let got = step("tasks/get", client.get_task(GetTaskParams::new(id))).await;
        if got.task.status() == status || got.task.status().is_terminal() {
            return got;
        }
        assert!(started.elapsed() < ARRIVES, "task {id} is not {status:?} after {ARRIVES:?}: {got:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} is not {status:?} after {MAX_POLLS} polls")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo xtask edge redis"]
async fn two_notes_instances_on_one_redis_share_listens_and_tasks_but_not_notes() {
    let log = Transcript::default();
    let _print = log.print_on_drop("two notes instances sharing one redis");
    let redis = RedisServer::start().expect("redis-server starts on 127.0.0.1");
    let url = redis.url();
    let env = [("NOTES_REDIS_URL", url.as_str()), ("NOTES_EXPORT_PAUSE_MS", "300")];
    let (mut first, first_url) = start_http(&env).await;
    let (mut second, second_url) = start_http(&env).await;
    let connect = |url: &str, token: &str| {
        client_config().serve_with_lifecycle(transport_with_token(url.to_owned(), token), modern())
    };
    let alice_on_first = step("discover alice on the first", connect(&first_url, "a-secret")).await;
    let alice_on_second = step("discover alice on the second", connect(&second_url, "a-secret")).await;

    // A listen held by the second instance hears the note added through the first.
    let filter = SubscriptionFilter::builder().resources_list_changed().build();
    let mut subscription = step("listen on the second", alice_on_second.listen(filter.clone())).await;
    assert_eq!(subscription.acknowledged(), &filter);
    let note = json!({"title": "Milk", "body": "Buy milk"}).as_object().cloned().expect("an object");
    let added = alice_on_first.call_tool(CallToolRequestParams::new("add_note").with_arguments(note));
    assert_eq!(to_json(&step("add_note on the first", added).await)["structuredContent"], json!({"id": 1}));
    let heard = tokio::time::timeout(ARRIVES, subscription.next()).await.expect("heard within the bound");
    let heard = heard.expect("a well-formed notification").expect("the stream is open");
    log.push(format!("the second instance's listen yields: {}", to_json(&heard)));
    assert!(matches!(heard, ServerNotification::ResourceListChangedNotification(_)), "{heard:?}");
    step("cancel the subscription", subscription.cancel()).await;

    // The notes stay per instance: the second has none of alice's.
    let searched = alice_on_second.call_tool(
        CallToolRequestParams::new("search_notes")
            .with_arguments(json!({"query": "milk"}).as_object().cloned().expect("an object")),
    );
    let searched = to_json(&step("search_notes on the second", searched).await);
    assert_eq!(searched["structuredContent"]["notes"], json!([]), "{searched}");

    // The export task: created through the first (which holds the note), asked, answered and read
    // through the second.
    let called = step(
        "export_notes on the first",
        alice_on_first.call_tool_once(CallToolRequestParams::new("export_notes")),
    )
    .await;
    let CallToolResponse::Task(created) = called else { panic!("export_notes became no task: {called:?}") };
    let id = created.task.task_id;
    let asked = until_status(&alice_on_second, &id, TaskStatus::InputRequired).await;
    assert!(matches!(asked.task.payload, TaskPayload::InputRequired { .. }), "{asked:?}");
    let answer =
        BTreeMap::from([("format".to_owned(), json!({"action": "accept", "content": {"format": "plain"}}))]);
    step("tasks/update on the second", alice_on_second.update_task(UpdateTaskParams::new(&id, answer))).await;
    let done = until_status(&alice_on_second, &id, TaskStatus::Completed).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("completed: {done:?}") };
    log.push(format!("the export read through the second: {}", to_json(result)));
    let text = result.get("content").map(|content| content[0]["text"].clone());
    assert!(text.as_ref().and_then(|t| t.as_str()).is_some_and(|t| t.contains("Milk")), "{result:?}");

    step("alice's shutdown (first)", async { alice_on_first.cancel().await.map(drop) }).await;
    step("alice's shutdown (second)", async { alice_on_second.cancel().await.map(drop) }).await;
    for child in [&mut first, &mut second] {
        assert!(child.try_wait().expect("the child's status").is_none(), "notes --http still serves");
        step("kill notes --http", child.kill()).await;
    }
}
