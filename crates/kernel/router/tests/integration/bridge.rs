//! The bridge: a host that asks for input the `2026-07-28` way serves a `2025-11-25` client through the
//! request's client channel — one round, two rounds with the host's state, the three methods that can
//! ask, the client's faults, a bounded number of rounds, cancellation, and modern requests untouched.
//! The channel is the test's own (`support::channel`); every request it is sent is checked against
//! the official `2025-11-25` schema.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::support::channel::{Reply, Scripted, every_capability};
use crate::support::official::{assert_response, assert_valid};
use crate::support::{LEGACY, MODERN, bare, capture_logs, code, legacy, modern};
use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec};
use mcp_kernel_router::sealing::HmacSealer;
use mcp_kernel_router::transport::{ClientFault, Inbound, LegacySession, MAX_BRIDGE_ROUNDS};
use mcp_kernel_router::wire::ErrorObject;
use mcp_kernel_router::wire::types::{
    ContentBlock, CreateMessageRequestParams, InputRequest, PromptMessage, Role, SamplingMessage,
    TextResourceContents,
};
use mcp_kernel_router::{
    InputRequired, Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn color_form() -> Value {
    json!({"type": "object", "properties": {"color": {"type": "string", "enum": ["red", "blue"]}}})
}

fn catalog() -> Listing {
    let tools = ["greet", "two_step", "everything", "forever", "state_only", "nothing"];
    Listing {
        tools: tools.into_iter().map(|name| ToolSpec::new(name, Mode::ReadOnly)).collect(),
        resources: vec![ResourceSpec::new("test://pin", "pin").into()],
        prompts: vec![PromptSpec::new("ctx").argument(PromptArgument::new("topic"))],
    }
}

fn question() -> InputRequest {
    let message = SamplingMessage::text(Role::User, "What is the capital of France?");
    InputRequest::Sampling(CreateMessageRequestParams::new(vec![message], 100))
}

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let input = call.context.retry_input().cloned().unwrap_or_default();
    let field = |key: &str, field: &str| {
        input.accepted(key).and_then(|c| c.get(field)).and_then(Value::as_str).map(str::to_owned)
    };
    let state = input.state.as_deref().map(|s| String::from_utf8_lossy(s).into_owned());
    let ask = |required: InputRequired| Ok(ToolOutput::input_required(required));
    match &*call.name {
        "greet" => match field("user_name", "name") {
            Some(name) => Ok(ToolOutput::text(format!("Hello, {name}!"))),
            None => ask(InputRequired::new().elicit("user_name", "What is your name?", name_form())),
        },
        "two_step" => match (state.as_deref(), field("step1", "name"), field("step2", "color")) {
            (Some("round-1"), Some(name), _) => ask(InputRequired::new()
                .elicit("step2", "Favourite colour?", color_form())
                .with_state(format!("round-2:{name}"))),
            (Some(s), _, Some(color)) if s.starts_with("round-2:") => {
                Ok(ToolOutput::text(format!("{} likes {color}", &s["round-2:".len()..])))
            }
            _ => ask(InputRequired::new().elicit("step1", "Name?", name_form()).with_state("round-1")),
        },
        "everything" if call.context.retry_input().is_some() => ToolOutput::json(&json!({
            "keys": input.responses.keys().collect::<Vec<_>>(),
            "name": field("user_name", "name"),
            "model": input.sampling("capital").map(|s| s.model.clone()),
            "roots": input.roots("client_roots").map(|r| r.roots.len()),
            "state": state,
        })),
        "everything" => ask(InputRequired::new()
            .elicit("user_name", "What is your name?", name_form())
            .request("capital", question())
            .list_roots("client_roots")
            .with_state("all")),
        "forever" => {
            let round = input.responses.keys().next().map_or(0, |k| k[1..].parse::<usize>().unwrap_or(0) + 1);
            ask(InputRequired::new().elicit(format!("q{round}"), "Again?", name_form()))
        }
        "state_only" if state.as_deref() == Some("busy") => Ok(ToolOutput::text("resumed")),
        "state_only" => ask(InputRequired::new().with_state("busy")),
        "nothing" => ask(InputRequired::new()),
        _ => Err(ToolError::new("not in fixture")),
    }
}

async fn read(
    request: ReadResource,
) -> Result<Vec<mcp_kernel_router::wire::types::ResourceContents>, ReaderError> {
    let input = request.context.retry_input();
    match input.and_then(|i| i.accepted("pin")).and_then(|c| c.get("pin")).and_then(Value::as_str) {
        Some(pin) => Ok(vec![TextResourceContents::new(&request.uri, format!("unlocked with {pin}")).into()]),
        None => Err(ReaderError::input_required(InputRequired::new().elicit(
            "pin",
            "PIN?",
            json!({"type": "object", "properties": {"pin": {"type": "string"}}}),
        ))),
    }
}

async fn prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let input = request.context.retry_input();
    match input.and_then(|i| i.accepted("ctx")).and_then(|c| c.get("context")).and_then(Value::as_str) {
        Some(context) => Ok(PromptOutput {
            description: None,
            messages: vec![PromptMessage::new(Role::User, ContentBlock::text(format!("About {context}")))],
        }),
        None => Err(ReaderError::input_required(InputRequired::new().elicit(
            "ctx",
            "Which context?",
            json!({"type": "object", "properties": {"context": {"type": "string"}}}),
        ))),
    }
}

fn server() -> Server {
    Server::builder(catalog()).dispatch(dispatch).resource_reader(read).prompt_reader(prompt).build().unwrap()
}

fn sealing() -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read)
        .prompt_reader(prompt)
        .request_state_sealer(HmacSealer::new(&[7; 32]).unwrap())
        .request_state_clock(|| std::time::UNIX_EPOCH + Duration::from_secs(1_000_000))
        .build()
        .unwrap()
}

/// Sends `message` with `channel` attached; every request the channel was sent is checked against the
/// official 2025-11-25 schema, and a legacy answer against its result's.
async fn send(server: &Server, channel: &Arc<Scripted>, message: Value) -> Value {
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let modern = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN;
    let inbound = Inbound::new().client(channel.shared());
    let response = server.handle_inbound(message, inbound).await.response.map(|r| r.to_value());
    let response = response.unwrap_or(Value::Null);
    for (index, (sent, params)) in channel.sent.lock().unwrap().iter().enumerate() {
        let definition = match sent.as_str() {
            "elicitation/create" => "ElicitRequest",
            "sampling/createMessage" => "CreateMessageRequest",
            "roots/list" => "ListRootsRequest",
            other => panic!("the bridge sent {other}"),
        };
        let request = json!({"jsonrpc": "2.0", "id": format!("s-{index}"), "method": sent, "params": params});
        assert_valid(LEGACY, definition, &request);
    }
    if !modern {
        let result = match method.as_str() {
            "resources/read" => "ReadResourceResult",
            "prompts/get" => "GetPromptResult",
            _ => "CallToolResult",
        };
        assert_response(LEGACY, result, &response);
    }
    response
}

fn call(id: i64, tool: &str) -> Value {
    bare(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

fn accept(content: Value) -> Reply {
    Reply::Result(json!({"action": "accept", "content": content}))
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {response}"))
}

#[tokio::test]
async fn a_legacy_call_asks_the_client_and_gets_the_tools_final_answer() {
    let channel = Scripted::always(accept(json!({"name": "Ada"})));
    let response = send(&server(), &channel, call(1, "greet")).await;
    assert_eq!(text(&response), "Hello, Ada!", "{response}");
    assert_eq!(channel.methods(), ["elicitation/create"]);
    let params = &channel.params()[0];
    assert_eq!(params["message"], "What is your name?");
    assert_eq!(params["requestedSchema"], name_form());
    assert!(response["result"].get("resultType").is_none(), "a legacy answer is never decorated");
    // Declared 2025-11-25 rather than bare: the same.
    let channel = Scripted::always(accept(json!({"name": "Bo"})));
    let declared = legacy(2, "tools/call", json!({"name": "greet"}));
    assert_eq!(text(&send(&server(), &channel, declared).await), "Hello, Bo!");
}

#[tokio::test]
async fn two_rounds_carry_the_hosts_state_in_memory_without_a_sealer() {
    let channel = Scripted::new(Some(json!({"elicitation": {}})), |_, params, _| {
        match params["requestedSchema"]["properties"].get("color") {
            Some(_) => accept(json!({"color": "blue"})),
            None => accept(json!({"name": "Ada"})),
        }
    });
    let response = send(&server(), &channel, call(1, "two_step")).await;
    assert_eq!(text(&response), "Ada likes blue", "{response}");
    assert_eq!(channel.params()[0]["message"], "Name?");
    assert_eq!(channel.params()[1]["message"], "Favourite colour?");
}

#[tokio::test]
async fn a_server_with_a_sealer_bridges_legacy_requests_the_same_way() {
    let channel = Scripted::always(accept(json!({"name": "Ada", "color": "red"})));
    let response = send(&sealing(), &channel, call(1, "two_step")).await;
    assert_eq!(text(&response), "Ada likes red", "{response}");
    assert_eq!(channel.methods().len(), 2);
}

#[tokio::test]
async fn a_state_only_ask_is_a_round_with_no_question() {
    let channel = Scripted::always(Reply::Never);
    let response = send(&server(), &channel, call(1, "state_only")).await;
    assert_eq!(text(&response), "resumed");
    assert!(channel.methods().is_empty());
    let nothing = send(&server(), &channel, call(2, "nothing")).await;
    assert_eq!(code(&nothing), -32603, "asking for nothing with no state is a host fault");
}

#[tokio::test]
async fn the_three_kinds_of_request_go_out_together_and_come_back_typed() {
    let channel = Scripted::new(Some(every_capability()), |method, _, _| match method {
        "elicitation/create" => accept(json!({"name": "Ada"})),
        "sampling/createMessage" => Reply::Result(json!({
            "role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m-1",
            "_meta": {"x": 1}
        })),
        _ => Reply::Result(json!({"roots": [{"uri": "file:///home/ada", "name": "home"}]})),
    });
    let response = send(&server(), &channel, call(1, "everything")).await;
    let expected = json!({"keys": ["capital", "client_roots", "user_name"], "name": "Ada", "model": "m-1",
                          "roots": 1, "state": "all"});
    assert_eq!(response["result"]["structuredContent"], expected, "{response}");
    let mut methods = channel.methods();
    methods.sort();
    assert_eq!(methods, ["elicitation/create", "roots/list", "sampling/createMessage"]);
    assert_eq!(channel.alive.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn resources_and_prompts_that_ask_are_bridged_too() {
    let channel = Scripted::new(Some(json!({"elicitation": {}})), |_, params, _| {
        match params["requestedSchema"]["properties"].get("pin") {
            Some(_) => accept(json!({"pin": "1234"})),
            None => accept(json!({"context": "Rust"})),
        }
    });
    let read = bare(1, "resources/read", json!({"uri": "test://pin"}));
    let response = send(&server(), &channel, read).await;
    assert_eq!(response["result"]["contents"][0]["text"], "unlocked with 1234", "{response}");
    let get = bare(2, "prompts/get", json!({"name": "ctx", "arguments": {}}));
    let response = send(&server(), &channel, get).await;
    assert_eq!(response["result"]["messages"][0]["content"]["text"], "About Rust", "{response}");
}

#[tokio::test]
async fn a_client_that_did_not_declare_the_capability_gets_32021_and_is_never_asked() {
    for declared in
        [None, Some(json!({})), Some(json!({"sampling": {}})), Some(json!({"elicitation": {"url": {}}}))]
    {
        let channel = Scripted::new(declared.clone(), |_, _, _| Reply::Never);
        let response = send(&server(), &channel, call(1, "greet")).await;
        assert_eq!(code(&response), -32021, "{declared:?}: {response}");
        assert_eq!(response["error"]["data"]["requiredCapabilities"], json!({"elicitation": {"form": {}}}));
        assert!(channel.methods().is_empty(), "{declared:?}");
    }
}

#[tokio::test]
async fn requests_the_client_cannot_take_are_left_out_as_for_a_modern_client() {
    let channel = Scripted::new(Some(json!({"elicitation": {}})), |_, _, _| accept(json!({"name": "Ada"})));
    let response = send(&server(), &channel, call(1, "everything")).await;
    assert_eq!(response["result"]["structuredContent"]["keys"], json!(["user_name"]), "{response}");
    assert_eq!(channel.methods(), ["elicitation/create"]);
}

#[tokio::test]
async fn each_client_fault_is_a_clear_error_on_the_original_request() {
    let refused = ErrorObject::new(-32601, "secret-words-of-the-client").with_data(json!({"secret": 1}));
    let cases = [
        (ClientFault::Refused(refused), -32000, Some("refused")),
        (ClientFault::TimedOut, -32000, Some("timedOut")),
        (ClientFault::Closed, -32000, Some("closed")),
        (ClientFault::Busy, -32000, Some("busy")),
        (ClientFault::TooLarge, -32000, Some("tooLarge")),
        (ClientFault::Unavailable, -32603, None),
    ];
    for (fault, expected, name) in cases {
        let (logs, _guard) = capture_logs();
        let channel = Scripted::always(Reply::Fault(fault.clone()));
        let response = send(&server(), &channel, call(1, "greet")).await;
        assert_eq!(code(&response), expected, "{fault:?}: {response}");
        match name {
            Some(name) => assert_eq!(response["error"]["data"], json!({"fault": name})),
            None => assert_eq!(response["error"]["data"], json!({"retryAfter": 1})),
        }
        assert!(!response.to_string().contains("secret"), "{response}");
        assert!(!logs.text().contains("secret"), "{}", logs.text());
    }
}

#[tokio::test]
async fn one_failed_request_drops_the_others_of_its_round() {
    let channel = Scripted::new(Some(every_capability()), |method, _, _| match method {
        "sampling/createMessage" => Reply::Fault(ClientFault::TimedOut),
        _ => Reply::Never,
    });
    let response = send(&server(), &channel, call(1, "everything")).await;
    assert_eq!(response["error"]["data"], json!({"fault": "timedOut"}), "{response}");
    assert_eq!(channel.alive.load(Ordering::SeqCst), 0, "the unanswered requests were dropped");
}

#[tokio::test]
async fn a_host_that_keeps_asking_is_stopped_after_the_round_bound() {
    let (logs, _guard) = capture_logs();
    let channel = Scripted::always(accept(json!({"name": "Ada"})));
    let response = send(&server(), &channel, call(1, "forever")).await;
    assert_eq!(code(&response), -32603, "{response}");
    assert_eq!(channel.methods().len(), MAX_BRIDGE_ROUNDS);
    assert!(logs.text().contains("past the bridge's bound"), "{}", logs.text());
}

#[tokio::test]
async fn a_cancelled_request_drops_the_channels_futures() {
    let channel = Scripted::always(Reply::Never);
    let server = server();
    let inbound = Inbound::new().client(channel.shared());
    let handling = server.handle_inbound(call(1, "everything"), inbound);
    let waited = tokio::time::timeout(Duration::from_millis(100), handling).await;
    assert!(waited.is_err(), "a client that never answers holds the request");
    assert_eq!(channel.methods().len(), 3, "the three were sent at once");
    assert_eq!(channel.alive.load(Ordering::SeqCst), 0, "dropping the request dropped them");
}

#[tokio::test]
async fn modern_requests_never_use_the_channel_and_answer_byte_for_byte_as_without_it() {
    let server = sealing();
    let channel = Scripted::always(accept(json!({"name": "Ada"})));
    let mut request = modern(1, "tools/call", json!({"name": "greet"}));
    request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let with = send(&server, &channel, request.clone()).await;
    let without = server.handle(request).await.response.map(|r| r.to_value());
    assert_eq!(Some(&with), without.as_ref());
    assert_eq!(with["result"]["resultType"], "input_required");
    assert!(channel.methods().is_empty());
    // Without a sealer a modern ask is still the host fault it was.
    let mut request = modern(2, "tools/call", json!({"name": "greet"}));
    request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    assert_eq!(code(&send(&self::server(), &channel, request).await), -32603);
    assert!(channel.methods().is_empty());
}

#[tokio::test]
async fn a_legacy_request_without_a_channel_is_still_a_host_fault() {
    let response = server().handle(call(1, "greet")).await.response.map(|r| r.to_value()).unwrap();
    assert_eq!(code(&response), -32603);
}

#[tokio::test]
async fn a_legacy_initialize_remembers_the_clients_capabilities_in_its_session() {
    let server = server();
    let (session, _notifications) = LegacySession::new();
    assert_eq!(session.client_capabilities(), None);
    let initialize = |capabilities: Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": capabilities,
            "clientInfo": {"name": "c", "version": "1"}}})
    };
    let inbound = || Inbound::new().session(&session);
    server.handle_inbound(initialize(json!("not an object")), inbound()).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    server.handle_inbound(initialized, inbound()).await;
    assert_eq!(session.client_capabilities(), None, "only an object is remembered");
    server.handle_inbound(initialize(json!({"elicitation": {}})), inbound()).await;
    assert_eq!(session.client_capabilities().as_deref(), Some(&json!({"elicitation": {}})));
    server.handle_inbound(initialize(json!({"sampling": {}})), inbound()).await;
    assert_eq!(
        session.client_capabilities().as_deref(),
        Some(&json!({"elicitation": {}})),
        "the first stays"
    );
}

#[tokio::test]
async fn a_legacy_session_reports_no_capabilities_before_notifications_initialized() {
    let server = server();
    let (session, _notifications) = LegacySession::new();
    let inbound = || Inbound::new().session(&session);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c", "version": "1"}}});
    server.handle_inbound(initialize, inbound()).await;
    assert_eq!(session.client_capabilities(), None, "nothing may be asked before initialized");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    server.handle_inbound(initialized, inbound()).await;
    assert_eq!(session.client_capabilities().as_deref(), Some(&json!({"elicitation": {}})));
}
