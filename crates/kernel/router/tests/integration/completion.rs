//! `completion/complete` and the `completions` capability (MCP S-51): served and advertised only when
//! the host gives a completer; without one every answer is byte-for-byte what it was before.

use crate::support;

use std::sync::{Arc, Mutex};

use crate::support::official::{assert_response, assert_valid, is_valid};
use crate::support::*;
use mcp_kernel_router::completion::{Completer, Completion, CompletionRef, CompletionRequest};
use mcp_kernel_router::options::PACKAGE_VERSION;
use mcp_kernel_router::prompts::{PromptArgument, PromptSpec};
use mcp_kernel_router::resources::ResourceTemplateSpec;
use mcp_kernel_router::wire::ProtocolVersion;
use mcp_kernel_router::{Listing, ReaderError, Server};
use serde_json::{Value, json};

const CANDIDATES: [&str; 4] = ["Oslo", "Osaka", "Lima", "Lisbon"];

/// A caller string that must never come back in an error.
const PROBE: &str = "zz-caller-probe-zz";

type Seen = Arc<Mutex<Vec<CompletionRequest>>>;

/// The fixture catalog plus a two-argument prompt and a two-variable template.
fn completion_catalog() -> Listing {
    let mut catalog = support::catalog();
    catalog.prompts.push(
        PromptSpec::new("trip")
            .description("Plan a trip.")
            .argument(PromptArgument::new("from").required(true))
            .argument(PromptArgument::new("to")),
    );
    catalog.resources.push(ResourceTemplateSpec::new("test://trip/{city}/{+day}", "trip").into());
    catalog
}

fn answer(request: &CompletionRequest) -> Result<Completion, ReaderError> {
    match request.argument.value.as_str() {
        "boom" => panic!("completer bug"),
        "refuse" => Err(ReaderError::new("not for this caller")),
        "many" => Ok(Completion::new((0..250).map(|i| format!("m{i:03}")).collect())),
        prefix => Ok(Completion::new(
            CANDIDATES.iter().filter(|c| c.starts_with(prefix)).map(|c| (*c).to_owned()).collect(),
        )),
    }
}

/// A completer that records every request it receives.
fn recording() -> (Seen, impl Completer) {
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let completer = move |request: CompletionRequest| {
        if request.argument.value == "boom-now" {
            panic!("completer bug before its future");
        }
        log.lock().unwrap().push(request.clone());
        async move { answer(&request) }
    };
    (seen, completer)
}

fn completing_server() -> (Seen, Server) {
    let (seen, completer) = recording();
    let server = Server::builder(completion_catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .completer(completer)
        .build()
        .expect("the completion catalog builds");
    (seen, server)
}

fn prompt_params(name: &str, argument: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": argument, "value": value}})
}

fn template_params(uri: &str, argument: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": argument, "value": value}})
}

fn initialize() -> Value {
    bare(
        1,
        "initialize",
        json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    )
}

fn values(response: &Value) -> Vec<&str> {
    let values = response["result"]["completion"]["values"].as_array();
    values.unwrap_or_else(|| panic!("no values: {response}")).iter().filter_map(Value::as_str).collect()
}

#[tokio::test]
async fn completions_are_advertised_iff_a_completer_is_set_in_both_eras() {
    let (_, with) = completing_server();
    let without = server();
    for (server, advertised) in [(&with, true), (&without, false)] {
        let discover = send(server, modern(1, "server/discover", json!({}))).await;
        assert_response(MODERN, "DiscoverResult", &discover);
        let init = send(server, initialize()).await;
        assert_response(LEGACY, "InitializeResult", &init);
        for capabilities in [&discover["result"]["capabilities"], &init["result"]["capabilities"]] {
            assert_eq!(capabilities.get("completions").is_some(), advertised, "{capabilities}");
            if advertised {
                assert_eq!(capabilities["completions"], json!({}));
            }
        }
    }
}

#[tokio::test]
async fn without_a_completer_the_default_answers_are_unchanged_byte_for_byte() {
    // Recorded from the build before completions existed.
    let v = PACKAGE_VERSION;
    let caps = r#"{"tools":{"listChanged":false},"resources":{"listChanged":false,"subscribe":false},"prompts":{"listChanged":false}}"#;
    let params = prompt_params("forecast", "place", "O");
    let cases = [
        (
            modern(1, "server/discover", json!({})),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{caps},"ttlMs":0,"cacheScope":"private","resultType":"complete","_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"mcp-kernel","version":"{v}"}}}}}}}}"#
            ),
        ),
        (
            initialize(),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{caps},"serverInfo":{{"name":"mcp-kernel","version":"{v}"}}}}}}"#
            ),
        ),
        (
            modern(3, "completion/complete", params.clone()),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#.to_owned(),
        ),
        (
            legacy(4, "completion/complete", params.clone()),
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}"#.to_owned(),
        ),
        (
            bare(5, "completion/complete", params),
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}"#.to_owned(),
        ),
        (
            modern(6, "completion/complete", json!({})),
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found"}}"#.to_owned(),
        ),
    ];
    let server = server();
    for (request, expected) in cases {
        let response = server.handle(request).await.response.expect("a response");
        assert_eq!(serde_json::to_string(&response).unwrap(), expected);
    }
}

#[tokio::test]
async fn prompt_argument_completion_filters_by_prefix_in_every_era() {
    let (seen, server) = completing_server();
    let params = prompt_params("forecast", "place", "Os");
    let modern_request = modern(1, "completion/complete", params.clone());
    assert_valid(MODERN, "CompleteRequest", &modern_request);
    let response = send(&server, modern_request).await;
    assert_eq!(values(&response), ["Oslo", "Osaka"]);
    assert_eq!(response["result"]["resultType"], json!("complete"));
    assert!(response["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    assert!(response["result"].get("ttlMs").is_none() && response["result"].get("cacheScope").is_none());
    let expected = json!({"completion": {"values": ["Oslo", "Osaka"]}});
    for request in [legacy(2, "completion/complete", params.clone()), bare(3, "completion/complete", params)]
    {
        assert_eq!(send(&server, request).await["result"], expected);
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0].reference, CompletionRef::Prompt { name: "forecast".into() });
    assert_eq!(&*seen[0].argument.name, "place");
    assert_eq!(seen[0].argument.value, "Os");
    assert!(seen[0].context.era.is_modern() && !seen[1].context.era.is_modern());
}

#[tokio::test]
async fn template_variable_completion_gets_only_declared_context_arguments() {
    let (seen, server) = completing_server();
    let mut params = template_params("test://trip/{city}/{+day}", "day", "L");
    params["context"] = json!({"arguments": {"city": "Oslo", "undeclared": "x"}});
    let response = send(&server, modern(1, "completion/complete", params)).await;
    assert_eq!(values(&response), ["Lima", "Lisbon"]);
    let mut params = prompt_params("trip", "to", "");
    params["context"] = json!({"arguments": {"from": "Oslo", "via": "Rome"}});
    let response = send(&server, bare(2, "completion/complete", params)).await;
    assert_eq!(values(&response).len(), CANDIDATES.len());
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[0].reference,
        CompletionRef::ResourceTemplate { uri: "test://trip/{city}/{+day}".into() }
    );
    assert_eq!(&*seen[0].argument.name, "day");
    assert_eq!(seen[0].context_arguments, [("city".to_owned(), "Oslo".to_owned())].into());
    assert_eq!(seen[1].context_arguments, [("from".to_owned(), "Oslo".to_owned())].into());
}

#[tokio::test]
async fn more_than_100_values_are_capped_with_has_more_and_total() {
    let (_, server) = completing_server();
    for (request, revision) in [
        (modern(1, "completion/complete", prompt_params("forecast", "place", "many")), MODERN),
        (bare(2, "completion/complete", template_params("test://place/{name}", "name", "many")), LEGACY),
    ] {
        let response = send(&server, request).await;
        assert_response(revision, "CompleteResult", &response);
        let completion = &response["result"]["completion"];
        assert_eq!(values(&response).len(), 100);
        assert_eq!(values(&response)[99], "m099");
        assert_eq!(completion["hasMore"], json!(true));
        assert_eq!(completion["total"], json!(250));
    }
}

/// `params` is -32602 in the modern and the bare era, and the answer does not echo the probe.
async fn assert_invalid_params_in_both_eras(server: &Server, params: Value) {
    for request in
        [modern(1, "completion/complete", params.clone()), bare(1, "completion/complete", params.clone())]
    {
        let response = send(server, request).await;
        assert_eq!(code(&response), -32602, "{params}: {response}");
        assert!(!response.to_string().contains(PROBE), "{response}");
    }
}

#[tokio::test]
async fn unknown_prompt_argument_or_template_is_invalid_params_and_never_reaches_the_completer() {
    let (seen, server) = completing_server();
    let cases = [
        prompt_params(PROBE, "place", "O"),
        prompt_params("forecast", PROBE, "O"),
        prompt_params("broken", "place", "O"),
        template_params(PROBE, "name", "O"),
        template_params("test://place/{name}", PROBE, "O"),
        template_params("test://place/Oslo", "name", "O"),
        template_params("test://a", "name", "O"),
        json!({"ref": {"type": "ref/prompt", "name": "forecast"}, "argument": {"name": "name", "value": "O"}}),
        json!({"ref": {"type": "ref/resource", "uri": "test://place/{name}"}, "argument": {"name": "place", "value": "O"}}),
    ];
    for params in cases {
        assert_invalid_params_in_both_eras(&server, params).await;
    }
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn malformed_params_are_invalid_params_and_never_reach_the_completer() {
    let (seen, server) = completing_server();
    let prompt_ref = json!({"type": "ref/prompt", "name": "forecast"});
    let argument = json!({"name": "place", "value": "O"});
    let cases = [
        json!({}),
        json!({"argument": argument}),
        json!({"ref": PROBE, "argument": argument}),
        json!({"ref": null, "argument": argument}),
        json!({"ref": {"type": PROBE, "name": "forecast"}, "argument": argument}),
        json!({"ref": {"name": "forecast"}, "argument": argument}),
        json!({"ref": {"type": "ref/prompt"}, "argument": argument}),
        json!({"ref": {"type": "ref/prompt", "name": 7}, "argument": argument}),
        json!({"ref": {"type": "ref/prompt", "uri": "forecast"}, "argument": argument}),
        json!({"ref": {"type": "ref/resource", "name": "test://place/{name}"}, "argument": argument}),
        json!({"ref": prompt_ref}),
        json!({"ref": prompt_ref, "argument": [PROBE]}),
        json!({"ref": prompt_ref, "argument": {"value": "O"}}),
        json!({"ref": prompt_ref, "argument": {"name": "place"}}),
        json!({"ref": prompt_ref, "argument": {"name": "place", "value": 5}}),
        json!({"ref": prompt_ref, "argument": {"name": "place", "value": null}}),
        json!({"ref": prompt_ref, "argument": {"name": ["place"], "value": "O"}}),
        json!({"ref": prompt_ref, "argument": argument, "context": PROBE}),
        json!({"ref": prompt_ref, "argument": argument, "context": null}),
        json!({"ref": prompt_ref, "argument": argument, "context": {"arguments": [PROBE]}}),
        json!({"ref": prompt_ref, "argument": argument, "context": {"arguments": {"place": 1}}}),
        json!({"ref": prompt_ref, "argument": argument, "context": {"arguments": {"other": null}}}),
    ];
    for params in cases {
        assert_invalid_params_in_both_eras(&server, params).await;
    }
    for request in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "completion/complete"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": [PROBE]}),
    ] {
        let response = send(&server, request).await;
        assert_eq!(code(&response), -32602, "{response}");
        assert!(!response.to_string().contains(PROBE), "{response}");
    }
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_completer_panic_is_internal_error_and_the_server_keeps_serving() {
    let (_, server) = completing_server();
    for value in ["boom", "boom-now"] {
        let response =
            send(&server, modern(1, "completion/complete", prompt_params("alpha", "x", value))).await;
        assert_eq!(response["error"], json!({"code": -32603, "message": "Internal error"}));
        assert_response(MODERN, "", &response);
    }
    let response = send(&server, modern(2, "completion/complete", prompt_params("alpha", "x", "Li"))).await;
    assert_eq!(values(&response), ["Lima", "Lisbon"]);
}

#[tokio::test]
async fn a_completer_refusal_is_invalid_params_with_its_reason() {
    let (_, server) = completing_server();
    let response =
        send(&server, modern(1, "completion/complete", prompt_params("alpha", "x", "refuse"))).await;
    assert_eq!(code(&response), -32602);
    assert_eq!(response["error"]["data"], json!({"reason": "not for this caller"}));
    assert_response(MODERN, "", &response);
}

#[tokio::test]
async fn a_restricted_server_keeps_the_completer() {
    let (_, server) = completing_server();
    let modern_only = server.restricted_to([ProtocolVersion::V2026_07_28]).unwrap();
    let discover = send(&modern_only, modern(1, "server/discover", json!({}))).await;
    assert_eq!(discover["result"]["capabilities"]["completions"], json!({}));
    let response =
        send(&modern_only, modern(2, "completion/complete", prompt_params("forecast", "place", "L"))).await;
    assert_eq!(values(&response), ["Lima", "Lisbon"]);
}

#[tokio::test]
async fn answers_validate_against_the_official_schema_of_each_revision() {
    let (_, server) = completing_server();
    let ok = [
        prompt_params("forecast", "place", "O"),
        prompt_params("forecast", "place", "nothing-matches"),
        prompt_params("forecast", "place", "many"),
        template_params("test://files/{+path}", "path", "L"),
    ];
    for params in ok {
        let response = send(&server, modern(1, "completion/complete", params.clone())).await;
        assert_response(MODERN, "CompleteResult", &response);
        for request in
            [legacy(1, "completion/complete", params.clone()), bare(1, "completion/complete", params)]
        {
            let response = send(&server, request).await;
            assert_response(LEGACY, "CompleteResult", &response);
            assert!(response["result"].get("resultType").is_none(), "{response}");
            assert!(response["result"].get("_meta").is_none(), "{response}");
        }
    }
    for params in [json!({}), prompt_params("nope", "x", ""), prompt_params("alpha", "x", "boom")] {
        assert_response(MODERN, "", &send(&server, modern(1, "completion/complete", params.clone())).await);
        assert_response(LEGACY, "", &send(&server, bare(1, "completion/complete", params)).await);
    }
}

#[test]
fn the_oracle_rejects_more_than_100_values_and_a_missing_result_type() {
    let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
    assert!(!is_valid(
        MODERN,
        "CompleteResult",
        &json!({"resultType": "complete", "completion": {"values": many}})
    ));
    assert!(!is_valid(MODERN, "CompleteResult", &json!({"completion": {"values": []}})));
    assert!(is_valid(LEGACY, "CompleteResult", &json!({"completion": {"values": []}})));
}
