//! `tools/list` and `tools/call` (protocol.md B-8, B-9; mcp-2026-07-28.md S-29 to S-31).

use crate::support::*;
use serde_json::json;

#[tokio::test]
async fn tools_list_keeps_catalog_order_and_the_schema_verbatim() {
    let server = server();
    let r = send(&server, modern(1, "tools/list", json!({"cursor": "ignored"}))).await;
    let tools = r["result"]["tools"].as_array().unwrap();
    let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names[..3], ["get_weather", "open", "no_schema"]);
    assert_eq!(
        serde_json::to_string(&tools[0]["inputSchema"]).unwrap(),
        serde_json::to_string(&weather_schema()).unwrap(),
        "advertised byte for byte, key order included"
    );
    assert!(r["result"].get("nextCursor").is_none());
    assert_eq!(tools[2]["inputSchema"], json!({"type":"object","properties":{},"additionalProperties":true}));
}

#[tokio::test]
async fn mode_derives_the_annotations() {
    let server = server();
    let r = send(&server, modern(1, "tools/list", json!({}))).await;
    assert_eq!(
        r["result"]["tools"][0]["annotations"],
        json!({"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false})
    );
    assert_eq!(
        r["result"]["tools"][1]["annotations"],
        json!({"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false})
    );
    assert!(r["result"]["tools"][1].get("description").is_none(), "an absent description is omitted");
}

#[tokio::test]
async fn a_json_output_is_structured_content_and_its_text() {
    let server = server();
    let r =
        send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":{"place":"Oslo"}})))
            .await;
    let result = &r["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"], json!({"place":"Oslo","declared":1}));
    let text: serde_json::Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
}

#[tokio::test]
async fn a_non_object_payload_is_structured_only_under_the_modern_revision() {
    let server = server();
    let modern_r = send(&server, modern(1, "tools/call", json!({"name":"string_out"}))).await;
    assert_eq!(modern_r["result"]["structuredContent"], "plain");
    assert_eq!(modern_r["result"]["content"][0]["text"], "\"plain\"");
    let bare_r = send(&server, bare(1, "tools/call", json!({"name":"string_out"}))).await;
    assert!(bare_r["result"].get("structuredContent").is_none(), "2025-11-25 structuredContent is an object");
    assert_eq!(bare_r["result"]["content"][0]["text"], "\"plain\"");
}

#[tokio::test]
async fn explicit_content_blocks_pass_through() {
    let server = server();
    let r = send(&server, modern(1, "tools/call", json!({"name":"content"}))).await;
    let kinds: Vec<_> =
        r["result"]["content"].as_array().unwrap().iter().map(|b| b["type"].clone()).collect();
    assert_eq!(kinds, ["text", "image", "audio", "resource_link", "resource"]);
    assert_eq!(r["result"]["structuredContent"], json!({"n":5}));
}

#[tokio::test]
async fn validation_failure_is_a_tool_error_and_dispatch_is_not_called() {
    let server = server();
    for args in
        [json!({}), json!({"place": 5}), json!({"place":"Oslo","extra":1}), json!({"place":"Oslo","days":0})]
    {
        let r = send(&server, modern(1, "tools/call", json!({"name":"get_weather","arguments":args}))).await;
        let result = &r["result"];
        assert_eq!(result["isError"], true, "{args}");
        assert_eq!(result["structuredContent"]["error"]["tool"], "get_weather");
        let reason = result["structuredContent"]["error"]["reason"].as_str().unwrap();
        assert!(reason.starts_with("invalid arguments: "), "{reason}");
        assert!(
            result["content"][0]["text"].as_str().unwrap().starts_with("get_weather: invalid arguments: ")
        );
        assert!(result["structuredContent"].get("declared").is_none(), "dispatch never ran");
    }
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_invalid_params() {
    let server = server();
    for args in [json!(null), json!([]), json!("x")] {
        let r = send(&server, modern(1, "tools/call", json!({"name":"no_schema","arguments":args}))).await;
        assert_eq!(code(&r), -32602, "{args}");
    }
}

#[tokio::test]
async fn dispatch_receives_only_declared_keys() {
    let server = server();
    let r =
        send(&server, modern(1, "tools/call", json!({"name":"open","arguments":{"known":1,"unknown":2}})))
            .await;
    assert_eq!(r["result"]["structuredContent"], json!({"known":1}));
    let r = send(&server, modern(1, "tools/call", json!({"name":"no_schema","arguments":{"a":1}}))).await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({}),
        "no schema: dispatch gets {{}} whatever was sent"
    );
}

#[tokio::test]
async fn tool_errors_are_results_with_their_reason() {
    let server = server();
    let r = send(&server, modern(1, "tools/call", json!({"name":"fail"}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["content"][0]["text"], "upstream unavailable");
    assert_eq!(r["result"]["structuredContent"], json!({"error":"upstream unavailable"}));
    let r = send(&server, modern(1, "tools/call", json!({"name":"fail_map"}))).await;
    assert_eq!(r["result"]["content"][0]["text"], "kind: quota, left: 0");
}

#[tokio::test]
async fn unknown_tool_is_invalid_params_and_does_not_repeat_the_name() {
    let server = server();
    let r = send(&server, modern(4, "tools/call", json!({"name":"<nope>"}))).await;
    assert_eq!(code(&r), -32602);
    assert_eq!(r["id"], 4);
    assert!(!r.to_string().contains("nope"));
}

#[tokio::test]
async fn a_missing_or_non_string_name_is_invalid_params() {
    let server = server();
    for params in [json!({}), json!({"name": 1}), json!({"name": null})] {
        assert_eq!(code(&send(&server, modern(1, "tools/call", params)).await), -32602);
    }
    let r = send(&server, json!({"jsonrpc":"2.0","id":1,"method":"tools/call"})).await;
    assert_eq!(code(&r), -32602);
}

#[tokio::test]
async fn a_required_client_capability_is_checked_before_dispatch() {
    let server = server();
    let r = send(&server, modern(1, "tools/call", json!({"name":"needs_elicitation"}))).await;
    assert_eq!(code(&r), -32021);
    assert_eq!(r["error"]["data"], json!({"requiredCapabilities":{"elicitation":{}}}));
    let mut req = modern(1, "tools/call", json!({"name":"needs_elicitation"}));
    req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation":{"form":{}}});
    assert_eq!(send(&server, req).await["result"]["isError"], false);
}

#[tokio::test]
async fn dispatch_sees_the_declared_client_capabilities() {
    use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
    let server =
        Server::builder(Listing { tools: vec![ToolSpec::new("caps", Mode::ReadOnly)], ..Default::default() })
            .dispatch(|call: ToolCall| async move {
                Ok::<_, ToolError>(ToolOutput::Json(
                    call.context.client_capabilities.as_deref().cloned().unwrap_or(serde_json::Value::Null),
                ))
            })
            .build()
            .unwrap();
    let mut req = modern(1, "tools/call", json!({"name":"caps"}));
    req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"roots":{}});
    assert_eq!(send(&server, req).await["result"]["structuredContent"], json!({"roots":{}}));
}

#[tokio::test]
async fn multi_round_trip_fields_are_ignored() {
    // No request state is held or read: a retry carrying inputResponses and requestState is answered
    // exactly as the same request without them.
    let server = server();
    let plain = modern(1, "tools/call", json!({"name":"get_weather","arguments":{"place":"Oslo"}}));
    let mut retry = plain.clone();
    retry["params"]["inputResponses"] = json!({"k": {"action": "accept", "content": {}}});
    retry["params"]["requestState"] = json!("opaque");
    let answer = send(&server, retry).await;
    assert_eq!(send(&server, plain).await, answer);
    // And both are the default answer, pinned byte for byte.
    let pinned = concat!(
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"place\":\"Oslo\",\"declared\":1}"}],"#,
        r#""structuredContent":{"place":"Oslo","declared":1},"isError":false,"resultType":"complete","#,
        r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-kernel","version":"VERSION"}}}}"#
    );
    assert_eq!(answer.to_string(), pinned.replace("VERSION", env!("CARGO_PKG_VERSION")));
}
