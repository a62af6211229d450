//! Every method and every error path of the core, checked against the official `schema.json` of the
//! revision the answer belongs to: modern-declared requests against 2026-07-28, bare and legacy-declared
//! ones against 2025-11-25.

mod support;

use serde_json::{Value, json};
use support::official::assert_response;
use support::*;

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
