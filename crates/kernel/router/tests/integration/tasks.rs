//! The tasks extension in the core (SEP-2663): when a call becomes a task, the three task methods,
//! input through `tasks/update`, cancellation, ownership, bounds, expiry and the drain — every answer
//! from `Server::handle`, with tasks run on a tokio runtime.

use crate::support::Tokio;
use crate::support::{LEGACY, MODERN, code, send};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_kernel_router::sealing::HmacSealer;
use mcp_kernel_router::tasks::{TaskMode, Tasks};
use mcp_kernel_router::{
    Extensions, InputRequired, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A principal the owner key reads.
#[derive(Clone)]
struct User(&'static str);

fn catalog() -> Listing {
    let schema = json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}});
    let tool = |name: &str, mode: TaskMode| {
        ToolSpec::new(name, Mode::ReadOnly).task_mode(mode).input_schema(schema.clone())
    };
    Listing {
        tools: vec![
            tool("greet", TaskMode::Never),
            tool("slow", TaskMode::Optional),
            tool("required", TaskMode::Required),
            tool("ask", TaskMode::Optional),
            tool("ask_twice", TaskMode::Optional),
            tool("stubborn", TaskMode::Optional),
            tool("panics", TaskMode::Optional),
            tool("fails", TaskMode::Optional),
            tool("huge", TaskMode::Optional),
        ],
        ..Listing::default()
    }
}

/// The tools: `slow` sleeps `ms` (default 10 s) and watches its cancellation, `ask` asks a name after
/// a pause and greets it, `ask_twice` asks twice under the same key, `stubborn` ignores cancellation.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let pause = Duration::from_millis(150);
    match &*call.name {
        "greet" => Ok(ToolOutput::text("hello")),
        "slow" | "required" => {
            let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(10_000);
            let task = call.context.task().cloned();
            if let Some(task) = &task {
                task.set_status_message("sleeping");
            }
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
        "stubborn" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(ToolOutput::text("late"))
        }
        "ask" => match call.context.retry_input().and_then(|input| input.accepted("name")) {
            Some(form) => Ok(ToolOutput::text(format!("hello {}", form["name"].as_str().unwrap_or("?")))),
            None => {
                tokio::time::sleep(pause).await;
                let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                Ok(ToolOutput::input_required(InputRequired::new().elicit("name", "Your name?", form)))
            }
        },
        "ask_twice" => {
            let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let round = call.context.retry_input().and_then(|i| i.state.clone()).map_or(0, |s| s[0]);
            if round < 2 {
                tokio::time::sleep(pause).await;
                let again =
                    InputRequired::new().elicit("name", "Your name?", form).with_state(vec![round + 1]);
                return Ok(ToolOutput::input_required(again));
            }
            Ok(ToolOutput::text("asked twice"))
        }
        "panics" => {
            tokio::time::sleep(pause).await;
            panic!("the handler panicked")
        }
        "fails" => {
            tokio::time::sleep(pause).await;
            Err(ToolError::new("it did not work"))
        }
        "huge" => {
            tokio::time::sleep(pause).await;
            Ok(ToolOutput::text("x".repeat(10_000)))
        }
        _ => Err(ToolError::new("unknown")),
    }
}

fn tasks() -> Tasks {
    Tasks::in_process(Tokio)
        .threshold(Duration::from_millis(50))
        .owner(|cx| cx.principal::<User>().map(|user| user.0.to_owned()))
        .max_result_bytes(5_000)
        .cancel_grace(Duration::from_millis(200))
}

fn server_with(tasks: Tasks) -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .request_state_sealer(HmacSealer::new(&[7u8; 32]).expect("a key"))
        .tasks(tasks)
        .build()
        .expect("a server")
}

fn server() -> Server {
    server_with(tasks())
}

/// A modern request declaring the extension (and elicitation).
fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The same request without the extension.
fn undeclared(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn send_as(server: &Server, user: &'static str, message: Value) -> Value {
    let mut extensions = Extensions::new();
    extensions.insert(User(user));
    let inbound = mcp_kernel_router::transport::Inbound::new().extensions(extensions);
    let envelope = mcp_kernel_router::wire::Envelope::from_value(message).expect("an envelope");
    let handled = server.handle_envelope(envelope, inbound).await;
    handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    send(server, request(1, "tools/call", json!({"name": name, "arguments": arguments}))).await
}

async fn get(server: &Server, id: &str) -> Value {
    send(server, request(2, "tasks/get", json!({"taskId": id}))).await
}

/// Polls until the task is `status` (or terminal), at most 5 s.
async fn until(server: &Server, id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let got = get(server, id).await;
        let now = got["result"]["status"].as_str().unwrap_or_default().to_owned();
        if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached {status}")
}

fn task_id(created: &Value) -> String {
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().expect("a taskId").to_owned()
}

#[tokio::test]
async fn a_call_that_outlasts_the_threshold_becomes_a_task_and_completes() {
    let server = server();
    let created = call(&server, "slow", json!({"ms": 300})).await;
    let id = task_id(&created);
    assert_eq!(id.len(), 32, "128 random bits as hex");
    let result = &created["result"];
    assert_eq!(result["status"], "working");
    assert_eq!(result["ttlMs"], 600_000);
    assert_eq!(result["pollIntervalMs"], 1_000);
    assert_eq!(result["statusMessage"], "sleeping", "a message set before creation is kept");
    for absent in ["result", "error", "inputRequests", "requestState", "content"] {
        assert!(result.get(absent).is_none(), "{absent}: {result}");
    }
    // Durably created: found at once.
    let working = get(&server, &id).await;
    assert_eq!(working["result"]["taskId"], id.as_str());
    assert_eq!(working["result"]["resultType"], "complete");
    let done = until(&server, &id, "completed").await;
    assert_eq!(done["result"]["status"], "completed");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "slept 300");
    assert_eq!(done["result"]["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_call_finished_within_the_threshold_is_answered_as_usual() {
    let server = server();
    let answered = call(&server, "slow", json!({"ms": 0})).await;
    assert_eq!(answered["result"]["content"][0]["text"], "slept 0", "{answered}");
    assert!(answered["result"].get("taskId").is_none());
}

#[tokio::test]
async fn no_task_is_created_for_a_request_that_did_not_declare_the_extension() {
    let server = server();
    let message = undeclared(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 200}}));
    let answered = send(&server, message).await;
    assert_eq!(answered["result"]["content"][0]["text"], "slept 200", "{answered}");
    let legacy = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"ms": 200}, "task": {"ttl": 1000},
        "_meta": {"io.modelcontextprotocol/protocolVersion": LEGACY}}});
    let answered = send(&server, legacy).await;
    assert!(answered["result"].get("taskId").is_none(), "{answered}");
    assert_eq!(answered["result"]["content"][0]["text"], "slept 200");
}

#[tokio::test]
async fn a_required_tool_is_refused_minus_32021_naming_the_extension_to_a_client_without_it() {
    let server = server();
    let answered = send(&server, undeclared(1, "tools/call", json!({"name": "required"}))).await;
    assert_eq!(code(&answered), -32021);
    assert_eq!(answered["error"]["data"]["requiredCapabilities"], json!({"extensions": {TASKS: {}}}));
    // With the extension it is always a task, even when it finishes at once.
    let created = call(&server, "required", json!({"ms": 0})).await;
    let id = task_id(&created);
    assert_eq!(until(&server, &id, "completed").await["result"]["result"]["content"][0]["text"], "slept 0");
}

#[tokio::test]
async fn the_task_methods_need_the_extension_and_a_modern_request() {
    let server = server();
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = json!({"taskId": "x", "inputResponses": {}});
        assert_eq!(code(&send(&server, undeclared(1, method, params.clone())).await), -32021, "{method}");
        let mut legacy = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        legacy["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": LEGACY});
        assert_eq!(code(&send(&server, legacy).await), -32601, "{method}");
    }
    for method in ["tasks/result", "tasks/list"] {
        assert_eq!(code(&send(&server, request(1, method, json!({"taskId": "x"}))).await), -32601);
    }
    let never = |mut tool: ToolSpec| {
        tool = tool.task_mode(TaskMode::Never);
        tool
    };
    let listing = Listing { tools: catalog().tools.into_iter().map(never).collect(), ..Listing::default() };
    let without = Server::builder(listing).dispatch(dispatch).build().expect("a server");
    assert_eq!(code(&send(&without, request(1, "tasks/get", json!({"taskId": "x"}))).await), -32601);
}

#[tokio::test]
async fn discover_lists_the_extension_and_initialize_does_not() {
    let server = server();
    let discovered = send(&server, request(1, "server/discover", json!({}))).await;
    assert_eq!(discovered["result"]["capabilities"]["extensions"], json!({TASKS: {}}));
    assert!(discovered["result"]["capabilities"].get("tasks").is_none());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let initialized = send(&server, init).await;
    assert!(initialized["result"]["capabilities"].get("extensions").is_none(), "{initialized}");
}

#[tokio::test]
async fn an_unknown_task_and_another_principals_task_get_the_same_bytes() {
    let server = server();
    let created = send_as(
        &server,
        "alice",
        request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 500}})),
    )
    .await;
    let id = task_id(&created);
    let alices = send_as(&server, "alice", request(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(alices["result"]["taskId"], id.as_str());
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = |id: &str| json!({"taskId": id, "inputResponses": {}});
        let bobs = send_as(&server, "bob", request(2, method, params(&id))).await;
        let unknown =
            send_as(&server, "bob", request(2, method, params("0123456789abcdef0123456789abcdef"))).await;
        assert_eq!(bobs.to_string(), unknown.to_string(), "{method}");
        assert_eq!(code(&bobs), -32602);
    }
    // Bob's cancel did nothing.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let done = send_as(&server, "alice", request(3, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(done["result"]["status"], "completed");
}

#[tokio::test]
async fn cancel_ends_a_running_task_cancelled_and_tells_the_handler() {
    let server = server();
    let id = task_id(&call(&server, "slow", json!({})).await);
    let ack = send(&server, request(3, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack["result"].get(absent).is_none(), "{ack}");
    }
    let got = get(&server, &id).await;
    assert_eq!(got["result"]["status"], "cancelled");
    // The handler heard it and returned "stopped": that outcome is not stored over the cancellation.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let later = get(&server, &id).await;
    assert_eq!(later["result"]["status"], "cancelled");
    assert!(later["result"].get("result").is_none());
    // Cancelling a terminal task is the same empty acknowledgment.
    let again = send(&server, request(4, "tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(again["result"], ack["result"]);
}

#[tokio::test]
async fn a_tool_error_completes_and_a_panic_fails_with_a_jsonrpc_error() {
    let server = server();
    let id = task_id(&call(&server, "fails", json!({})).await);
    let done = until(&server, &id, "completed").await;
    assert_eq!(done["result"]["status"], "completed");
    assert_eq!(done["result"]["result"]["isError"], true);
    let id = task_id(&call(&server, "panics", json!({})).await);
    let failed = until(&server, &id, "failed").await;
    assert_eq!(failed["result"]["status"], "failed");
    assert_eq!(failed["result"]["error"]["code"], -32603);
    assert!(failed["result"].get("result").is_none());
}

#[tokio::test]
async fn input_inside_a_task_is_asked_through_tasks_get_and_answered_with_tasks_update() {
    let server = server();
    let id = task_id(&call(&server, "ask", json!({})).await);
    let waiting = until(&server, &id, "input_required").await;
    let requests = &waiting["result"]["inputRequests"];
    assert_eq!(requests["name"]["method"], "elicitation/create", "{waiting}");
    // Unknown keys are ignored; a malformed answer to an outstanding key is -32602.
    let ignored = json!({"taskId": id, "inputResponses": {"unknown": {"x": 1}}});
    assert_eq!(send(&server, request(5, "tasks/update", ignored)).await["result"]["resultType"], "complete");
    let malformed = json!({"taskId": id, "inputResponses": {"name": 12}});
    assert_eq!(code(&send(&server, request(5, "tasks/update", malformed)).await), -32602);
    let answer =
        json!({"taskId": id, "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}});
    let ack = send(&server, request(6, "tasks/update", answer)).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let done = until(&server, &id, "completed").await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "hello Ada");
}

#[tokio::test]
async fn a_key_asked_again_in_a_later_round_gets_a_new_wire_key() {
    let server = server();
    let id = task_id(&call(&server, "ask_twice", json!({})).await);
    let mut keys = Vec::new();
    for round in 0..2 {
        let waiting = until(&server, &id, "input_required").await;
        let key = waiting["result"]["inputRequests"].as_object().expect("requests").keys().next().cloned();
        let key = key.expect("one key");
        keys.push(key.clone());
        let answer =
            json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"name": "x"}}}});
        send(&server, request(7 + round, "tasks/update", answer)).await;
        for _ in 0..100 {
            if get(&server, &id).await["result"]["status"] != "input_required" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    assert_eq!(keys[0], "name");
    assert_ne!(keys[0], keys[1], "unique over the task's life");
    assert_eq!(
        until(&server, &id, "completed").await["result"]["result"]["content"][0]["text"],
        "asked twice"
    );
}

#[tokio::test]
async fn a_required_tool_resolves_its_round_trip_before_it_becomes_a_task() {
    let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let asks = move |call: ToolCall| {
        let form = form.clone();
        async move {
            match call.context.retry_input().and_then(|i| i.accepted("who")) {
                None => Ok(ToolOutput::input_required(InputRequired::new().elicit("who", "Who?", form))),
                Some(who) => Ok(ToolOutput::text(format!("hi {}", who["name"].as_str().unwrap_or("?")))),
            }
        }
    };
    let listing = Listing {
        tools: vec![ToolSpec::new("mrtr", Mode::ReadOnly).task_mode(TaskMode::Required)],
        ..Listing::default()
    };
    let server = Server::builder(listing)
        .dispatch(asks)
        .request_state_sealer(HmacSealer::new(&[9u8; 32]).expect("a key"))
        .tasks(tasks())
        .build()
        .expect("a server");
    let first = call(&server, "mrtr", json!({})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(first["result"].get("taskId").is_none());
    let state = first["result"]["requestState"].clone();
    let retry = request(
        2,
        "tools/call",
        json!({"name": "mrtr", "arguments": {}, "requestState": state,
        "inputResponses": {"who": {"action": "accept", "content": {"name": "Alice"}}}}),
    );
    let created = send(&server, retry).await;
    let id = task_id(&created);
    assert!(created["result"].get("requestState").is_none());
    let done = until(&server, &id, "completed").await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "hi Alice");
}

#[tokio::test]
async fn a_result_past_the_bound_fails_the_task_naming_the_limit() {
    let server = server();
    let id = task_id(&call(&server, "huge", json!({})).await);
    let failed = until(&server, &id, "failed").await;
    assert!(failed["result"]["error"]["message"].as_str().unwrap().contains("5000 bytes"), "{failed}");
}

#[tokio::test]
async fn a_caller_past_its_task_bound_is_refused_naming_it_and_nothing_is_evicted() {
    let server = server_with(tasks().max_tasks_per_owner(2));
    let only_a_task = || request(1, "tools/call", json!({"name": "required"}));
    let first = task_id(&send_as(&server, "alice", only_a_task()).await);
    task_id(&send_as(&server, "alice", only_a_task()).await);
    let refused = send_as(&server, "alice", only_a_task()).await;
    assert_eq!(code(&refused), -32000);
    assert!(refused["error"]["message"].as_str().unwrap().contains("limit of 2 tasks"), "{refused}");
    // Another caller has its own share.
    task_id(&send_as(&server, "bob", only_a_task()).await);
    let still = send_as(&server, "alice", request(2, "tasks/get", json!({"taskId": first}))).await;
    assert_eq!(still["result"]["status"], "working");
}

#[tokio::test]
async fn a_task_past_its_ttl_is_failed_and_its_handler_cancelled() {
    let server = server_with(tasks().ttl(Some(Duration::from_millis(300))));
    let id = task_id(&call(&server, "slow", json!({})).await);
    let failed = until(&server, &id, "failed").await;
    assert_eq!(failed["result"]["status"], "failed");
    assert_eq!(failed["result"]["ttlMs"], 300);
    assert!(failed["result"]["statusMessage"].as_str().unwrap().contains("time to live"));
}

#[tokio::test]
async fn the_drain_fails_a_task_that_outlives_the_grace_period() {
    let server = server();
    let quick = task_id(&call(&server, "slow", json!({"ms": 150})).await);
    let stubborn = task_id(&call(&server, "stubborn", json!({})).await);
    let started = std::time::Instant::now();
    server.drain_tasks(Duration::from_millis(400)).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(get(&server, &quick).await["result"]["status"], "completed", "finished within the grace");
    let failed = get(&server, &stubborn).await;
    assert_eq!(failed["result"]["status"], "failed");
    assert_eq!(failed["result"]["error"]["message"], "the server shut down before the task finished");
}

#[tokio::test]
async fn a_status_message_set_while_running_reaches_tasks_get() {
    let counter = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&counter);
    let chatty = move |call: ToolCall| {
        let seen = Arc::clone(&seen);
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if let Some(task) = call.context.task() {
                task.set_status_message("halfway");
                seen.fetch_add(1, Ordering::SeqCst);
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(ToolOutput::text("done"))
        }
    };
    let listing = Listing {
        tools: vec![ToolSpec::new("chatty", Mode::ReadOnly).task_mode(TaskMode::Optional)],
        ..Listing::default()
    };
    let server = Server::builder(listing).dispatch(chatty).tasks(tasks()).build().expect("a server");
    let id = task_id(&call(&server, "chatty", json!({})).await);
    let mut message = Value::Null;
    for _ in 0..100 {
        message = get(&server, &id).await["result"]["statusMessage"].clone();
        if message == "halfway" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(message, "halfway");
    assert_eq!(counter.load(Ordering::SeqCst), 1);
}

async fn open_listen_as(
    server: &Server,
    user: &'static str,
    message: Value,
) -> Result<mcp_kernel_router::transport::Listen, Value> {
    let mut extensions = Extensions::new();
    extensions.insert(User(user));
    let envelope = mcp_kernel_router::wire::Envelope::from_value(message).expect("an envelope");
    let inbound = mcp_kernel_router::transport::Inbound::new().extensions(extensions);
    server
        .open_listen(envelope, inbound)
        .await
        .map_err(|handled| handled.response.expect("answered").to_value())
}

#[tokio::test]
async fn a_listen_for_task_ids_hears_only_the_callers_own_live_tasks_and_needs_the_extension() {
    let server = Server::builder(catalog())
        .dispatch(dispatch)
        .notifications(mcp_kernel_router::notify::Notifications::in_process())
        .tasks(tasks())
        .build()
        .expect("a server");
    let tools_call = |ms: u64| request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": ms}}));
    let alices = task_id(&send_as(&server, "alice", tools_call(400)).await);
    let bobs = task_id(&send_as(&server, "bob", tools_call(400)).await);
    let finished = task_id(&send_as(&server, "alice", tools_call(60)).await);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let filter = json!({"taskIds": [alices, bobs, finished, "0123456789abcdef0123456789abcdef"]});
    let refused = open_listen_as(
        &server,
        "alice",
        undeclared(9, "subscriptions/listen", json!({"notifications": filter})),
    )
    .await;
    assert_eq!(code(&refused.expect_err("refused")), -32021);
    let mut listen = open_listen_as(
        &server,
        "alice",
        request(9, "subscriptions/listen", json!({"notifications": filter})),
    )
    .await
    .expect("a listen");
    assert_eq!(
        listen.acknowledgment()["params"]["notifications"],
        json!({"taskIds": [alices]}),
        "only her own live task"
    );
    let told = tokio::time::timeout(Duration::from_secs(3), listen.next())
        .await
        .expect("in time")
        .expect("a notification");
    assert_eq!(told["method"], "notifications/tasks");
    assert_eq!(told["params"]["taskId"], alices.as_str());
    assert_eq!(told["params"]["status"], "completed");
    assert_eq!(told["params"]["result"]["content"][0]["text"], "slept 400");
    assert_eq!(told["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);
    // Bob's task ends too; nothing of it reaches Alice's stream, which ends once her only task has
    // (a listen that asked only for tasks has nothing more to wait for).
    let ended = tokio::time::timeout(Duration::from_millis(1_000), listen.next()).await;
    assert_eq!(ended.expect("ends at once"), None);
}

#[test]
fn a_required_tool_on_a_server_without_tasks_does_not_build() {
    let listing = Listing {
        tools: vec![ToolSpec::new("only_a_task", Mode::ReadOnly).task_mode(TaskMode::Required)],
        ..Listing::default()
    };
    let refused = Server::builder(listing).dispatch(dispatch).build().expect_err("refused");
    assert_eq!(refused, mcp_kernel_router::BuildError::RequiredTaskWithoutTasks("only_a_task".into()));
}

#[tokio::test]
async fn the_extension_declared_as_false_or_null_is_not_declared() {
    let server = server();
    for declared in [json!(false), json!(null), json!("yes")] {
        let mut message = request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 120}}));
        message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"][TASKS] =
            declared;
        let answered = send(&server, message).await;
        assert_eq!(answered["result"]["content"][0]["text"], "slept 120", "{answered}");
    }
}

#[tokio::test]
async fn a_server_without_tasks_leaves_task_ids_out_of_the_acknowledgment_without_an_error() {
    let server = Server::builder(Listing::default())
        .notifications(mcp_kernel_router::notify::Notifications::in_process())
        .build()
        .expect("a server");
    let filter = json!({"taskIds": ["0123456789abcdef0123456789abcdef"], "toolsListChanged": true});
    let listen = open_listen_as(
        &server,
        "alice",
        undeclared(3, "subscriptions/listen", json!({"notifications": filter})),
    )
    .await
    .expect("a listen");
    assert_eq!(listen.acknowledgment()["params"]["notifications"], json!({"toolsListChanged": true}));
}

#[tokio::test]
async fn past_its_task_bound_an_optional_tool_is_answered_as_it_is_without_tasks() {
    let server = server_with(tasks().max_tasks_per_owner(1));
    let slow = |ms: u64| request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": ms}}));
    task_id(&send_as(&server, "alice", slow(5_000)).await);
    let answered = send_as(&server, "alice", slow(200)).await;
    assert_eq!(answered["result"]["content"][0]["text"], "slept 200", "{answered}");
    assert!(answered["result"].get("taskId").is_none());
}

/// Users enough to fill the store's default bound at the per-owner default.
const USERS: [&str; 17] = [
    "u00", "u01", "u02", "u03", "u04", "u05", "u06", "u07", "u08", "u09", "u10", "u11", "u12", "u13", "u14",
    "u15", "u16",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_bounds_run_sixty_four_tasks_per_owner_and_store_one_thousand_and_twenty_four() {
    use mcp_kernel_router::tasks::{DEFAULT_MAX_TASKS, DEFAULT_MAX_TASKS_PER_OWNER};
    assert_eq!((DEFAULT_MAX_TASKS_PER_OWNER, DEFAULT_MAX_TASKS), (64, 1024));
    let defaults = Tasks::in_process(Tokio)
        .threshold(Duration::from_millis(20))
        .owner(|cx| cx.principal::<User>().map(|user| user.0.to_owned()));
    let server = server_with(defaults);
    let only_a_task = || request(1, "tools/call", json!({"name": "required"}));
    let created = |answer: &Value| answer["result"]["resultType"] == "task";
    // One owner: 64 run, the 65th is refused naming the bound.
    let burst = (0..65).map(|_| send_as(&server, USERS[0], only_a_task()));
    let answers = futures_util::future::join_all(burst).await;
    assert_eq!(answers.iter().filter(|a| created(a)).count(), 64);
    let refused: Vec<&Value> = answers.iter().filter(|a| !created(a)).collect();
    assert_eq!(refused.len(), 1);
    assert!(refused[0]["error"]["message"].as_str().unwrap().contains("limit of 64 tasks"), "{}", refused[0]);
    // Fifteen more owners fill the store (64 + 15 × 64 = 1,024); a seventeenth finds it full.
    for user in &USERS[1..16] {
        let burst = (0..64).map(|_| send_as(&server, user, only_a_task()));
        let answers = futures_util::future::join_all(burst).await;
        assert!(answers.iter().all(created), "{user} runs its 64");
    }
    let full = send_as(&server, USERS[16], only_a_task()).await;
    assert_eq!(code(&full), -32000);
    assert!(full["error"]["message"].as_str().unwrap().contains("limit of 1024 tasks"), "{full}");
}
