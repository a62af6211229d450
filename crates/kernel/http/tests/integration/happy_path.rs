//! Every method served over a real listener, over HTTP/1.1 and HTTP/2 (prior knowledge).
//!
//! Pins `protocol.md` B-6 (over HTTP), D-2 (responses are `application/json`, 202 has an empty body),
//! D-20 (statuses), D-25 / H-7 / MCP S-25 (`Mcp-Session-Id` is ignored and never sent), and the
//! server's advertisement of `2026-07-28` alone.

use http::header::CONTENT_TYPE;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::support::*;

#[tokio::test]
async fn server_discover_advertises_only_2026_07_28() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &request(1, "server/discover", json!({}))).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.headers[CONTENT_TYPE], "application/json");
            assert_eq!(reply.id(), &json!(1));
            let result = reply.result();
            assert_eq!(result["supportedVersions"], json!([MODERN]), "{proto:?}");
            assert_eq!(
                result["capabilities"],
                json!({
                    "tools": {"listChanged": false},
                    "resources": {"listChanged": false, "subscribe": false},
                    "prompts": {"listChanged": false}
                })
            );
            assert_eq!(result["ttlMs"], 0);
            assert_eq!(result["cacheScope"], "private");
            assert_eq!(result["resultType"], "complete");
            assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string());
        }
    })
    .await;
}

#[tokio::test]
async fn tools_list_lists_the_catalog_in_order() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &request("a", "tools/list", json!({}))).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.id(), &json!("a"));
            let result = reply.result();
            let names: Vec<&str> =
                result["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
            assert_eq!(names, ["get_weather", "echo", "slow", "panics", "search", "elicit", "bad_header"]);
            // The schema is advertised verbatim, x-mcp-header included.
            assert_eq!(result["tools"][4]["inputSchema"], search_schema());
            assert!(result.get("nextCursor").is_none());
            assert_eq!(result["resultType"], "complete");
            assert_eq!((&result["ttlMs"], &result["cacheScope"]), (&json!(0), &json!("private")));
        }
    })
    .await;
}

#[tokio::test]
async fn tools_call_returns_the_tool_result() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message =
                request(2, "tools/call", json!({"name": "get_weather", "arguments": {"place": "Oslo"}}));
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let result = reply.result();
            assert_eq!(result["isError"], false);
            assert_eq!(result["structuredContent"], json!({"place": "Oslo", "sky": "clear"}));
            assert_eq!(result["content"][0]["type"], "text");
            assert_eq!(result["resultType"], "complete");
        }
    })
    .await;
}

#[tokio::test]
async fn tools_call_with_invalid_arguments_is_a_tool_error_with_200() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(3, "tools/call", json!({"name": "get_weather", "arguments": {}}));
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.result()["isError"], true);
        }
    })
    .await;
}

#[tokio::test]
async fn resources_list_is_sorted_by_uri() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &request(4, "resources/list", json!({}))).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let uris: Vec<&str> = reply.result()["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["uri"].as_str().unwrap())
                .collect();
            assert_eq!(uris, ["test://a", "test://b", "test://bytes", "test://panics"]);
            assert_eq!(reply.result()["resources"][1]["mimeType"], "text/plain");
        }
    })
    .await;
}

#[tokio::test]
async fn resources_templates_list_is_sorted_by_template() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(5, "resources/templates/list", json!({}));
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let templates: Vec<&str> = reply.result()["resourceTemplates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["uriTemplate"].as_str().unwrap())
                .collect();
            assert_eq!(templates, ["test://files/{+path}", "test://place/{name}"]);
        }
    })
    .await;
}

#[tokio::test]
async fn resources_read_serves_listed_and_templated_uris() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply =
                post_message(server.addr, proto, &request(6, "resources/read", json!({"uri": "test://a"})))
                    .await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(
                reply.result()["contents"],
                json!([{"uri": "test://a", "text": "contents of test://a"}])
            );

            let message = request(7, "resources/read", json!({"uri": "test://bytes"}));
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.result()["contents"][0]["blob"], "AAEC/w==", "{reply:?}");

            // A templated uri with non-ASCII characters: Mcp-Name carries it base64-encoded (S-22).
            let uri = "test://place/Zürich";
            let message = request(8, "resources/read", json!({"uri": uri}));
            let headers = standard_headers("resources/read", Some("=?base64?dGVzdDovL3BsYWNlL1rDvHJpY2g=?="));
            let reply = post(server.addr, proto, headers, bytes(&message)).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.result()["contents"][0]["uri"], uri);
        }
    })
    .await;
}

#[tokio::test]
async fn resources_read_of_an_unknown_uri_is_200_minus_32602() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(9, "resources/read", json!({"uri": "test://nope"}));
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(200, -32602, &json!(9));
            assert_eq!(reply.body["error"]["data"]["uri"], "test://nope");
        }
    })
    .await;
}

#[tokio::test]
async fn prompts_list_is_sorted_by_name() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &request(10, "prompts/list", json!({}))).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let names: Vec<&str> = reply.result()["prompts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["alpha", "forecast", "panics"]);
        }
    })
    .await;
}

#[tokio::test]
async fn prompts_get_renders_the_prompt() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message =
                request(11, "prompts/get", json!({"name": "forecast", "arguments": {"place": "Oslo"}}));
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            let result = reply.result();
            assert_eq!(
                result["messages"],
                json!([{"role": "user", "content": {"type": "text", "text": "Forecast for Oslo"}}])
            );
            assert_eq!(result["description"], "rendered");
            assert!(result.get("ttlMs").is_none());
        }
    })
    .await;
}

#[tokio::test]
async fn a_notification_is_202_with_an_empty_body() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = notification("notifications/cancelled");
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.status, 202, "{reply:?}");
            assert!(reply.raw.is_empty(), "{reply:?}");
            // Mcp-Method is optional on a notification.
            let headers = without(headers_for(&message), "mcp-method");
            let reply = post(server.addr, proto, headers, bytes(&message)).await;
            assert_eq!(reply.status, 202, "{reply:?}");
            assert!(reply.raw.is_empty());
        }
    })
    .await;
}

#[tokio::test]
async fn a_session_id_is_ignored_and_never_sent() {
    bounded(async {
        let server = start_default().await;
        let messages = [
            request(1, "server/discover", json!({})),
            request(2, "tools/list", json!({})),
            request(3, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}})),
            request(4, "resources/read", json!({"uri": "test://b"})),
            request(5, "prompts/get", json!({"name": "alpha"})),
            request(6, "nope/nothing", json!({})),
            notification("notifications/cancelled"),
        ];
        for proto in BOTH {
            for message in &messages {
                let plain = post_message(server.addr, proto, message).await;
                let headers = with(headers_for(message), "mcp-session-id", b"3f1b6c8e-session");
                let with_session = post(server.addr, proto, headers, bytes(message)).await;
                assert_eq!(plain.status, with_session.status, "{message}");
                assert_eq!(plain.raw, with_session.raw, "byte-identical answers to {message}");
                for reply in [&plain, &with_session] {
                    assert!(reply.headers.get("mcp-session-id").is_none(), "{reply:?}");
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn an_absent_or_allowed_origin_is_admitted() {
    bounded(async {
        let server = start_default().await;
        let message = request(1, "tools/list", json!({}));
        for proto in BOTH {
            for origin in [ALLOWED_ORIGIN, ALLOWED_ORIGIN_2] {
                let headers = with(headers_for(&message), "origin", origin.as_bytes());
                let reply = post(server.addr, proto, headers, bytes(&message)).await;
                assert_eq!(reply.status, 200, "{reply:?}");
            }
            // Two values, both allowed.
            let headers = with(
                with(headers_for(&message), "origin", ALLOWED_ORIGIN.as_bytes()),
                "origin",
                ALLOWED_ORIGIN_2.as_bytes(),
            );
            assert_eq!(post(server.addr, proto, headers, bytes(&message)).await.status, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn an_http1_connection_serves_many_requests() {
    bounded(async {
        let server = start_default().await;
        let mut conn = connect(server.addr, Proto::H1).await;
        for id in 0..20 {
            let message =
                request(id, "tools/call", json!({"name": "echo", "arguments": {"message": id.to_string()}}));
            let reply = conn.post(server.addr, headers_for(&message), bytes(&message)).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.id(), &json!(id));
            reply.assert_kept();
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_multiplexes_requests_on_one_connection() {
    bounded(async {
        let server = start_default().await;
        let conn = connect(server.addr, Proto::H2).await;
        let Conn::H2(sender) = conn else { unreachable!() };
        let addr = server.addr;
        let slow = {
            let mut conn = Conn::H2(sender.clone());
            let message = request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 1500}}));
            tokio::spawn(async move {
                let reply = conn.post(addr, headers_for(&message), bytes(&message)).await;
                (reply, std::time::Instant::now())
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let mut conn = Conn::H2(sender);
        let message = request(2, "tools/list", json!({}));
        let fast = conn.post(addr, headers_for(&message), bytes(&message)).await;
        let fast_at = std::time::Instant::now();
        assert_eq!(fast.status, 200);
        let (slow, slow_at) = slow.await.expect("the slow call");
        assert_eq!(slow.status, 200, "{slow:?}");
        assert_eq!(slow.result()["structuredContent"], json!({"slept": 1500}));
        assert!(fast_at < slow_at, "the fast stream is not held behind the slow one");
    })
    .await;
}

#[tokio::test]
async fn results_carry_no_refusal_headers() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let reply = post_message(server.addr, proto, &request(1, "tools/list", json!({}))).await;
            reply.assert_kept();
            assert!(reply.headers.get("allow").is_none());
            assert_eq!(reply.body["jsonrpc"], "2.0");
            assert_eq!(reply.body.get("error"), None::<&Value>);
        }
    })
    .await;
}

#[tokio::test]
async fn expect_100_continue_is_answered_and_the_body_served() {
    bounded(async {
        // curl sends `Expect: 100-continue` with large bodies: the body is invited once admitted.
        let server = start_default().await;
        let body = bytes(&request(1, "tools/list", json!({})));
        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let mut fields: Vec<(&str, String)> = raw_standard("tools/list");
        fields.push(("content-length", body.len().to_string()));
        fields.push(("expect", "100-continue".into()));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        stream.write_all(&raw_head("POST", server.addr, &fields)).await.expect("head");
        let interim = read_raw_response(&mut stream).await;
        assert_eq!(interim.status, 100, "{interim:?}");
        stream.write_all(&body).await.expect("body");
        let response = read_raw_response(&mut stream).await;
        assert_eq!(response.status, 200, "{response:?}");
        assert_eq!(response.json()["id"], 1);
    })
    .await;
}

#[tokio::test]
async fn a_declared_client_capability_admits_the_tool() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let mut message = request(1, "tools/call", json!({"name": "elicit", "arguments": {}}));
            message["params"]["_meta"][META_CAPABILITIES] = json!({"elicitation": {}});
            let reply = post_message(server.addr, proto, &message).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.result()["structuredContent"], json!({"elicited": true}));
        }
    })
    .await;
}
