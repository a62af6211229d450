//! MCP `2025-11-25` clients over HTTP, stateless (`LegacyClients::Stateless`, the default, MCP S-61 to
//! S-64), and the `2026-07-28`-only answers of a server that refuses them (`LegacyClients::Refused`),
//! over HTTP/1.1 and HTTP/2.

use http::header::{ALLOW, CONNECTION, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use crate::support::*;
use mcp_kernel_http::LegacyClients;

/// Starts the fixture serving 2025-11-25 clients too.
async fn start_legacy() -> Running {
    start(|b| b.legacy_clients(LegacyClients::Stateless)).await
}

/// What a 2025-11-25 client sends first: no version header.
fn opener_headers() -> HeaderMap {
    without(legacy_headers(), "mcp-protocol-version")
}

/// The 2025-11-25 `initialize` asking for `version`.
fn initialize(version: &str) -> Value {
    legacy(
        1,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": {"sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "legacy-client", "version": "1.0.0"}
        }),
    )
}

/// Asserts a 200 JSON result answering `id`, and returns the result.
fn legacy_result(reply: &Reply, id: &Value) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.headers[CONTENT_TYPE], "application/json", "{reply:?}");
    assert_eq!(reply.id(), id, "{reply:?}");
    assert!(reply.headers.get("mcp-session-id").is_none(), "no session is ever issued: {reply:?}");
    reply.result().clone()
}

/// Asserts a result has none of the 2026-07-28 envelope (`resultType`, cache hints, `_meta`).
fn assert_legacy_shaped(result: &Value) {
    for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(result.get(key).is_none(), "{key} in a 2025-11-25 result: {result}");
    }
}

/// One exchange as recorded today: status, the headers that matter, and the body bytes.
#[derive(Debug, PartialEq)]
struct Recorded {
    status: u16,
    content_type: Option<String>,
    allow: Option<String>,
    connection: Option<String>,
    session: Option<String>,
    body: String,
}

fn record(reply: &Reply) -> Recorded {
    let header = |name| reply.headers.get(name).map(|v: &HeaderValue| v.to_str().unwrap().to_owned());
    Recorded {
        status: reply.status.as_u16(),
        content_type: header(CONTENT_TYPE),
        allow: header(ALLOW),
        connection: header(CONNECTION),
        session: header(http::HeaderName::from_static("mcp-session-id")),
        body: String::from_utf8(reply.raw.to_vec()).unwrap(),
    }
}

/// A 2025-11-25 client's first exchanges: the opener, a list, a ping, the initialized notification, and
/// the GET and DELETE a session-minded client tries.
fn opening_exchanges() -> [(Method, HeaderMap, bytes::Bytes); 6] {
    [
        (Method::POST, opener_headers(), bytes(&initialize(LEGACY))),
        (Method::POST, legacy_headers(), bytes(&legacy(2, "tools/list", json!({})))),
        (Method::POST, legacy_headers(), bytes(&legacy(3, "ping", json!({})))),
        (Method::POST, legacy_headers(), bytes(&notification("notifications/initialized"))),
        (Method::GET, HeaderMap::new(), bytes::Bytes::new()),
        (Method::DELETE, HeaderMap::new(), bytes::Bytes::new()),
    ]
}

#[tokio::test]
async fn by_default_legacy_clients_are_served_statelessly_byte_for_byte() {
    bounded(async {
        let (default, stateless) = (start_default().await, start_legacy().await);
        for proto in BOTH {
            for (method, headers, body) in opening_exchanges() {
                let by_default =
                    send(default.addr, proto, method.clone(), headers.clone(), body.clone()).await;
                let opted_in = send(stateless.addr, proto, method.clone(), headers, body).await;
                assert_eq!(record(&by_default), record(&opted_in), "{proto:?} {method}");
                if method == Method::POST {
                    assert!(by_default.status == 200 || by_default.status == 202, "{by_default:?}");
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn refusing_legacy_clients_gives_the_2026_07_28_only_answers_byte_for_byte() {
    bounded(async {
        let unsupported = |id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0",{id}"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":["2026-07-28"],"requested":"2025-11-25"}}}}}}"#
            )
        };
        let not_post = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Method not allowed; use POST"}}"#;
        let json_type = Some("application/json".to_owned());
        let server = start(|b| b.legacy_clients(LegacyClients::Refused)).await;
        for proto in BOTH {
            let expected = [
                (400, unsupported(r#""id":1,"#)),
                (400, unsupported(r#""id":2,"#)),
                (400, unsupported(r#""id":3,"#)),
                (400, unsupported("")),
                (405, not_post.to_owned()),
                (405, not_post.to_owned()),
            ];
            for ((method, headers, body), (status, expected)) in opening_exchanges().into_iter().zip(expected) {
                let get_or_delete = method != Method::POST;
                let reply = send(server.addr, proto, method, headers, body).await;
                let close = (get_or_delete && proto == Proto::H1).then(|| "close".to_owned());
                let expected = Recorded {
                    status,
                    content_type: json_type.clone(),
                    allow: get_or_delete.then(|| "POST".to_owned()),
                    connection: close,
                    session: None,
                    body: expected,
                };
                assert_eq!(record(&reply), expected, "{proto:?}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_legacy_initialize_is_answered_legacy_shaped_without_a_session_id() {
    bounded(async {
        let server = start_legacy().await;
        let capabilities = json!({
            "tools": {"listChanged": false},
            "resources": {"listChanged": false, "subscribe": false},
            "prompts": {"listChanged": false}
        });
        for proto in BOTH {
            // The SDK's opener has no header; the suite's raw probe names 2025-11-25 in one.
            for headers in [opener_headers(), legacy_headers()] {
                let reply = post(server.addr, proto, headers, bytes(&initialize(LEGACY))).await;
                let result = legacy_result(&reply, &json!(1));
                assert_eq!(result["protocolVersion"], LEGACY);
                assert_eq!(result["capabilities"], capabilities, "no logging, subscribe or tasks");
                assert_eq!(result["serverInfo"]["name"], "mcp-kernel");
                assert_legacy_shaped(&result);
            }
            // Another revision asked for (S-58): the legacy one is offered, never 2026-07-28.
            for asked in ["2025-06-18", "2025-03-26", MODERN, "1999-01-01"] {
                let reply = post(server.addr, proto, opener_headers(), bytes(&initialize(asked))).await;
                assert_eq!(legacy_result(&reply, &json!(1))["protocolVersion"], LEGACY, "{asked}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn requests_with_the_legacy_header_get_legacy_shaped_results() {
    bounded(async {
        let server = start_legacy().await;
        for proto in BOTH {
            let list =
                post(server.addr, proto, legacy_headers(), bytes(&legacy(2, "tools/list", json!({})))).await;
            let result = legacy_result(&list, &json!(2));
            assert_legacy_shaped(&result);
            assert_eq!(result["tools"][0]["name"], "get_weather");
            let requests = [
                legacy("r", "resources/list", json!({})),
                legacy("t", "resources/templates/list", json!({})),
                legacy("p", "prompts/list", json!({})),
                legacy("g", "prompts/get", json!({"name": "forecast", "arguments": {"place": "Oslo"}})),
                legacy("rd", "resources/read", json!({"uri": "test://a"})),
                legacy("c", "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}})),
                // A 2025-11-25 `_meta` carries a progress token only.
                legacy(
                    "m",
                    "tools/call",
                    json!({"name": "echo", "arguments": {"message": "hi"}, "_meta": {"progressToken": 7}}),
                ),
            ];
            for request in &requests {
                let reply = post(server.addr, proto, legacy_headers(), bytes(request)).await;
                assert_legacy_shaped(&legacy_result(&reply, &request["id"]));
            }
            let call = post(server.addr, proto, legacy_headers(), bytes(&requests[5])).await;
            assert_eq!(call.result()["structuredContent"], json!({"message": "hi"}));
        }
    })
    .await;
}

/// What the suite's `server-sse-multiple-streams` would send after its handshake, had it gone on
/// without a session id: concurrent POSTs, each on its own connection, each answered as its own.
#[tokio::test]
async fn concurrent_legacy_posts_are_each_answered() {
    bounded(async {
        let server = start_legacy().await;
        let accept_both = || replace(legacy_headers(), "accept", b"text/event-stream, application/json");
        for proto in BOTH {
            let lists = (0..3).map(|n| legacy(1000 + n, "tools/list", json!({})));
            let slow = (0..3)
                .map(|n| legacy(2000 + n, "tools/call", json!({"name": "slow", "arguments": {"ms": 100}})));
            let requests: Vec<Value> = lists.chain(slow).collect();
            let replies = futures_util::future::join_all(
                requests.iter().map(|request| post(server.addr, proto, accept_both(), bytes(request))),
            )
            .await;
            for (request, reply) in requests.iter().zip(&replies) {
                let result = legacy_result(reply, &request["id"]);
                assert_legacy_shaped(&result);
                if request["method"] == "tools/call" {
                    assert_eq!(result["structuredContent"], json!({"slept": 100}), "{proto:?}");
                } else {
                    assert_eq!(result["tools"][0]["name"], "get_weather", "{proto:?}");
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn ping_is_answered_an_empty_object() {
    bounded(async {
        let server = start_legacy().await;
        for proto in BOTH {
            for ping in [legacy(3, "ping", json!({})), json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})] {
                let reply = post(server.addr, proto, legacy_headers(), bytes(&ping)).await;
                assert_eq!(reply.status, 200);
                assert_eq!(reply.raw, r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn logging_set_level_is_a_no_op_answered_an_empty_object() {
    bounded(async {
        let server = start_legacy().await;
        for proto in BOTH {
            let set = legacy(4, "logging/setLevel", json!({"level": "info"}));
            let reply = post(server.addr, proto, legacy_headers(), bytes(&set)).await;
            assert_eq!(
                (reply.status.as_u16(), &reply.raw[..]),
                (200, &br#"{"jsonrpc":"2.0","id":4,"result":{}}"#[..])
            );
            // Not a level: invalid params, in a 200 like every core error on this wire.
            let bad = legacy(5, "logging/setLevel", json!({"level": "loud"}));
            post(server.addr, proto, legacy_headers(), bytes(&bad)).await.assert_error(
                200,
                -32602,
                &json!(5),
            );
        }
    })
    .await;
}

#[tokio::test]
async fn legacy_notifications_and_response_posts_are_202_with_no_body() {
    bounded(async {
        let server = start_legacy().await;
        let messages = [
            notification("notifications/initialized"),
            notification("notifications/cancelled"),
            notification("notifications/roots/list_changed"),
            json!({"jsonrpc": "2.0", "id": "s-1", "result": {}}),
            json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -1, "message": "declined"}}),
        ];
        for proto in BOTH {
            for message in &messages {
                let reply = post(server.addr, proto, legacy_headers(), bytes(message)).await;
                assert_eq!((reply.status.as_u16(), reply.raw.len()), (202, 0), "{message}: {reply:?}");
                assert!(reply.headers.get("mcp-session-id").is_none());
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_legacy_request_is_never_answered_202_even_under_a_notification_name() {
    bounded(async {
        let server = start_legacy().await;
        for proto in BOTH {
            for (id, method) in [(5, "notifications/initialized"), (6, "exit"), (7, "shutdown")] {
                let message = legacy(id, method, json!({}));
                let reply = post(server.addr, proto, legacy_headers(), bytes(&message)).await;
                reply.assert_error(200, -32601, &json!(id));
                assert!(reply.headers.get("mcp-session-id").is_none());
            }
        }
    })
    .await;
}

#[tokio::test]
async fn get_and_delete_stay_405_with_the_opt_in() {
    bounded(async {
        let (off, on) = (start_default().await, start_legacy().await);
        for proto in BOTH {
            for method in [Method::GET, Method::DELETE] {
                let mut headers = HeaderMap::new();
                headers.insert("accept", HeaderValue::from_static("text/event-stream"));
                headers.insert("mcp-protocol-version", HeaderValue::from_static(LEGACY));
                headers.insert("mcp-session-id", HeaderValue::from_static("s-1"));
                headers.insert("last-event-id", HeaderValue::from_static("e-1"));
                let empty = bytes::Bytes::new();
                let before = send(off.addr, proto, method.clone(), headers.clone(), empty.clone()).await;
                let after = send(on.addr, proto, method.clone(), headers, empty).await;
                assert_eq!(after.status, 405, "{method}");
                assert_eq!(after.headers[ALLOW], "POST");
                assert_eq!(record(&after), record(&before), "{method} {proto:?}");
            }
        }
    })
    .await;
}

/// Modern requests and refusals that must not move when legacy clients are served.
fn modern_messages() -> Vec<(HeaderMap, Value)> {
    let discover = request(1, "server/discover", json!({}));
    let list = request(2, "tools/list", json!({}));
    let call = request(3, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
    let init = request(4, "initialize", json!({"protocolVersion": LEGACY, "capabilities": {}}));
    let ping = request(5, "ping", json!({}));
    let mut legacy_meta = request(6, "tools/list", json!({}));
    legacy_meta["params"]["_meta"][META_VERSION] = json!(LEGACY);
    let bare = legacy(7, "tools/list", json!({}));
    let headerless_init = request(8, "initialize", json!({"protocolVersion": LEGACY}));
    vec![
        (headers_for(&discover), discover),
        (headers_for(&list), list.clone()),
        (headers_for(&call), call.clone()),
        (headers_for(&init), init),
        (headers_for(&ping), ping),
        (headers_for(&notification("notifications/initialized")), notification("notifications/initialized")),
        // Refusals: no Mcp-Method, a wrong Mcp-Name, a legacy header on a modern body.
        (without(headers_for(&list), "mcp-method"), list.clone()),
        (replace(headers_for(&call), "mcp-name", b"get_weather"), call),
        (replace(headers_for(&list), "mcp-protocol-version", LEGACY.as_bytes()), list.clone()),
        (replace(headers_for(&legacy_meta), "mcp-protocol-version", LEGACY.as_bytes()), legacy_meta),
        // A 2026 header on a body without `_meta`, and no header at all on a non-initialize.
        (headers_for(&bare), bare.clone()),
        (without(legacy_headers(), "mcp-protocol-version"), bare),
        (without(headers_for(&list), "mcp-protocol-version"), list),
        (opener_headers(), headerless_init),
    ]
}

#[tokio::test]
async fn modern_requests_are_answered_identically_with_the_opt_in() {
    bounded(async {
        let (off, on) = (start_default().await, start_legacy().await);
        for proto in BOTH {
            for (headers, message) in modern_messages() {
                let before = post(off.addr, proto, headers.clone(), bytes(&message)).await;
                let after = post(on.addr, proto, headers, bytes(&message)).await;
                assert_eq!(record(&after), record(&before), "{message} over {proto:?}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_session_id_sent_by_a_legacy_client_is_ignored() {
    bounded(async {
        let server = start_legacy().await;
        let messages = [
            (opener_headers(), initialize(LEGACY)),
            (legacy_headers(), legacy(2, "tools/list", json!({}))),
            (legacy_headers(), legacy(3, "ping", json!({}))),
            (
                legacy_headers(),
                legacy(4, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}})),
            ),
            (legacy_headers(), notification("notifications/initialized")),
            (legacy_headers(), legacy(5, "nope/nothing", json!({}))),
        ];
        for proto in BOTH {
            for (headers, message) in &messages {
                let plain = post(server.addr, proto, headers.clone(), bytes(message)).await;
                for session in [&b"3f1b6c8e-session"[..], b"ended-session", b"\xffbad"] {
                    let with_session = with(headers.clone(), "mcp-session-id", session);
                    let answer = post(server.addr, proto, with_session, bytes(message)).await;
                    assert_eq!(record(&answer), record(&plain), "{message}");
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_missing_version_header_on_a_legacy_request_other_than_initialize_is_400_minus_32020() {
    bounded(async {
        let server = start_legacy().await;
        for proto in BOTH {
            let reply =
                post(server.addr, proto, opener_headers(), bytes(&legacy(2, "tools/list", json!({})))).await;
            reply.assert_error(400, -32020, &json!(2));
            let reply =
                post(server.addr, proto, opener_headers(), bytes(&notification("notifications/initialized")))
                    .await;
            reply.assert_error(400, -32020, &Value::Null);
        }
    })
    .await;
}

#[tokio::test]
async fn an_unsupported_legacy_version_header_is_400_minus_32022_naming_both_revisions() {
    bounded(async {
        let server = start_legacy().await;
        for proto in BOTH {
            for version in ["2025-06-18", "2025-03-26", "2024-11-05"] {
                let headers = replace(legacy_headers(), "mcp-protocol-version", version.as_bytes());
                let reply =
                    post(server.addr, proto, headers.clone(), bytes(&legacy(2, "tools/list", json!({}))))
                        .await;
                reply.assert_error(400, -32022, &json!(2));
                assert_eq!(
                    reply.body["error"]["data"],
                    json!({"supported": [MODERN, LEGACY], "requested": version})
                );
                // A notification and a response POST are refused the same way.
                let note = post(
                    server.addr,
                    proto,
                    headers.clone(),
                    bytes(&notification("notifications/initialized")),
                )
                .await;
                note.assert_error(400, -32022, &Value::Null);
                let response = json!({"jsonrpc": "2.0", "id": 9, "result": {}});
                post(server.addr, proto, headers, bytes(&response)).await.assert_error(
                    400,
                    -32022,
                    &json!(9),
                );
            }
            let headers = replace(legacy_headers(), "mcp-protocol-version", b"\xff");
            let reply = post(server.addr, proto, headers, bytes(&legacy(2, "tools/list", json!({})))).await;
            reply.assert_error(400, -32020, &json!(2));
        }
    })
    .await;
}

#[tokio::test]
async fn mcp_headers_are_optional_on_legacy_requests_but_must_agree_when_sent() {
    bounded(async {
        let server = start_legacy().await;
        let call = legacy(6, "tools/call", json!({"name": "search", "arguments": {"region": "eu"}}));
        let refused = [
            with(legacy_headers(), "mcp-method", b"tools/list"),
            with(legacy_headers(), "mcp-name", b"get_weather"),
            with(legacy_headers(), "mcp-param-region", b"us"),
            with(with(legacy_headers(), "mcp-param-region", b"eu"), "mcp-param-region", b"us"),
        ];
        let admitted = [
            legacy_headers(),
            with(with(legacy_headers(), "mcp-method", b"tools/call"), "mcp-name", b"search"),
            with(legacy_headers(), "mcp-param-region", b"eu"),
        ];
        for proto in BOTH {
            for headers in refused.clone() {
                post(server.addr, proto, headers, bytes(&call)).await.assert_error(400, -32020, &json!(6));
            }
            for headers in admitted.clone() {
                let reply = post(server.addr, proto, headers, bytes(&call)).await;
                assert_eq!(legacy_result(&reply, &json!(6))["structuredContent"], json!({"region": "eu"}));
            }
        }
    })
    .await;
}

#[tokio::test]
async fn legacy_core_errors_are_200_never_404_and_a_host_fault_is_500() {
    bounded(async {
        let server = start_legacy().await;
        for proto in BOTH {
            // A 404 would tell a 2025-11-25 client that its session ended (S-62).
            for method in
                ["nope/nothing", "server/discover", "shutdown", "resources/subscribe", "completion/complete"]
            {
                let reply =
                    post(server.addr, proto, legacy_headers(), bytes(&legacy(7, method, json!({})))).await;
                reply.assert_error(200, -32601, &json!(7));
            }
            let missing = legacy(8, "resources/read", json!({"uri": "test://missing"}));
            post(server.addr, proto, legacy_headers(), bytes(&missing)).await.assert_error(
                200,
                -32002,
                &json!(8),
            );
            let fault = legacy(9, "tools/call", json!({"name": "panics", "arguments": {}}));
            let reply = post(server.addr, proto, legacy_headers(), bytes(&fault)).await;
            reply.assert_error(500, -32603, &json!(9));
            assert!(!String::from_utf8_lossy(&reply.raw).contains("secret"), "{reply:?}");
            // Not JSON-RPC: refused as on the modern path.
            let no_version = json!({"id": 10, "method": "ping"});
            post(server.addr, proto, legacy_headers(), bytes(&no_version)).await.assert_error(
                400,
                -32600,
                &json!(10),
            );
        }
    })
    .await;
}
