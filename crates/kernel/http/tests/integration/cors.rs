//! CORS for browser clients (`src/admission/cors.rs`), through a real listener on HTTP/1.1 and HTTP/2: a
//! preflight from a listed origin is granted exactly the MCP headers, a foreign origin gets no grant,
//! `AllowedOrigins::any()` grants none, and every answer to a listed origin (a 401 included) lets the
//! page read it; a crafted list of requested headers is read only within its bounds; a preflight's
//! body is never read as a request (drained when it came with the head, else the connection is
//! closed). The browser's side of the same rules is `tests/browser.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method};
use mcp_kernel_http::{AllowedOrigins, McpHttp, Refused};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

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

/// The crafted preflight: 63 distinct `mcp-param-*` names, then the last of them repeated
/// (mixed case) up to `bytes`, then one more distinct name.
fn crafted_request_headers(bytes: usize) -> String {
    let mut list: String = (0..63).map(|i| format!("mcp-param-p{i},")).collect();
    while list.len() < bytes {
        list.push_str("MCP-Param-P62,");
    }
    list.push_str("mcp-param-late");
    list
}

#[tokio::test]
async fn a_preflight_with_sixty_thousand_bytes_of_header_names_costs_no_more_than_an_ordinary_one() {
    // Not timed (docs/performance.md, "Preflight worst case", has the figures): what is pinned is
    // what makes the cost bounded. The parser reads at most 16 KiB and 128 names of the list, so the
    // name after 60 KB (or 15 KB: HTTP/2's header list is bounded at 16 KB by hyper) is never
    // reached, and the grant is the 63 names, each once.
    bounded(async {
        let (server, calls) = counting(AllowedOrigins::list([ALLOWED_ORIGIN])).await;
        let granted: String = (0..63).map(|i| format!(", mcp-param-p{i}")).collect();
        let expected = format!(
            "accept, content-type, authorization, mcp-protocol-version, mcp-method, mcp-name{granted}"
        );
        for (proto, bytes) in [(Proto::H1, 60_000), (Proto::H2, 15_000)] {
            let list = crafted_request_headers(bytes);
            let headers = with(
                with(HeaderMap::new(), "origin", ALLOWED_ORIGIN.as_bytes()),
                "access-control-request-method",
                b"POST",
            );
            let headers = with(headers, "access-control-request-headers", list.as_bytes());
            let mut conn = connect(server.addr, proto).await;
            let reply = conn.send(server.addr, Method::OPTIONS, headers, Bytes::new()).await;
            assert_eq!(reply.status, 204, "{proto:?}: {reply:?}");
            assert_eq!(header(&reply, "access-control-allow-headers"), Some(expected.as_str()), "{proto:?}");
            assert!(reply.raw.is_empty());
            // The connection is kept, and the next preflight on it is answered as on a fresh one.
            let ordinary = conn
                .send(server.addr, Method::OPTIONS, preflight_headers(ALLOWED_ORIGIN), Bytes::new())
                .await;
            assert_eq!(ordinary.status, 204, "{ordinary:?}");
            assert!(
                header(&ordinary, "access-control-allow-headers")
                    .is_some_and(|h| h.ends_with("mcp-name, mcp-param-region"))
            );
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0, "answered before authorize");
    })
    .await;
}

/// A preflight head with `content-length: length`, as raw HTTP/1.1.
fn preflight_head_declaring(addr: std::net::SocketAddr, length: usize) -> Vec<u8> {
    let length = length.to_string();
    raw_head(
        "OPTIONS",
        addr,
        &[("origin", ALLOWED_ORIGIN), ("access-control-request-method", "POST"), ("content-length", &length)],
    )
}

#[tokio::test]
async fn a_preflight_with_a_small_body_is_drained_and_its_body_never_runs() {
    bounded(async {
        let (server, calls) = counting(AllowedOrigins::list([ALLOWED_ORIGIN])).await;
        // The body is a whole POST, authorized: were it read as the connection's next request, it
        // would reach `authorize` and be answered before the caller's own.
        let smuggled =
            bytes(&request(1, "tools/call", json!({"name": "echo", "arguments": {"message": "smuggled"}})));
        let mut fields = raw_standard("tools/call");
        fields.extend([("mcp-name", "echo".to_owned()), ("authorization", "Bearer t".to_owned())]);
        fields.push(("content-length", smuggled.len().to_string()));
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let mut body = raw_head("POST", server.addr, &borrowed);
        body.extend_from_slice(&smuggled);

        let mut stream = TcpStream::connect(server.addr).await.expect("connect");
        let mut bytes_out = preflight_head_declaring(server.addr, body.len());
        bytes_out.extend_from_slice(&body);
        stream.write_all(&bytes_out).await.expect("write");
        let preflight = read_raw_response(&mut stream).await;
        assert_eq!(preflight.status, 204, "{preflight:?}");
        assert_eq!(preflight.header("connection"), None, "kept: {preflight:?}");

        // The same connection: the caller's own request is the next one answered.
        let own = bytes(&request(2, "tools/call", json!({"name": "echo", "arguments": {"message": "own"}})));
        let mut fields = raw_standard("tools/call");
        fields.extend([("mcp-name", "echo".to_owned()), ("authorization", "Bearer t".to_owned())]);
        fields.push(("content-length", own.len().to_string()));
        let borrowed: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let mut next = raw_head("POST", server.addr, &borrowed);
        next.extend_from_slice(&own);
        stream.write_all(&next).await.expect("write");
        let answer = read_raw_response(&mut stream).await;
        assert_eq!((answer.status, &answer.json()["id"]), (200, &json!(2)), "{answer:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "the drained body never ran");
        assert!(
            !closed_within(&mut stream, Duration::from_millis(200)).await,
            "and nothing else was answered"
        );
    })
    .await;
}

#[tokio::test]
async fn a_preflight_whose_body_has_not_arrived_is_answered_and_its_connection_closed() {
    bounded(async {
        let (server, calls) = counting(AllowedOrigins::list([ALLOWED_ORIGIN])).await;
        // Declared and not sent, half sent, or sent whole but too large to have arrived with the head.
        for (declared, sent) in [(1_000, 0), (100_000, 50_000), (70_000, 70_000)] {
            let mut stream = TcpStream::connect(server.addr).await.expect("connect");
            let mut bytes_out = preflight_head_declaring(server.addr, declared);
            bytes_out.extend(std::iter::repeat_n(b'x', sent));
            stream.write_all(&bytes_out).await.expect("write");
            let preflight = read_raw_response(&mut stream).await;
            assert_eq!(preflight.status, 204, "{declared}/{sent}: {preflight:?}");
            assert!(closed_within(&mut stream, Duration::from_secs(2)).await, "{declared}/{sent}: closed");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    })
    .await;
}
