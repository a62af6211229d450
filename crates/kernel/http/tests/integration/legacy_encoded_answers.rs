//! 2025-11-25 over HTTP: the answers the core encodes straight to bytes (`tools/list`, `tools/call`)
//! reach the client as the core wrote them, the cache hints of `tools/list` alone removed — whatever
//! they nest, and whatever strings they hold.
//!
//! Pins: `strip_cache_hints` never turns a result into `null` (it once read an encoded result back
//! with `serde_json::from_str`, whose recursion limit refuses a result nesting deeper than 128, where
//! the map it replaced was written at any depth).

use futures_util::FutureExt;
use serde_json::{Value, json};

use mcp_kernel_http::{AllowedOrigins, LegacyClients, McpHttp};
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

use crate::support::*;

/// Arrays nested `depth` deep around `{"cacheScope":"x"}`.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!({"cacheScope": "x"}), |inner, _| json!([inner]))
}

/// An argument schema nesting `depth` array schemas.
fn deep_schema(depth: usize) -> Value {
    let items =
        (0..depth).fold(json!({"type": "string"}), |inner, _| json!({"type": "array", "items": inner}));
    json!({"type": "object", "properties": {"a": items}})
}

fn server() -> Server {
    let tools = vec![
        ToolSpec::new("deep_out", Mode::ReadOnly),
        ToolSpec::new("says_cache_scope", Mode::ReadOnly),
        ToolSpec::new("deep_in", Mode::ReadOnly).input_schema(deep_schema(130)),
    ];
    Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(|call: ToolCall| async move {
            Ok::<_, ToolError>(match &*call.name {
                "deep_out" => ToolOutput::Json(json!({"d": nested(130)})),
                _ => ToolOutput::text(r#"{"cacheScope":"public","ttlMs":1}"#),
            })
        })
        .build()
        .expect("the catalog builds")
}

async fn start_legacy() -> Running {
    let service = McpHttp::builder(server())
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .legacy_clients(LegacyClients::Stateless)
        .authorize(|_| Ok(()))
        .build();
    serve(service).await
}

/// The bytes the core writes for `message` (no `_meta`: a legacy-shaped answer), as stdio sends them.
fn core_bytes(message: &Value) -> String {
    let handled = server().handle(message.clone()).now_or_never().expect("no await pending");
    String::from_utf8(handled.response.expect("a response").to_bytes()).expect("UTF-8")
}

async fn over_http(running: &Running, message: &Value) -> String {
    let reply = post(running.addr, Proto::H1, legacy_headers(), bytes(message)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    String::from_utf8(reply.raw.to_vec()).expect("UTF-8")
}

#[tokio::test]
async fn a_deep_tool_list_reaches_a_legacy_client_without_its_cache_hints_only() {
    bounded(async {
        let running = start_legacy().await;
        let message = legacy(1, "tools/list", json!({}));
        let core = core_bytes(&message);
        assert!(core.contains(r#","ttlMs":0,"cacheScope":"private""#), "{core}");
        let expected = core.replace(r#","ttlMs":0,"cacheScope":"private""#, "");
        assert_eq!(over_http(&running, &message).await, expected);
    })
    .await;
}

#[tokio::test]
async fn a_deep_tool_result_naming_cache_scope_reaches_a_legacy_client_as_written() {
    bounded(async {
        let running = start_legacy().await;
        for name in ["deep_out", "says_cache_scope"] {
            let message = legacy(2, "tools/call", json!({"name": name, "arguments": {}}));
            assert_eq!(over_http(&running, &message).await, core_bytes(&message), "{name}");
        }
    })
    .await;
}
