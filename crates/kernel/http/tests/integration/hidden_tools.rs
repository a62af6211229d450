//! A tool the host's `Visibility` filter hides from the caller is, over HTTP, exactly an unknown tool:
//! its `x-mcp-header` annotations are not checked for that caller (no -32020 and no annotation fault
//! can reveal it), and the core answers "Unknown tool" — whether the call carries its `Mcp-Param-*`
//! headers, lacks them, or sends them wrong.

use http::HeaderMap;
use http::request::Parts;
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::{AllowedOrigins, LegacyClients, McpHttp, Refused};
use mcp_kernel_router::visibility::Listed;
use mcp_kernel_router::{RequestContext, Server};

/// The host's principal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Caller(String);

/// The tools only `admin` sees: `search` (annotated parameters) and `bad_header` (a broken annotation,
/// kept by `defer_header_annotation_faults`).
const ADMIN_ONLY: [&str; 2] = ["search", "bad_header"];

fn server() -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .defer_header_annotation_faults(true)
        .visibility(|item: Listed<'_>, cx: &RequestContext| match item {
            Listed::Tool(name) if ADMIN_ONLY.contains(&name) => {
                cx.principal::<Caller>().is_some_and(|caller| caller.0 == "admin")
            }
            _ => true,
        })
        .build()
        .expect("the fixture catalog builds")
}

fn caller(parts: &Parts) -> Result<Caller, Refused> {
    let named = parts.headers.get("x-caller").and_then(|value| value.to_str().ok());
    named.map(|name| Caller(name.to_owned())).ok_or_else(|| Refused::because("no x-caller"))
}

async fn start_hidden() -> Running {
    let service = McpHttp::builder(server())
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .legacy_clients(LegacyClients::Stateless)
        .authorize(caller)
        .build();
    serve(service).await
}

fn call(tool: &str, arguments: Value) -> Value {
    request(1, "tools/call", json!({"name": tool, "arguments": arguments}))
}

/// The calls of `search` (and their headers) that a visible `search` refuses or serves: the headers it
/// needs, none of them, one with no body value, one that disagrees with the body.
fn search_calls() -> Vec<(&'static str, Value, HeaderMap)> {
    let arguments = json!({"region": "eu", "limit": 3});
    let needed = |message: &Value| {
        let headers = with(headers_for(message), "mcp-param-region", b"eu");
        with(headers, "mcp-param-limit", b"3")
    };
    let full = call("search", arguments.clone());
    let empty = call("search", json!({}));
    vec![
        ("mirrored", full.clone(), needed(&full)),
        ("unmirrored", full.clone(), headers_for(&full)),
        ("unbacked", empty.clone(), with(headers_for(&empty), "mcp-param-region", b"eu")),
        (
            "disagreeing",
            full.clone(),
            with(with(headers_for(&full), "mcp-param-region", b"us"), "mcp-param-limit", b"3"),
        ),
    ]
}

/// What a call of a tool nobody lists (`nosuch`) is answered, with the same argument headers.
async fn unknown_answer(
    addr: std::net::SocketAddr,
    proto: Proto,
    message: &Value,
    headers: &HeaderMap,
    as_legacy: bool,
) -> (u16, Value) {
    let mut unknown = message.clone();
    unknown["params"]["name"] = json!("nosuch");
    let mut headers = headers.clone();
    if !as_legacy {
        headers = replace(headers, "mcp-name", b"nosuch");
    }
    let reply = post(addr, proto, with(headers, "x-caller", b"guest"), bytes(&unknown)).await;
    (reply.status.as_u16(), reply.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_hidden_from_the_caller_is_answered_exactly_as_an_unknown_tool() {
    bounded(async {
        let server = start_hidden().await;
        for proto in BOTH {
            for (case, message, headers) in search_calls() {
                let hidden =
                    post(server.addr, proto, with(headers.clone(), "x-caller", b"guest"), bytes(&message))
                        .await;
                let unknown = unknown_answer(server.addr, proto, &message, &headers, false).await;
                assert_eq!((hidden.status.as_u16(), hidden.body.clone()), unknown, "{case} over {proto:?}");
                hidden.assert_error(200, -32602, &json!(1));
                assert_eq!(hidden.message(), "Unknown tool", "{case}");
                // The same call by the caller who sees the tool: served, or refused for its headers.
                let shown =
                    post(server.addr, proto, with(headers, "x-caller", b"admin"), bytes(&message)).await;
                match case {
                    "mirrored" => assert_eq!(shown.status, 200, "{shown:?}"),
                    _ => shown.assert_error(400, -32020, &json!(1)),
                }
            }
            // A broken annotation is a host fault for whoever sees the tool, and nothing for the others.
            let message = call("bad_header", json!({}));
            let hidden =
                post(server.addr, proto, with(headers_for(&message), "x-caller", b"guest"), bytes(&message))
                    .await;
            let unknown = unknown_answer(server.addr, proto, &message, &headers_for(&message), false).await;
            assert_eq!((hidden.status.as_u16(), hidden.body.clone()), unknown, "bad_header over {proto:?}");
            let shown =
                post(server.addr, proto, with(headers_for(&message), "x-caller", b"admin"), bytes(&message))
                    .await;
            shown.assert_error(500, -32603, &json!(1));
            // And the lists agree.
            let list = request(2, "tools/list", json!({}));
            let listed =
                post(server.addr, proto, with(headers_for(&list), "x-caller", b"guest"), bytes(&list)).await;
            let names: Vec<&str> = listed.result()["tools"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|t| t["name"].as_str())
                .collect();
            assert!(ADMIN_ONLY.iter().all(|tool| !names.contains(tool)), "{names:?}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_hidden_from_a_legacy_caller_is_answered_exactly_as_an_unknown_tool() {
    bounded(async {
        let server = start_hidden().await;
        let message = legacy(1, "tools/call", json!({"name": "search", "arguments": {"region": "eu"}}));
        // Mcp-Param headers are optional on the legacy path, but one that is sent must agree.
        let cases = [
            ("absent", legacy_headers()),
            ("disagreeing", with(legacy_headers(), "mcp-param-region", b"us")),
        ];
        for proto in BOTH {
            for (case, headers) in &cases {
                let hidden =
                    post(server.addr, proto, with(headers.clone(), "x-caller", b"guest"), bytes(&message))
                        .await;
                let unknown = unknown_answer(server.addr, proto, &message, headers, true).await;
                assert_eq!((hidden.status.as_u16(), hidden.body.clone()), unknown, "{case} over {proto:?}");
                hidden.assert_error(200, -32602, &json!(1));
            }
            let shown =
                post(server.addr, proto, with(cases[1].1.clone(), "x-caller", b"admin"), bytes(&message))
                    .await;
            shown.assert_error(400, -32020, &json!(1));
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filter_decides_once_per_call_so_the_headers_and_the_call_never_disagree() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    bounded(async {
        // A filter whose answer flips on every question (a feature flag that changes, a cache that
        // fails on first use): asked twice for one call, it would skip the header check and then run
        // the tool.
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&asked);
        let server = Server::builder(catalog())
            .dispatch(dispatch)
            .resource_reader(read_resource)
            .prompt_reader(get_prompt)
            .defer_header_annotation_faults(true)
            .visibility(move |item: Listed<'_>, _: &RequestContext| match item {
                Listed::Tool("search") => counter.fetch_add(1, Ordering::SeqCst) % 2 == 1,
                _ => true,
            })
            .build()
            .expect("the fixture catalog builds");
        let service = McpHttp::builder(server)
            .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
            .authorize(|_: &Parts| Ok(()))
            .build();
        let running = serve(service).await;
        let message = call("search", json!({"region": "eu", "limit": 3}));
        let disagreeing =
            with(with(headers_for(&message), "mcp-param-region", b"us"), "mcp-param-limit", b"3");
        for proto in BOTH {
            let before = asked.load(Ordering::SeqCst);
            let reply = post(running.addr, proto, disagreeing.clone(), bytes(&message)).await;
            assert_eq!(asked.load(Ordering::SeqCst) - before, 1, "asked once for one call over {proto:?}");
            // Hidden: an unknown tool. Shown: refused for its headers. Never run with them.
            let second = post(running.addr, proto, disagreeing.clone(), bytes(&message)).await;
            for answer in [&reply, &second] {
                assert!(answer.body.get("result").is_none(), "the tool never runs: {answer:?}");
            }
            let mut codes = [reply.body["error"]["code"].clone(), second.body["error"]["code"].clone()];
            codes.sort_by_key(|c| c.as_i64());
            assert_eq!(codes, [json!(-32602), json!(-32020)], "one unknown tool, one header refusal");
        }
    })
    .await;
}
