//! The stateless legacy path on the wire (`LegacyClients::Stateless`): a fixed script of a
//! `2025-11-25` client — `initialize`, `notifications/initialized`, `tools/list`, `tools/call`, a
//! POSTed response, then GET and DELETE — answered with exactly these bytes, over HTTP/1.1 and HTTP/2,
//! whatever the transport learned to do with sessions beside it.

use http::header::{ALLOW, CONNECTION, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use serde_json::json;

use crate::support::*;
use mcp_kernel_http::LegacyClients;

/// One exchange as the wire carries it: status, the headers that matter, and the body bytes.
#[derive(Debug, PartialEq)]
struct Wire {
    status: u16,
    content_type: Option<String>,
    allow: Option<String>,
    connection: Option<String>,
    session: Option<String>,
    body: String,
}

fn wire(reply: &Reply) -> Wire {
    let header = |name| reply.headers.get(name).map(|v: &HeaderValue| v.to_str().unwrap().to_owned());
    Wire {
        status: reply.status.as_u16(),
        content_type: header(CONTENT_TYPE),
        allow: header(ALLOW),
        connection: header(CONNECTION),
        session: header(http::HeaderName::from_static("mcp-session-id")),
        body: String::from_utf8(reply.raw.to_vec()).unwrap(),
    }
}

/// The answer to `initialize`; the server's version is the workspace's (this crate's).
const INITIALIZED: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},"resources":{"listChanged":false,"subscribe":false},"prompts":{"listChanged":false}},"serverInfo":{"name":"mcp-kernel","version":""#,
    env!("CARGO_PKG_VERSION"),
    r#""}}}"#
);
const CALLED: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"message\":\"hi\"}"}],"structuredContent":{"message":"hi"},"isError":false}}"#;
const NOT_POST: &str =
    r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Method not allowed; use POST"}}"#;

#[tokio::test]
async fn the_stateless_legacy_script_is_answered_with_todays_bytes() {
    bounded(async {
        let server = start(|b| b.legacy_clients(LegacyClients::Stateless)).await;
        let initialize = legacy(
            1,
            "initialize",
            json!({
                "protocolVersion": LEGACY,
                "capabilities": {"sampling": {}, "elicitation": {}},
                "clientInfo": {"name": "legacy-client", "version": "1.0.0"}
            }),
        );
        let list = legacy(2, "tools/list", json!({}));
        let call = legacy(3, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
        let answer = json!({"jsonrpc": "2.0", "id": "s-1", "result": {}});
        let json_type = || Some("application/json".to_owned());
        for proto in BOTH {
            let mut session_headers = legacy_headers();
            session_headers.insert("mcp-session-id", HeaderValue::from_static("s-guessed"));
            session_headers.insert("accept", HeaderValue::from_static("text/event-stream"));
            let close = (proto == Proto::H1).then(|| "close".to_owned());
            let script = [
                (Method::POST, without(legacy_headers(), "mcp-protocol-version"), bytes(&initialize)),
                (Method::POST, legacy_headers(), bytes(&notification("notifications/initialized"))),
                (Method::POST, legacy_headers(), bytes(&list)),
                (Method::POST, legacy_headers(), bytes(&call)),
                (Method::POST, legacy_headers(), bytes(&answer)),
                (Method::GET, session_headers.clone(), bytes::Bytes::new()),
                (Method::DELETE, session_headers, bytes::Bytes::new()),
                (Method::GET, HeaderMap::new(), bytes::Bytes::new()),
            ];
            let mut replies = Vec::new();
            for (method, headers, body) in script {
                replies.push(wire(&send(server.addr, proto, method, headers, body).await));
            }
            let ok = |body: &str| Wire {
                status: 200,
                content_type: json_type(),
                allow: None,
                connection: None,
                session: None,
                body: body.to_owned(),
            };
            let accepted = || Wire {
                status: 202,
                content_type: None,
                allow: None,
                connection: None,
                session: None,
                body: String::new(),
            };
            let not_post = || Wire {
                status: 405,
                content_type: json_type(),
                allow: Some("POST".to_owned()),
                connection: close.clone(),
                session: None,
                body: NOT_POST.to_owned(),
            };
            assert_eq!(replies[0], ok(INITIALIZED), "initialize over {proto:?}");
            assert_eq!(replies[1], accepted(), "notifications/initialized over {proto:?}");
            assert_eq!(replies[2].status, 200, "tools/list over {proto:?}");
            assert!(
                replies[2]
                    .body
                    .starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get_weather""#)
            );
            assert!(!replies[2].body.contains("ttlMs"), "{:?}", replies[2]);
            assert_eq!(replies[3], ok(CALLED), "tools/call over {proto:?}");
            assert_eq!(replies[4], accepted(), "a POSTed response over {proto:?}");
            assert_eq!(replies[5], not_post(), "GET over {proto:?}");
            assert_eq!(replies[6], not_post(), "DELETE over {proto:?}");
            assert_eq!(replies[7], not_post(), "a bare GET over {proto:?}");
        }
    })
    .await;
}
