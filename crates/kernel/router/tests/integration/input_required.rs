//! Multi-round-trip requests (MCP S-48 to S-50): "input required" on `tools/call`, `resources/read` and
//! `prompts/get` only, a sealed and bound `requestState`, checked `inputResponses`, undeclared
//! capabilities left out; without a sealer every answer is byte-for-byte what it was before. Every
//! answer is checked against the official schema of its revision.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use crate::support::official::assert_response;
use crate::support::{LEGACY, MODERN, code};
use mcp_kernel_router::completion::CompletionRequest;
use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec};
use mcp_kernel_router::sealing::{HmacSealer, StateSealer};
use mcp_kernel_router::wire::types::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitUrlParams, InputRequest, PromptMessage,
    ResourceContents, Role, SamplingMessage, TextResourceContents,
};
use mcp_kernel_router::{
    InputRequired, Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};
use serde_json::{Value, json};

const TTL: Duration = Duration::from_secs(60);
const ALL: &str = r#"{"elicitation":{},"sampling":{},"roots":{}}"#;

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn question() -> InputRequest {
    let message = SamplingMessage::text(Role::User, "What is the capital of France?");
    InputRequest::Sampling(CreateMessageRequestParams::new(vec![message], 100))
}

fn catalog() -> Listing {
    let tool = |name: &str| ToolSpec::new(name, Mode::ReadOnly);
    let with_state_schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "string"}}});
    let names = [
        "plain",
        "greet",
        "two_step",
        "everything",
        "elicit_only",
        "url_only",
        "nothing",
        "state_only",
        "huge_state",
    ];
    let mut tools: Vec<ToolSpec> = names.into_iter().chain(["bad_form"]).map(tool).collect();
    tools.push(tool("with_state").input_schema(with_state_schema));
    Listing {
        tools,
        resources: vec![ResourceSpec::new("test://pin", "pin").into()],
        prompts: vec![PromptSpec::new("ctx").argument(PromptArgument::new("topic"))],
    }
}

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let input = call.context.retry_input().cloned().unwrap_or_default();
    let accepted = |key: &str, field: &str| {
        input.accepted(key).and_then(|c| c.get(field)).and_then(Value::as_str).map(str::to_owned)
    };
    let state = input.state.as_deref().map(|s| String::from_utf8_lossy(s).into_owned());
    let ask = |required: InputRequired| Ok(ToolOutput::input_required(required));
    match &*call.name {
        "plain" => Ok(ToolOutput::text("plain")),
        "greet" => match accepted("user_name", "name") {
            Some(name) => Ok(ToolOutput::text(format!("Hello, {name}!"))),
            None => ask(InputRequired::new().elicit("user_name", "What is your name?", name_form())),
        },
        "two_step" => match (state.as_deref(), accepted("step1", "name"), accepted("step2", "color")) {
            (Some("round-1"), Some(name), _) => ask(InputRequired::new()
                .elicit(
                    "step2",
                    "Favourite colour?",
                    json!({"type": "object", "properties": {"color": {"type": "string"}}}),
                )
                .with_state(format!("round-2:{name}"))),
            (Some(s), _, Some(color)) if s.starts_with("round-2:") => {
                Ok(ToolOutput::text(format!("{} likes {color}", &s["round-2:".len()..])))
            }
            _ => ask(InputRequired::new().elicit("step1", "Name?", name_form()).with_state("round-1")),
        },
        "with_state" if call.context.retry_input().is_none() => ask(InputRequired::new()
            .elicit("confirm", "Sure?", json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}))
            .with_state(format!("n={}", call.arguments.get("n").unwrap_or(&Value::Null)))),
        "with_state" => ToolOutput::json(&json!({
            "state": state,
            "keys": input.responses.keys().collect::<Vec<_>>(),
            "ok": input.accepted("confirm").and_then(|c| c.get("ok")),
        })),
        "everything" if input.responses.len() == 3 => Ok(ToolOutput::text("all three answered")),
        "everything" => ask(InputRequired::new()
            .elicit("user_name", "What is your name?", name_form())
            .request("capital", question())
            .list_roots("client_roots")
            .with_state("all")),
        "elicit_only" => ask(InputRequired::new().elicit("user_name", "Name?", name_form())),
        "url_only" => ask(InputRequired::new().request(
            "consent",
            InputRequest::Elicitation(ElicitRequestParams::Url(ElicitUrlParams::new(
                "Sign in",
                "https://x.test/a",
            ))),
        )),
        "nothing" => ask(InputRequired::new()),
        "state_only" if call.context.retry_input().is_some() => Ok(ToolOutput::text("resumed")),
        "state_only" => ask(InputRequired::new().with_state("busy")),
        "huge_state" => {
            ask(InputRequired::new().elicit("user_name", "Name?", name_form()).with_state(vec![b'x'; 40_000]))
        }
        "bad_form" => ask(InputRequired::new().elicit("x", "?", json!({"type": "string"}))),
        _ => Err(ToolError::new("not in fixture")),
    }
}

async fn read(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let pin =
        request.context.retry_input().and_then(|i| i.accepted("pin")).and_then(|c| c.get("pin")).cloned();
    match pin {
        Some(_) => Ok(vec![TextResourceContents::new(&request.uri, "unlocked").into()]),
        None => Err(ReaderError::input_required(InputRequired::new().elicit(
            "pin",
            "PIN?",
            json!({"type": "object", "properties": {"pin": {"type": "string"}}}),
        ))),
    }
}

async fn prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let accepted = request.context.retry_input().and_then(|i| i.accepted("user_context"));
    match accepted.and_then(|c| c.get("context")).and_then(Value::as_str) {
        Some(context) => Ok(PromptOutput {
            description: None,
            messages: vec![PromptMessage::new(
                Role::User,
                mcp_kernel_router::wire::types::ContentBlock::text(format!("Prompt with context: {context}")),
            )],
        }),
        None => Err(ReaderError::input_required(InputRequired::new().elicit(
            "user_context",
            "What context should the prompt use?",
            json!({"type": "object", "properties": {"context": {"type": "string"}}}),
        ))),
    }
}

/// A sealing server whose clock reads `now` (milliseconds since the epoch).
fn sealing(now: &Arc<AtomicU64>) -> Server {
    let now = Arc::clone(now);
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read)
        .prompt_reader(prompt)
        .completer(|_: CompletionRequest| async {
            Err(ReaderError::input_required(InputRequired::new().list_roots("r")))
        })
        .request_state_sealer(HmacSealer::new(&[7; 32]).unwrap())
        .request_state_ttl(TTL)
        .request_state_clock(move || UNIX_EPOCH + Duration::from_millis(now.load(Ordering::SeqCst)))
        .build()
        .unwrap()
}

fn server() -> Server {
    sealing(&Arc::new(AtomicU64::new(1_000_000)))
}

fn unsealed() -> Server {
    Server::builder(catalog()).dispatch(dispatch).resource_reader(read).prompt_reader(prompt).build().unwrap()
}

fn request(id: i64, method: &str, mut params: Value, caps: &str) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(caps).unwrap()
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: i64, params: Value) -> Value {
    request(id, "tools/call", params, ALL)
}

/// Sends a message and checks the answer against the official schema of its revision.
async fn send(server: &Server, message: Value) -> Value {
    let legacy = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] != MODERN;
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let response = support::send(server, message).await;
    let definition = match (response["result"]["resultType"].as_str(), method.as_str()) {
        (Some("input_required"), _) => "InputRequiredResult",
        (_, "tools/call") => "CallToolResult",
        (_, "resources/read") => "ReadResourceResult",
        (_, "prompts/get") => "GetPromptResult",
        (_, "tools/list") => "ListToolsResult",
        (_, "prompts/list") => "ListPromptsResult",
        (_, "resources/list") => "ListResourcesResult",
        (_, "resources/templates/list") => "ListResourceTemplatesResult",
        (_, other) => panic!("no result definition for {other}"),
    };
    assert_response(if legacy { LEGACY } else { MODERN }, definition, &response);
    response
}

fn state(response: &Value) -> String {
    assert_eq!(response["result"]["resultType"], "input_required", "{response}");
    response["result"]["requestState"].as_str().expect("a string requestState").to_owned()
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {response}"))
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn r1_asks_for_input_and_r2_with_the_responses_completes() {
    let server = server();
    let r1 = send(&server, call(1, json!({"name": "greet", "arguments": {}}))).await;
    let ask = &r1["result"]["inputRequests"]["user_name"];
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["requestedSchema"], name_form());
    let retry = json!({"name": "greet", "arguments": {}, "requestState": state(&r1),
        "inputResponses": {"user_name": accept(json!({"name": "Alice"}))}});
    let r2 = send(&server, call(2, retry)).await;
    assert_eq!(r2["result"]["resultType"], "complete");
    assert_eq!(text(&r2), "Hello, Alice!");
}

#[tokio::test]
async fn the_hosts_state_comes_back_on_the_retry_with_only_the_keys_it_asked_for() {
    let server = server();
    let r1 = send(&server, call(1, json!({"name": "with_state", "arguments": {"n": 1}}))).await;
    let sealed = state(&r1);
    assert!(!sealed.contains("n=1"), "the state is sealed as bytes inside the envelope");
    let retry = json!({"name": "with_state", "arguments": {"n": 1}, "requestState": sealed,
        "inputResponses": {"confirm": accept(json!({"ok": true})), "unknown_extra": 12345}});
    let r2 = send(&server, call(2, retry)).await;
    assert_eq!(r2["result"]["structuredContent"], json!({"state": "n=1", "keys": ["confirm"], "ok": true}));
}

#[tokio::test]
async fn each_round_of_a_multi_round_request_carries_a_new_state() {
    let server = server();
    let r1 = send(&server, call(1, json!({"name": "two_step"}))).await;
    let s1 = state(&r1);
    let r2 = send(
        &server,
        call(
            2,
            json!({"name": "two_step", "requestState": s1,
        "inputResponses": {"step1": accept(json!({"name": "Alice"}))}}),
        ),
    )
    .await;
    let s2 = state(&r2);
    assert_ne!(s1, s2);
    assert!(r2["result"]["inputRequests"]["step2"].is_object());
    let r3 = send(
        &server,
        call(
            3,
            json!({"name": "two_step", "requestState": s2,
        "inputResponses": {"step2": accept(json!({"color": "blue"}))}}),
        ),
    )
    .await;
    assert_eq!(text(&r3), "Alice likes blue");
}

#[tokio::test]
async fn a_tampered_or_foreign_state_is_refused_without_echoing_it() {
    let server = server();
    let sealed = state(&send(&server, call(1, json!({"name": "with_state", "arguments": {"n": 1}}))).await);
    let foreign = HmacSealer::new(&[8; 32]).unwrap().seal(b"{}");
    let mut flipped = sealed.clone().into_bytes();
    flipped[3] = if flipped[3] == b'A' { b'B' } else { b'A' };
    for bad in
        [format!("{sealed}-TAMPERED"), String::from_utf8(flipped).unwrap(), foreign, "x".repeat(70_000)]
    {
        let retry = json!({"name": "with_state", "arguments": {"n": 1}, "requestState": bad,
            "inputResponses": {"confirm": accept(json!({"ok": true}))}});
        let response = send(&server, call(2, retry)).await;
        assert_eq!(code(&response), -32602, "{response}");
        assert!(!response.to_string().contains(&sealed[..20]), "{response}");
        assert!(response["error"].get("data").is_none());
    }
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let now = Arc::new(AtomicU64::new(5_000_000));
    let server = sealing(&now);
    let sealed = state(&send(&server, call(1, json!({"name": "with_state", "arguments": {"n": 1}}))).await);
    let retry = json!({"name": "with_state", "arguments": {"n": 1}, "requestState": sealed});
    now.fetch_add(TTL.as_millis() as u64, Ordering::SeqCst);
    assert_eq!(send(&server, call(2, retry.clone())).await["result"]["structuredContent"]["state"], "n=1");
    now.fetch_add(1, Ordering::SeqCst);
    let response = send(&server, call(3, retry)).await;
    assert_eq!(code(&response), -32602);
    assert!(response["error"]["message"].as_str().unwrap().contains("expired"));
}

#[tokio::test]
async fn a_state_too_large_to_open_again_is_a_host_fault_not_sent() {
    // HmacSealer opens at most 64 KiB; 40,000 bytes seal to more than that.
    let response = send(&server(), call(1, json!({"name": "huge_state"}))).await;
    assert_eq!(code(&response), -32603, "{response}");
}

#[tokio::test]
async fn a_state_sealed_again_never_outlives_the_state_it_came_from() {
    let now = Arc::new(AtomicU64::new(9_000_000));
    let server = sealing(&now);
    let s1 = state(&send(&server, call(1, json!({"name": "two_step"}))).await);
    // Just before the first state expires, the client answers and the host asks again with new state.
    now.fetch_add(TTL.as_millis() as u64 - 10, Ordering::SeqCst);
    let step1 = json!({"name": "two_step", "requestState": s1,
        "inputResponses": {"step1": accept(json!({"name": "Alice"}))}});
    let s2 = state(&send(&server, call(2, step1)).await);
    // The second state expires with the first, not a full TTL later.
    now.fetch_add(11, Ordering::SeqCst);
    let step2 = json!({"name": "two_step", "requestState": s2,
        "inputResponses": {"step2": accept(json!({"color": "blue"}))}});
    let response = send(&server, call(3, step2)).await;
    assert_eq!(code(&response), -32602, "{response}");
    assert!(response["error"]["message"].as_str().unwrap().contains("expired"));
}

#[tokio::test]
async fn a_state_is_bound_to_its_method_tool_and_parameters() {
    let server = server();
    let r1 = call(1, json!({"name": "with_state", "arguments": {"n": 1, "m": "x"}}));
    let sealed = state(&send(&server, r1).await);
    let reordered =
        call(2, json!({"name": "with_state", "arguments": {"m": "x", "n": 1}, "requestState": sealed}));
    assert_eq!(send(&server, reordered).await["result"]["structuredContent"]["state"], "n=1");
    for other in [
        call(3, json!({"name": "with_state", "arguments": {"n": 2, "m": "x"}, "requestState": sealed})),
        call(4, json!({"name": "with_state", "arguments": {"n": 1}, "requestState": sealed})),
        call(5, json!({"name": "greet", "arguments": {"n": 1, "m": "x"}, "requestState": sealed})),
        request(6, "prompts/get", json!({"name": "ctx", "requestState": sealed}), ALL),
        request(7, "resources/read", json!({"uri": "test://pin", "requestState": sealed}), ALL),
    ] {
        let response = send(&server, other).await;
        assert_eq!(code(&response), -32602, "{response}");
    }
}

#[tokio::test]
async fn input_requests_the_client_did_not_declare_are_left_out() {
    let server = server();
    let r1 =
        send(&server, request(1, "tools/call", json!({"name": "everything"}), r#"{"sampling":{}}"#)).await;
    let asked: Vec<&String> = r1["result"]["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(asked, ["capital"]);
    let all = send(&server, call(2, json!({"name": "everything"}))).await;
    let methods: Vec<&Value> =
        all["result"]["inputRequests"].as_object().unwrap().values().map(|r| &r["method"]).collect();
    assert_eq!(methods.len(), 3);
    assert!(all["result"]["inputRequests"]["client_roots"] == json!({"method": "roots/list", "params": {}}));
}

#[tokio::test]
async fn a_request_left_with_nothing_it_may_ask_is_minus_32021() {
    let server = server();
    for (tool, caps, required) in [
        ("elicit_only", "{}", json!({"elicitation": {"form": {}}})),
        ("elicit_only", r#"{"elicitation":{"url":{}}}"#, json!({"elicitation": {"form": {}}})),
        ("url_only", r#"{"elicitation":{}}"#, json!({"elicitation": {"url": {}}})),
        ("everything", "{}", json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}})),
    ] {
        let response = send(&server, request(1, "tools/call", json!({"name": tool}), caps)).await;
        assert_eq!(code(&response), -32021, "{response}");
        assert_eq!(response["error"]["data"]["requiredCapabilities"], required);
    }
    let url =
        send(&server, request(2, "tools/call", json!({"name": "url_only"}), r#"{"elicitation":{"url":{}}}"#))
            .await;
    assert_eq!(url["result"]["inputRequests"]["consent"]["params"]["mode"], "url");
}

#[tokio::test]
async fn input_responses_are_checked_against_the_request_they_answer() {
    let server = server();
    let sealed = state(&send(&server, call(1, json!({"name": "with_state", "arguments": {"n": 1}}))).await);
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
    for bad in [json!(12345), sampled.clone(), json!({"action": "accept", "content": {"ok": {"deep": 1}}})] {
        let retry = json!({"name": "with_state", "arguments": {"n": 1}, "requestState": sealed,
            "inputResponses": {"confirm": bad}});
        assert_eq!(code(&send(&server, call(2, retry)).await), -32602);
    }
    let stateless_bad = json!({"name": "greet", "inputResponses": {"user_name": 12345}});
    assert_eq!(code(&send(&server, call(3, stateless_bad)).await), -32602);
    let extra = json!({"name": "greet", "inputResponses": {"user_name": accept(json!({"name": "A"})),
        "unknown_extra_key": accept(json!({"foo": "bar"})), "another": sampled}});
    assert_eq!(text(&send(&server, call(4, extra)).await), "Hello, A!");
    let wrong_key = json!({"name": "greet", "inputResponses": {"wrong_key": accept(json!({"data": "x"}))}});
    assert!(send(&server, call(5, wrong_key)).await["result"]["inputRequests"]["user_name"].is_object());
}

#[tokio::test]
async fn null_input_responses_or_a_non_string_state_are_invalid_params() {
    let server = server();
    for params in [
        json!({"name": "greet", "inputResponses": null}),
        json!({"name": "greet", "inputResponses": [1]}),
        json!({"name": "greet", "requestState": 5}),
        json!({"name": "greet", "requestState": null}),
    ] {
        assert_eq!(code(&send(&server, call(1, params.clone())).await), -32602, "{params}");
    }
}

#[tokio::test]
async fn a_retried_read_is_never_cacheable_whatever_the_host_hints() {
    let public = mcp_kernel_router::options::CacheHints {
        ttl_ms: 3_600_000,
        scope: mcp_kernel_router::wire::types::CacheScope::Public,
    };
    let server = Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read)
        .prompt_reader(prompt)
        .resources_cache(public)
        .request_state_sealer(HmacSealer::new(&[7; 32]).unwrap())
        .build()
        .unwrap();
    let r1 = send(&server, request(1, "resources/read", json!({"uri": "test://pin"}), ALL)).await;
    let retry = json!({"uri": "test://pin", "requestState": state(&r1), "inputResponses": {"pin": accept(json!({"pin": "1234"}))}});
    let r2 = send(&server, request(2, "resources/read", retry, ALL)).await;
    assert_eq!(r2["result"]["contents"][0]["text"], "unlocked");
    assert_eq!((&r2["result"]["ttlMs"], &r2["result"]["cacheScope"]), (&json!(0), &json!("private")));
}

#[tokio::test]
async fn resources_read_and_prompts_get_take_part_in_round_trips() {
    let server = server();
    let r1 = send(&server, request(1, "resources/read", json!({"uri": "test://pin"}), ALL)).await;
    let retry = json!({"uri": "test://pin", "requestState": state(&r1), "inputResponses": {"pin": accept(json!({"pin": "1234"}))}});
    let r2 = send(&server, request(2, "resources/read", retry, ALL)).await;
    assert_eq!(r2["result"]["contents"][0]["text"], "unlocked");
    let p1 = send(&server, request(3, "prompts/get", json!({"name": "ctx"}), ALL)).await;
    let retry = json!({"name": "ctx", "requestState": state(&p1), "inputResponses": {"user_context": accept(json!({"context": "c"}))}});
    let p2 = send(&server, request(4, "prompts/get", retry, ALL)).await;
    assert_eq!(p2["result"]["messages"][0]["content"]["text"], "Prompt with context: c");
}

#[tokio::test]
async fn no_other_method_answers_input_required() {
    let server = server();
    for method in ["tools/list", "prompts/list", "resources/list", "resources/templates/list"] {
        let params = json!({"inputResponses": null, "requestState": "x"});
        let response = send(&server, request(1, method, params, ALL)).await;
        assert_eq!(response["result"]["resultType"], "complete", "{method}");
    }
    // The completer asks for input: completion/complete cannot carry it.
    let complete =
        json!({"ref": {"type": "ref/prompt", "name": "ctx"}, "argument": {"name": "topic", "value": ""}});
    let response = support::send(&server, request(2, "completion/complete", complete, ALL)).await;
    assert_eq!(code(&response), -32603);
}

#[tokio::test]
async fn a_legacy_request_is_never_answered_input_required_and_its_fields_are_ignored() {
    let server = server();
    let legacy = |id: i64, mut params: Value| {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": LEGACY});
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    assert_eq!(code(&send(&server, legacy(1, json!({"name": "greet"}))).await), -32603);
    let bare = json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "ctx"}});
    assert_eq!(code(&support::send(&server, bare).await), -32603);
    let plain = send(&server, legacy(3, json!({"name": "plain"}))).await;
    let noisy =
        send(&server, legacy(3, json!({"name": "plain", "inputResponses": 5, "requestState": 7}))).await;
    assert_eq!(plain, noisy);
}

#[tokio::test]
async fn without_a_sealer_round_trip_fields_are_ignored_byte_for_byte() {
    let server = unsealed();
    let noise = [("inputResponses", json!({"k": {"action": "accept"}})), ("requestState", json!("opaque"))];
    for (method, params) in [
        ("tools/call", json!({"name": "plain", "arguments": {}})),
        ("tools/call", json!({"name": "with_state", "arguments": {"n": 1}})),
        ("resources/read", json!({"uri": "test://pin"})),
        ("prompts/get", json!({"name": "ctx"})),
    ] {
        let mut noisy = params.clone();
        for (key, value) in &noise {
            noisy[*key] = value.clone();
        }
        let quiet = support::send(&server, request(1, method, params, ALL)).await;
        assert_eq!(quiet, support::send(&server, request(1, method, noisy.clone(), ALL)).await);
        noisy["inputResponses"] = Value::Null;
        assert_eq!(quiet, support::send(&server, request(1, method, noisy, ALL)).await);
    }
    assert_eq!(code(&send(&server, call(1, json!({"name": "greet"}))).await), -32603);
}

#[tokio::test]
async fn a_host_that_asks_for_nothing_or_a_malformed_form_is_an_internal_error() {
    let server = server();
    for tool in ["nothing", "bad_form"] {
        assert_eq!(code(&send(&server, call(1, json!({"name": tool}))).await), -32603, "{tool}");
    }
    let r1 = send(&server, call(2, json!({"name": "state_only"}))).await;
    assert!(r1["result"].get("inputRequests").is_none());
    let r2 = send(&server, call(3, json!({"name": "state_only", "requestState": state(&r1)}))).await;
    assert_eq!(text(&r2), "resumed");
}

struct Panicking;

impl StateSealer for Panicking {
    fn seal(&self, _: &[u8]) -> String {
        panic!("sealer bug")
    }
    fn open(&self, _: &str) -> Option<Vec<u8>> {
        panic!("sealer bug")
    }
}

#[tokio::test]
async fn a_panicking_sealer_is_an_internal_error_and_serving_goes_on() {
    let server = Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read)
        .prompt_reader(prompt)
        .request_state_sealer(Panicking)
        .build()
        .unwrap();
    assert_eq!(code(&send(&server, call(1, json!({"name": "greet"}))).await), -32603);
    assert_eq!(code(&send(&server, call(2, json!({"name": "plain", "requestState": "s"}))).await), -32603);
    assert_eq!(text(&send(&server, call(3, json!({"name": "plain"}))).await), "plain");
}

#[test]
fn the_default_ttl_is_ten_minutes_and_the_key_must_be_long() {
    assert_eq!(mcp_kernel_router::sealing::DEFAULT_REQUEST_STATE_TTL, Duration::from_secs(600));
    assert!(HmacSealer::new(&[0; 31]).is_err());
}
