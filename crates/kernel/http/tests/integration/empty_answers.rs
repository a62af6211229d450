//! Answers without content, through a real listener, as a raw HTTP/2 client (the `h2` crate) and a
//! raw HTTP/1.1 client see them (`src/response/body.rs`, `src/admission/cors.rs`,
//! `src/auth/metadata.rs`): a 204 (a CORS preflight's, the endpoint's or the metadata document's)
//! carries no `content-length`, and a `HEAD` of the metadata document carries `GET`'s length or none
//! (RFC 9110 §8.6). Over HTTP/2 hyper
//! derives `content-length` from a body's exact size hint when the end of the stream does not go
//! with the head (as `serve` sends it); hyper-based clients and curl hide the header, a raw client
//! does not.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, Version};
use mcp_kernel_http::{AllowedOrigins, McpHttp, McpService, ProtectedResource};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::support::*;

/// The endpoint at `/mcp` and its metadata document beside it, under axum and `serve`.
struct App {
    addr: SocketAddr,
    metadata_path: String,
    _stop: oneshot::Sender<()>,
}

async fn app() -> App {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("an address");
    let resource = ProtectedResource::new(&format!("http://{addr}/mcp"), ["http://127.0.0.1:9000"])
        .expect("a resource identifier");
    let service: McpService = McpHttp::builder(server())
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .protected_resource(resource.clone())
        .authorize(|_| Ok(()))
        .build();
    let metadata_path = resource.metadata_path().to_owned();
    let router = axum::Router::new()
        .route_service("/mcp", service)
        .route_service(&metadata_path, resource.metadata_service());
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(mcp_kernel_http::serve(listener, router, async move {
        let _ = rx.await;
    }));
    App { addr, metadata_path, _stop: tx }
}

/// A CORS preflight's header fields, from the listed origin.
const PREFLIGHT: [(&str, &str); 3] = [
    ("origin", ALLOWED_ORIGIN),
    ("access-control-request-method", "POST"),
    ("access-control-request-headers", "content-type,mcp-method,mcp-protocol-version"),
];

/// One request over a fresh HTTP/2 connection driven by the `h2` crate, with no body.
async fn h2_exchange(
    addr: SocketAddr,
    method: Method,
    path: &str,
    fields: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Bytes) {
    let mut sender = h2_connect(addr).await;
    let mut request = Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"))
        .version(Version::HTTP_2)
        .body(())
        .expect("a request");
    for (name, value) in fields {
        request.headers_mut().append(
            http::HeaderName::from_bytes(name.as_bytes()).expect("a name"),
            http::HeaderValue::from_str(value).expect("a value"),
        );
    }
    let (response, _) = sender.send_request(request, true).expect("send the request");
    h2_read(response).await
}

/// A response head read off a raw HTTP/1.1 socket, and the bytes after it.
#[derive(Debug)]
struct Head {
    status: u16,
    fields: Vec<(String, String)>,
    after: Vec<u8>,
}

impl Head {
    fn get(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Writes one request head (no body) on `stream` and reads the response's head, nothing more: what
/// has already arrived after it is kept in `after`.
async fn h1_head(stream: &mut TcpStream, method: &str, path: &str, fields: &[(&str, &str)]) -> Head {
    let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {}\r\n", stream.peer_addr().expect("peer"));
    for (name, value) in fields {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = tokio::time::timeout(EXCHANGE_TIMEOUT, async {
        for _ in 0..1_000 {
            if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                return end;
            }
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "closed before a response head: {:?}", String::from_utf8_lossy(&buffer));
            buffer.extend_from_slice(&chunk[..n]);
        }
        panic!("no response head in a thousand reads");
    })
    .await
    .expect("a response head in time");
    let head = String::from_utf8(buffer[..end].to_vec()).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status =
        lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("a status");
    let fields = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Head { status, fields, after: buffer[end + 4..].to_vec() }
}

#[tokio::test]
async fn an_http2_204_carries_no_content_length() {
    bounded(async {
        let app = app().await;
        for path in ["/mcp", app.metadata_path.as_str()] {
            let (status, headers, body) = h2_exchange(app.addr, Method::OPTIONS, path, &PREFLIGHT).await;
            assert_eq!(status, StatusCode::NO_CONTENT, "{path}: {headers:?}");
            assert!(headers.get("content-length").is_none(), "{path}: {headers:?}");
            assert!(headers.get("access-control-allow-origin").is_some(), "{path}: the grant, {headers:?}");
            assert!(body.is_empty());
        }
    })
    .await;
}

#[tokio::test]
async fn an_http1_204_carries_no_content_length() {
    bounded(async {
        let app = app().await;
        let mut stream = TcpStream::connect(app.addr).await.expect("connect");
        for path in ["/mcp", app.metadata_path.as_str(), "/mcp"] {
            let head = h1_head(&mut stream, "OPTIONS", path, &PREFLIGHT).await;
            assert_eq!(head.status, 204, "{path}: {head:?}");
            assert_eq!((head.get("content-length"), head.get("transfer-encoding")), (None, None), "{head:?}");
            assert!(head.after.is_empty(), "no content: {head:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_head_of_the_metadata_document_carries_gets_length_or_none() {
    bounded(async {
        let app = app().await;
        let path = app.metadata_path.as_str();

        let (status, get_headers, document) = h2_exchange(app.addr, Method::GET, path, &[]).await;
        assert_eq!(status, StatusCode::OK);
        let length = document.len().to_string();
        assert_eq!(get_headers.get("content-length").map(|v| v.to_str().unwrap()), Some(length.as_str()));
        let (status, headers, body) = h2_exchange(app.addr, Method::HEAD, path, &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.is_empty(), "no content on HTTP/2");
        let head_length = headers.get("content-length").map(|v| v.to_str().unwrap());
        assert!(head_length.is_none_or(|l| l == length), "HTTP/2: {head_length:?}, GET sent {length}");
        assert_eq!(head_length, Some(length.as_str()), "what this crate sends: GET's length");

        // HTTP/1.1, one connection: the HEAD, then a GET read right after it (no stray bytes).
        let mut stream = TcpStream::connect(app.addr).await.expect("connect");
        let head = h1_head(&mut stream, "HEAD", path, &[]).await;
        assert_eq!(head.status, 200, "{head:?}");
        assert!(head.after.is_empty(), "no content: {head:?}");
        assert!(head.get("content-length").is_none_or(|l| l == length), "HTTP/1.1: {head:?}");
        assert_eq!(head.get("content-length"), Some(length.as_str()), "GET's length");
        let get = h1_head(&mut stream, "GET", path, &[]).await;
        assert_eq!((get.status, get.get("content-length")), (200, Some(length.as_str())), "{get:?}");
    })
    .await;
}

#[tokio::test]
async fn a_head_of_the_endpoint_is_refused_without_content_over_http2() {
    bounded(async {
        let app = app().await;
        let (status, headers, body) = h2_exchange(app.addr, Method::GET, "/mcp", &[]).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{headers:?}");
        let get_length = body.len().to_string();
        let (status, headers, body) = h2_exchange(app.addr, Method::HEAD, "/mcp", &[]).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{headers:?}");
        assert!(body.is_empty(), "no DATA on a HEAD: {body:?}");
        assert_eq!(headers.get("content-length").and_then(|v| v.to_str().ok()), Some(get_length.as_str()));
        assert_eq!(headers.get("allow").and_then(|v| v.to_str().ok()), Some("POST"));
    })
    .await;
}
