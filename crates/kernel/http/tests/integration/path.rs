//! `Builder::path`: the service answers at its one path and 404 at every other, once the name and the
//! origin have passed and before anything else reads the request; with a protected resource it also
//! serves the resource's metadata document; without a path, every path is served. Pins `protocol.md`
//! D-2.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::support::*;
use mcp_kernel_http::{AllowedOrigins, McpHttp, ProtectedResource, Refused};

/// Paths a service at `/mcp` does not serve: the root, another, a longer one, another case, a
/// trailing slash, an escaped letter.
const OTHER_PATHS: [&str; 6] = ["/", "/other", "/mcp/extra", "/MCP", "/mcp/", "/m%63p"];

/// How long a raw exchange may take: far below the read timeout (15 s) a body read would wait for.
const PROMPT: Duration = Duration::from_secs(3);

fn echo(id: i64, message: &str) -> Value {
    request(id, "tools/call", json!({"name": "echo", "arguments": {"message": message}}))
}

/// Sends `head` (and whatever follows it) on a fresh HTTP/1.1 connection and reads the answer's head.
async fn raw_head(addr: SocketAddr, head: String) -> String {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(head.as_bytes()).await.expect("write the head");
        let mut read = Vec::new();
        let mut chunk = [0u8; 1024];
        while !read.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "closed before an answer: {:?}", String::from_utf8_lossy(&read));
            read.extend_from_slice(&chunk[..n]);
        }
        String::from_utf8_lossy(&read).to_ascii_lowercase()
    };
    tokio::time::timeout(PROMPT, exchange).await.expect("no prompt answer: was the body awaited?")
}

#[tokio::test]
async fn with_a_path_every_other_path_is_404_without_its_body_read() {
    bounded(async {
        let running = start(|b| b.path("/mcp")).await;
        let message = echo(1, "hi");
        for proto in BOTH {
            for path in OTHER_PATHS {
                let mut conn = connect(running.addr, proto).await;
                let reply = conn
                    .send_to(running.addr, path, Method::POST, headers_for(&message), bytes(&message))
                    .await;
                // Nothing of the request, nothing of MCP: no content at all.
                assert_eq!((reply.status.as_u16(), reply.raw.len()), (404, 0), "{path}: {reply:?}");
                // A declared body is not read: HTTP/1.1 closes, as after every refusal before the body.
                reply.assert_pre_body_close();
            }
            // Without a body the connection is kept, over HTTP/1.1 too; HEAD alike.
            for method in [Method::GET, Method::HEAD, Method::DELETE] {
                let mut conn = connect(running.addr, proto).await;
                let reply = conn
                    .send_to(running.addr, "/other", method.clone(), headers_for(&message), Bytes::new())
                    .await;
                assert_eq!((reply.status.as_u16(), reply.raw.len()), (404, 0), "{method}: {reply:?}");
                reply.assert_kept();
            }
        }
        let host = running.addr;
        // A body announced and never sent: answered at once, not after the read deadline (408).
        let head = format!("POST /other HTTP/1.1\r\nhost: {host}\r\ncontent-length: 1000\r\n\r\n{{");
        let answer = raw_head(running.addr, head).await;
        assert!(answer.starts_with("http/1.1 404"), "{answer}");
        assert!(answer.contains("connection: close"), "{answer}");
        // Past the body cap (413 at the endpoint), chunked (411), or a GET (405): 404 elsewhere.
        for extra in ["content-length: 99999999\r\n", "transfer-encoding: chunked\r\n"] {
            let head = format!("POST /other HTTP/1.1\r\nhost: {host}\r\n{extra}\r\n");
            let answer = raw_head(running.addr, head).await;
            assert!(answer.starts_with("http/1.1 404"), "{extra}: {answer}");
        }
        let answer = raw_head(running.addr, format!("GET /mcp/x HTTP/1.1\r\nhost: {host}\r\n\r\n")).await;
        assert!(answer.starts_with("http/1.1 404"), "{answer}");
        // The endpoint itself still refuses the same shapes with its own statuses.
        let answer = raw_head(running.addr, format!("GET /mcp HTTP/1.1\r\nhost: {host}\r\n\r\n")).await;
        assert!(answer.starts_with("http/1.1 405"), "{answer}");
        running.stop().await;
    })
    .await;
}

#[tokio::test]
async fn with_a_path_a_rebound_name_or_a_foreign_origin_is_refused_at_every_path() {
    bounded(async {
        let running = start(|b| b.path("/mcp")).await;
        let message = request(1, "tools/list", json!({}));
        for path in ["/mcp", "/other"] {
            // A rebound name is 421 at every path: a page cannot tell the endpoint's path from another.
            let headers = replace(headers_for(&message), "host", b"rebound.example");
            let mut conn = connect(running.addr, Proto::H1).await;
            let reply = conn.send_to(running.addr, path, Method::POST, headers, bytes(&message)).await;
            reply.assert_error(421, -32600, &Value::Null);
            // A foreign page's Origin is 403 at every path (MCP S-14).
            let headers = with(headers_for(&message), "origin", b"http://evil.example");
            let mut conn = connect(running.addr, Proto::H1).await;
            let reply = conn.send_to(running.addr, path, Method::POST, headers, bytes(&message)).await;
            reply.assert_error(403, -32600, &Value::Null);
        }
        // A listed origin gets its grant on the 404, as on every answer after the Origin check, and
        // a preflight to another path is that 404, not a grant to call it.
        let listed = with(headers_for(&message), "origin", ALLOWED_ORIGIN.as_bytes());
        let mut conn = connect(running.addr, Proto::H1).await;
        let reply = conn.send_to(running.addr, "/other", Method::POST, listed, bytes(&message)).await;
        assert_eq!(reply.status, 404, "{reply:?}");
        assert_eq!(reply.headers["access-control-allow-origin"], ALLOWED_ORIGIN, "{reply:?}");
        assert_eq!(reply.headers["vary"], "origin", "{reply:?}");
        let preflight = with(
            with(http::HeaderMap::new(), "origin", ALLOWED_ORIGIN.as_bytes()),
            "access-control-request-method",
            b"POST",
        );
        let mut conn = connect(running.addr, Proto::H1).await;
        let reply =
            conn.send_to(running.addr, "/other", Method::OPTIONS, preflight.clone(), Bytes::new()).await;
        assert_eq!(reply.status, 404, "{reply:?}");
        let mut conn = connect(running.addr, Proto::H1).await;
        let reply = conn.send_to(running.addr, "/mcp", Method::OPTIONS, preflight, Bytes::new()).await;
        assert_eq!(reply.status, 204, "the endpoint's preflight: {reply:?}");
        running.stop().await;
    })
    .await;
}

#[tokio::test]
async fn with_a_path_that_path_is_served_with_or_without_a_query_and_byte_for_byte() {
    bounded(async {
        let running = start(|b| b.path("/mcp")).await;
        for proto in BOTH {
            for (id, path) in [(1, "/mcp"), (2, "/mcp?session=ignored")] {
                let message = echo(id, path);
                let mut conn = connect(running.addr, proto).await;
                let reply = conn
                    .send_to(running.addr, path, Method::POST, headers_for(&message), bytes(&message))
                    .await;
                assert_eq!(reply.status, 200, "{path}: {reply:?}");
                assert_eq!(reply.id(), &json!(id), "{path}: {reply:?}");
                assert_eq!(reply.result()["structuredContent"], json!({"message": path}));
            }
        }
        running.stop().await;
        // An escaped path is served as written, and only as written.
        let running = start(|b| b.path("/api/a%2Fb")).await;
        let message = echo(3, "escaped");
        for (path, status) in [("/api/a%2Fb", 200), ("/api/a/b", 404), ("/api/a%2fb", 404)] {
            let mut conn = connect(running.addr, Proto::H1).await;
            let reply =
                conn.send_to(running.addr, path, Method::POST, headers_for(&message), bytes(&message)).await;
            assert_eq!(reply.status, status, "{path}: {reply:?}");
        }
        running.stop().await;
    })
    .await;
}

#[tokio::test]
async fn with_a_path_and_a_protected_resource_its_metadata_document_is_served_beside_it() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("an address");
        let resource = ProtectedResource::new(&format!("http://{addr}/mcp"), ["http://127.0.0.1:9000"])
            .expect("a resource identifier");
        let service = McpHttp::builder(server())
            .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
            .protected_resource(resource.clone())
            .authorize(|_parts| Err::<(), _>(Refused::unauthenticated("no token")))
            .path("/mcp")
            .build();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(mcp_kernel_http::serve(listener, service, async move {
            let _ = stopped.await;
        }));
        // The endpoint's challenge names the document, at this port.
        let message = request(1, "tools/list", json!({}));
        let reply = post_message(addr, Proto::H1, &message).await;
        assert_eq!(reply.status, 401, "{reply:?}");
        let challenge = reply.headers["www-authenticate"].to_str().expect("text");
        assert!(challenge.contains(resource.metadata_url()), "{challenge}");
        // The document is served there to any origin, whatever the endpoint's own list says.
        for proto in BOTH {
            let headers = with(http::HeaderMap::new(), "origin", b"https://client.example");
            let mut conn = connect(addr, proto).await;
            let reply =
                conn.send_to(addr, resource.metadata_path(), Method::GET, headers, Bytes::new()).await;
            assert_eq!(reply.status, 200, "{reply:?}");
            assert_eq!(reply.body["resource"], json!(format!("http://{addr}/mcp")), "{reply:?}");
            assert_eq!(reply.headers["access-control-allow-origin"], "*", "{reply:?}");
        }
        // To any name too: the document is public, and names its resource itself.
        let headers = with(http::HeaderMap::new(), "host", b"rebound.example");
        let mut conn = connect(addr, Proto::H1).await;
        let reply = conn.send_to(addr, resource.metadata_path(), Method::GET, headers, Bytes::new()).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        // Any other path is still 404.
        let mut conn = connect(addr, Proto::H1).await;
        let reply = conn
            .send_to(
                addr,
                "/.well-known/oauth-protected-resource",
                Method::GET,
                http::HeaderMap::new(),
                Bytes::new(),
            )
            .await;
        assert_eq!(reply.status, 404, "{reply:?}");
        let _ = stop.send(());
    })
    .await;
}

#[tokio::test]
async fn without_a_path_every_path_is_served() {
    bounded(async {
        let running = start_default().await;
        let message = echo(7, "any");
        for proto in BOTH {
            for path in ["/mcp"].into_iter().chain(OTHER_PATHS) {
                let mut conn = connect(running.addr, proto).await;
                let reply = conn
                    .send_to(running.addr, path, Method::POST, headers_for(&message), bytes(&message))
                    .await;
                assert_eq!(reply.status, 200, "{path}: {reply:?}");
                assert_eq!(reply.result()["structuredContent"], json!({"message": "any"}));
            }
        }
        running.stop().await;
    })
    .await;
}

#[test]
fn a_path_that_no_request_could_match_is_refused_by_the_builder() {
    let refused = [
        "",
        "mcp",
        "http://host/mcp",
        "/mcp?x=1",
        "/mcp?",
        "/mcp#top",
        "/m cp",
        "/mcpé",
        "/{mcp}",
        "/a\\b",
        "/a%7bb",
        "/m%63p",
        "/a[b]",
        "/m%zz",
        "/a/../mcp",
        "/mcp/.",
        "/a/%2E%2E/mcp",
    ];
    for path in refused {
        let outcome = std::panic::catch_unwind(|| builder().authorize(|_| Ok(())).path(path).build());
        assert!(outcome.is_err(), "{path:?} was accepted");
    }
    for path in ["/", "/mcp", "/api/v1/mcp", "/a%20b", "/mcp;v=1"] {
        let outcome = std::panic::catch_unwind(|| builder().authorize(|_| Ok(())).path(path).build());
        assert!(outcome.is_ok(), "{path:?} was refused");
    }
}

#[test]
fn a_path_that_is_the_metadata_documents_is_refused_by_the_builder() {
    let resource = ProtectedResource::new("https://mcp.example.com/mcp", ["https://auth.example.com"])
        .expect("a resource identifier");
    let hidden = std::panic::catch_unwind(|| {
        builder()
            .protected_resource(resource.clone())
            .authorize(|_| Ok(()))
            .path(resource.metadata_path())
            .build()
    });
    assert!(hidden.is_err(), "the endpoint hidden behind its own metadata document was accepted");
    let beside = std::panic::catch_unwind(|| {
        builder().protected_resource(resource.clone()).authorize(|_| Ok(())).path("/mcp").build()
    });
    assert!(beside.is_ok());
}
