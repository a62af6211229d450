//! The order of the core's checks (protocol.md B-3) and the era rules (B-4, B-5, B-7).

use crate::support::*;
use mcp_kernel_router::transport::Control;
use serde_json::{Value, json};

#[tokio::test]
async fn top_level_meta_is_refused_before_every_method_including_discover() {
    let server = server();
    for method in ["server/discover", "initialize", "tools/list", "nope"] {
        let r = send(
            &server,
            json!({"jsonrpc":"2.0","id":3,"method":method,"_meta":{},"params":{"_meta": modern_meta()}}),
        )
        .await;
        assert_eq!(code(&r), -32602, "{method}");
        assert!(r["error"]["message"].as_str().unwrap().contains("params._meta"));
        assert_eq!(r["id"], 3);
    }
}

#[tokio::test]
async fn notification_with_top_level_meta_is_dropped_silently() {
    let server = server();
    let handled =
        server.handle(json!({"jsonrpc":"2.0","method":"notifications/initialized","_meta":{}})).await;
    assert!(handled.response.is_none());
}

#[tokio::test]
async fn discover_is_answered_bare_with_the_full_decorated_result() {
    let server = server();
    let r = send(&server, json!({"jsonrpc":"2.0","id":1,"method":"server/discover"})).await;
    let result = &r["result"];
    assert_eq!(result["supportedVersions"], json!([MODERN, LEGACY]));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(
        result["capabilities"],
        json!({"tools":{"listChanged":false},"resources":{"listChanged":false,"subscribe":false},"prompts":{"listChanged":false}})
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "mcp-kernel", "version": env!("CARGO_PKG_VERSION")})
    );
}

#[tokio::test]
async fn discover_checks_a_params_meta_that_is_present() {
    let server = server();
    let with_meta =
        |meta: Value| json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":meta}});
    assert_eq!(code(&send(&server, with_meta(json!("x"))).await), -32602);
    assert_eq!(
        code(
            &send(&server, with_meta(json!({"io.modelcontextprotocol/protocolVersion":"1900-01-01"}))).await
        ),
        -32022
    );
    assert_eq!(
        code(&send(&server, with_meta(json!({"io.modelcontextprotocol/protocolVersion":MODERN}))).await),
        -32602
    );
    assert!(send(&server, with_meta(modern_meta())).await.get("result").is_some());
    assert!(
        send(&server, json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}))
            .await
            .get("result")
            .is_some()
    );
}

#[tokio::test]
async fn a_legacy_only_server_does_not_implement_discover() {
    let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default())
        .supported_versions([mcp_kernel_router::wire::ProtocolVersion::V2025_11_25])
        .build()
        .unwrap();
    assert_eq!(code(&send(&server, bare(1, "server/discover", json!({}))).await), -32601);
    let init = send(&server, bare(2, "initialize", json!({"protocolVersion": LEGACY}))).await;
    assert_eq!(init["result"]["protocolVersion"], LEGACY);
}

#[tokio::test]
async fn a_modern_only_server_refuses_undeclared_requests() {
    let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default())
        .supported_versions([mcp_kernel_router::wire::ProtocolVersion::V2026_07_28])
        .build()
        .unwrap();
    for req in [
        bare(1, "tools/list", json!({})),
        bare(1, "ping", json!({})),
        json!({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x://y"}}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}),
    ] {
        assert_eq!(code(&send(&server, req.clone()).await), -32602, "{req}");
    }
    assert!(
        send(&server, bare(1, "server/discover", json!({}))).await.get("result").is_some(),
        "the probe is answered"
    );
}

#[tokio::test]
async fn a_legacy_meta_without_a_version_is_served_legacy_shaped() {
    let server = server();
    let r = send(
        &server,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}),
    )
    .await;
    assert!(r["result"]["tools"].is_array());
    assert!(r["result"].get("resultType").is_none());
    let caps_only = json!({"io.modelcontextprotocol/clientCapabilities":{}});
    let r = send(&server, json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":caps_only}}))
        .await;
    assert_eq!(code(&r), -32602, "client capabilities without a version are a malformed modern request");
}

#[tokio::test]
async fn an_unknown_log_level_is_invalid_params() {
    let server = server();
    let mut req = modern(1, "tools/list", json!({}));
    req["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
    assert_eq!(code(&send(&server, req.clone()).await), -32602);
    req["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    assert!(send(&server, req).await.get("result").is_some());
}

#[tokio::test]
async fn a_non_string_protocol_version_is_invalid_params() {
    let server = server();
    let mut req = modern(1, "tools/list", json!({}));
    req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(20260728);
    assert_eq!(code(&send(&server, req).await), -32602);
}

#[tokio::test]
async fn notifications_initialized_with_an_id_gets_no_reply() {
    let server = server();
    assert!(server.handle(bare(1, "notifications/initialized", json!({}))).await.response.is_none());
}

#[tokio::test]
async fn an_invalid_id_is_refused_before_a_top_level_meta() {
    let server = server();
    let r = send(&server, json!({"jsonrpc":"2.0","id":null,"method":"tools/list","_meta":{}})).await;
    assert_eq!(code(&r), -32600);
    let r = send(&server, json!({"id":1,"method":"tools/list","_meta":{}})).await;
    assert_eq!(code(&r), -32600, "without jsonrpc 2.0 the message is not a request to read further");
}

#[tokio::test]
async fn exit_with_a_top_level_meta_still_shuts_down() {
    let server = server();
    let h = server.handle(json!({"jsonrpc":"2.0","method":"exit","_meta":{}})).await;
    assert_eq!((h.control, h.response), (Control::Shutdown, None));
}

#[tokio::test]
async fn initialize_is_legacy_shaped_even_when_meta_names_the_modern_revision() {
    let server = server();
    let mut req = bare(1, "initialize", json!({"protocolVersion": LEGACY}));
    req["params"]["_meta"] = modern_meta();
    let r = send(&server, req).await;
    assert_eq!(r["result"]["protocolVersion"], LEGACY);
    assert!(r["result"].get("resultType").is_none());
    assert_eq!(r["result"]["serverInfo"]["name"], "mcp-kernel");
}

#[tokio::test]
async fn initialize_offers_the_legacy_revision_when_the_requested_one_is_not_served() {
    let server = server();
    for requested in [json!("2024-11-05"), json!(MODERN), json!(7), Value::Null] {
        let r = send(&server, bare(1, "initialize", json!({"protocolVersion": requested}))).await;
        assert_eq!(r["result"]["protocolVersion"], LEGACY, "{requested}");
    }
}

#[tokio::test]
async fn modern_results_carry_result_type_and_server_info_legacy_ones_do_not() {
    let server = server();
    let modern_r = send(&server, modern(1, "tools/list", json!({}))).await;
    assert_eq!(modern_r["result"]["resultType"], "complete");
    assert_eq!(modern_r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-kernel");
    for req in [legacy(1, "tools/list", json!({})), bare(1, "tools/list", json!({}))] {
        let r = send(&server, req).await;
        assert!(r["result"].get("resultType").is_none());
        assert!(r["result"].get("_meta").is_none());
        assert_eq!(r["result"]["ttlMs"], 0, "cache hints are written at both eras");
    }
}

#[tokio::test]
async fn unsupported_version_lists_what_is_served() {
    let server = server();
    let mut req = modern(9, "tools/list", json!({}));
    req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2024-11-05");
    let r = send(&server, req).await;
    assert_eq!(code(&r), -32022);
    assert_eq!(r["error"]["data"], json!({"supported":[MODERN, LEGACY], "requested":"2024-11-05"}));
    assert_eq!(r["id"], 9);
}

#[tokio::test]
async fn a_server_without_legacy_refuses_legacy_declared_requests() {
    let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default())
        .supported_versions([mcp_kernel_router::wire::ProtocolVersion::V2026_07_28])
        .build()
        .unwrap();
    let r = send(&server, legacy(1, "tools/list", json!({}))).await;
    assert_eq!(code(&r), -32022);
    assert_eq!(r["error"]["data"]["supported"], json!([MODERN]));
}

#[tokio::test]
async fn modern_requests_need_client_capabilities_as_an_object() {
    let server = server();
    let mut req = modern(1, "tools/list", json!({}));
    req["params"]["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities");
    assert_eq!(code(&send(&server, req.clone()).await), -32602);
    req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!("all");
    assert_eq!(code(&send(&server, req).await), -32602);
}

#[tokio::test]
async fn ping_is_served_bare_and_legacy_but_not_modern() {
    let server = server();
    assert_eq!(send(&server, bare(1, "ping", json!({}))).await["result"], json!({}));
    assert_eq!(send(&server, legacy(1, "ping", json!({}))).await["result"], json!({}));
    assert_eq!(code(&send(&server, modern(1, "ping", json!({}))).await), -32601);
}

#[tokio::test]
async fn method_not_found_does_not_repeat_the_method() {
    let server = server();
    let r = send(&server, modern(1, "secret/<script>", json!({}))).await;
    assert_eq!(code(&r), -32601);
    assert!(!r.to_string().contains("script"));
}

#[tokio::test]
async fn notifications_are_never_answered() {
    let server = server();
    for n in [
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}),
        json!({"jsonrpc":"2.0","method":"tools/call","params":{"name":"panics"}}),
        json!({"jsonrpc":"1.0","method":"x"}),
        json!({"method":5}),
    ] {
        assert!(server.handle(n.clone()).await.response.is_none(), "{n}");
    }
}

#[tokio::test]
async fn invalid_ids_are_answered_without_an_id() {
    let server = server();
    for id in [Value::Null, json!(1.5), json!({"a":1}), json!([1]), json!(true)] {
        let r = send(&server, json!({"jsonrpc":"2.0","id":id,"method":"tools/list"})).await;
        assert_eq!(code(&r), -32600);
        assert!(r.get("id").is_none(), "{r}");
    }
}

#[tokio::test]
async fn a_request_without_jsonrpc_2_is_invalid_request_with_its_id() {
    let server = server();
    let r = send(&server, json!({"id":"x","method":"tools/list"})).await;
    assert_eq!(code(&r), -32600);
    assert_eq!(r["id"], "x");
}

#[tokio::test]
async fn shutdown_and_exit_end_the_loop() {
    let server = server();
    let h = server.handle(bare(1, "shutdown", json!({}))).await;
    assert_eq!(h.control, Control::Shutdown);
    assert_eq!(h.response.unwrap().to_value()["result"], json!({}));
    let h = server.handle(json!({"jsonrpc":"2.0","method":"exit"})).await;
    assert_eq!((h.control, h.response), (Control::Shutdown, None));
    let h = server.handle(bare(2, "exit", json!({}))).await;
    assert_eq!((h.control, h.response), (Control::Shutdown, None));
}

#[tokio::test]
async fn the_server_keeps_serving_after_a_host_panic() {
    let server = server();
    for _ in 0..3 {
        assert_eq!(code(&send(&server, modern(1, "tools/call", json!({"name":"panics"}))).await), -32603);
        let ok = send(
            &server,
            modern(2, "tools/call", json!({"name":"get_weather","arguments":{"place":"Oslo"}})),
        )
        .await;
        assert_eq!(ok["result"]["isError"], false);
    }
}
