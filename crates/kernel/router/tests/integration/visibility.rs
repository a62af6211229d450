//! Per-request visibility (`ServerBuilder::visibility`): the lists are filtered per principal, pages are
//! cut from the visible items only, and a hidden item is answered everywhere exactly as one that is not
//! listed; a filter that panics hides the item.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use crate::support::*;
use base64::Engine;
use mcp_kernel_router::completion::{Completion, CompletionRef, CompletionRequest};
use mcp_kernel_router::prompts::{GetPrompt, PromptArgument, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceEntry, ResourceSpec, ResourceTemplateSpec};
use mcp_kernel_router::transport::ToolHeaders;
use mcp_kernel_router::visibility::Listed;
use mcp_kernel_router::wire::types::{
    ContentBlock, PromptMessage, ResourceContents, Role, TextResourceContents,
};
use mcp_kernel_router::{
    Extensions, Listing, Mode, ReaderError, RequestContext, Server, ToolCall, ToolError, ToolOutput,
    ToolSpec, Tools,
};
use serde_json::{Value, json};

/// Items whose key holds "secret" are shown to "admin" only; the filter panics on "boom".
fn filter(item: Listed<'_>, context: &RequestContext) -> bool {
    let key = match item {
        Listed::Tool(key) | Listed::Resource(key) | Listed::Template(key) | Listed::Prompt(key) => key,
        _ => return false,
    };
    if key.contains("boom") {
        panic!("filter bug on {key}");
    }
    !key.contains("secret") || context.principal::<String>().map(String::as_str) == Some("admin")
}

fn visible_to(principal: Option<&str>) -> impl Fn(&str) -> bool {
    let admin = principal == Some("admin");
    move |key: &str| !key.contains("boom") && (admin || !key.contains("secret"))
}

const TOOLS: [&str; 5] = ["public", "secret_tool", "secret_caps", "boom_tool", "another"];
const RESOURCES: [&str; 8] = [
    "r://a",
    "r://b-secret",
    "r://c",
    "r://d-secret",
    "r://e",
    "r://f-secret",
    "n://secret-note",
    "r://boom",
];
/// `n://a-secret/{x}` sorts before `n://{+rest}` and shadows part of it; so does `n://secret-note`.
const TEMPLATES: [&str; 5] =
    ["t://public/{x}", "t://secret/{x}", "n://a-secret/{x}", "n://{+rest}", "t://boom/{x}"];
const PROMPTS: [&str; 4] = ["greet", "secret_prompt", "boom_prompt", "zeta"];

/// The catalog's items whose key `keep` admits.
fn catalog(keep: &dyn Fn(&str) -> bool) -> Listing {
    let tools = TOOLS.into_iter().filter(|k| keep(k)).map(|name| {
        let spec = ToolSpec::new(name, Mode::ReadOnly).input_schema(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        );
        if name == "secret_caps" {
            spec.requires_client_capabilities(json!({"elicitation": {}}))
        } else {
            spec
        }
    });
    let resources =
        RESOURCES.into_iter().filter(|k| keep(k)).map(|uri| ResourceEntry::from(ResourceSpec::new(uri, "r")));
    let templates = TEMPLATES
        .into_iter()
        .filter(|k| keep(k))
        .map(|t| ResourceEntry::from(ResourceTemplateSpec::new(t, "t")));
    let prompts = PROMPTS
        .into_iter()
        .filter(|k| keep(k))
        .map(|name| PromptSpec::new(name).argument(PromptArgument::new("name").required(true)));
    Listing {
        tools: tools.collect(),
        resources: resources.chain(templates).collect(),
        prompts: prompts.collect(),
    }
}

async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text(format!("called {}", call.name)))
}

async fn read(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    let template = request.template().map(|found| found.template().to_owned());
    let text = format!("read {} via {template:?}", request.uri);
    Ok(vec![TextResourceContents::new(&request.uri, text).into()])
}

async fn render(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    let text = format!("{} for {}", request.name, request.arguments.get_str("name").unwrap_or("?"));
    Ok(PromptOutput {
        description: None,
        messages: vec![PromptMessage::new(Role::User, ContentBlock::text(text))],
    })
}

type Completed = Arc<Mutex<Vec<CompletionRef>>>;

fn build(listing: Listing, filtered: bool) -> (Completed, Server) {
    let completed: Completed = Arc::default();
    let seen = Arc::clone(&completed);
    let builder = Server::builder(listing)
        .dispatch(dispatch)
        .resource_reader(read)
        .prompt_reader(render)
        .completer(move |request: CompletionRequest| {
            seen.lock().unwrap().push(request.reference.clone());
            async { Ok::<_, ReaderError>(Completion::new(vec!["v".into()])) }
        })
        .page_size(NonZeroUsize::new(2).unwrap());
    let builder = if filtered { builder.visibility(filter) } else { builder };
    (completed, builder.build().expect("the visibility catalog builds"))
}

/// The filtered server over the whole catalog.
fn full() -> (Completed, Server) {
    build(catalog(&|_| true), true)
}

/// An unfiltered server listing only what `principal` may see.
fn only_for(principal: Option<&str>) -> Server {
    build(catalog(&visible_to(principal)), false).1
}

type Make = fn(i64, &str, Value) -> Value;

/// Every page of a list, following `nextCursor`.
async fn pages(server: &Server, principal: Option<&str>, make: Make, method: &str) -> Vec<Value> {
    let mut responses = Vec::new();
    let mut params = json!({});
    loop {
        let response = send_as(server, principal, make(1, method, params.clone())).await;
        let next = response["result"]["nextCursor"].as_str().map(str::to_owned);
        responses.push(response);
        match next {
            Some(cursor) if responses.len() < 20 => params = json!({"cursor": cursor}),
            _ => return responses,
        }
    }
}

fn listed_keys(pages: &[Value], field: &str, key: &str) -> Vec<Vec<String>> {
    pages.iter().map(|page| names(page, field, key)).collect()
}

/// The key a cursor names (base64url over `{"a": key, ...}`).
fn cursor_key(cursor: &str) -> String {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor).unwrap();
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    value["a"].as_str().unwrap().to_owned()
}

fn call(name: &str) -> Value {
    modern(1, "tools/call", json!({"name": name, "arguments": {"n": 1}}))
}

fn read_request(uri: &str) -> Value {
    modern(1, "resources/read", json!({"uri": uri}))
}

fn get_request(name: &str) -> Value {
    modern(1, "prompts/get", json!({"name": name, "arguments": {"name": "Ada"}}))
}

fn complete_prompt(name: &str) -> Value {
    modern(
        1,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "name", "value": ""}}),
    )
}

fn complete_template(uri: &str) -> Value {
    modern(
        1,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": "x", "value": ""}}),
    )
}

#[tokio::test]
async fn lists_are_filtered_per_principal() {
    let (_, server) = full();
    for (principal, tools, prompts, templates) in [
        (None, vec!["public", "another"], vec!["greet", "zeta"], vec!["n://{+rest}", "t://public/{x}"]),
        (
            Some("bob"),
            vec!["public", "another"],
            vec!["greet", "zeta"],
            vec!["n://{+rest}", "t://public/{x}"],
        ),
        (
            Some("admin"),
            vec!["public", "secret_tool", "secret_caps", "another"],
            vec!["greet", "secret_prompt", "zeta"],
            vec!["n://a-secret/{x}", "n://{+rest}", "t://public/{x}", "t://secret/{x}"],
        ),
    ] {
        let listed = send_as(&server, principal, modern(1, "tools/list", json!({}))).await;
        assert_eq!(names(&listed, "tools", "name"), tools, "{principal:?}");
        let listed = pages(&server, principal, modern, "prompts/list").await;
        assert_eq!(listed_keys(&listed, "prompts", "name").concat(), prompts, "{principal:?}");
        let listed = pages(&server, principal, modern, "resources/templates/list").await;
        assert_eq!(
            listed_keys(&listed, "resourceTemplates", "uriTemplate").concat(),
            templates,
            "{principal:?}"
        );
    }
}

#[tokio::test]
async fn pages_hold_only_visible_items_and_cursors_name_only_visible_ones() {
    let (_, server) = full();
    for make in [modern as Make, legacy, bare] {
        let bob = pages(&server, Some("bob"), make, "resources/list").await;
        assert_eq!(listed_keys(&bob, "resources", "uri"), [vec!["r://a", "r://c"], vec!["r://e"]]);
        let admin = pages(&server, Some("admin"), make, "resources/list").await;
        assert_eq!(
            listed_keys(&admin, "resources", "uri"),
            [
                vec!["n://secret-note", "r://a"],
                vec!["r://b-secret", "r://c"],
                vec!["r://d-secret", "r://e"],
                vec!["r://f-secret"]
            ]
        );
        for (principal, responses) in [(Some("bob"), &bob), (Some("admin"), &admin)] {
            for page in responses.iter() {
                if let Some(cursor) = page["result"]["nextCursor"].as_str() {
                    let key = cursor_key(cursor);
                    assert!(visible_to(principal)(&key), "{principal:?}'s cursor names {key}");
                    assert_eq!(Some(&key), names(page, "resources", "uri").last(), "the last item served");
                }
            }
        }
        assert!(bob[1]["result"].get("nextCursor").is_none(), "only hidden items follow: no cursor");
    }
    // A cursor taken from another principal's pages names a position, never what lies there.
    let admin_cursor =
        pages(&server, Some("admin"), modern, "resources/list").await[1]["result"]["nextCursor"].clone();
    assert_eq!(cursor_key(admin_cursor.as_str().unwrap()), "r://c");
    let after =
        send_as(&server, Some("bob"), modern(1, "resources/list", json!({"cursor": admin_cursor}))).await;
    assert_eq!(names(&after, "resources", "uri"), ["r://e"]);
    assert!(after["result"].get("nextCursor").is_none());
}

#[tokio::test]
async fn a_hidden_tool_is_answered_exactly_as_an_unknown_tool() {
    let (_, server) = full();
    let unlisted = only_for(Some("bob"));
    for make in [modern as Make, legacy, bare] {
        let request = |name: &str| make(1, "tools/call", json!({"name": name, "arguments": {"n": 1}}));
        let unknown = send_as(&server, Some("bob"), request("never_listed")).await;
        assert_eq!(
            unknown,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool"}})
        );
        for hidden in ["secret_tool", "secret_caps", "boom_tool"] {
            assert_eq!(send_as(&server, Some("bob"), request(hidden)).await, unknown, "{hidden}");
            assert_eq!(send_as(&server, None, request(hidden)).await, unknown, "{hidden}");
            assert_eq!(send(&unlisted, request(hidden)).await, unknown, "{hidden}");
        }
        // Not even its argument check or its required capability is revealed.
        let invalid = make(1, "tools/call", json!({"name": "secret_tool", "arguments": {"n": "x"}}));
        assert_eq!(send_as(&server, Some("bob"), invalid).await, unknown);
    }
    let admin = send_as(&server, Some("admin"), call("secret_tool")).await;
    assert_eq!(first_text(&admin), "called secret_tool");
    assert_eq!(code(&send_as(&server, Some("admin"), call("secret_caps")).await), -32021);
}

#[tokio::test]
async fn a_hidden_resource_or_template_read_is_answered_as_an_unlisted_uri() {
    let (_, server) = full();
    let unlisted = only_for(Some("bob"));
    for make in [modern as Make, legacy] {
        for uri in ["r://b-secret", "t://secret/1", "r://boom", "t://boom/1"] {
            let request = make(1, "resources/read", json!({"uri": uri}));
            let hidden = send_as(&server, Some("bob"), request.clone()).await;
            assert_eq!(hidden, send(&unlisted, request).await, "{uri}");
            assert_eq!(hidden["error"]["data"], json!({"uri": uri}), "{uri}: {hidden}");
        }
    }
    let admin = send_as(&server, Some("admin"), read_request("t://secret/1")).await;
    assert_eq!(admin["result"]["contents"][0]["text"], "read t://secret/1 via Some(\"t://secret/{x}\")");
}

#[tokio::test]
async fn a_uri_a_hidden_item_shadows_is_read_as_if_the_hidden_item_were_not_listed() {
    // `n://secret-note` (a resource) and `n://a-secret/{x}` (a template that sorts first) both match
    // `n://{+rest}`: to a caller who may not see them, the uri is one of `n://{+rest}`'s.
    let (_, server) = full();
    let unlisted = only_for(Some("bob"));
    for uri in ["n://secret-note", "n://a-secret/1"] {
        let hidden = send_as(&server, Some("bob"), read_request(uri)).await;
        assert_eq!(hidden, send(&unlisted, read_request(uri)).await, "{uri}");
        assert_eq!(
            hidden["result"]["contents"][0]["text"],
            format!("read {uri} via Some(\"n://{{+rest}}\")"),
            "{hidden}"
        );
    }
    let admin = send_as(&server, Some("admin"), read_request("n://a-secret/1")).await;
    assert_eq!(admin["result"]["contents"][0]["text"], "read n://a-secret/1 via Some(\"n://a-secret/{x}\")");
    let admin = send_as(&server, Some("admin"), read_request("n://secret-note")).await;
    assert_eq!(admin["result"]["contents"][0]["text"], "read n://secret-note via None");
}

#[tokio::test]
async fn a_hidden_prompt_get_is_answered_as_an_unknown_prompt() {
    let (_, server) = full();
    let unlisted = only_for(Some("bob"));
    for make in [modern as Make, legacy] {
        for name in ["secret_prompt", "boom_prompt"] {
            let request = make(1, "prompts/get", json!({"name": name, "arguments": {"name": "Ada"}}));
            let hidden = send_as(&server, Some("bob"), request.clone()).await;
            assert_eq!(hidden, send(&unlisted, request.clone()).await, "{name}");
            assert_eq!(hidden["error"]["message"], "Invalid params: unknown prompt", "{hidden}");
            // Not even its argument check is revealed.
            let no_arguments = make(1, "prompts/get", json!({"name": name}));
            assert_eq!(
                send_as(&server, Some("bob"), no_arguments.clone()).await,
                send(&unlisted, no_arguments).await
            );
        }
    }
    let admin = send_as(&server, Some("admin"), get_request("secret_prompt")).await;
    assert_eq!(admin["result"]["messages"][0]["content"]["text"], "secret_prompt for Ada");
}

#[tokio::test]
async fn a_completion_naming_a_hidden_prompt_or_template_is_answered_as_unknown() {
    let (completed, server) = full();
    let unlisted = only_for(Some("bob"));
    let unknown_prompt = send_as(&server, Some("bob"), complete_prompt("never_listed")).await;
    let unknown_template = send_as(&server, Some("bob"), complete_template("x://never/{x}")).await;
    assert_eq!(code(&unknown_prompt), -32602);
    assert_eq!(code(&unknown_template), -32602);
    for name in ["secret_prompt", "boom_prompt"] {
        let hidden = send_as(&server, Some("bob"), complete_prompt(name)).await;
        assert_eq!(hidden, unknown_prompt, "{name}");
        assert_eq!(hidden, send(&unlisted, complete_prompt(name)).await, "{name}");
    }
    for template in ["t://secret/{x}", "n://a-secret/{x}", "t://boom/{x}"] {
        let hidden = send_as(&server, Some("bob"), complete_template(template)).await;
        assert_eq!(hidden, unknown_template, "{template}");
        assert_eq!(hidden, send(&unlisted, complete_template(template)).await, "{template}");
    }
    assert!(completed.lock().unwrap().is_empty(), "the completer never saw a hidden reference");
    let admin = send_as(&server, Some("admin"), complete_prompt("secret_prompt")).await;
    assert_eq!(admin["result"]["completion"]["values"], json!(["v"]));
    assert_eq!(*completed.lock().unwrap(), [CompletionRef::Prompt { name: "secret_prompt".into() }]);
}

#[tokio::test]
async fn every_answer_to_a_caller_is_the_answer_of_a_server_listing_only_what_they_may_see() {
    let (_, server) = full();
    for principal in [None, Some("bob"), Some("admin")] {
        let oracle = only_for(principal);
        for make in [modern as Make, legacy, bare] {
            for method in ["resources/list", "resources/templates/list", "prompts/list"] {
                assert_eq!(
                    pages(&server, principal, make, method).await,
                    pages(&oracle, None, make, method).await,
                    "{principal:?} {method}"
                );
            }
            let mut requests = vec![make(1, "tools/list", json!({}))];
            for name in TOOLS.into_iter().chain(["never_listed"]) {
                requests.push(make(1, "tools/call", json!({"name": name, "arguments": {"n": 1}})));
            }
            let uris = RESOURCES.into_iter().chain([
                "r://zzz",
                "t://public/1",
                "t://secret/1",
                "n://a-secret/1",
                "n://x/y",
                "t://boom/1",
            ]);
            for uri in uris {
                requests.push(make(1, "resources/read", json!({"uri": uri})));
            }
            for name in PROMPTS.into_iter().chain(["never_listed"]) {
                requests.push(make(1, "prompts/get", json!({"name": name, "arguments": {"name": "Ada"}})));
            }
            for request in requests {
                assert_eq!(
                    send_as(&server, principal, request.clone()).await,
                    send(&oracle, request.clone()).await,
                    "{principal:?} {request}"
                );
            }
        }
        for name in PROMPTS.into_iter().chain(["never_listed"]) {
            assert_eq!(
                send_as(&server, principal, complete_prompt(name)).await,
                send(&oracle, complete_prompt(name)).await
            );
        }
        for template in TEMPLATES.into_iter().chain(["x://never/{x}"]) {
            assert_eq!(
                send_as(&server, principal, complete_template(template)).await,
                send(&oracle, complete_template(template)).await
            );
        }
    }
}

#[tokio::test]
async fn a_panicking_filter_hides_the_item_and_is_logged() {
    let (_, server) = full();
    let (logs, _guard) = capture_logs();
    let admin = send_as(&server, Some("admin"), modern(1, "tools/list", json!({}))).await;
    assert!(!names(&admin, "tools", "name").contains(&"boom_tool".to_owned()), "{admin}");
    assert_eq!(code(&send_as(&server, Some("admin"), call("boom_tool")).await), -32602);
    assert_eq!(code(&send_as(&server, Some("admin"), read_request("r://boom")).await), -32602);
    assert_eq!(code(&send_as(&server, Some("admin"), get_request("boom_prompt")).await), -32602);
    assert!(logs.text().contains("visibility filter panicked"), "{}", logs.text());
    // Serving goes on, for every other item.
    assert_eq!(first_text(&send_as(&server, Some("admin"), call("secret_tool")).await), "called secret_tool");
}

#[tokio::test]
async fn a_hidden_tool_mirrors_no_headers() {
    let (_, server) = full();
    let as_principal = |name: &str| {
        let mut extensions = Extensions::new();
        extensions.insert(name.to_owned());
        server.context_for(None, &extensions)
    };
    assert!(matches!(server.tool_headers_for("secret_tool", &as_principal("bob")), ToolHeaders::UnknownTool));
    assert!(matches!(server.tool_headers_for("boom_tool", &as_principal("admin")), ToolHeaders::UnknownTool));
    assert!(matches!(server.tool_headers_for("secret_tool", &as_principal("admin")), ToolHeaders::Params(_)));
    let nobody = server.context_for(None, &Extensions::new());
    assert!(matches!(server.tool_headers_for("public", &nobody), ToolHeaders::Params(_)));
}

#[tokio::test]
async fn the_header_view_asks_the_filter_with_the_requests_own_era_and_capabilities() {
    use mcp_kernel_router::Era;
    use mcp_kernel_router::wire::ProtocolVersion;

    let asked: Arc<Mutex<Vec<(String, Era, bool)>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let listing = Listing { tools: vec![ToolSpec::new("t", Mode::ReadOnly)], ..Listing::default() };
    let server = Server::builder(listing)
        .dispatch(|_call: mcp_kernel_router::ToolCall| async {
            Ok::<_, mcp_kernel_router::ToolError>(mcp_kernel_router::ToolOutput::text(""))
        })
        .visibility(move |item: Listed<'_>, cx: &RequestContext| {
            if let Listed::Tool(name) = item {
                seen.lock().unwrap().push((name.to_owned(), cx.era, cx.client_capabilities.is_some()));
            }
            true
        })
        .build()
        .unwrap();
    let modern = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}});
    let context = server.context_for(modern.as_object(), &Extensions::new());
    assert!(matches!(server.tool_headers_for("t", &context), ToolHeaders::Params(_)));
    let legacy = server.context_for(None, &Extensions::new());
    server.tool_headers_for("t", &legacy);
    server.tool_headers_for("not_listed", &legacy);
    assert_eq!(
        asked.lock().unwrap().clone(),
        [
            ("t".to_owned(), Era::Declared(ProtocolVersion::V2026_07_28), true),
            ("t".to_owned(), Era::Bare, false)
        ],
        "the request's own era and capabilities, and never a name that is not listed"
    );
}

fn signed_in(_: Listed<'_>, context: &RequestContext) -> bool {
    context.principal::<String>().is_some()
}

#[tokio::test]
async fn the_principal_reaches_the_filter_and_the_handlers() {
    let tools = Tools::new().add(
        ToolSpec::new("whoami", Mode::ReadOnly),
        |_: Value, cx: RequestContext| async move {
            Ok::<_, ToolError>(format!("{:?}", cx.principal::<String>()))
        },
    );
    let server = Server::builder(Listing::new()).tools(tools).visibility(signed_in).build().unwrap();
    let r = send_as(&server, Some("carol"), modern(1, "tools/call", json!({"name": "whoami"}))).await;
    assert_eq!(first_text(&r), "Some(\"carol\")");
    let r = send_as(&server, None, modern(1, "tools/call", json!({"name": "whoami"}))).await;
    assert_eq!(code(&r), -32602, "no principal: the filter hides it");
}

#[tokio::test]
async fn with_a_filter_every_result_is_private_whatever_the_cache_hints_say() {
    use mcp_kernel_router::options::CacheHints;
    use mcp_kernel_router::wire::types::CacheScope;
    let public = CacheHints { ttl_ms: 60_000, scope: CacheScope::Public };
    let listing = Listing { tools: vec![ToolSpec::new("t", Mode::ReadOnly)], ..Listing::default() };
    let build = |filtered: bool| {
        let builder = Server::builder(listing.clone())
            .dispatch(|_call: mcp_kernel_router::ToolCall| async {
                Ok::<_, mcp_kernel_router::ToolError>(mcp_kernel_router::ToolOutput::text(""))
            })
            .tools_cache(public)
            .resources_cache(public)
            .prompts_cache(public);
        if filtered { builder.visibility(|_: Listed<'_>, _: &RequestContext| true) } else { builder }
            .build()
            .unwrap()
    };
    for method in ["tools/list", "resources/list", "resources/templates/list", "prompts/list"] {
        let unfiltered = send(&build(false), modern(1, method, json!({}))).await;
        assert_eq!(
            unfiltered["result"]["cacheScope"], "public",
            "{method}: the host's hint without a filter"
        );
        let filtered = send(&build(true), modern(1, method, json!({}))).await;
        assert_eq!(filtered["result"]["cacheScope"], "private", "{method}");
        assert_eq!(filtered["result"]["ttlMs"], 60_000, "{method}: only the scope changes");
    }
}

#[tokio::test]
async fn a_filter_that_panics_on_every_item_is_asked_at_most_eight_times_per_request() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let prompts: Vec<PromptSpec> = (0..200).map(|i| PromptSpec::new(format!("p{i:03}"))).collect();
    let server = Server::builder(Listing { prompts, ..Listing::default() })
        .prompt_reader(|_get: mcp_kernel_router::prompts::GetPrompt| async {
            Ok::<_, mcp_kernel_router::ReaderError>(mcp_kernel_router::prompts::PromptOutput::default())
        })
        .page_size(NonZeroUsize::new(500).unwrap())
        .visibility(move |_: Listed<'_>, cx: &RequestContext| {
            counter.fetch_add(1, Ordering::SeqCst);
            // A plausible bug: a request without a principal.
            cx.principal::<String>().is_some() || panic!("no principal")
        })
        .build()
        .unwrap();
    let listed = send(&server, modern(1, "prompts/list", json!({}))).await;
    assert_eq!(listed["result"]["prompts"], json!([]), "fail closed");
    assert_eq!(asked.load(Ordering::SeqCst), 8, "at most eight panics per request, not one per item");
    let listed = send_as(&server, Some("alice"), modern(2, "prompts/list", json!({}))).await;
    assert_eq!(
        listed["result"]["prompts"].as_array().map(Vec::len),
        Some(200),
        "the next request is asked afresh"
    );
}
