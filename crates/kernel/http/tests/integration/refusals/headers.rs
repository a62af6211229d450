//! Step 9: the header rules — `MCP-Protocol-Version`, `_meta`, `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*` against the body, each refused 400 with the id echoed and the connection kept, in
//! their order.

use http::HeaderMap;
use serde_json::{Value, json};

use super::assert_header_refusal;
use crate::support::*;
use mcp_kernel_http::LegacyClients;

/// POSTs over both protocols and asserts 200.
async fn assert_admitted(server: &Running, headers: &HeaderMap, message: &Value) -> Vec<Reply> {
    let mut replies = Vec::new();
    for proto in BOTH {
        let reply = post(server.addr, proto, headers.clone(), bytes(message)).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        replies.push(reply);
    }
    replies
}

#[tokio::test]
async fn protocol_version_header_missing_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let message = request(41, "tools/list", json!({}));
        let headers = without(headers_for(&message), "mcp-protocol-version");
        for reply in assert_header_refusal(&server, &headers, &message, -32020).await {
            assert!(reply.message().to_ascii_lowercase().contains("mcp-protocol-version"), "{reply:?}");
        }
        // Notifications need it too.
        let message = notification("notifications/cancelled");
        let headers = without(headers_for(&message), "mcp-protocol-version");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn protocol_version_header_differing_from_the_body_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let message = request(42, "tools/list", json!({}));
        let headers = replace(headers_for(&message), "mcp-protocol-version", LEGACY.as_bytes());
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // The header is never base64-decoded.
        let headers = replace(headers_for(&message), "mcp-protocol-version", b"=?base64?MjAyNi0wNy0yOA==?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn unsupported_header_version_is_400_minus_32022_naming_2026_07_28() {
    bounded(async {
        // A 2026-07-28-only server (by default a legacy header takes the legacy path, `legacy.rs`).
        let server = start(|b| b.legacy_clients(LegacyClients::Refused)).await;
        let mut message = request(43, "tools/list", json!({}));
        message["params"]["_meta"][META_VERSION] = json!(LEGACY);
        let headers = replace(headers_for(&message), "mcp-protocol-version", LEGACY.as_bytes());
        for reply in assert_header_refusal(&server, &headers, &message, -32022).await {
            assert_eq!(reply.body["error"]["data"]["supported"], json!([MODERN]), "{reply:?}");
            assert_eq!(reply.body["error"]["data"]["requested"], LEGACY);
        }
        // A notification declares no version in its body: the header alone decides.
        let message = notification("notifications/cancelled");
        let headers = replace(headers_for(&message), "mcp-protocol-version", b"2024-11-05");
        for reply in assert_header_refusal(&server, &headers, &message, -32022).await {
            assert_eq!(reply.body["error"]["data"]["supported"], json!([MODERN]));
            assert_eq!(reply.body["error"]["data"]["requested"], "2024-11-05");
        }
    })
    .await;
}

#[tokio::test]
async fn top_level_meta_is_400_minus_32602() {
    bounded(async {
        let server = start_default().await;
        let mut message = request(44, "tools/list", json!({}));
        message["_meta"] = meta();
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        let mut message = notification("notifications/cancelled");
        message["_meta"] = meta();
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
    })
    .await;
}

#[tokio::test]
async fn missing_meta_fields_are_400_minus_32602() {
    bounded(async {
        let server = start_default().await;
        // No `_meta` at all (a headerless era probe does not exist over HTTP).
        let message = json!({"jsonrpc": "2.0", "id": 45, "method": "server/discover", "params": {}});
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        let message = json!({"jsonrpc": "2.0", "id": 46, "method": "tools/list"});
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        // No protocol version.
        let mut message = request(47, "tools/list", json!({}));
        message["params"]["_meta"].as_object_mut().unwrap().remove(META_VERSION);
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        // No client capabilities.
        let mut message = request(48, "tools/list", json!({}));
        message["params"]["_meta"].as_object_mut().unwrap().remove(META_CAPABILITIES);
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
        // `_meta` that is not an object.
        let mut message = request(49, "tools/list", json!({}));
        message["params"]["_meta"] = json!("2026-07-28");
        assert_header_refusal(&server, &headers_for(&message), &message, -32602).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_method_missing_or_mismatched_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let message = request(50, "tools/list", json!({}));
        let headers = without(headers_for(&message), "mcp-method");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let headers = replace(headers_for(&message), "mcp-method", b"prompts/list");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // Case-sensitive, and never base64-decoded.
        let headers = replace(headers_for(&message), "mcp-method", b"Tools/List");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let headers = replace(headers_for(&message), "mcp-method", b"=?base64?dG9vbHMvbGlzdA==?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // On a notification it is optional, but a value that is sent must match.
        let message = notification("notifications/cancelled");
        let headers = replace(headers_for(&message), "mcp-method", b"notifications/progress");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_name_missing_or_mismatched_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let messages = [
            request(51, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}})),
            request(52, "prompts/get", json!({"name": "alpha"})),
            request(53, "resources/read", json!({"uri": "test://a"})),
        ];
        for message in &messages {
            let headers = without(headers_for(message), "mcp-name");
            assert_header_refusal(&server, &headers, message, -32020).await;
            let headers = replace(headers_for(message), "mcp-name", b"get_weather");
            assert_header_refusal(&server, &headers, message, -32020).await;
        }
        // Methods that name nothing need no Mcp-Name.
        let message = request(54, "tools/list", json!({}));
        assert_admitted(&server, &headers_for(&message), &message).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_name_base64_is_decoded_only_when_canonical() {
    bounded(async {
        let server = start_default().await;
        let message =
            request(55, "tools/call", json!({"name": "get_weather", "arguments": {"place": "Oslo"}}));
        // Canonical "get_weather".
        let headers = replace(headers_for(&message), "mcp-name", b"=?base64?Z2V0X3dlYXRoZXI=?=");
        assert_admitted(&server, &headers, &message).await;
        // Non-zero trailing bits decode to the same bytes leniently: not canonical, compared raw.
        let headers = replace(headers_for(&message), "mcp-name", b"=?base64?Z2V0X3dlYXRoZXJ=?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // Missing padding, uppercase markers: compared raw.
        let headers = replace(headers_for(&message), "mcp-name", b"=?base64?Z2V0X3dlYXRoZXI?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let headers = replace(headers_for(&message), "mcp-name", b"=?BASE64?Z2V0X3dlYXRoZXI=?=");
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

/// A `tools/call` of `search` with `arguments` and the standard headers plus `params`.
fn search(arguments: Value, params: &[(&str, &[u8])]) -> (HeaderMap, Value) {
    let message = request(60, "tools/call", json!({"name": "search", "arguments": arguments}));
    let mut headers = headers_for(&message);
    for (name, value) in params {
        headers = with(headers, name, value);
    }
    (headers, message)
}

#[tokio::test]
async fn mcp_param_headers_mirroring_the_body_are_admitted() {
    bounded(async {
        let server = start_default().await;
        let arguments = json!({"region": "eu", "limit": 42, "exact": true, "filter": {"owner": "ann"}});
        let (headers, message) = search(
            arguments.clone(),
            &[
                ("mcp-param-region", b"eu"),
                ("Mcp-Param-Limit", b"42"),
                ("mcp-param-exact", b"true"),
                ("mcp-param-owner", b"ann"),
            ],
        );
        for reply in assert_admitted(&server, &headers, &message).await {
            assert_eq!(reply.result()["structuredContent"], arguments);
        }
        // A string with a leading space is sent base64-encoded; an integer may carry ".0".
        let (headers, message) = search(
            json!({"region": " eu", "limit": 42}),
            &[("mcp-param-region", b"=?base64?IGV1?="), ("mcp-param-limit", b"42.0")],
        );
        assert_admitted(&server, &headers, &message).await;
        // Absent or null with no header: nothing to mirror.
        let (headers, message) = search(json!({"region": null, "filter": {}}), &[]);
        assert_admitted(&server, &headers, &message).await;
        // Headers the schema does not annotate are ignored, whatever they hold.
        let (headers, message) =
            search(json!({"note": "x"}), &[("mcp-param-note", b"nope"), ("mcp-param-other", b"\xff")]);
        assert_admitted(&server, &headers, &message).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_param_string_mismatch_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        let (headers, message) = search(json!({"region": "eu"}), &[("mcp-param-region", b"us-secret-value")]);
        for reply in assert_header_refusal(&server, &headers, &message, -32020).await {
            assert!(!String::from_utf8_lossy(&reply.raw).contains("us-secret-value"), "never echoed");
        }
        let (headers, message) = search(json!({"region": "Eu"}), &[("mcp-param-region", b"eu")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_param_integer_mismatch_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        // (" 42" cannot be tested over HTTP: surrounding whitespace is not part of a field value.)
        for header in [&b"042"[..], b"+42", b"4.2e1", b"0x2a", b"42.5", b"43", b"42.", b"-42"] {
            let (headers, message) = search(json!({"limit": 42}), &[("mcp-param-limit", header)]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
    })
    .await;
}

#[tokio::test]
async fn mcp_param_boolean_mismatch_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        for (header, body) in [(&b"True"[..], true), (b"1", true), (b"false", true), (b"true", false)] {
            let (headers, message) = search(json!({"exact": body}), &[("mcp-param-exact", header)]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
    })
    .await;
}

#[tokio::test]
async fn mcp_param_nested_is_followed_through_properties() {
    bounded(async {
        let server = start_default().await;
        let (headers, message) = search(json!({"filter": {"owner": "ann"}}), &[("mcp-param-owner", b"bob")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
        let (headers, message) = search(json!({"filter": {"owner": "ann"}}), &[]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // A top-level "owner" is not the annotated path.
        let (headers, message) =
            search(json!({"filter": {}, "owner": "ann"}), &[("mcp-param-owner", b"ann")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn mcp_param_absent_or_unmirrored_is_400_minus_32020() {
    bounded(async {
        let server = start_default().await;
        // A header with no body value (absent or null).
        for arguments in [json!({}), json!({"limit": null})] {
            let (headers, message) = search(arguments, &[("mcp-param-limit", b"5")]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
        // A body value with no header.
        for arguments in [json!({"limit": 0}), json!({"exact": false}), json!({"region": ""})] {
            let (headers, message) = search(arguments, &[]);
            assert_header_refusal(&server, &headers, &message, -32020).await;
        }
        // A recognized header whose value is not UTF-8.
        let (headers, message) = search(json!({"region": "eu"}), &[("mcp-param-region", b"\xffeu")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn a_repeated_header_with_one_bad_value_is_refused() {
    bounded(async {
        let server = start_default().await;
        let message = request(61, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}}));
        let cases: [(&str, &[u8]); 4] = [
            ("mcp-protocol-version", LEGACY.as_bytes()),
            ("mcp-method", b"tools/list"),
            ("mcp-name", b"get_weather"),
            ("mcp-name", b"\xff"),
        ];
        for (name, bad) in cases {
            // The bad value after the good one, then before it.
            let after = with(headers_for(&message), name, bad);
            let replies = assert_header_refusal(&server, &after, &message, -32020).await;
            let good = headers_for(&message).get(name).expect("a standard header").clone();
            let before = with(with(without(headers_for(&message), name), name, bad), name, good.as_bytes());
            assert_header_refusal(&server, &before, &message, replies[0].code()).await;
        }
        let (headers, message) =
            search(json!({"region": "eu"}), &[("mcp-param-region", b"eu"), ("mcp-param-region", b"us")]);
        assert_header_refusal(&server, &headers, &message, -32020).await;
    })
    .await;
}

#[tokio::test]
async fn header_checks_run_in_order() {
    bounded(async {
        let server = start_default().await;
        // Top-level `_meta` before the version header.
        let mut message = request(62, "tools/list", json!({}));
        message["_meta"] = meta();
        let headers = without(headers_for(&message), "mcp-protocol-version");
        assert_header_refusal(&server, &headers, &message, -32602).await;
        // The version header before `_meta` fields.
        let mut message = request(63, "tools/list", json!({}));
        message["params"]["_meta"].as_object_mut().unwrap().remove(META_CAPABILITIES);
        let headers = without(headers_for(&message), "mcp-protocol-version");
        assert_header_refusal(&server, &headers, &message, -32020).await;
        // `_meta` fields before Mcp-Method.
        let headers = without(headers_for(&message), "mcp-method");
        assert_header_refusal(&server, &headers, &message, -32602).await;
        // Mcp-Method before Mcp-Name before Mcp-Param.
        let (headers, message) = search(json!({"region": "eu"}), &[("mcp-param-region", b"us")]);
        let both = replace(replace(headers.clone(), "mcp-method", b"tools/list"), "mcp-name", b"x");
        for reply in assert_header_refusal(&server, &both, &message, -32020).await {
            assert!(reply.message().contains("mcp-method"), "{reply:?}");
        }
        let name_and_param = replace(headers, "mcp-name", b"x");
        for reply in assert_header_refusal(&server, &name_and_param, &message, -32020).await {
            assert!(reply.message().contains("mcp-name"), "{reply:?}");
        }
    })
    .await;
}
