//! The results built from the typed wire structs are written byte for byte as the `json!` shapes they
//! replaced: `serde_json` keeps insertion order, so each struct's field order is the wire's key order.
//! Every test sends requests through the core and compares each whole response with the one the
//! previous shape made; `server/discover`, still built as a map, is pinned around the typed
//! capabilities.

use futures_util::FutureExt;
use serde_json::{Value, json};

use mcp_kernel_wire::Response;
use mcp_kernel_wire::types::{
    ContentBlock, EmptyResult, Implementation, InitializeResult, PromptMessage, PromptsCapability,
    ResourceContents, ResourcesCapability, Role, ServerCapabilities, ToolsCapability,
};

use crate::options::PACKAGE_VERSION;
use crate::{
    Listing, Mode, ReaderError, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
    completion::{Completion, CompletionRequest},
    notify::LogLevel,
    prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec},
    resources::{ReadResource, ResourceSpec},
};

const MODERN: &str = "2026-07-28";

fn listing() -> Listing {
    Listing {
        tools: vec![ToolSpec::new("echo", Mode::ReadOnly).description("Echo.")],
        resources: vec![ResourceSpec::new("test://a", "a").mime_type("text/plain").into()],
        prompts: vec![PromptSpec::new("greet").argument(PromptArgument::new("who").required(true))],
    }
}

/// A server with every opt-in, so that every capability is advertised.
fn full_server() -> Server {
    Server::builder(listing())
        .dispatch(|_: ToolCall| std::future::ready(Ok::<_, ToolError>(ToolOutput::text("ok"))))
        .resource_reader(|read: ReadResource| {
            std::future::ready(Ok::<_, ReaderError>(vec![ResourceContents::text(read.uri, "body")]))
        })
        .prompt_reader(|_: GetPrompt| {
            std::future::ready(Ok::<_, ReaderError>(PromptOutput {
                description: Some("Rendered.".to_owned()),
                messages: vec![PromptMessage::new(Role::User, ContentBlock::text("Hello."))],
            }))
        })
        .completer(|_: CompletionRequest| std::future::ready(Ok::<_, ReaderError>(Completion::default())))
        .log_notifications(LogLevel::Info)
        .build()
        .expect("the test catalog builds")
}

/// A server with tools alone: no completer and no log opt-in.
fn plain_server() -> Server {
    let tools = vec![ToolSpec::new("echo", Mode::ReadOnly)];
    Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(|_: ToolCall| std::future::ready(Ok::<_, ToolError>(ToolOutput::text("ok"))))
        .build()
        .expect("the test catalog builds")
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// The bytes the core writes for one request.
fn answer(server: &Server, method: &str, params: Option<Value>) -> String {
    let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": method});
    if let Some(params) = params {
        message["params"] = params;
    }
    let handled = server.handle(message).now_or_never().expect("answered at once");
    String::from_utf8(handled.response.expect("a response").to_bytes()).expect("UTF-8")
}

/// The bytes of a response carrying `result`.
fn written(result: Value) -> String {
    String::from_utf8(Response::result(json!(1), result).to_bytes()).expect("UTF-8")
}

/// The decoration (`Decoration::append`) appends to a 2026-07-28 result.
fn server_info() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {"name": "mcp-kernel", "version": PACKAGE_VERSION}})
}

/// The capabilities object as `assemble` built it with `json!`, opt-ins appended in this order.
fn previous_capabilities(completions: bool, logging: bool) -> Value {
    let mut capabilities = json!({
        "tools": {"listChanged": false},
        "resources": {"listChanged": false, "subscribe": false},
        "prompts": {"listChanged": false}
    });
    if completions {
        capabilities["completions"] = json!({});
    }
    if logging {
        capabilities["logging"] = json!({});
    }
    capabilities
}

#[test]
fn server_capabilities_keep_their_wire_order() {
    let typed = ServerCapabilities {
        tools: Some(ToolsCapability { list_changed: Some(false) }),
        resources: Some(ResourcesCapability { list_changed: Some(false), subscribe: Some(false) }),
        prompts: Some(PromptsCapability { list_changed: Some(false) }),
        completions: Some(Default::default()),
        logging: Some(Default::default()),
        ..ServerCapabilities::default()
    };
    assert_eq!(
        serde_json::to_string(&typed).unwrap(),
        serde_json::to_string(&previous_capabilities(true, true)).unwrap()
    );
    for (server, completions, logging) in [(full_server(), true, true), (plain_server(), false, false)] {
        let response: Value = serde_json::from_str(&answer(&server, "initialize", Some(json!({
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}
        }))))
        .unwrap();
        assert_eq!(
            serde_json::to_string(&response["result"]["capabilities"]).unwrap(),
            serde_json::to_string(&previous_capabilities(completions, logging)).unwrap()
        );
    }
}

/// `server/discover` is still built as a map (see `Server::discover`), around the typed capabilities.
#[test]
fn discover_result_keys_keep_their_wire_order() {
    let server = full_server();
    let names = server.options().supported_versions.iter().map(|v| v.as_str()).collect::<Vec<_>>();
    let previous = json!({
        "supportedVersions": names,
        "capabilities": previous_capabilities(true, true),
        "ttlMs": 0,
        "cacheScope": "private",
        "resultType": "complete",
        "_meta": server_info()
    });
    assert_eq!(answer(&server, "server/discover", None), written(previous));
}

#[test]
fn initialize_result_keys_keep_their_wire_order() {
    let server = full_server();
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
    let previous = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": previous_capabilities(true, true),
        "serverInfo": {"name": "mcp-kernel", "version": PACKAGE_VERSION},
    });
    assert_eq!(answer(&server, "initialize", Some(params)), written(previous.clone()));
    let typed = InitializeResult {
        protocol_version: "2025-11-25".to_owned(),
        capabilities: serde_json::from_value(previous_capabilities(true, true)).unwrap(),
        server_info: Implementation::new("mcp-kernel", PACKAGE_VERSION),
        instructions: None,
        meta: None,
    };
    assert_eq!(serde_json::to_string(&typed).unwrap(), serde_json::to_string(&previous).unwrap());
}

#[test]
fn empty_results_are_written_as_the_empty_object() {
    assert_eq!(serde_json::to_string(&EmptyResult::default()).unwrap(), "{}");
    let server = full_server();
    assert_eq!(answer(&server, "ping", None), written(json!({})));
    assert_eq!(answer(&server, "shutdown", None), written(json!({})));
    assert_eq!(answer(&server, "logging/setLevel", Some(json!({"level": "info"}))), written(json!({})));
    // On 2026-07-28 the empty result gets the decoration alone.
    let shutdown = answer(&server, "shutdown", Some(json!({"_meta": modern_meta()})));
    assert_eq!(shutdown, written(json!({"resultType": "complete", "_meta": server_info()})));
}

#[test]
fn get_prompt_result_keys_keep_their_wire_order() {
    let server = full_server();
    let params = json!({"_meta": modern_meta(), "name": "greet", "arguments": {"who": "ann"}});
    let previous = json!({
        "description": "Rendered.",
        "messages": [{"role": "user", "content": {"type": "text", "text": "Hello."}}],
        "resultType": "complete",
        "_meta": server_info()
    });
    assert_eq!(answer(&server, "prompts/get", Some(params)), written(previous));
    let bare = json!({"name": "greet", "arguments": {"who": "ann"}});
    let previous = json!({
        "description": "Rendered.",
        "messages": [{"role": "user", "content": {"type": "text", "text": "Hello."}}]
    });
    assert_eq!(answer(&server, "prompts/get", Some(bare)), written(previous));
}

#[test]
fn read_resource_result_keys_keep_their_wire_order() {
    let server = full_server();
    let params = json!({"_meta": modern_meta(), "uri": "test://a"});
    let previous = json!({
        "contents": [{"uri": "test://a", "text": "body"}],
        "ttlMs": 0,
        "cacheScope": "private",
        "resultType": "complete",
        "_meta": server_info()
    });
    assert_eq!(answer(&server, "resources/read", Some(params)), written(previous));
}

/// A server whose `echo` answers with a JSON value, `blocks` with two blocks, and `fail` with
/// a tool error.
fn calling_server() -> Server {
    let tools = ["echo", "blocks", "fail"].map(|name| ToolSpec::new(name, Mode::ReadOnly)).to_vec();
    Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(|call: ToolCall| {
            std::future::ready(match &*call.name {
                "echo" => Ok(ToolOutput::Json(json!({"b": [1, "é"], "a": null}))),
                "blocks" => Ok(ToolOutput::Content {
                    blocks: vec![ContentBlock::text("a"), ContentBlock::text("b")],
                    structured: Some(json!([1, 2])),
                }),
                _ => Err(ToolError::structured(json!({"why": "no"}))),
            })
        })
        .build()
        .expect("the test catalog builds")
}

#[test]
fn call_tool_results_are_written_as_the_map_the_core_built() {
    let server = calling_server();
    let modern =
        |name: &str, arguments: Value| json!({"_meta": modern_meta(), "name": name, "arguments": arguments});
    let echoed = answer(&server, "tools/call", Some(modern("echo", json!({}))));
    let previous = json!({
        "content": [{"type": "text", "text": r#"{"b":[1,"é"],"a":null}"#}],
        "structuredContent": {"b": [1, "é"], "a": null},
        "isError": false,
        "resultType": "complete",
        "_meta": server_info()
    });
    assert_eq!(echoed, written(previous));
    // A legacy result carries structured content only when it is an object, and no decoration.
    let blocks = answer(&server, "tools/call", Some(json!({"name": "blocks"})));
    let previous =
        json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "isError": false});
    assert_eq!(blocks, written(previous));
    let failed = answer(&server, "tools/call", Some(modern("fail", json!({}))));
    let previous = json!({
        "content": [{"type": "text", "text": "why: no"}],
        "structuredContent": {"error": {"why": "no"}},
        "isError": true,
        "resultType": "complete",
        "_meta": server_info()
    });
    assert_eq!(failed, written(previous));
}

#[test]
fn list_tools_results_are_written_as_the_map_the_core_built() {
    let server = plain_server();
    let item = json!({
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": true},
        "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
    });
    let listed = answer(&server, "tools/list", Some(json!({"_meta": modern_meta()})));
    let previous = json!({
        "tools": [item.clone()],
        "ttlMs": 0,
        "cacheScope": "private",
        "resultType": "complete",
        "_meta": server_info()
    });
    assert_eq!(listed, written(previous));
    let bare = answer(&server, "tools/list", None);
    assert_eq!(bare, written(json!({"tools": [item], "ttlMs": 0, "cacheScope": "private"})));
}
