//! Every method and every error path of the core, checked against the official `schema.json` of the
//! revision the answer belongs to: modern-declared requests against 2026-07-28, bare and legacy-declared
//! ones against 2025-11-25.

use crate::support;

use crate::support::official::assert_response;
use crate::support::*;
use serde_json::{Value, json};

struct Case {
    name: &'static str,
    request: Value,
    revision: &'static str,
    result: &'static str,
    expect_error: Option<i64>,
}

fn case(name: &'static str, request: Value, revision: &'static str, result: &'static str) -> Case {
    Case { name, request, revision, result, expect_error: None }
}

fn error(name: &'static str, request: Value, revision: &'static str, code: i64) -> Case {
    Case { name, request, revision, result: "", expect_error: Some(code) }
}

fn cases() -> Vec<Case> {
    let m = MODERN;
    let l = LEGACY;
    let cursor_of_prompts =
        mcp_kernel_router::fuzzing::encode(mcp_kernel_router::fuzzing::CursorKind::Prompts, "a");
    vec![
        // Results, modern.
        case("discover", modern(1, "server/discover", json!({})), m, "DiscoverResult"),
        case("discover bare", bare(1, "server/discover", json!({})), m, "DiscoverResult"),
        case("tools/list", modern(1, "tools/list", json!({})), m, "ListToolsResult"),
        case(
            "tools/call ok",
            modern(1, "tools/call", json!({"name":"get_weather","arguments":{"place":"Oslo"}})),
            m,
            "CallToolResult",
        ),
        case("tools/call string", modern(1, "tools/call", json!({"name":"string_out"})), m, "CallToolResult"),
        case("tools/call content", modern(1, "tools/call", json!({"name":"content"})), m, "CallToolResult"),
        case(
            "tools/call invalid args",
            modern(1, "tools/call", json!({"name":"get_weather","arguments":{}})),
            m,
            "CallToolResult",
        ),
        case("tools/call tool error", modern(1, "tools/call", json!({"name":"fail"})), m, "CallToolResult"),
        case(
            "tools/call tool error map",
            modern(1, "tools/call", json!({"name":"fail_map"})),
            m,
            "CallToolResult",
        ),
        case("resources/list", modern(1, "resources/list", json!({})), m, "ListResourcesResult"),
        case(
            "resources/templates/list",
            modern(1, "resources/templates/list", json!({})),
            m,
            "ListResourceTemplatesResult",
        ),
        case(
            "resources/read",
            modern(1, "resources/read", json!({"uri":"test://a"})),
            m,
            "ReadResourceResult",
        ),
        case(
            "resources/read template",
            modern(1, "resources/read", json!({"uri":"test://place/Oslo"})),
            m,
            "ReadResourceResult",
        ),
        case("prompts/list", modern(1, "prompts/list", json!({})), m, "ListPromptsResult"),
        case(
            "prompts/list cursor",
            modern(1, "prompts/list", json!({"cursor": cursor_of_prompts})),
            m,
            "ListPromptsResult",
        ),
        case(
            "prompts/get",
            modern(1, "prompts/get", json!({"name":"forecast","arguments":{"place":"Oslo"}})),
            m,
            "GetPromptResult",
        ),
        case("shutdown", modern(1, "shutdown", json!({})), m, "EmptyResult"),
        // Results, legacy-shaped.
        case(
            "initialize",
            bare(
                1,
                "initialize",
                json!({"protocolVersion": l, "capabilities": {}, "clientInfo": {"name":"c","version":"1"}}),
            ),
            l,
            "InitializeResult",
        ),
        case(
            "initialize other version",
            bare(1, "initialize", json!({"protocolVersion": "2024-11-05"})),
            l,
            "InitializeResult",
        ),
        case("ping", bare(1, "ping", json!({})), l, "EmptyResult"),
        case(
            "legacy meta with a progress token",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}),
            l,
            "ListToolsResult",
        ),
        case("legacy tools/list", legacy(1, "tools/list", json!({})), l, "ListToolsResult"),
        case("bare tools/list", bare(1, "tools/list", json!({})), l, "ListToolsResult"),
        case(
            "bare tools/call",
            bare(1, "tools/call", json!({"name":"get_weather","arguments":{"place":"Oslo"}})),
            l,
            "CallToolResult",
        ),
        case(
            "bare tools/call string",
            bare(1, "tools/call", json!({"name":"string_out"})),
            l,
            "CallToolResult",
        ),
        case(
            "bare tools/call content",
            bare(1, "tools/call", json!({"name":"content"})),
            l,
            "CallToolResult",
        ),
        case(
            "bare tools/call invalid",
            bare(1, "tools/call", json!({"name":"get_weather","arguments":{"place":1}})),
            l,
            "CallToolResult",
        ),
        case("bare tools/call error", bare(1, "tools/call", json!({"name":"fail_map"})), l, "CallToolResult"),
        case("legacy resources/list", legacy(1, "resources/list", json!({})), l, "ListResourcesResult"),
        case(
            "legacy templates",
            legacy(1, "resources/templates/list", json!({})),
            l,
            "ListResourceTemplatesResult",
        ),
        case(
            "legacy resources/read",
            legacy(1, "resources/read", json!({"uri":"test://b"})),
            l,
            "ReadResourceResult",
        ),
        case("legacy prompts/list", legacy(1, "prompts/list", json!({})), l, "ListPromptsResult"),
        case(
            "legacy prompts/get",
            legacy(1, "prompts/get", json!({"name":"forecast","arguments":{"place":"Lima"}})),
            l,
            "GetPromptResult",
        ),
        // Errors, modern.
        error("top-level _meta", json!({"jsonrpc":"2.0","id":1,"method":"tools/list","_meta":{}}), m, -32602),
        error(
            "meta not object",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":[]}}),
            m,
            -32602,
        ),
        error(
            "meta lacks version",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}),
            m,
            -32602,
        ),
        error(
            "args not object",
            modern(1, "tools/call", json!({"name":"get_weather","arguments":null})),
            m,
            -32602,
        ),
        error(
            "bad log level",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":m,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}}),
            m,
            -32602,
        ),
        error(
            "discover with bad meta",
            json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}}}),
            m,
            -32022,
        ),
        error("null cursor", modern(1, "prompts/list", json!({"cursor": null})), m, -32602),
        error(
            "tools/list params not object",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}),
            m,
            -32602,
        ),
        error(
            "meta lacks capabilities",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion": m}}}),
            m,
            -32602,
        ),
        error(
            "unsupported version",
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}}}),
            m,
            -32022,
        ),
        error("modern ping", modern(1, "ping", json!({})), m, -32601),
        error("unknown method", modern(1, "completion/complete", json!({})), m, -32601),
        error("unknown tool", modern(1, "tools/call", json!({"name":"nope"})), m, -32602),
        error("tool name not string", modern(1, "tools/call", json!({"name":7})), m, -32602),
        error("missing capability", modern(1, "tools/call", json!({"name":"needs_elicitation"})), m, -32021),
        error("dispatch panics", modern(1, "tools/call", json!({"name":"panics"})), m, -32603),
        error("resource uri missing", modern(1, "resources/read", json!({})), m, -32602),
        error("resource not listed", modern(1, "resources/read", json!({"uri":"test://zzz"})), m, -32602),
        error("resource refused", modern(1, "resources/read", json!({"uri":"test://refused"})), m, -32602),
        error("reader panics", modern(1, "resources/read", json!({"uri":"test://panics"})), m, -32603),
        error("bad cursor", modern(1, "resources/list", json!({"cursor":"%%%"})), m, -32602),
        error(
            "foreign cursor",
            modern(
                1,
                "resources/list",
                json!({"cursor": mcp_kernel_router::fuzzing::encode(mcp_kernel_router::fuzzing::CursorKind::Prompts, "a")}),
            ),
            m,
            -32602,
        ),
        error(
            "params not object",
            json!({"jsonrpc":"2.0","id":1,"method":"prompts/list","params":[1]}),
            m,
            -32602,
        ),
        error("unknown prompt", modern(1, "prompts/get", json!({"name":"nope"})), m, -32602),
        error(
            "prompt args invalid",
            modern(1, "prompts/get", json!({"name":"forecast","arguments":{}})),
            m,
            -32602,
        ),
        error("prompt refused", modern(1, "prompts/get", json!({"name":"broken"})), m, -32602),
        error("prompt panics", modern(1, "prompts/get", json!({"name":"panics"})), m, -32603),
        error("invalid request", json!({"jsonrpc":"1.0","id":1,"method":"tools/list"}), m, -32600),
        error("non-string method", json!({"jsonrpc":"2.0","id":1,"method":5}), m, -32600),
        error("null id", json!({"jsonrpc":"2.0","id":null,"method":"tools/list"}), m, -32600),
        error("batch", json!([{"jsonrpc":"2.0","id":1,"method":"tools/list"}]), m, -32600),
        // Errors, legacy.
        error("legacy not found", legacy(1, "resources/read", json!({"uri":"test://zzz"})), l, -32002),
        error("bare not found", bare(1, "resources/read", json!({"uri":"test://refused"})), l, -32002),
        error("legacy unknown method", bare(1, "logging/setLevel", json!({"level":"info"})), l, -32601),
        error("legacy unknown tool", bare(1, "tools/call", json!({"name":"nope"})), l, -32602),
        error("legacy dispatch panics", bare(1, "tools/call", json!({"name":"panics"})), l, -32603),
    ]
}

#[tokio::test]
async fn every_method_and_error_path_validates_against_the_official_schema() {
    let server = server();
    for case in cases() {
        let response = send(&server, case.request.clone()).await;
        assert!(!response.is_null(), "{}: no response", case.name);
        assert_eq!(response.get("error").is_some(), case.expect_error.is_some(), "{}: {response}", case.name);
        match case.expect_error {
            Some(expected) => {
                assert_eq!(code(&response), expected, "{}: {response}", case.name);
                assert_response(case.revision, "", &response);
            }
            None => {
                assert!(response.get("result").is_some(), "{}: {response}", case.name);
                assert_response(case.revision, case.result, &response);
            }
        }
    }
}

#[tokio::test]
async fn a_modern_only_server_answers_initialize_with_schema_valid_errors() {
    let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default())
        .supported_versions([mcp_kernel_router::wire::ProtocolVersion::V2026_07_28])
        .build()
        .unwrap();
    for params in [json!({}), json!({"protocolVersion": 7}), json!(null)] {
        let response = send(&server, bare(1, "initialize", params.clone())).await;
        assert_eq!(code(&response), -32602, "{params}");
        assert_eq!(response["error"]["data"]["supported"], json!([MODERN]));
        assert_response(MODERN, "", &response);
    }
}

#[tokio::test]
async fn unsupported_initialize_on_a_modern_only_server_names_the_served_versions() {
    let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default())
        .supported_versions([mcp_kernel_router::wire::ProtocolVersion::V2026_07_28])
        .build()
        .unwrap();
    let response = send(&server, bare(1, "initialize", json!({"protocolVersion": LEGACY}))).await;
    assert_eq!(code(&response), -32022);
    assert_eq!(response["error"]["data"], json!({"supported": [MODERN], "requested": LEGACY}));
    assert_response(MODERN, "", &response);
}

#[test]
fn the_oracle_rejects_what_it_should() {
    use support::official::is_valid;
    // Without these, a validator that accepts everything would pass every case above.
    assert!(!is_valid(MODERN, "ListToolsResult", &json!({"tools": [], "ttlMs": 0, "cacheScope": "private"})));
    assert!(!is_valid(
        MODERN,
        "JSONRPCErrorResponse",
        &json!({"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}})
    ));
    assert!(!is_valid(LEGACY, "CallToolResult", &json!({"content": [], "structuredContent": "x"})));
    assert!(is_valid(
        MODERN,
        "CallToolResult",
        &json!({"resultType":"complete","content": [], "structuredContent": "x"})
    ));
}

/// A tool with every piece of metadata and an output schema, listed and served.
fn rich_tool(name: &str) -> mcp_kernel_router::ToolSpec {
    use mcp_kernel_router::wire::types::{Icon, IconTheme};
    let mut icon = Icon::new("https://example.com/icon.png");
    icon.mime_type = Some("image/png".into());
    icon.sizes = Some(vec!["48x48".into()]);
    icon.theme = Some(IconTheme::Light);
    let meta = json!({"com.example/owner": "team-a", "com.example/limits": {"rpm": 60}});
    mcp_kernel_router::ToolSpec::new(name, mcp_kernel_router::Mode::Proposal)
        .title("Rich")
        .description("Every field.")
        .input_schema(json!({
            "type": "object",
            "properties": {"place": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["place"]
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"place": {"type": "string"}, "celsius": {"type": "number"}},
            "required": ["place", "celsius"]
        }))
        .icons(vec![Icon::new("data:image/svg+xml;base64,PHN2Zy8+"), icon])
        .annotations_title("Rich (annotations)")
        .read_only_hint(true)
        .destructive_hint(false)
        .idempotent_hint(true)
        .open_world_hint(true)
        .meta(meta.as_object().cloned().unwrap())
}

fn rich_server() -> mcp_kernel_router::Server {
    use mcp_kernel_router::{Listing, RequestContext, Server, ToolCall, ToolError, ToolOutput, Tools};
    let listing = Listing {
        tools: vec![rich_tool("rich"), rich_tool("rich_fails"), rich_tool("rich_breaks")],
        ..Listing::default()
    };
    let typed = Tools::new().add(rich_tool("typed_rich"), |args: Value, _cx: RequestContext| async move {
        Ok::<_, ToolError>(mcp_kernel_router::Json(json!({"place": args["place"], "celsius": 1})))
    });
    Server::builder(listing)
        .dispatch(|call: ToolCall| async move {
            match &*call.name {
                "rich" => {
                    Ok(ToolOutput::text("4.5 in Oslo")
                        .with_structured(json!({"place": "Oslo", "celsius": 4.5})))
                }
                "rich_breaks" => Ok(ToolOutput::Json(json!({"place": "Oslo"}))),
                _ => Err(ToolError::structured(json!({"kind": "quota"}))),
            }
        })
        .tools(typed)
        .build()
        .unwrap()
}

#[tokio::test]
async fn output_schemas_full_metadata_and_structured_results_validate_against_both_official_schemas() {
    let server = rich_server();
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let oslo = json!({"place": "Oslo"});
    for (revision, make) in
        [(MODERN, modern as fn(i64, &str, Value) -> Value), (LEGACY, legacy), (LEGACY, bare)]
    {
        let list = send(&server, make(1, "tools/list", json!({}))).await;
        assert_response(revision, "ListToolsResult", &list);
        let tools = list["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 4);
        for tool in tools {
            assert!(tool.get("outputSchema").is_some() && tool.get("_meta").is_some(), "{tool}");
            assert_eq!(tool["icons"].as_array().map(Vec::len), Some(2), "{tool}");
            assert_eq!(tool["annotations"]["title"], "Rich (annotations)");
        }
        for (params, structured) in [
            (call("rich", oslo.clone()), true),
            (call("typed_rich", oslo.clone()), true),
            (call("rich_fails", oslo.clone()), false),
            (call("rich", json!({"days": 0})), false),
        ] {
            let r = send(&server, make(1, "tools/call", params.clone())).await;
            assert_eq!(r["result"].get("structuredContent").is_some(), structured, "{params}: {r}");
            assert_response(revision, "CallToolResult", &r);
        }
        let r = send(&server, make(1, "tools/call", call("rich_breaks", oslo.clone()))).await;
        assert_eq!(code(&r), -32603);
        assert_response(revision, "", &r);
    }
}

#[cfg(feature = "schemars")]
#[tokio::test]
async fn derived_schemas_validate_against_both_official_schemas() {
    use mcp_kernel_router::{Listing, Mode, RequestContext, Server, ToolError, ToolSpec, Tools};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    /// A search.
    struct Search {
        /// What to look for.
        query: String,
        limit: Option<u8>,
        filter: Option<Filter>,
        tags: Vec<String>,
    }
    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    struct Filter {
        kind: String,
    }
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Hits {
        hits: Vec<Filter>,
        next: Option<String>,
    }
    let tools = Tools::new().add_derived(
        ToolSpec::new("search", Mode::ReadOnly),
        |args: Search, _cx: RequestContext| async move {
            Ok::<_, ToolError>(Hits { hits: vec![Filter { kind: args.query }], next: None })
        },
    );
    let server = Server::builder(Listing::new()).tools(tools).build().unwrap();
    for (revision, make) in
        [(MODERN, modern as fn(i64, &str, Value) -> Value), (LEGACY, legacy), (LEGACY, bare)]
    {
        let list = send(&server, make(1, "tools/list", json!({}))).await;
        assert!(list["result"]["tools"][0]["inputSchema"].get("$defs").is_some(), "{list}");
        assert_response(revision, "ListToolsResult", &list);
        let r = send(
            &server,
            make(1, "tools/call", json!({"name": "search", "arguments": {"query": "q", "tags": []}})),
        )
        .await;
        assert_eq!(r["result"]["structuredContent"], json!({"hits": [{"kind": "q"}], "next": null}));
        assert_response(revision, "CallToolResult", &r);
    }
}
