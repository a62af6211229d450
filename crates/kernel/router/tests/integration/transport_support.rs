//! What the core offers transports: a server restricted to some revisions, and the `x-mcp-header`
//! parameters (or fault) of a tool.

use crate::support::*;
use mcp_kernel_router::transport::ToolHeaders;
use mcp_kernel_router::wire::ProtocolVersion;
use mcp_kernel_router::{BuildError, Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

async fn ok(_: ToolCall) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text("ok"))
}

#[tokio::test]
async fn a_restricted_server_advertises_only_its_revisions_and_shares_the_catalog() {
    let full = server();
    let modern_only = full.restricted_to([ProtocolVersion::V2026_07_28]).unwrap();
    let r = send(&modern_only, modern(1, "server/discover", json!({}))).await;
    assert_eq!(r["result"]["supportedVersions"], json!([MODERN]));
    let r = send(
        &modern_only,
        modern(2, "tools/call", json!({"name":"get_weather","arguments":{"place":"Oslo"}})),
    )
    .await;
    assert_eq!(r["result"]["isError"], false);
    assert_eq!(
        send(&full, modern(3, "server/discover", json!({}))).await["result"]["supportedVersions"],
        json!([MODERN, LEGACY])
    );
    assert_eq!(full.restricted_to([]).unwrap_err(), BuildError::InvalidSupportedVersions);
}

fn annotated(defer: bool) -> Result<Server, BuildError> {
    Server::builder(Listing {
        tools: vec![
            ToolSpec::new("good", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
            })),
            ToolSpec::new("bad", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"n": {"type": "number", "x-mcp-header": "N"}}
            })),
        ],
        ..Default::default()
    })
    .dispatch(ok)
    .defer_header_annotation_faults(defer)
    .build()
}

#[tokio::test]
async fn a_bad_annotation_refuses_the_build_unless_deferred() {
    assert!(matches!(annotated(false).unwrap_err(), BuildError::ToolSchema { tool, .. } if tool == "bad"));
    let server = annotated(true).unwrap();
    assert!(matches!(server.tool_headers("bad"), ToolHeaders::Fault(_)));
    match server.tool_headers("good") {
        ToolHeaders::Params(params) => {
            assert_eq!(params.len(), 1);
            assert_eq!(params[0].header, "mcp-param-region");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(server.tool_headers("nope"), ToolHeaders::UnknownTool));
    let r = send(&server, modern(1, "tools/call", json!({"name":"bad","arguments":{"n":1}}))).await;
    assert_eq!(r["result"]["isError"], false, "the core still serves the tool (over stdio)");
}
