//! Typed tools (`Tools`): a tool declared with its handler, its name written once; listed after the
//! catalog's tools; its arguments validated against the advertised schema before its type sees them;
//! a schema looser than the type answered as a tool error that names the argument and never quotes
//! what the caller sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;
use mcp_kernel_router::{
    BuildError, Json, Listing, Mode, RequestContext, Server, ToolCall, ToolError, ToolOutput, ToolSpec, Tools,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Echo {
    message: String,
}

fn echo_schema() -> Value {
    json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
}

fn echo_tools() -> Tools {
    Tools::new().add(
        ToolSpec::new("echo", Mode::ReadOnly).input_schema(echo_schema()),
        |args: Echo, _cx: RequestContext| async move { Ok::<_, ToolError>(format!("typed: {}", args.message)) },
    )
}

/// A counter of handler runs, and a typed tool `name` over `schema` whose handler takes `T`.
fn counted<T: serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static>(
    name: &str,
    schema: Value,
) -> (Arc<AtomicUsize>, Tools) {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let tools = Tools::new().add(
        ToolSpec::new(name, Mode::ReadOnly).input_schema(schema),
        move |args: T, _cx: RequestContext| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ToolError>(format!("{args:?}")) }
        },
    );
    (ran, tools)
}

fn typed_only(tools: Tools) -> Server {
    Server::builder(Listing::new()).tools(tools).build().expect("the typed tools build")
}

fn call(name: &str, arguments: Value) -> Value {
    modern(1, "tools/call", json!({"name": name, "arguments": arguments}))
}

#[tokio::test]
async fn a_typed_tool_is_listed_and_called_with_no_dispatch_function() {
    let server = typed_only(echo_tools());
    let list = send(&server, modern(1, "tools/list", json!({}))).await;
    assert_eq!(names(&list, "tools", "name"), ["echo"]);
    assert_eq!(list["result"]["tools"][0]["inputSchema"], echo_schema());
    let r = send(&server, call("echo", json!({"message": "hi"}))).await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(first_text(&r), "typed: hi");
}

#[tokio::test]
async fn catalog_tools_are_listed_first_then_registered_ones_each_served_by_its_own_function() {
    let catalog = Listing {
        tools: vec![ToolSpec::new("alpha", Mode::ReadOnly), ToolSpec::new("beta", Mode::ReadOnly)],
        ..Listing::default()
    };
    let dispatched = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&dispatched);
    let tools = Tools::new()
        .add(ToolSpec::new("gamma", Mode::ReadOnly), |_: Value, _cx: RequestContext| async move {
            Ok::<_, ToolError>("typed gamma")
        })
        .add_dispatch(ToolSpec::new("delta", Mode::Proposal), |call: ToolCall| async move {
            Ok::<_, ToolError>(ToolOutput::text(format!("add_dispatch {}", call.name)))
        });
    let more = Tools::new()
        .add(ToolSpec::new("epsilon", Mode::ReadOnly), |_: Value, _cx: RequestContext| async {
            Ok::<_, ToolError>("typed epsilon")
        });
    assert_eq!(tools.specs().map(ToolSpec::name).collect::<Vec<_>>(), ["gamma", "delta"]);
    let server = Server::builder(catalog)
        .dispatch(move |call: ToolCall| {
            seen.lock().unwrap().push(call.name.to_string());
            async move { Ok::<_, ToolError>(ToolOutput::text(format!("dispatch {}", call.name))) }
        })
        .tools(tools)
        .tools(more)
        .build()
        .unwrap();
    let list = send(&server, modern(1, "tools/list", json!({}))).await;
    assert_eq!(names(&list, "tools", "name"), ["alpha", "beta", "gamma", "delta", "epsilon"]);
    for (name, text) in [
        ("alpha", "dispatch alpha"),
        ("beta", "dispatch beta"),
        ("gamma", "typed gamma"),
        ("delta", "add_dispatch delta"),
        ("epsilon", "typed epsilon"),
    ] {
        let r = send(&server, call(name, json!({}))).await;
        assert_eq!(first_text(&r), text, "{name}");
    }
    assert_eq!(*dispatched.lock().unwrap(), ["alpha", "beta"], "dispatch never sees a registered tool");
}

#[test]
fn a_registered_tool_named_like_another_tool_is_a_duplicate() {
    let handler = |_: Value, _cx: RequestContext| async { Ok::<_, ToolError>("") };
    let spec = |name: &str| ToolSpec::new(name, Mode::ReadOnly);
    let catalog = Listing { tools: vec![spec("a")], ..Listing::default() };
    let dispatch = |_: ToolCall| async { Ok::<_, ToolError>(ToolOutput::text("")) };
    let err = Server::builder(catalog)
        .dispatch(dispatch)
        .tools(Tools::new().add(spec("a"), handler))
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::DuplicateTool("a".into()));
    let twice = Tools::new().add(spec("b"), handler).add_dispatch(spec("b"), dispatch);
    assert_eq!(typed_only_result(twice), Err(BuildError::DuplicateTool("b".into())));
    let err = Server::builder(Listing::new())
        .tools(Tools::new().add(spec("c"), handler))
        .tools(Tools::new().add(spec("c"), handler))
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::DuplicateTool("c".into()), "across two registries");
}

fn typed_only_result(tools: Tools) -> Result<(), BuildError> {
    Server::builder(Listing::new()).tools(tools).build().map(drop)
}

#[test]
fn catalog_tools_still_need_dispatch_when_typed_tools_are_registered() {
    let catalog = Listing { tools: vec![ToolSpec::new("listed", Mode::ReadOnly)], ..Listing::default() };
    let err = Server::builder(catalog).tools(echo_tools()).build().unwrap_err();
    assert_eq!(err, BuildError::MissingDispatch);
}

#[test]
fn a_typed_tools_schema_goes_through_the_same_build_refusals() {
    let handler = |_: Value, _cx: RequestContext| async { Ok::<_, ToolError>("") };
    let not_object = ToolSpec::new("arr", Mode::ReadOnly).input_schema(json!({"type": "array"}));
    assert_eq!(
        typed_only_result(Tools::new().add(not_object, handler)),
        Err(BuildError::ToolSchemaNotObject("arr".into()))
    );
    let remote = ToolSpec::new("remote", Mode::ReadOnly)
        .input_schema(json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}));
    let err = typed_only_result(Tools::new().add(remote, handler)).unwrap_err();
    assert!(matches!(&err, BuildError::ToolSchema { tool, .. } if tool == "remote"), "{err}");
    let caps = ToolSpec::new("caps", Mode::ReadOnly).requires_client_capabilities(json!(true));
    assert_eq!(
        typed_only_result(Tools::new().add(caps, handler)),
        Err(BuildError::InvalidRequiredCapabilities("caps".into()))
    );
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Page {
    limit: u8,
}

#[tokio::test]
async fn arguments_are_validated_against_the_schema_before_the_handlers_type_sees_them() {
    // Every refused call below is one the handler's type would accept: only the schema refuses it.
    let schema = json!({
        "type": "object",
        "properties": {"limit": {"type": "integer", "maximum": 10}},
        "required": ["limit"],
        "additionalProperties": false
    });
    let (ran, tools) = counted::<Page>("page", schema);
    let server = typed_only(tools);
    for (arguments, reason) in [
        (json!({"limit": 11}), "invalid arguments: arguments.limit must be <= 10"),
        (
            json!({"limit": 5, "extra": 1}),
            "invalid arguments: arguments.extra is not allowed (additional property)",
        ),
    ] {
        let r = send(&server, call("page", arguments.clone())).await;
        assert_eq!(
            r["result"],
            json!({
                "content": [{"type": "text", "text": format!("page: {reason}")}],
                "structuredContent": {"error": {"tool": "page", "reason": reason}},
                "isError": true,
                "resultType": "complete",
                "_meta": r["result"]["_meta"].clone(),
            }),
            "{arguments}"
        );
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
    let r = send(&server, call("page", json!({"limit": 5}))).await;
    assert_eq!(first_text(&r), "Page { limit: 5 }");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_value_the_schema_admits_but_the_type_refuses_is_a_tool_error_naming_the_argument_not_its_value() {
    // `{"limit": {}}` admits anything; the handler reads a `u8`.
    let schema = json!({"type": "object", "properties": {"limit": {}}});
    let (ran, tools) = counted::<Page>("search", schema);
    let server = typed_only(tools);
    let reason = "invalid arguments: argument limit does not have the form the tool reads";
    for (arguments, secret) in [
        (json!({"limit": "secret-7f3a"}), "secret-7f3a"),
        (json!({"limit": 300}), "300"),
        (json!({"limit": -17}), "17"),
        (json!({"limit": 2.5}), "2.5"),
        (json!({"limit": {"secret-key": "secret-value"}}), "secret"),
        (json!({"limit": ["secret-item"]}), "secret"),
    ] {
        for request in [
            call("search", arguments.clone()),
            bare(1, "tools/call", json!({"name": "search", "arguments": arguments})),
        ] {
            let r = send(&server, request).await;
            assert_eq!(r["result"]["isError"], true, "a tool error, not a JSON-RPC error or a panic: {r}");
            assert_eq!(
                r["result"]["structuredContent"],
                json!({"error": {"tool": "search", "reason": reason}})
            );
            assert!(first_text(&r).contains(reason), "{r}");
            assert!(!r.to_string().contains(secret), "the caller's value is never quoted: {r}");
        }
    }
    let r = send(&server, call("search", json!({}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["structuredContent"]["error"]["reason"],
        "invalid arguments: argument limit is required by the tool",
        "a field the schema leaves optional but the type requires is named"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Nested {
    filter: Filter,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Filter {
    kind: u32,
}

#[tokio::test]
async fn a_nested_refusal_names_only_the_top_level_argument() {
    let schema =
        json!({"type": "object", "properties": {"filter": {"type": "object"}}, "required": ["filter"]});
    let (ran, tools) = counted::<Nested>("nested", schema);
    let server = typed_only(tools);
    let r = send(&server, call("nested", json!({"filter": {"kind": "secret-kind"}}))).await;
    assert_eq!(
        r["result"]["structuredContent"]["error"]["reason"],
        "invalid arguments: argument filter does not have the form the tool reads"
    );
    assert!(!r.to_string().contains("secret-kind") && !r.to_string().contains("kind"), "{r}");
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Strict {
    known: Option<u32>,
}

#[tokio::test]
async fn a_typed_handler_reads_only_the_declared_arguments() {
    // The schema admits extra keys; the handler's type refuses them; they never reach it.
    let schema = json!({"type": "object", "properties": {"known": {}}, "additionalProperties": true});
    let (ran, tools) = counted::<Strict>("strict", schema);
    let server = typed_only(tools);
    let r = send(&server, call("strict", json!({"known": 1, "undeclared": "x"}))).await;
    assert_eq!(first_text(&r), "Strict { known: Some(1) }", "{r}");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[derive(Serialize)]
struct Weather {
    place: String,
    celsius: f64,
}

#[tokio::test]
async fn a_typed_handler_returns_text_json_content_or_a_tool_error() {
    let tools = Tools::new()
        .add(ToolSpec::new("json", Mode::ReadOnly), |_: Value, _cx: RequestContext| async {
            Ok::<_, ToolError>(Json(Weather { place: "Oslo".into(), celsius: 4.5 }))
        })
        .add(ToolSpec::new("content", Mode::ReadOnly), |_: Value, _cx: RequestContext| async {
            Ok::<_, ToolError>(ToolOutput::text("block").with_structured(json!({"n": 1})))
        })
        .add(ToolSpec::new("fails", Mode::ReadOnly), |_: Value, _cx: RequestContext| async {
            Err::<String, _>(ToolError::new("upstream unavailable"))
        })
        .add(ToolSpec::new("panics", Mode::ReadOnly), |_: Value, _cx: RequestContext| async {
            if true {
                panic!("typed handler bug");
            }
            Ok::<_, ToolError>("")
        });
    let server = typed_only(tools);
    let r = send(&server, call("json", json!({}))).await;
    assert_eq!(r["result"]["structuredContent"], json!({"place": "Oslo", "celsius": 4.5}));
    assert_eq!(first_text(&r), r#"{"place":"Oslo","celsius":4.5}"#);
    let r = send(&server, call("content", json!({}))).await;
    assert_eq!((first_text(&r), &r["result"]["structuredContent"]), ("block", &json!({"n": 1})));
    let r = send(&server, call("fails", json!({}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["structuredContent"], json!({"error": "upstream unavailable"}));
    let r = send(&server, call("panics", json!({}))).await;
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}));
}

#[tokio::test]
async fn a_typed_tools_required_capabilities_are_checked_before_its_handler() {
    let spec = ToolSpec::new("ask", Mode::Proposal).requires_client_capabilities(json!({"elicitation": {}}));
    let (ran, tools) = {
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&ran);
        let tools = Tools::new().add(spec, move |_: Value, _cx: RequestContext| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, ToolError>("asked") }
        });
        (ran, tools)
    };
    let server = typed_only(tools);
    assert_eq!(code(&send(&server, call("ask", json!({}))).await), -32021);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let mut request = call("ask", json!({}));
    request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    assert_eq!(first_text(&send(&server, request).await), "asked");
}

#[tokio::test]
async fn registries_with_state_hand_every_handler_the_hosts_state() {
    use mcp_kernel_router::ReaderError;
    use mcp_kernel_router::prompts::{PromptOutput, PromptSpec, Prompts};
    use mcp_kernel_router::resources::{ResourceSpec, ResourceTemplateSpec, Resources, TemplateMatch};
    use mcp_kernel_router::wire::types::ResourceContents;

    #[derive(Deserialize)]
    struct Topic {
        topic: String,
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let tools = Tools::with_state(Arc::clone(&calls)).add(
        ToolSpec::new("count", Mode::Proposal),
        |calls: Arc<AtomicUsize>, _args: Value, _cx: RequestContext| async move {
            Ok::<_, ToolError>(format!("call {}", calls.fetch_add(1, Ordering::SeqCst) + 1))
        },
    );
    let resources = Resources::with_state(Arc::clone(&calls))
        .add(
            ResourceSpec::new("c://total", "total"),
            |calls: Arc<AtomicUsize>, _cx: RequestContext| async move {
                Ok::<_, ReaderError>(vec![ResourceContents::text(
                    "c://total",
                    calls.load(Ordering::SeqCst).to_string(),
                )])
            },
        )
        .template(
            ResourceTemplateSpec::new("c://plus/{n}", "plus"),
            |calls: Arc<AtomicUsize>, found: TemplateMatch, _cx: RequestContext| async move {
                let n: usize = found.parse("n")?;
                let total = calls.load(Ordering::SeqCst) + n;
                Ok(vec![ResourceContents::text(found.uri(), total.to_string())])
            },
        );
    let prompts = Prompts::with_state(Arc::clone(&calls)).add(
        PromptSpec::new("say")
            .argument(mcp_kernel_router::prompts::PromptArgument::new("topic").required(true)),
        |calls: Arc<AtomicUsize>, args: Topic, _cx: RequestContext| async move {
            let text = format!("{} after {} calls", args.topic, calls.load(Ordering::SeqCst));
            Ok::<_, ReaderError>(PromptOutput { description: Some(text), messages: Vec::new() })
        },
    );
    let server =
        Server::builder(Listing::new()).tools(tools).resources(resources).prompts(prompts).build().unwrap();
    for n in 1..=2 {
        let answer = send(&server, modern(n, "tools/call", json!({"name": "count"}))).await;
        assert_eq!(answer["result"]["content"][0]["text"], format!("call {n}"));
    }
    let total = send(&server, modern(3, "resources/read", json!({"uri": "c://total"}))).await;
    assert_eq!(total["result"]["contents"][0]["text"], "2");
    let plus = send(&server, modern(4, "resources/read", json!({"uri": "c://plus/5"}))).await;
    assert_eq!(plus["result"]["contents"][0]["text"], "7");
    let said =
        send(&server, modern(5, "prompts/get", json!({"name": "say", "arguments": {"topic": "notes"}})))
            .await;
    assert_eq!(said["result"]["description"], "notes after 2 calls");
}
