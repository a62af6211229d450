//! What the bridge sends a `2025-11-25` client, and what it accepts back: a form the two revisions
//! agree on is sent unchanged (defaults, the enum forms, multi-select), one `2025-11-25` cannot express
//! is refused before anything is sent — the bridge agrees with the official schema on every case —, a
//! URL elicitation gets a minted `elicitationId`, sampling and roots keep their fields; and a hostile
//! answer (wrong types, missing fields, huge strings) is -32602 with a fixed message.

use std::sync::Arc;

use crate::support::channel::{Reply, Scripted, every_capability};
use crate::support::official::{assert_valid, is_valid};
use crate::support::{LEGACY, bare, code};
use mcp_kernel_router::transport::Inbound;
use mcp_kernel_router::wire::types::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitUrlParams, InputRequest, Role, SamplingMessage,
    Tool,
};
use mcp_kernel_router::{InputRequired, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

/// `form` asks with `arguments.schema`; `url`, `sample`, `sample_output` and `roots` ask what they say.
/// Each answers with what it got back.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    if let Some(input) = call.context.retry_input() {
        return ToolOutput::json(&serde_json::to_value(&input.responses).unwrap_or_default());
    }
    let ask = |key: &str, request: InputRequest| {
        Ok(ToolOutput::input_required(InputRequired::new().request(key, request)))
    };
    let sampling = |output: Option<Value>| {
        let mut params = CreateMessageRequestParams::new(vec![SamplingMessage::text(Role::User, "q")], 50);
        params.system_prompt = Some("Be brief.".into());
        params.stop_sequences = Some(vec!["END".into()]);
        let mut tool =
            Tool::new("lookup", json!({"type": "object", "properties": {"q": {"type": "string"}}}));
        tool.output_schema = output;
        params.tools = Some(vec![tool]);
        InputRequest::Sampling(params)
    };
    match &*call.name {
        "form" => {
            let schema = call.arguments.get("schema").cloned().unwrap_or(Value::Null);
            Ok(ToolOutput::input_required(InputRequired::new().elicit("f", "Fill in", schema)))
        }
        "url" => ask(
            "consent",
            InputRequest::Elicitation(ElicitRequestParams::Url(ElicitUrlParams::new(
                "Sign in",
                "https://x.test/a",
            ))),
        ),
        "sample" => ask("s", sampling(Some(json!({"type": "object"})))),
        "sample_result" => {
            // A conversation that already used the tool: its result's structuredContent as given.
            let structured = call.arguments.get("structured").cloned().unwrap_or(Value::Null);
            let messages = json!([
                {"role": "user", "content": {"type": "text", "text": "q"}},
                {"role": "assistant", "content": {"type": "tool_use", "id": "u1", "name": "lookup", "input": {}}},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "u1", "content": [],
                                              "structuredContent": structured}]}
            ]);
            let messages = serde_json::from_value(messages).map_err(|_| ToolError::new("not in fixture"))?;
            let InputRequest::Sampling(mut params) = sampling(None) else { unreachable!() };
            params.messages = messages;
            ask("s", InputRequest::Sampling(params))
        }
        "sample_output" => ask("s", sampling(Some(json!({"type": "string"})))),
        "roots" => Ok(ToolOutput::input_required(InputRequired::new().list_roots("r"))),
        _ => Err(ToolError::new("not in fixture")),
    }
}

fn server() -> Server {
    let form = ToolSpec::new("form", Mode::ReadOnly)
        .input_schema(json!({"type": "object", "properties": {"schema": {}}}));
    let sample_result = ToolSpec::new("sample_result", Mode::ReadOnly)
        .input_schema(json!({"type": "object", "properties": {"structured": {}}}));
    let mut tools = vec![form, sample_result];
    tools.extend(["url", "sample", "sample_output", "roots"].map(|name| ToolSpec::new(name, Mode::ReadOnly)));
    Server::builder(Listing { tools, ..Listing::default() }).dispatch(dispatch).build().unwrap()
}

async fn send(channel: &Arc<Scripted>, tool: &str, arguments: Value) -> Value {
    let message = bare(1, "tools/call", json!({"name": tool, "arguments": arguments}));
    let handled = server().handle_inbound(message, Inbound::new().client(channel.shared())).await;
    handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}

/// The request the channel was sent, as the client reads it.
fn request(channel: &Scripted) -> Value {
    let sent = channel.sent.lock().unwrap();
    let (method, params) = sent.first().expect("one request was sent");
    json!({"jsonrpc": "2.0", "id": "s-1", "method": method, "params": params})
}

fn forms() -> Vec<Value> {
    let form = |properties: Value| json!({"type": "object", "properties": properties});
    vec![
        // SEP-1034: defaults of every primitive type.
        form(json!({"name": {"type": "string", "default": "Ada", "minLength": 1, "maxLength": 9},
                    "age": {"type": "integer", "default": 36, "minimum": 0},
                    "ratio": {"type": "number", "default": 0.25},
                    "ok": {"type": "boolean", "default": false},
                    "mail": {"type": "string", "format": "email", "title": "Mail", "description": "d"}})),
        // SEP-1330: untitled and titled single select, the legacy enumNames, multi-select both ways.
        form(json!({"c": {"type": "string", "enum": ["r", "g"], "default": "g"}})),
        form(json!({"c": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}], "default": "r"}})),
        form(json!({"c": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]}})),
        form(json!({"c": {"type": "array", "items": {"type": "string", "enum": ["r"]}, "maxItems": 1,
                          "default": ["r"]}})),
        form(json!({"c": {"type": "array", "items": {"anyOf": [{"const": "r", "title": "Red"}]}}})),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
               "properties": {}, "required": []}),
        // A string schema leaves other members open: an odd `oneOf` beside it is still a StringSchema.
        form(json!({"e": {"type": "string", "oneOf": [{"const": 1, "title": "one"}]}})),
        // Not expressible in 2025-11-25 (nor meant to be in 2026-07-28).
        form(json!({"nested": {"type": "object", "properties": {}}})),
        form(json!({"list": {"type": "array", "items": {"type": "number"}}})),
        form(json!({"s": {"type": "string", "default": 5}})),
        form(json!({"s": {"type": "string", "format": "ipv4"}})),
        form(json!({"n": {"type": "number", "minimum": "0"}})),
        form(json!({"b": {"type": "boolean", "default": "yes"}})),
        form(json!({"m": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": "a"}})),
        form(json!({"t": {"type": "null"}})),
        form(json!({"t": true})),
        json!({"type": "object", "properties": {}, "required": "all"}),
        json!({"type": "object", "properties": {}, "$schema": 7}),
    ]
}

#[tokio::test]
async fn the_bridge_sends_exactly_the_forms_2025_11_25_accepts() {
    let mut sent_and_refused = (0, 0);
    for schema in forms() {
        let params = json!({"mode": "form", "message": "Fill in", "requestedSchema": schema.clone()});
        let expressible = is_valid(LEGACY, "ElicitRequestFormParams", &params);
        let channel = Scripted::always(Reply::Result(json!({"action": "decline"})));
        let response = send(&channel, "form", json!({"schema": schema})).await;
        if expressible {
            assert_eq!(
                response["result"]["structuredContent"],
                json!({"f": {"action": "decline"}}),
                "{schema}"
            );
            let sent = request(&channel);
            assert_eq!(sent["params"], params, "sent unchanged: {schema}");
            assert_valid(LEGACY, "ElicitRequest", &sent);
            sent_and_refused.0 += 1;
        } else {
            assert_eq!(code(&response), -32603, "{schema}: {response}");
            assert!(channel.methods().is_empty(), "nothing is sent: {schema}");
            sent_and_refused.1 += 1;
        }
    }
    assert_eq!(sent_and_refused, (8, 11), "the cases cover both sides");
}

#[tokio::test]
async fn a_url_elicitation_is_sent_with_a_minted_elicitation_id() {
    let channel = Scripted::always(Reply::Result(json!({"action": "accept"})));
    let response = send(&channel, "url", json!({})).await;
    assert_eq!(
        response["result"]["structuredContent"],
        json!({"consent": {"action": "accept"}}),
        "{response}"
    );
    let sent = request(&channel);
    assert_valid(LEGACY, "ElicitRequest", &sent);
    assert_eq!(sent["params"]["url"], "https://x.test/a");
    let id = sent["params"]["elicitationId"].as_str().expect("an elicitationId");
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    // A client that declared form elicitation only is not sent a URL.
    let form_only = Scripted::new(Some(json!({"elicitation": {}})), |_, _, _| Reply::Never);
    let response = send(&form_only, "url", json!({})).await;
    assert_eq!(response["error"]["data"]["requiredCapabilities"], json!({"elicitation": {"url": {}}}));
}

#[tokio::test]
async fn sampling_and_roots_keep_their_fields_and_results_come_back_typed() {
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m",
                        "stopReason": "endTurn"});
    let channel = Scripted::always(Reply::Result(answer.clone()));
    let response = send(&channel, "sample", json!({})).await;
    assert_eq!(response["result"]["structuredContent"]["s"], answer, "{response}");
    let sent = request(&channel);
    assert_valid(LEGACY, "CreateMessageRequest", &sent);
    assert_eq!(sent["params"]["systemPrompt"], "Be brief.");
    assert_eq!(sent["params"]["maxTokens"], 50);
    assert_eq!(sent["params"]["tools"][0]["name"], "lookup");
    // Sampling with tools needs `sampling.tools`.
    let no_tools = Scripted::new(Some(json!({"sampling": {}})), |_, _, _| Reply::Never);
    let response = send(&no_tools, "sample", json!({})).await;
    assert_eq!(response["error"]["data"]["requiredCapabilities"], json!({"sampling": {"tools": {}}}));
    // A tool's outputSchema that 2025-11-25 cannot carry: refused before sending.
    let channel = Scripted::always(Reply::Never);
    assert_eq!(code(&send(&channel, "sample_output", json!({})).await), -32603);
    assert!(channel.methods().is_empty());

    let roots = json!({"roots": [{"uri": "file:///a", "name": "a"}]});
    let channel = Scripted::always(Reply::Result(roots.clone()));
    let response = send(&channel, "roots", json!({})).await;
    assert_eq!(response["result"]["structuredContent"]["r"], roots, "{response}");
    assert_valid(LEGACY, "ListRootsRequest", &request(&channel));
}

#[tokio::test]
async fn a_sampling_tool_result_whose_structured_content_2025_11_25_cannot_carry_is_refused() {
    // 2025-11-25's ToolResultContent.structuredContent is an object; 2026-07-28 takes any value.
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
    let channel = Scripted::always(Reply::Result(answer.clone()));
    let response = send(&channel, "sample_result", json!({"structured": {"city": "Paris"}})).await;
    assert_eq!(response["result"]["structuredContent"]["s"], answer, "{response}");
    assert_valid(LEGACY, "CreateMessageRequest", &request(&channel));
    for structured in [json!("Paris"), json!(["Paris"]), json!(7)] {
        let channel = Scripted::always(Reply::Result(answer.clone()));
        let response = send(&channel, "sample_result", json!({"structured": structured})).await;
        assert_eq!(code(&response), -32603, "{structured}: {response}");
        assert!(channel.methods().is_empty(), "nothing is sent: {structured}");
        let block =
            json!({"type": "tool_result", "toolUseId": "u1", "content": [], "structuredContent": structured});
        assert!(!is_valid(LEGACY, "ToolResultContent", &block), "2025-11-25 refuses it too: {structured}");
    }
}

#[tokio::test]
async fn a_hostile_answer_is_refused_with_a_fixed_message_that_repeats_nothing() {
    let huge = "x".repeat(1 << 20);
    let elicitation_answers = [
        json!(5),
        json!("accept"),
        json!(null),
        json!([]),
        json!({}),
        json!({"action": "yes"}),
        json!({"action": huge}),
        json!({"action": "accept", "content": {"nested": {"a": huge}}}),
        json!({"action": "accept", "content": {"list": [1, 2]}}),
        json!({"action": "accept", "content": "all of it"}),
        json!({"roots": []}),
        json!({"role": "assistant", "content": {"type": "text", "text": huge}, "model": "m"}),
    ];
    for answer in elicitation_answers {
        let channel = Scripted::always(Reply::Result(answer));
        check_refused(send(&channel, "form", json!({"schema": {"type": "object", "properties": {}}})).await);
    }
    for answer in [
        json!({"role": "assistant", "model": "m"}),
        json!({"role": "robot", "content": {"type": "text", "text": "t"}, "model": "m"}),
        json!({"role": "assistant", "content": {"type": "text", "text": "t"}, "model": 7}),
        json!({"action": "accept"}),
    ] {
        check_refused(send(&Scripted::always(Reply::Result(answer)), "sample", json!({})).await);
    }
    for answer in [json!({"roots": [{"uri": 5}]}), json!({"roots": {}}), json!({"roots": [huge]})] {
        check_refused(send(&Scripted::always(Reply::Result(answer)), "roots", json!({})).await);
    }
    // Huge but well-formed: handed over as it is (the transport bounds an answer's size).
    let big = json!({"action": "accept", "content": {"text": "y".repeat(1 << 20)}});
    let channel = Scripted::new(Some(every_capability()), move |_, _, _| Reply::Result(big.clone()));
    let response = send(&channel, "form", json!({"schema": {"type": "object", "properties": {}}})).await;
    assert_eq!(
        response["result"]["structuredContent"]["f"]["content"]["text"].as_str().map(str::len),
        Some(1 << 20)
    );
}

fn check_refused(response: Value) {
    assert_eq!(code(&response), -32602, "{response}");
    assert_eq!(
        response["error"]["message"],
        "Invalid params: the client's answer is not a valid result of the request the server sent it"
    );
    assert!(response.get("result").is_none());
    assert!(response.to_string().len() < 300, "nothing the client sent is repeated: {response}");
}
