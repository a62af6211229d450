//! Steps 10 and 11: removed methods (404 -32601 with an id, 202 without) and the core's answers —
//! unknown methods and tools, a message that is not JSON-RPC, host panics (500 -32603), a missing
//! client capability, a lowered body cap, a malformed `x-mcp-header` annotation.

use bytes::Bytes;
use serde_json::{Value, json};

use mcp_kernel_http::MAX_BODY_BYTES;

use super::{NULL, assert_header_refusal, list, padded_list};
use crate::support::*;

#[tokio::test]
async fn removed_methods_are_404_minus_32601_with_an_id_and_202_without() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for method in ["initialize", "ping", "notifications/initialized", "shutdown", "exit"] {
                let params = json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
                let message = request(70, method, params);
                let reply = post_message(server.addr, proto, &message).await;
                reply.assert_error(404, -32601, &json!(70));
                reply.assert_kept();
                // No id: 202 and an empty body. A null id is no id at all: an invalid request.
                let message = notification(method);
                let reply = post_message(server.addr, proto, &message).await;
                assert_eq!((reply.status.as_u16(), reply.raw.len()), (202, 0), "{method}: {reply:?}");
                let mut message = request(0, method, json!({}));
                message["id"] = Value::Null;
                post_message(server.addr, proto, &message).await.assert_error(400, -32600, &NULL);
            }
        }
    })
    .await;
}

#[tokio::test]
async fn unknown_method_is_404_minus_32601() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            for method in ["tools/destroy", "completion/complete", "resources/subscribe"] {
                let message = request(71, method, json!({}));
                let reply = post_message(server.addr, proto, &message).await;
                reply.assert_error(404, -32601, &json!(71));
                reply.assert_kept();
            }
        }
    })
    .await;
}

#[tokio::test]
async fn unknown_tool_is_200_minus_32602() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(72, "tools/call", json!({"name": "nope", "arguments": {}}));
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(200, -32602, &json!(72));
            reply.assert_kept();
        }
    })
    .await;
}

#[tokio::test]
async fn a_message_that_is_not_a_json_rpc_request_or_notification_is_400_minus_32600() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let mut message = request(73, "tools/list", json!({}));
            message["jsonrpc"] = json!("1.0");
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(400, -32600, &json!(73));
            // A POSTed response is refused too: clients MUST NOT POST responses.
            let response = json!({"jsonrpc": "2.0", "id": 5, "result": {}});
            let reply = post(server.addr, proto, headers_for(&list()), bytes(&response)).await;
            reply.assert_error(400, -32600, &json!(5));
            // An id that is neither a string nor an integer: refused, and not repeated.
            let mut odd = request(1, "ping", json!({}));
            odd["id"] = json!(null);
            post_message(server.addr, proto, &odd).await.assert_error(400, -32600, &NULL);
        }
    })
    .await;
}

#[tokio::test]
async fn host_panic_in_dispatch_is_500_minus_32603_with_the_id() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(74, "tools/call", json!({"name": "panics", "arguments": {}}));
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(500, -32603, &json!(74));
            assert_eq!(reply.message(), "Internal error");
            assert!(reply.body["error"].get("data").is_none());
            assert!(!String::from_utf8_lossy(&reply.raw).contains("secret-panic-detail"));
            reply.assert_kept();
            // The server keeps serving.
            let reply = post_message(server.addr, proto, &list()).await;
            assert_eq!(reply.status, 200);
        }
    })
    .await;
}

#[tokio::test]
async fn host_panic_in_a_reader_is_500_minus_32603_with_the_id() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let messages = [
                request(76, "resources/read", json!({"uri": "test://panics"})),
                request(77, "prompts/get", json!({"name": "panics"})),
            ];
            for message in &messages {
                let reply = post_message(server.addr, proto, message).await;
                reply.assert_error(500, -32603, &message["id"]);
                assert_eq!(reply.body["error"], json!({"code": -32603, "message": "Internal error"}));
                assert!(!String::from_utf8_lossy(&reply.raw).contains("secret"));
                reply.assert_kept();
            }
        }
    })
    .await;
}

#[tokio::test]
async fn missing_client_capability_is_400_minus_32021() {
    bounded(async {
        let server = start_default().await;
        let message = request(78, "tools/call", json!({"name": "elicit", "arguments": {}}));
        assert_header_refusal(&server, &headers_for(&message), &message, -32021).await;
    })
    .await;
}

#[tokio::test]
async fn a_lowered_cap_is_enforced_and_a_higher_one_clamped() {
    bounded(async {
        let small = start(|b| b.max_body_bytes(1000)).await;
        let clamped = start(|b| b.max_body_bytes(usize::MAX)).await;
        for proto in BOTH {
            assert_eq!(post(small.addr, proto, headers_for(&list()), padded_list(1000)).await.status, 200);
            let reply = post(small.addr, proto, headers_for(&list()), padded_list(1001)).await;
            reply.assert_error(413, -32600, &NULL);
            reply.assert_pre_body_close();
            let reply =
                post(clamped.addr, proto, headers_for(&list()), padded_list(MAX_BODY_BYTES + 1)).await;
            reply.assert_error(413, -32600, &NULL);
        }
        // Streamed over HTTP/2 without content-length.
        let sender = h2_connect(small.addr).await;
        let mut sender = sender.ready().await.expect("h2 ready");
        let (response, mut stream) =
            sender.send_request(h2_request(small.addr, headers_for(&list())), false).expect("send");
        for chunk in padded_list(1001).chunks(100) {
            stream.send_data(Bytes::copy_from_slice(chunk), false).expect("queue");
        }
        stream.send_data(Bytes::new(), true).expect("end");
        assert_eq!(h2_read(response).await.0, 413);
    })
    .await;
}

#[tokio::test]
async fn malformed_x_mcp_header_is_500_naming_the_tool_in_the_log_only() {
    capture_logs();
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            let message = request(75, "tools/call", json!({"name": "bad_header", "arguments": {"n": 1.5}}));
            let reply = post_message(server.addr, proto, &message).await;
            reply.assert_error(500, -32603, &json!(75));
            assert_eq!(reply.body["error"], json!({"code": -32603, "message": "Internal error"}));
            let text = String::from_utf8_lossy(&reply.raw).into_owned();
            assert!(!text.contains("bad_header") && !text.contains("number"), "{text}");
            reply.assert_kept();
        }
        let logs = logs();
        let line = logs.lines().find(|l| l.contains("bad_header")).unwrap_or_else(|| panic!("{logs}"));
        assert!(line.contains("ERROR"), "{line}");
        // The tool is still listed, and other tools are unaffected.
        let reply = post_message(server.addr, Proto::H1, &list()).await;
        assert_eq!(reply.status, 200);
    })
    .await;
}
