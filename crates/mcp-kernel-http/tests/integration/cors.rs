//! CORS for browser clients (`src/cors.rs`), through a real listener on HTTP/1.1 and HTTP/2: a
//! preflight from a listed origin is granted exactly the MCP headers, a foreign origin gets no grant,
//! `AllowedOrigins::any()` grants none, and every answer to a listed origin (a 401 included) lets the
//! page read it. The browser's side of the same rules is `tests/browser.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{HeaderMap, Method};
use mcp_kernel_http::{AllowedOrigins, McpHttp, Refused};
use serde_json::{Value, json};

use crate::support::*;

fn call() -> Value {
    request(1, "tools/call", json!({"name": "search", "arguments": {"query": "q", "region": "eu"}}))
}

/// The headers `call()` needs: the standard ones and its one mirrored argument.
fn call_headers() -> HeaderMap {
    with(headers_for(&call()), "mcp-param-region", b"eu")
}

fn preflight_headers(origin: &str) -> HeaderMap {
    let headers = with(HeaderMap::new(), "origin", origin.as_bytes());
    let headers = with(headers, "access-control-request-method", b"POST");
    with(
        headers,
        "access-control-request-headers",
        b"authorization,content-type,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version",
    )
}

/// The fixture with `origins`, its `authorize` counting calls and admitting only `Bearer t`.
async fn counting(origins: AllowedOrigins) -> (Running, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let service = McpHttp::builder(server())
        .allowed_origins(origins)
        .authorize(move |parts| {
            seen.fetch_add(1, Ordering::SeqCst);
            match parts.headers.get("authorization") {
                Some(value) if value == "Bearer t" => Ok(()),
                _ => Err(Refused::unauthenticated("no token")),
            }
        })
        .build();
    (serve(service).await, calls)
}

/// One preflight from `origin` on a fresh connection.
async fn preflight(addr: std::net::SocketAddr, proto: Proto, origin: &str) -> Reply {
    send(addr, proto, Method::OPTIONS, preflight_headers(origin), Bytes::new()).await
}

fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
    reply.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn a_preflight_from_a_listed_origin_is_granted_the_mcp_headers() {
    bounded(async {
        let (server, calls) = counting(AllowedOrigins::list([ALLOWED_ORIGIN])).await;
        for proto in BOTH {
            let reply = preflight(server.addr, proto, ALLOWED_ORIGIN).await;
            assert_eq!(reply.status, 204, "{reply:?}");
            assert_eq!(header(&reply, "access-control-allow-origin"), Some(ALLOWED_ORIGIN));
            assert_eq!(header(&reply, "access-control-allow-methods"), Some("POST"));
            assert_eq!(
                header(&reply, "access-control-allow-headers"),
                Some("accept, content-type, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region")
            );
            assert!(header(&reply, "access-control-allow-credentials").is_none(), "no credentials mode");
            assert!(header(&reply, "vary").is_some_and(|v| v.contains("origin")));
            assert!(reply.raw.is_empty());
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0, "a preflight carries no credentials: authorize is not asked");
    })
    .await;
}

#[tokio::test]
async fn a_preflight_from_a_foreign_origin_gets_no_grant() {
    bounded(async {
        let (server, _) = counting(AllowedOrigins::list([ALLOWED_ORIGIN])).await;
        for proto in BOTH {
            let reply = preflight(server.addr, proto, "http://evil.example").await;
            reply.assert_error(403, -32600, &Value::Null);
            assert!(header(&reply, "access-control-allow-origin").is_none(), "{reply:?}");
            assert!(header(&reply, "access-control-allow-headers").is_none(), "{reply:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn any_origin_admits_requests_but_grants_no_browser_access() {
    bounded(async {
        let (server, _) = counting(AllowedOrigins::any()).await;
        for proto in BOTH {
            let preflight = preflight(server.addr, proto, "http://evil.example").await;
            assert_eq!(preflight.status, 405, "{preflight:?}");
            assert!(header(&preflight, "access-control-allow-origin").is_none());
            let headers = with(call_headers(), "origin", b"http://evil.example");
            let headers = with(headers, "authorization", b"Bearer t");
            let reply = post(server.addr, proto, headers, bytes(&call())).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert!(header(&reply, "access-control-allow-origin").is_none(), "{reply:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn every_answer_to_a_listed_origin_is_readable_by_its_page_a_401_included() {
    bounded(async {
        let (server, _) = counting(AllowedOrigins::list([ALLOWED_ORIGIN])).await;
        for proto in BOTH {
            let from_page = with(call_headers(), "origin", ALLOWED_ORIGIN.as_bytes());
            let refused = post(server.addr, proto, from_page.clone(), bytes(&call())).await;
            assert_eq!(refused.status, 401, "{refused:?}");
            assert_eq!(header(&refused, "access-control-allow-origin"), Some(ALLOWED_ORIGIN));
            assert_eq!(
                header(&refused, "access-control-expose-headers"),
                Some("www-authenticate, mcp-protocol-version, retry-after")
            );
            assert!(header(&refused, "www-authenticate").is_some());

            let answered =
                post(server.addr, proto, with(from_page, "authorization", b"Bearer t"), bytes(&call())).await;
            assert_eq!(answered.status, 200, "{answered:?}");
            assert_eq!(header(&answered, "access-control-allow-origin"), Some(ALLOWED_ORIGIN));
            assert_eq!(header(&answered, "vary"), Some("origin"));

            // No Origin, no grant.
            let plain =
                post(server.addr, proto, with(call_headers(), "authorization", b"Bearer t"), bytes(&call()))
                    .await;
            assert_eq!(plain.status, 200);
            assert!(header(&plain, "access-control-allow-origin").is_none());
        }
    })
    .await;
}

#[tokio::test]
async fn a_preflight_under_a_rebound_host_is_refused_before_any_grant() {
    bounded(async {
        let (server, _) = counting(AllowedOrigins::list([ALLOWED_ORIGIN])).await;
        let mut conn = connect(server.addr, Proto::H1).await;
        // The client's own `host` is replaced by this one.
        let headers = with(preflight_headers(ALLOWED_ORIGIN), "host", b"evil.example");
        let reply = conn.send(server.addr, Method::OPTIONS, headers, Bytes::new()).await;
        assert_eq!(reply.status, 421, "{reply:?}");
        assert!(header(&reply, "access-control-allow-origin").is_none());
    })
    .await;
}
