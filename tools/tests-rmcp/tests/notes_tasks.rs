//! rmcp's client drives tasks (the tasks extension, `io.modelcontextprotocol/tasks`) end to end
//! against the real `notes` example binary, over HTTP (a bearer token from `NOTES_TOKENS` names the
//! caller, who owns the task) and over stdio (the one local user), speaking `2026-07-28` and declaring
//! the extension and form elicitation in its capabilities.
//!
//! Everything goes through rmcp's own task API: `Peer::call_tool_once` receives the
//! `CreateTaskResult` (`CallToolResponse::Task`), `Peer::get_task` polls `tasks/get` into a typed
//! `GetTaskResult` (`TaskPayload::InputRequired` with the form, then `Completed` with the result),
//! `Peer::update_task` answers the form through `tasks/update`, and `Peer::cancel_task` cancels a
//! second export while it is being written (`tasks/cancel`; `tasks/get` then says `cancelled`). Over
//! HTTP, bob's `tasks/get` of alice's task is refused exactly as a task that does not exist.
//!
//! The binary is `target/<profile>/examples/notes` (`notes_example` finds it, and refuses a stale
//! one), run with `NOTES_EXPORT_PAUSE_MS` so that writing an export takes [`PAUSE_MS`]. The server
//! binds 127.0.0.1 on a port picked free, every wait and every poll loop is bounded, and the child is
//! killed when its test ends, failed or not.

#[allow(dead_code)]
mod common;
mod notes_example;
mod relayed;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{Transcript, step, to_json};
use notes_example::{modern, notes_binary, start_http, transport_with_token};
use relayed::spawn_relayed;
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ElicitationCapability, GetTaskParams, GetTaskResult, Implementation, InputRequest, ProtocolVersion,
    TASKS_EXTENSION_ID, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{ClientServiceExt, RoleClient, RunningService, Service};
use serde_json::{Value, json};
use tokio::process::Command;

/// How long writing an export takes in these tests (`NOTES_EXPORT_PAUSE_MS`): long enough for the
/// cancellation to land while it is written, short enough to wait for a completion.
const PAUSE_MS: &str = "1500";
/// The pause between two `tasks/get` (the server suggests 1 s; the tests poll faster).
const POLL: Duration = Duration::from_millis(50);
/// The longest a task may take to reach the status a test waits for.
const REACHES: Duration = Duration::from_secs(15);
/// The most `tasks/get` of one wait (a bound alongside [`REACHES`]).
const MAX_POLLS: usize = 300;
/// The one note every test adds, and the Markdown document its export is.
const MARKDOWN: &str = "# Notes\n\n## Milk\n\nBuy milk\n";

/// A client that takes tasks and answers forms: `extensions` names the tasks extension, and an empty
/// `elicitation` means form mode.
fn client_config() -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    capabilities.extensions = Some(BTreeMap::from([(TASKS_EXTENSION_ID.to_owned(), Default::default())]));
    capabilities.elicitation = Some(ElicitationCapability::new());
    ClientConfig::new(capabilities, Implementation::new("rmcp-notes-tasks", "0.0.0"))
}

/// Calls `export_notes` and returns the task it became.
async fn start_export<S: Service<RoleClient>>(client: &RunningService<RoleClient, S>) -> String {
    let called =
        step("tools/call export_notes", client.call_tool_once(CallToolRequestParams::new("export_notes")));
    match called.await {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working, "{created:?}");
            assert_eq!(created.task.task_id.len(), 32, "128 random bits as hex: {created:?}");
            assert_eq!(created.task.ttl_ms, Some(600_000), "{created:?}");
            created.task.task_id
        }
        other => panic!("export_notes became no task: {other:?}"),
    }
}

/// Polls `tasks/get` until `reached` says so, or the task is terminal: bounded by [`REACHES`] and
/// [`MAX_POLLS`]. `what` names the wait in a failure.
async fn until<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    id: &str,
    what: &str,
    reached: impl Fn(&GetTaskResult) -> bool,
    log: &Transcript,
) -> GetTaskResult {
    let started = Instant::now();
    for _ in 0..MAX_POLLS {
        let got = step("tasks/get", client.get_task(GetTaskParams::new(id))).await;
        if reached(&got) || got.task.status().is_terminal() {
            log.push(format!("rmcp's get_task yields: {}", to_json(&got)));
            return got;
        }
        assert!(started.elapsed() < REACHES, "task {id} is not {what} after {REACHES:?}: {got:?}");
        tokio::time::sleep(POLL).await;
    }
    panic!("task {id} is not {what} after {MAX_POLLS} polls")
}

/// Polls until the task is `status` (or terminal).
async fn until_status<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    id: &str,
    status: TaskStatus,
    log: &Transcript,
) -> GetTaskResult {
    until(client, id, &format!("{status:?}"), |got| got.task.status() == status, log).await
}

/// Answers the export's format question through `tasks/update`.
async fn choose<S: Service<RoleClient>>(client: &RunningService<RoleClient, S>, id: &str, format: &str) {
    let answer = json!({"action": "accept", "content": {"format": format}});
    let responses = BTreeMap::from([("format".to_owned(), answer)]);
    step("tasks/update", client.update_task(UpdateTaskParams::new(id, responses))).await;
}

/// Adds a note, exports it through a task (asked the format, answered, polled to completion), then
/// cancels a second export while it is being written.
async fn export_then_cancel<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    log: &Transcript,
) {
    let discovered = client.peer_info().expect("discovered");
    assert!(discovered.capabilities.supports_tasks(), "discover advertises the tasks extension");
    let arguments = json!({"title": "Milk", "body": "Buy milk"}).as_object().cloned().expect("an object");
    let added = client.call_tool(CallToolRequestParams::new("add_note").with_arguments(arguments));
    assert_eq!(to_json(&step("tools/call add_note", added).await)["structuredContent"], json!({"id": 1}));

    // The task asks which format before it writes; the answer goes through tasks/update.
    let id = start_export(client).await;
    let asked = until_status(client, &id, TaskStatus::InputRequired, log).await;
    assert_eq!(asked.task.task.status_message.as_deref(), Some("waiting for the export's format"));
    let TaskPayload::InputRequired { input_requests } = &asked.task.payload else {
        panic!("input_required carries its requests: {asked:?}")
    };
    let question = input_requests.get("format").expect("the format question");
    assert!(matches!(question, InputRequest::Elicitation(_)), "{question:?}");
    let question = to_json(question);
    assert_eq!(question["params"]["message"], "Export your 1 note in which format?", "{question}");
    choose(client, &id, "markdown").await;
    let done = until_status(client, &id, TaskStatus::Completed, log).await;
    let TaskPayload::Completed { result } = &done.task.payload else { panic!("completed: {done:?}") };
    assert_eq!(result.get("isError"), Some(&json!(false)), "{result:?}");
    assert_eq!(result.get("content").map(|c| &c[0]["text"]), Some(&json!(MARKDOWN)), "{result:?}");

    // A second export, cancelled while it is being written.
    let id = start_export(client).await;
    until_status(client, &id, TaskStatus::InputRequired, log).await;
    choose(client, &id, "plain").await;
    // Working again as soon as the answer is recorded; writing once the handler runs with it.
    let is_writing = |got: &GetTaskResult| got.task.task.status_message.as_deref() == Some("writing 1 note");
    let writing = until(client, &id, "being written", is_writing, log).await;
    assert_eq!(writing.task.status(), TaskStatus::Working, "{writing:?}");
    step("tasks/cancel", client.cancel_task(CancelTaskParams::new(&id))).await;
    let cancelled = until_status(client, &id, TaskStatus::Cancelled, log).await;
    assert_eq!(cancelled.task.payload, TaskPayload::Cancelled, "{cancelled:?}");
    // Past the time the export would have taken, it is still cancelled: the handler's outcome after
    // the cancellation is not stored.
    let pause = Duration::from_millis(PAUSE_MS.parse().expect("milliseconds"));
    tokio::time::sleep(pause + Duration::from_millis(200)).await;
    let later = step("tasks/get", client.get_task(GetTaskParams::new(&id))).await;
    assert_eq!(later.task.payload, TaskPayload::Cancelled, "{later:?}");
}

/// The JSON-RPC error of a refused request.
fn rpc_error<T: std::fmt::Debug>(outcome: Result<T, ServiceError>) -> Value {
    match outcome {
        Err(ServiceError::McpError(error)) => to_json(&error),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_drives_an_export_task_to_completion_and_cancels_another_over_http() {
    let log = Transcript::default();
    let _print = log.print_on_drop("notes over http, tasks");
    let (mut child, url) = start_http(&[("NOTES_EXPORT_PAUSE_MS", PAUSE_MS)]).await;
    let alice = transport_with_token(url.clone(), "a-secret");
    let alice = step("discover as alice", client_config().serve_with_lifecycle(alice, modern())).await;
    assert_eq!(alice.peer_info().expect("discovered").protocol_version, ProtocolVersion::V_2026_07_28);

    export_then_cancel(&alice, &log).await;

    // A task is its caller's: bob is told alice's task does not exist, in the same bytes as an unknown one.
    let id = start_export(&alice).await;
    let bob = transport_with_token(url, "b-secret");
    let bob = step("discover as bob", client_config().serve_with_lifecycle(bob, modern())).await;
    let alices = rpc_error(bob.get_task(GetTaskParams::new(&id)).await);
    let unknown = rpc_error(bob.get_task(GetTaskParams::new("0123456789abcdef0123456789abcdef")).await);
    assert_eq!(alices, unknown);
    assert_eq!(alices["code"], -32602, "{alices}");
    let still = until_status(&alice, &id, TaskStatus::InputRequired, &log).await;
    assert_eq!(still.task.status(), TaskStatus::InputRequired, "bob's look changed nothing");

    step("bob's shutdown", async { bob.cancel().await.map(drop) }).await;
    step("alice's shutdown", async { alice.cancel().await.map(drop) }).await;
    assert!(child.try_wait().expect("the child's status").is_none(), "notes --http still serves");
    step("kill notes --http", child.kill()).await;
}

// ---------------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_drives_an_export_task_to_completion_and_cancels_another_over_stdio() {
    let log = Transcript::default();
    let _print = log.print_on_drop("notes over stdio, tasks");
    let mut notes = Command::new(notes_binary());
    notes.env("NO_COLOR", "1").env("NOTES_EXPORT_PAUSE_MS", PAUSE_MS);
    let (mut child, transport) = spawn_relayed(notes, &log);
    let client = step("discover", client_config().serve_with_lifecycle(transport, modern())).await;
    assert_eq!(client.peer_info().expect("discovered").protocol_version, ProtocolVersion::V_2026_07_28);

    export_then_cancel(&client, &log).await;

    // End of input drains the session: the process exits 0.
    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    let status = step("notes exits at end of input", child.wait()).await;
    assert!(status.success(), "notes exited {status}");
}
