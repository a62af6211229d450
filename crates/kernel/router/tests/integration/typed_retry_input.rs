//! `RequestContext::retry_input()` is where a retry's verified input arrives, for typed tools,
//! templates and prompts as for the host's own functions (`input_required.rs` pins the flow itself);
//! an "input required" answer is not a result, so a tool's output schema does not apply to it.

use crate::support;

use crate::support::official::assert_response;
use crate::support::{MODERN, code, first_text};
use mcp_kernel_router::prompts::{PromptArgument, PromptOutput, PromptSpec, Prompts};
use mcp_kernel_router::resources::{ResourceTemplateSpec, Resources, TemplateMatch};
use mcp_kernel_router::sealing::HmacSealer;
use mcp_kernel_router::wire::types::{ContentBlock, PromptMessage, ResourceContents, Role};
use mcp_kernel_router::{
    InputRequired, Json, Listing, Mode, ReaderError, RequestContext, Server, ServerBuilder, ToolError,
    ToolOutput, ToolSpec, Tools,
};
use serde::Deserialize;
use serde_json::{Value, json};

fn form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn ask() -> InputRequired {
    InputRequired::new().elicit("user_name", "What is your name?", form()).with_state("round-1")
}

/// The accepted name, when this is a retry carrying one.
fn answered(cx: &RequestContext) -> Option<String> {
    let input = cx.retry_input()?;
    assert_eq!(input.state.as_deref(), Some(&b"round-1"[..]), "the host's state comes back too");
    input.accepted("user_name")?.get("name")?.as_str().map(str::to_owned)
}

#[derive(Deserialize)]
struct Topic {
    topic: String,
}

fn registries(builder: ServerBuilder) -> ServerBuilder {
    let named = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let tools = Tools::new()
        .add(ToolSpec::new("greet", Mode::ReadOnly), |_: Value, cx: RequestContext| async move {
            Ok::<_, ToolError>(match answered(&cx) {
                Some(name) => ToolOutput::text(format!("Hello, {name}!")),
                None if cx.retry_input().is_some() => ToolOutput::text("retried without a name"),
                None => ToolOutput::input_required(ask()),
            })
        })
        .add(
            ToolSpec::new("shaped", Mode::ReadOnly).output_schema(named.clone()),
            |_: Value, cx: RequestContext| async move {
                Ok::<_, ToolError>(match answered(&cx) {
                    Some(name) => ToolOutput::Json(json!({"name": name})),
                    None => ToolOutput::input_required(ask()),
                })
            },
        )
        .add(
            ToolSpec::new("misshaped", Mode::ReadOnly).output_schema(named),
            |_: Value, cx: RequestContext| async move {
                Ok::<_, ToolError>(match answered(&cx) {
                    Some(name) => ToolOutput::text(name),
                    None => ToolOutput::input_required(ask()),
                })
            },
        )
        .add(ToolSpec::new("untouched", Mode::ReadOnly), |_: Value, cx: RequestContext| async move {
            Ok::<_, ToolError>(Json(json!({"retry": cx.retry_input().is_some()})))
        });
    let resources = Resources::new().template(
        ResourceTemplateSpec::new("vault://{id}", "vault"),
        |found: TemplateMatch, cx: RequestContext| async move {
            match answered(&cx) {
                Some(name) => Ok(vec![ResourceContents::text(
                    found.uri(),
                    format!("{} opened by {name}", found.get("id").unwrap_or("?")),
                )]),
                None => Err(ReaderError::input_required(ask())),
            }
        },
    );
    let prompts = Prompts::new().add(
        PromptSpec::new("ctx").argument(PromptArgument::new("topic").required(true)),
        |args: Topic, cx: RequestContext| async move {
            match answered(&cx) {
                Some(name) => Ok(PromptOutput {
                    description: None,
                    messages: vec![PromptMessage::new(
                        Role::User,
                        ContentBlock::text(format!("{} for {name}", args.topic)),
                    )],
                }),
                None => Err(ReaderError::input_required(ask())),
            }
        },
    );
    builder.tools(tools).resources(resources).prompts(prompts)
}

fn sealing() -> Server {
    registries(Server::builder(Listing::new()))
        .request_state_sealer(HmacSealer::new(&[7; 32]).unwrap())
        .build()
        .unwrap()
}

fn request(method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

async fn send(server: &Server, message: Value, definition: &str) -> Value {
    let response = support::send(server, message).await;
    let definition =
        if response["result"]["resultType"] == "input_required" { "InputRequiredResult" } else { definition };
    assert_response(MODERN, definition, &response);
    response
}

/// Round 1 (asked for input), then the retry with the answer; returns the retry's response.
async fn round_trip(server: &Server, method: &str, params: Value, definition: &str) -> Value {
    let r1 = send(server, request(method, params.clone()), definition).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert_eq!(r1["result"]["inputRequests"]["user_name"]["params"]["requestedSchema"], form());
    let mut retry = params;
    retry["requestState"] = r1["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    send(server, request(method, retry), definition).await
}

#[tokio::test]
async fn a_retrys_input_reaches_a_typed_tool_template_and_prompt() {
    let server = sealing();
    let r =
        round_trip(&server, "tools/call", json!({"name": "greet", "arguments": {}}), "CallToolResult").await;
    assert_eq!(first_text(&r), "Hello, Alice!");
    let r = round_trip(&server, "resources/read", json!({"uri": "vault://%37"}), "ReadResourceResult").await;
    assert_eq!(r["result"]["contents"][0]["text"], "7 opened by Alice", "{r}");
    let r = round_trip(
        &server,
        "prompts/get",
        json!({"name": "ctx", "arguments": {"topic": "rust"}}),
        "GetPromptResult",
    )
    .await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "rust for Alice", "{r}");
}

#[tokio::test]
async fn input_required_from_a_tool_with_an_output_schema_is_sent_and_its_retry_is_checked() {
    let server = sealing();
    let r = round_trip(&server, "tools/call", json!({"name": "shaped"}), "CallToolResult").await;
    assert_eq!(r["result"]["structuredContent"], json!({"name": "Alice"}));
    let r = round_trip(&server, "tools/call", json!({"name": "misshaped"}), "CallToolResult").await;
    assert_eq!(code(&r), -32603, "the completed retry is a result, checked like any: {r}");
    assert!(r["error"].get("data").is_none());
}

#[tokio::test]
async fn retry_input_is_absent_on_a_first_request_and_without_a_sealer() {
    let server = sealing();
    let r = send(&server, request("tools/call", json!({"name": "untouched"})), "CallToolResult").await;
    assert_eq!(r["result"]["structuredContent"], json!({"retry": false}));
    let unsealed = registries(Server::builder(Listing::new())).build().unwrap();
    let retry = json!({"name": "untouched", "requestState": "opaque",
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}});
    let r = send(&unsealed, request("tools/call", retry), "CallToolResult").await;
    assert_eq!(r["result"]["structuredContent"], json!({"retry": false}), "{r}");
}
