//! The tasks extension under hostile input and hostile timing: malformed task requests, answers of
//! the wrong shape, races between cancellation, answers, completion and expiry, handlers that panic
//! or never return, hosts that ask forever, store exhaustion, a panicking owner key, and listens
//! naming thousands of ids or other principals' tasks. Every answer comes from `Server::handle_envelope`
//! (or `Server::open_listen`), with tasks run on a tokio runtime.

mod bounds;
mod listen;
mod params;
mod races;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_kernel_router::sealing::HmacSealer;
use mcp_kernel_router::tasks::{TaskMode, Tasks};
use mcp_kernel_router::{
    Extensions, InputRequired, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

use crate::support::MODERN;
pub(super) use crate::support::Tokio;

pub(super) const TASKS: &str = "io.modelcontextprotocol/tasks";
/// What a hostile caller or a panicking handler puts in its input: no answer may repeat it.
pub(super) const SECRET: &str = "SECRET-7f3a";

/// A principal the owner key reads.
#[derive(Clone)]
pub(super) struct User(pub(super) &'static str);

/// What the handlers did, for the tests to check.
#[derive(Default)]
pub(super) struct Seen {
    /// Runs of the handlers that count them (`ask`, `ask_always`, `forever`, `panics_on_retry`).
    pub(super) runs: AtomicUsize,
    /// Whether the `stubborn` handler's future was dropped.
    pub(super) dropped: AtomicBool,
}

/// Sets `Seen::dropped` when dropped with the handler's future.
struct DropFlag(Arc<Seen>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

/// Panics when dropped with the handler's future.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("the handler's future panicked while it was dropped");
        }
    }
}

fn catalog() -> Listing {
    let schema = json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}});
    let tool = |name: &str, mode: TaskMode| {
        ToolSpec::new(name, Mode::ReadOnly).task_mode(mode).input_schema(schema.clone())
    };
    let optional = [
        "slow",
        "panics_now",
        "panics_late",
        "panics_on_retry",
        "stubborn",
        "drop_panics",
        "forever",
        "ask",
        "ask_always",
    ];
    let mut tools: Vec<ToolSpec> = optional.iter().map(|name| tool(name, TaskMode::Optional)).collect();
    tools.push(tool("required_panics", TaskMode::Required));
    tools.push(tool("slow_required", TaskMode::Required));
    tools.push(tool("greet", TaskMode::Never));
    Listing { tools, ..Listing::default() }
}

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}})
}

/// The hostile handlers: see each arm.
async fn hostile(seen: Arc<Seen>, call: ToolCall) -> Result<ToolOutput, ToolError> {
    let pause = Duration::from_millis(120);
    let retry = call.context.retry_input().cloned();
    match &*call.name {
        "greet" => Ok(ToolOutput::text("hello")),
        // Sleeps `ms` (default 10 s) and returns "stopped" once cancelled: never to be stored.
        "slow" | "slow_required" => {
            let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(10_000);
            let task = call.context.task().cloned();
            let cancelled = async {
                match &task {
                    Some(task) => task.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(ToolOutput::text(format!("slept {ms}"))),
                () = cancelled => Ok(ToolOutput::text("stopped")),
            }
        }
        "panics_now" | "required_panics" => panic!("{SECRET} before the threshold"),
        "panics_late" => {
            tokio::time::sleep(pause).await;
            panic!("{SECRET} after the threshold")
        }
        "panics_on_retry" => {
            seen.runs.fetch_add(1, Ordering::SeqCst);
            if retry.is_some() {
                panic!("{SECRET} on a retry round");
            }
            tokio::time::sleep(pause).await;
            Ok(ToolOutput::input_required(InputRequired::new().elicit("name", "Name?", name_form())))
        }
        // Ignores its cancellation for 30 s.
        "stubborn" => {
            let _flag = DropFlag(Arc::clone(&seen));
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(ToolOutput::text("late"))
        }
        "drop_panics" => {
            let _bomb = PanicOnDrop;
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(ToolOutput::text("late"))
        }
        // Asks for nothing but its state, forever.
        "forever" => {
            seen.runs.fetch_add(1, Ordering::SeqCst);
            if retry.is_none() {
                tokio::time::sleep(pause).await;
            }
            Ok(ToolOutput::input_required(InputRequired::new().with_state(vec![1])))
        }
        "ask" => {
            seen.runs.fetch_add(1, Ordering::SeqCst);
            match retry.as_ref().and_then(|input| input.accepted("name")) {
                Some(form) => Ok(ToolOutput::text(format!("hello {}", form["name"].as_str().unwrap_or("?")))),
                None => {
                    tokio::time::sleep(pause).await;
                    Ok(ToolOutput::input_required(InputRequired::new().elicit("name", "Name?", name_form())))
                }
            }
        }
        // Asks for a name again each round.
        "ask_always" => {
            seen.runs.fetch_add(1, Ordering::SeqCst);
            if retry.is_none() {
                tokio::time::sleep(pause).await;
            }
            Ok(ToolOutput::input_required(InputRequired::new().elicit("name", "Name?", name_form())))
        }
        _ => Err(ToolError::new("unknown")),
    }
}

/// The settings every fixture uses: a 50 ms threshold, owners named by [`User`] (the key panics for
/// "mallory"), a 200 ms cancellation grace.
pub(super) fn configure(tasks: Tasks) -> Tasks {
    tasks
        .threshold(Duration::from_millis(50))
        .owner(|cx| {
            let user = cx.principal::<User>()?;
            assert_ne!(user.0, "mallory", "the owner key cannot name mallory");
            Some(user.0.to_owned())
        })
        .cancel_grace(Duration::from_millis(200))
}

pub(super) fn tasks() -> Tasks {
    configure(Tasks::in_process(Tokio))
}

/// A server with `tasks` (and change notifications when `notifications` is given).
pub(super) fn server_with(
    tasks: Tasks,
    notifications: Option<mcp_kernel_router::notify::Notifications>,
) -> (Server, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let handlers = Arc::clone(&seen);
    let dispatch = move |call: ToolCall| hostile(Arc::clone(&handlers), call);
    let mut builder = Server::builder(catalog())
        .dispatch(dispatch)
        .request_state_sealer(HmacSealer::new(&[5u8; 32]).expect("a key"))
        .tasks(tasks);
    if let Some(notifications) = notifications {
        builder = builder.notifications(notifications);
    }
    (builder.build().expect("a server"), seen)
}

/// A modern request declaring the extension and elicitation.
pub(super) fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `message` answered for `user` (`None`: a request without a principal).
pub(super) async fn send_as(server: &Server, user: Option<&'static str>, message: Value) -> Value {
    let mut extensions = Extensions::new();
    if let Some(user) = user {
        extensions.insert(User(user));
    }
    let inbound = mcp_kernel_router::transport::Inbound::new().extensions(extensions);
    let envelope = mcp_kernel_router::wire::Envelope::from_value(message).expect("an envelope");
    let handled = server.handle_envelope(envelope, inbound).await;
    handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

pub(super) async fn call(server: &Server, user: Option<&'static str>, name: &str, arguments: Value) -> Value {
    send_as(server, user, request(1, "tools/call", json!({"name": name, "arguments": arguments}))).await
}

pub(super) async fn get(server: &Server, user: Option<&'static str>, id: &str) -> Value {
    send_as(server, user, request(2, "tasks/get", json!({"taskId": id}))).await
}

pub(super) async fn update(server: &Server, id: &str, responses: Value) -> Value {
    let params = json!({"taskId": id, "inputResponses": responses});
    send_as(server, Some("alice"), request(3, "tasks/update", params)).await
}

pub(super) async fn cancel(server: &Server, id: &str) -> Value {
    send_as(server, Some("alice"), request(4, "tasks/cancel", json!({"taskId": id}))).await
}

pub(super) fn task_id(created: &Value) -> String {
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().expect("a taskId").to_owned()
}

pub(super) fn status(got: &Value) -> String {
    got["result"]["status"].as_str().unwrap_or_default().to_owned()
}

pub(super) fn is_terminal(status: &str) -> bool {
    ["completed", "failed", "cancelled"].contains(&status)
}

/// Alice's task `id` once it is `wanted` or terminal (at most 10 s).
pub(super) async fn until(server: &Server, id: &str, wanted: &str) -> Value {
    for _ in 0..1_000 {
        let got = get(server, Some("alice"), id).await;
        let now = status(&got);
        if now == wanted || is_terminal(&now) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached {wanted}")
}

/// Alice's task `id` once terminal, after checking that it stays exactly so for 250 ms.
pub(super) async fn settled(server: &Server, id: &str) -> Value {
    let first = until(server, id, "completed").await;
    assert!(is_terminal(&status(&first)), "{first}");
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let again = get(server, Some("alice"), id).await;
        assert_eq!(again["result"], first["result"], "a terminal task changed");
    }
    first
}

/// `answer` does not repeat [`SECRET`].
pub(super) fn assert_no_echo(answer: &Value) {
    assert!(!answer.to_string().contains(SECRET), "the answer repeats what was sent: {answer}");
}

/// An accepted form with `name`.
pub(super) fn named(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}
