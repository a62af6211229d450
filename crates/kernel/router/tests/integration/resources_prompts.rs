//! Resources and prompts: listing, pagination, reading (protocol.md F-4 to F-10, B-6).

use crate::support::*;
use serde_json::{Value, json};

async fn collect(server: &mcp_kernel_router::Server, method: &str, field: &str) -> (Vec<String>, usize) {
    let mut seen = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    for _ in 0..100 {
        let params = cursor.take().map(|c| json!({"cursor": c})).unwrap_or(json!({}));
        let r = send(server, modern(1, method, params)).await;
        pages += 1;
        for item in r["result"][field].as_array().unwrap() {
            let key = item.get("uri").or(item.get("uriTemplate")).or(item.get("name")).unwrap();
            seen.push(key.as_str().unwrap().to_owned());
        }
        match r["result"].get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => return (seen, pages),
        }
    }
    panic!("pagination did not end");
}

#[tokio::test]
async fn lists_are_sorted_bytewise_and_paginated_by_the_page_size() {
    let server = server_with_page(2);
    let (uris, pages) = collect(&server, "resources/list", "resources").await;
    assert_eq!(uris, ["test://a", "test://b", "test://c", "test://panics", "test://refused"]);
    assert_eq!(pages, 3);
    let (templates, _) = collect(&server, "resources/templates/list", "resourceTemplates").await;
    assert_eq!(templates, ["test://files/{+path}", "test://place/{name}"]);
    let (prompts, pages) = collect(&server, "prompts/list", "prompts").await;
    assert_eq!(prompts, ["alpha", "broken", "forecast", "panics"]);
    assert_eq!(pages, 2);
}

#[tokio::test]
async fn the_last_page_has_no_next_cursor_and_an_empty_cursor_starts_over() {
    let server = server();
    let r = send(&server, modern(1, "resources/list", json!({"cursor": ""}))).await;
    assert_eq!(r["result"]["resources"].as_array().unwrap().len(), 5);
    assert!(r["result"].get("nextCursor").is_none());
}

#[tokio::test]
async fn a_cursor_from_another_list_is_refused_by_name() {
    let server = server_with_page(1);
    let r = send(&server, modern(1, "prompts/list", json!({}))).await;
    let cursor = r["result"]["nextCursor"].clone();
    let r = send(&server, modern(1, "resources/list", json!({"cursor": cursor}))).await;
    assert_eq!(code(&r), -32602);
    assert_eq!(r["error"]["message"], "Invalid params: cursor belongs to another list, not resources");
    let r = send(&server, modern(1, "resources/list", json!({"cursor": 5}))).await;
    assert_eq!(r["error"]["message"], "Invalid params: cursor is malformed");
}

#[tokio::test]
async fn resource_items_omit_absent_fields() {
    let server = server();
    let r = send(&server, modern(1, "resources/list", json!({}))).await;
    assert_eq!(r["result"]["resources"][0], json!({"uri":"test://a","name":"a"}));
    assert_eq!(r["result"]["resources"][1], json!({"uri":"test://b","name":"b","size":4}));
    assert_eq!(r["result"]["resources"][2], json!({"uri":"test://c","name":"c","mimeType":"text/plain"}));
}

#[tokio::test]
async fn read_accepts_listed_and_template_uris_only() {
    let server = server();
    for uri in ["test://a", "test://place/Oslo", "test://files/a/b/c"] {
        let r = send(&server, modern(1, "resources/read", json!({"uri": uri}))).await;
        assert_eq!(r["result"]["contents"], json!([{"uri": uri, "text": "body"}]), "{uri}");
        assert_eq!(r["result"]["cacheScope"], "private");
    }
    for uri in ["test://place/", "test://place/a/b", "test://d", "TEST://a"] {
        let r = send(&server, modern(1, "resources/read", json!({"uri": uri}))).await;
        assert_eq!(code(&r), -32602, "{uri}");
        assert_eq!(r["error"]["data"], json!({"uri": uri}));
    }
}

#[tokio::test]
async fn not_found_code_follows_the_era() {
    let server = server();
    let modern_r = send(&server, modern(1, "resources/read", json!({"uri":"test://refused"}))).await;
    assert_eq!(code(&modern_r), -32602);
    assert_eq!(modern_r["error"]["data"], json!({"uri":"test://refused","reason":"gone"}));
    let legacy_r = send(&server, legacy(1, "resources/read", json!({"uri":"test://refused"}))).await;
    assert_eq!(code(&legacy_r), -32002);
    let bare_r = send(&server, bare(1, "resources/read", json!({"uri":"test://nope"}))).await;
    assert_eq!(code(&bare_r), -32002);
}

#[tokio::test]
async fn read_requires_a_string_uri() {
    let server = server();
    for params in [json!({}), json!({"uri": 1})] {
        let r = send(&server, modern(1, "resources/read", params)).await;
        assert_eq!(r["error"]["message"], "Invalid params: resources/read requires a string uri");
    }
}

#[tokio::test]
async fn prompts_render_with_declared_string_arguments() {
    let server = server();
    let r = send(&server, modern(1, "prompts/get", json!({"name":"forecast","arguments":{"place":"Oslo"}})))
        .await;
    assert_eq!(
        r["result"]["messages"],
        json!([{"role":"user","content":{"type":"text","text":"Forecast for Oslo"}}])
    );
    assert_eq!(r["result"]["description"], "rendered");
    assert!(r["result"].get("ttlMs").is_none(), "prompts/get is not cacheable");
}

#[tokio::test]
async fn prompt_list_items_carry_their_arguments() {
    let server = server();
    let r = send(&server, modern(1, "prompts/list", json!({}))).await;
    let forecast =
        r["result"]["prompts"].as_array().unwrap().iter().find(|p| p["name"] == "forecast").unwrap().clone();
    assert_eq!(
        forecast,
        json!({"name":"forecast","description":"Ask for a forecast.","arguments":[{"name":"place","description":"Where","required":true}]})
    );
    let broken = &r["result"]["prompts"][1];
    assert_eq!(broken, &json!({"name":"broken"}), "no arguments: the list is omitted");
}

#[tokio::test]
async fn prompt_errors_carry_name_and_reason() {
    let server = server();
    let r = send(&server, modern(1, "prompts/get", json!({"name":"nope"}))).await;
    assert_eq!((code(&r), r["error"]["data"].clone()), (-32602, json!({"name":"nope"})));
    let r = send(&server, modern(1, "prompts/get", json!({"name":"forecast","arguments":{"place":1}}))).await;
    assert_eq!(code(&r), -32602);
    assert_eq!(r["error"]["data"]["name"], "forecast");
    assert!(r["error"]["data"]["reason"].as_str().unwrap().starts_with("invalid arguments: "));
    let r = send(
        &server,
        modern(1, "prompts/get", json!({"name":"forecast","arguments":{"place":"x","other":"y"}})),
    )
    .await;
    assert_eq!(code(&r), -32602, "undeclared prompt arguments are refused");
    let r = send(&server, modern(1, "prompts/get", json!({"name":"broken"}))).await;
    assert_eq!(r["error"]["data"], json!({"name":"broken","reason":"template missing"}));
    let r = send(&server, modern(1, "prompts/get", json!({"name":7}))).await;
    assert_eq!(r["error"]["message"], "Invalid params: prompts/get requires a string name");
}

#[tokio::test]
async fn null_cursor_and_null_params_are_refused() {
    let server = server();
    let r = send(&server, modern(1, "resources/list", json!({"cursor": null}))).await;
    assert_eq!(r["error"]["message"], "Invalid params: cursor is malformed");
    let r = send(&server, json!({"jsonrpc":"2.0","id":1,"method":"prompts/list","params":null})).await;
    assert_eq!(r["error"]["message"], "Invalid params: params must be an object");
}

#[tokio::test]
async fn not_found_echoes_the_uri_and_name_within_the_echo_bound() {
    // The bound itself is pinned in tests/echo_bound.rs: 128 characters, then `…`.
    let server = server();
    let uri = format!("test://{}", "x".repeat(300));
    let r = send(&server, modern(1, "resources/read", json!({"uri": uri}))).await;
    assert_eq!(r["error"]["data"]["uri"], format!("{}\u{2026}", &uri[..128]));
    let name = "n".repeat(300);
    let r = send(&server, modern(1, "prompts/get", json!({"name": name}))).await;
    assert_eq!(r["error"]["data"]["name"], format!("{}\u{2026}", &name[..128]));
}

#[tokio::test]
async fn host_cache_hints_reach_every_cacheable_result_but_discover() {
    use mcp_kernel_router::options::CacheHints;
    use mcp_kernel_router::wire::types::CacheScope;
    let hints = |ttl_ms| CacheHints { ttl_ms, scope: CacheScope::Public };
    let server = mcp_kernel_router::Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .tools_cache(hints(1))
        .resources_cache(hints(2))
        .prompts_cache(hints(3))
        .build()
        .unwrap();
    let cases = [
        ("tools/list", json!({}), 1),
        ("resources/list", json!({}), 2),
        ("resources/templates/list", json!({}), 2),
        ("resources/read", json!({"uri":"test://a"}), 2),
        ("prompts/list", json!({}), 3),
    ];
    for (method, params, ttl) in cases {
        let r = send(&server, modern(1, method, params)).await;
        assert_eq!(
            (r["result"]["ttlMs"].clone(), r["result"]["cacheScope"].clone()),
            (json!(ttl), json!("public")),
            "{method}"
        );
    }
    let r = send(&server, modern(1, "server/discover", json!({}))).await;
    assert_eq!(
        (r["result"]["ttlMs"].clone(), r["result"]["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
}

#[tokio::test]
async fn readers_see_the_declared_client_capabilities() {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<Option<Value>>>> = Arc::default();
    let (r1, r2) = (seen.clone(), seen.clone());
    let server = mcp_kernel_router::Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(move |req: mcp_kernel_router::resources::ReadResource| {
            r1.lock().unwrap().push(req.context.client_capabilities.as_deref().cloned());
            read_resource(req)
        })
        .prompt_reader(move |req: mcp_kernel_router::prompts::GetPrompt| {
            r2.lock().unwrap().push(req.context.client_capabilities.as_deref().cloned());
            get_prompt(req)
        })
        .build()
        .unwrap();
    let mut req = modern(1, "resources/read", json!({"uri":"test://a"}));
    req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"roots":{}});
    send(&server, req).await;
    let mut req = modern(2, "prompts/get", json!({"name":"forecast","arguments":{"place":"x"}}));
    req["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling":{}});
    send(&server, req).await;
    assert_eq!(*seen.lock().unwrap(), vec![Some(json!({"roots":{}})), Some(json!({"sampling":{}}))]);
}
