//! `TestClient`: every method against a plain-`Dispatch` server and the typed registries, in both eras,
//! through the real router.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_kernel_router::completion::{Completion, CompletionRef, CompletionRequest};
use mcp_kernel_router::notify::LogLevel;
use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec, Prompts};
use mcp_kernel_router::resources::{ReadResource, ResourceSpec, ResourceTemplateSpec, Resources};
use mcp_kernel_router::sealing::HmacSealer;
use mcp_kernel_router::testing::{ClientError, TestClient};
use mcp_kernel_router::transport::LiveServer;
use mcp_kernel_router::wire::ProtocolVersion;
use mcp_kernel_router::wire::types::{ContentBlock, ResourceContents, ResultType, Role};
use mcp_kernel_router::wire::types::{PromptMessage, TextResourceContents};
use mcp_kernel_router::{
    Extensions, InputRequired, Json, Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput,
    ToolSpec, Tools,
};
use serde_json::{Value, json};

const ERAS: [ProtocolVersion; 2] = ProtocolVersion::ALL;
const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
const LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// The caller's identity, as a transport would attach it.
#[derive(Debug, Clone, PartialEq)]
struct Caller(String);

/// How many times dispatch ran `strict` (called by one test only, so parallel tests cannot race it).
static STRICT_CALLS: AtomicUsize = AtomicUsize::new(0);

fn echo_schema() -> Value {
    json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
}

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let context = &call.context;
    match &*call.name {
        "echo" => Ok(ToolOutput::text(call.arguments.get_str("message").unwrap_or_default())),
        "strict" => {
            STRICT_CALLS.fetch_add(1, Ordering::SeqCst);
            Ok(ToolOutput::text("ran"))
        }
        "count" => {
            for step in [1.0, 2.0, 3.0] {
                context.progress().report(step, Some(3.0), Some("counting"));
            }
            for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Warning, LogLevel::Error] {
                context.log(level, Some("count"), json!(level));
            }
            ToolOutput::json(&json!({"counted": 3}))
        }
        "whoami" => ToolOutput::json(&json!({
            "caller": context.principal::<Caller>().map(|c| c.0.clone()),
            "modern": context.era.is_modern(),
            "capabilities": context.client_capabilities.as_deref(),
        })),
        "fail" => Err(ToolError::new("it broke")),
        _ => Err(ToolError::new("no such tool in this fixture")),
    }
}

async fn read(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let text = match request.template().and_then(|found| found.get("tag")) {
        Some(tag) => format!("notes tagged {tag}"),
        None => format!("text of {}", request.uri),
    };
    Ok(vec![ResourceContents::text(request.uri.clone(), text)])
}

async fn render(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let name = request.arguments.get_str("name").unwrap_or("stranger");
    let message = PromptMessage::new(Role::User, ContentBlock::text(format!("Hello, {name}")));
    Ok(PromptOutput { description: Some("a greeting".into()), messages: vec![message] })
}

async fn complete(request: CompletionRequest) -> Result<Completion, ReaderError> {
    let names = ["Ada", "Alan", "Grace"].iter().filter(|n| n.starts_with(&request.argument.value));
    Ok(Completion::new(names.map(|n| (*n).to_owned()).collect()))
}

/// A hand-listed catalog served by plain functions; lists are paged two items at a time.
fn plain_server() -> Server {
    let mut listing = Listing {
        tools: vec![
            ToolSpec::new("echo", Mode::ReadOnly).input_schema(echo_schema()),
            ToolSpec::new("count", Mode::ReadOnly),
            ToolSpec::new("whoami", Mode::ReadOnly),
            ToolSpec::new("fail", Mode::ReadOnly),
            ToolSpec::new("strict", Mode::ReadOnly).input_schema(echo_schema()),
        ],
        prompts: vec![
            PromptSpec::new("greet").argument(PromptArgument::new("name").required(true)),
            PromptSpec::new("a"),
            PromptSpec::new("b"),
        ],
        ..Listing::default()
    };
    for n in 1..=5 {
        listing.resources.push(ResourceSpec::new(format!("notes://{n}"), format!("note {n}")).into());
    }
    listing.resources.push(ResourceTemplateSpec::new("notes://tag/{tag}", "by tag").into());
    Server::builder(listing)
        .dispatch(dispatch)
        .resource_reader(read)
        .prompt_reader(render)
        .completer(complete)
        .log_notifications(LogLevel::Info)
        .page_size(NonZeroUsize::new(2).expect("two"))
        .build()
        .expect("the plain catalog builds")
}

#[derive(serde::Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize)]
struct Sum {
    sum: i64,
}

#[derive(serde::Deserialize)]
struct Topic {
    topic: String,
}

/// The same kinds of things, declared through the typed registries.
fn registry_server() -> Server {
    let add_schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"]
    });
    let tools = Tools::new()
        .add(ToolSpec::new("add", Mode::ReadOnly).input_schema(add_schema), |args: Add, _cx| async move {
            Ok::<_, ToolError>(Json(Sum { sum: args.a + args.b }))
        });
    let resources = Resources::new()
        .add(ResourceSpec::new("config://app", "app"), |_cx| async move {
            Ok::<_, ReaderError>(vec![ResourceContents::text("config://app", "debug = false")])
        })
        .template(ResourceTemplateSpec::new("user://{id}", "user"), |found, _cx| async move {
            let id: u64 = found.parse("id")?;
            Ok(vec![ResourceContents::text(found.uri(), format!("user {id}"))])
        });
    let prompts = Prompts::new().add(
        PromptSpec::new("summarize").argument(PromptArgument::new("topic").required(true)),
        |args: Topic, _cx| async move {
            let text = format!("Summarize {}", args.topic);
            let messages = vec![PromptMessage::new(Role::User, ContentBlock::text(text))];
            Ok::<_, ReaderError>(PromptOutput { description: None, messages })
        },
    );
    Server::builder(Listing::new())
        .tools(tools)
        .resources(resources)
        .prompts(prompts)
        .build()
        .expect("the registry catalog builds")
}

fn client(era: ProtocolVersion) -> TestClient {
    TestClient::new(plain_server()).era(era)
}

/// The `resultType` each era's results carry.
fn result_type(era: ProtocolVersion) -> Option<ResultType> {
    era.is_modern().then_some(ResultType::Complete)
}

fn text_of(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text(text) => &text.text,
        other => panic!("not a text block: {other:?}"),
    }
}

fn resource_text(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::Text(TextResourceContents { text, .. }) => text,
        other => panic!("not text contents: {other:?}"),
    }
}

#[tokio::test]
async fn lists_follow_next_cursor_to_the_end_in_both_eras() {
    for era in ERAS {
        let client = client(era);
        let first = client.request("resources/list", json!({})).await.expect("a first page").result;
        assert!(first["nextCursor"].is_string(), "{era}: the fixture is paged: {first}");

        let resources = client.list_resources().await.expect("resources");
        let uris: Vec<_> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["notes://1", "notes://2", "notes://3", "notes://4", "notes://5"], "{era}");
        let templates = client.list_resource_templates().await.expect("templates");
        assert_eq!(templates.len(), 1, "{era}");
        assert_eq!(templates[0].uri_template, "notes://tag/{tag}");
        let prompts = client.list_prompts().await.expect("prompts");
        let mut names: Vec<_> = prompts.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["a", "b", "greet"], "{era}");
        let tools = client.list_tools().await.expect("tools");
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "count", "whoami", "fail", "strict"], "{era}");
        assert_eq!(tools[0].input_schema, echo_schema(), "{era}");
    }
}

#[tokio::test]
async fn call_tool_returns_the_typed_result_in_both_eras() {
    for era in ERAS {
        let called = client(era).call_tool("echo", json!({"message": "hi"})).await.expect("answered");
        assert_eq!(called.result.content, [ContentBlock::text("hi")], "{era}");
        assert_eq!(called.result.is_error, Some(false), "{era}");
        assert_eq!(called.result.result_type, result_type(era), "{era}");
        let server_info =
            called.result.meta.as_ref().map(|m| m.contains_key("io.modelcontextprotocol/serverInfo"));
        assert_eq!(server_info.unwrap_or(false), era.is_modern(), "{era}");
        assert!(called.notifications.is_empty(), "{era}");

        let structured = client(era).call_tool("count", Value::Null).await.expect("answered").result;
        assert_eq!(structured.structured_content, Some(json!({"counted": 3})), "{era}");
    }
}

#[tokio::test]
async fn a_tool_error_is_an_ok_result_with_is_error() {
    for era in ERAS {
        let failed = client(era).call_tool("fail", json!({})).await.expect("a tool error is a result");
        assert_eq!(failed.result.is_error, Some(true), "{era}");
        assert_eq!(text_of(&failed.result.content[0]), "it broke", "{era}");
        assert_eq!(failed.result.structured_content, Some(json!({"error": "it broke"})), "{era}");
    }
}

#[tokio::test]
async fn read_resource_reads_listed_resources_and_templates_in_both_eras() {
    for era in ERAS {
        let client = client(era);
        let read = client.read_resource("notes://2").await.expect("listed").result;
        assert_eq!(read.result_type, result_type(era), "{era}");
        assert_eq!(read.contents.len(), 1);
        assert_eq!(read.contents[0].uri(), "notes://2");
        assert_eq!(resource_text(&read.contents[0]), "text of notes://2", "{era}");
        let tagged = client.read_resource("notes://tag/rust").await.expect("a template match").result;
        assert_eq!(resource_text(&tagged.contents[0]), "notes tagged rust", "{era}");
    }
}

#[tokio::test]
async fn get_prompt_renders_and_refuses_in_both_eras() {
    for era in ERAS {
        let client = client(era);
        let got = client.get_prompt("greet", json!({"name": "Ada"})).await.expect("rendered").result;
        assert_eq!(got.result_type, result_type(era), "{era}");
        assert_eq!(got.description.as_deref(), Some("a greeting"));
        assert_eq!(got.messages, [PromptMessage::new(Role::User, ContentBlock::text("Hello, Ada"))]);

        let missing = client.get_prompt("greet", Value::Null).await.expect_err("name is required");
        let error = missing.rpc().expect("a JSON-RPC error");
        assert_eq!(error.code, -32602, "{era}");
        assert_eq!(error.data.as_ref().map(|d| &d["name"]), Some(&json!("greet")), "{era}");
    }
}

#[tokio::test]
async fn complete_suggests_values_in_both_eras() {
    for era in ERAS {
        let reference = CompletionRef::Prompt { name: "greet".into() };
        let completed = client(era).complete(reference, "name", "A").await.expect("completed").result;
        assert_eq!(completed.result_type, result_type(era), "{era}");
        assert_eq!(completed.completion.values, ["Ada", "Alan"], "{era}");

        let template = CompletionRef::ResourceTemplate { uri: "notes://tag/{tag}".into() };
        let refused = client(era).complete(template, "nope", "x").await.expect_err("not a variable");
        assert_eq!(refused.rpc().map(|e| e.code), Some(-32602), "{era}");
    }
}

#[tokio::test]
async fn the_typed_registries_answer_through_the_client_in_both_eras() {
    for era in ERAS {
        let client = TestClient::new(registry_server()).era(era);
        let tools = client.list_tools().await.expect("tools");
        assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["add"]);
        let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await.expect("added").result;
        assert_eq!(sum.structured_content, Some(json!({"sum": 5})), "{era}");
        assert_eq!(sum.is_error, Some(false));

        assert_eq!(client.list_resources().await.expect("resources")[0].uri, "config://app");
        assert_eq!(client.list_resource_templates().await.expect("templates")[0].uri_template, "user://{id}");
        let config = client.read_resource("config://app").await.expect("read").result;
        assert_eq!(resource_text(&config.contents[0]), "debug = false", "{era}");
        let user = client.read_resource("user://42").await.expect("read").result;
        assert_eq!(resource_text(&user.contents[0]), "user 42", "{era}");
        let refused = client.read_resource("user://ada").await.expect_err("not a number");
        let code = if era.is_modern() { -32602 } else { -32002 };
        assert_eq!(refused.rpc().map(|e| e.code), Some(code), "{era}");

        assert_eq!(client.list_prompts().await.expect("prompts")[0].name, "summarize");
        let prompt = client.get_prompt("summarize", json!({"topic": "MCP"})).await.expect("rendered");
        assert_eq!(text_of(&prompt.result.messages[0].content), "Summarize MCP", "{era}");
    }
}

#[tokio::test]
async fn progress_notifications_are_captured_under_a_fresh_token_per_request() {
    for era in ERAS {
        let quiet = client(era).call_tool("count", json!({})).await.expect("answered");
        assert!(quiet.progress().is_empty(), "{era}: no token, no progress");

        let client = client(era).progress(true);
        let first = client.call_tool("count", json!({})).await.expect("answered");
        let progress = first.progress();
        let values: Vec<f64> = progress.iter().filter_map(|p| p.progress.as_f64()).collect();
        assert_eq!(values, [1.0, 2.0, 3.0], "{era}");
        assert!(progress.iter().all(|p| p.message.as_deref() == Some("counting")));
        let second = client.call_tool("count", json!({})).await.expect("answered");
        let (a, b) = (&progress[0].progress_token, &second.progress()[0].progress_token);
        assert_ne!(a, b, "{era}: each request has its own token");
    }
}

#[tokio::test]
async fn log_notifications_are_captured_at_the_level_each_era_uses() {
    let levels = |called: &mcp_kernel_router::testing::Called<_>| -> Vec<LogLevel> {
        called.logs().iter().map(|log| log.level).collect()
    };
    let warning = client(MODERN).log_level(LogLevel::Warning).call_tool("count", json!({})).await;
    assert_eq!(levels(&warning.expect("answered")), [LogLevel::Warning, LogLevel::Error]);
    let unasked = client(MODERN).call_tool("count", json!({})).await.expect("answered");
    assert!(unasked.logs().is_empty(), "2026-07-28 without a level: no logs");
    // 2025-11-25 carries no level: the host's minimum (info) applies, whatever the client asked.
    let legacy = client(LEGACY).log_level(LogLevel::Error).call_tool("count", json!({})).await;
    let legacy = legacy.expect("answered");
    assert_eq!(levels(&legacy), [LogLevel::Info, LogLevel::Warning, LogLevel::Error]);
    assert_eq!(legacy.logs()[0].logger.as_deref(), Some("count"));
}

#[tokio::test]
async fn a_json_rpc_error_is_an_err_carrying_the_error_object() {
    for (era, code) in [(MODERN, -32602), (LEGACY, -32002)] {
        let missing = client(era).read_resource("notes://missing").await.expect_err("not listed");
        let ClientError::Rpc(error) = &missing else { panic!("{era}: {missing:?}") };
        assert_eq!(error.code, code, "{era}");
        assert_eq!(error.data, Some(json!({"uri": "notes://missing"})), "{era}");

        let unknown = client(era).request("no/such/method", json!({})).await.expect_err("unrouted");
        assert_eq!(unknown.rpc().map(|e| e.code), Some(-32601), "{era}");
    }
}

#[tokio::test]
async fn the_principal_and_extensions_reach_the_tool() {
    let caller = |client: TestClient| async move {
        let called = client.call_tool("whoami", json!({})).await.expect("answered");
        called.result.structured_content.expect("structured")["caller"].clone()
    };
    assert_eq!(caller(client(MODERN).principal(Caller("alice".into()))).await, "alice");
    assert_eq!(caller(client(LEGACY).principal(Caller("alice".into()))).await, "alice");
    let mut extensions = Extensions::new();
    extensions.insert(Caller("bob".into()));
    assert_eq!(caller(client(MODERN).extensions(extensions)).await, "bob");
    assert_eq!(caller(client(MODERN)).await, Value::Null);
}

#[tokio::test]
async fn the_era_and_client_capabilities_reach_the_host() {
    let whoami = |client: TestClient| async move {
        let called = client.call_tool("whoami", json!({})).await.expect("answered");
        called.result.structured_content.expect("structured")
    };
    let modern = whoami(client(MODERN).client_capabilities(json!({"roots": {}}))).await;
    assert_eq!((&modern["modern"], &modern["capabilities"]), (&json!(true), &json!({"roots": {}})));
    let legacy = whoami(client(LEGACY).client_capabilities(json!({"roots": {}}))).await;
    assert_eq!((&legacy["modern"], &legacy["capabilities"]), (&json!(false), &Value::Null));
}

#[tokio::test]
async fn the_client_goes_through_the_router() {
    for era in ERAS {
        let client = client(era);
        let before = STRICT_CALLS.load(Ordering::SeqCst);
        let refused = client.call_tool("strict", json!({"message": 7})).await.expect("a result");
        assert_eq!(refused.result.is_error, Some(true), "{era}: the router's schema check");
        assert!(text_of(&refused.result.content[0]).starts_with("strict: invalid arguments"), "{era}");
        let missing = client.call_tool("strict", json!({})).await.expect("a result");
        assert_eq!(missing.result.is_error, Some(true), "{era}");
        assert_eq!(STRICT_CALLS.load(Ordering::SeqCst), before, "{era}: dispatch never ran");
        let ran = client.call_tool("strict", json!({"message": "ok"})).await.expect("a result");
        assert_eq!((ran.result.is_error, STRICT_CALLS.load(Ordering::SeqCst)), (Some(false), before + 1));

        let unknown = client.call_tool("nope", json!({})).await.expect_err("not listed");
        assert_eq!(unknown.rpc().map(|e| (e.code, e.message.as_str())), Some((-32602, "Unknown tool")));
        let not_object =
            client.call_tool("strict", json!([1])).await.expect_err("arguments must be an object");
        assert_eq!(not_object.rpc().map(|e| e.code), Some(-32602), "{era}");
    }
    // 2026-07-28 has no `ping`; the router refuses it even from this client.
    let ping = client(MODERN).request("ping", json!({})).await.expect_err("not on 2026-07-28");
    assert_eq!(ping.rpc().map(|e| e.code), Some(-32601));
    // A server serving 2026-07-28 alone refuses the legacy shape.
    let modern_only = plain_server().restricted_to([MODERN]).expect("one revision");
    let refused = TestClient::new(modern_only).era(LEGACY).list_tools().await.expect_err("undeclared");
    assert_eq!(refused.rpc().map(|e| e.code), Some(-32602));
}

#[tokio::test]
async fn raw_requests_return_the_result_value() {
    let discovered = client(MODERN).request("server/discover", json!({})).await.expect("discovered");
    assert_eq!(discovered.result["supportedVersions"], json!(["2026-07-28", "2025-11-25"]));
    assert_eq!(discovered.result["resultType"], "complete");
    let pong = client(LEGACY).request("ping", Value::Null).await.expect("pong");
    assert_eq!(pong.result, json!({}));
    // The caller's own `_meta` wins: a revision the server does not serve is the router's -32022.
    let params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}});
    let unsupported = client(MODERN).request("tools/list", params).await.expect_err("unsupported");
    assert_eq!(unsupported.rpc().map(|e| e.code), Some(-32022));
}

#[tokio::test]
async fn input_required_is_an_err_carrying_the_servers_result() {
    let tools = Tools::new().add_dispatch(ToolSpec::new("ask", Mode::ReadOnly), |_call: ToolCall| async {
        Ok::<_, ToolError>(ToolOutput::input_required(InputRequired::new().list_roots("roots")))
    });
    let sealer = HmacSealer::new(&[7; 32]).expect("a long key");
    let server = Server::builder(Listing::new()).tools(tools).request_state_sealer(sealer).build();
    let server = server.expect("builds");
    let client = TestClient::new(server.clone()).client_capabilities(json!({"roots": {}}));
    let asked = client.call_tool("ask", json!({})).await.expect_err("input first");
    let ClientError::InputRequired { method, result } = asked else { panic!("{asked:?}") };
    assert_eq!(method, "tools/call");
    assert_eq!(result.result_type, ResultType::InputRequired);
    assert!(result.input_requests.is_some_and(|r| r.contains_key("roots")));
    // 2025-11-25 has no input-required result: the router answers -32603.
    let legacy = TestClient::new(server).era(LEGACY).call_tool("ask", json!({})).await;
    assert_eq!(legacy.expect_err("a host fault").rpc().map(|e| e.code), Some(-32603));
}

#[tokio::test]
async fn a_live_server_replacement_is_seen_by_the_next_request() {
    let live = LiveServer::new(plain_server());
    let client = TestClient::new(live.clone());
    assert_eq!(client.list_tools().await.expect("tools").len(), 5);
    live.replace(registry_server());
    let tools = client.list_tools().await.expect("tools");
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["add"]);
}

#[tokio::test]
async fn a_list_longer_than_max_pages_stops_with_an_error() {
    let resources =
        (0..=TestClient::MAX_PAGES).map(|n| ResourceSpec::new(format!("r://{n:05}"), "r").into()).collect();
    let server = Server::builder(Listing { resources, ..Listing::default() })
        .resource_reader(read)
        .page_size(NonZeroUsize::MIN)
        .build()
        .expect("builds");
    let error = TestClient::new(server).list_resources().await.expect_err("too many pages");
    assert_eq!(
        error,
        ClientError::TooManyPages { method: "resources/list".into(), pages: TestClient::MAX_PAGES }
    );
}
