//! Step 1, the Host check (`src/admission/host_header.rs`), through a real listener on HTTP/1.1 and
//! HTTP/2: the DNS-rebinding request shape is refused 421 before anything else reads it, with no
//! configuration; a missing, repeated or disagreeing name is 400; a host that lists its public name is
//! served under it.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{HeaderMap, Method, Request, Version};
use mcp_kernel_http::{AllowedHosts, AllowedOrigins, McpHttp};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::support::*;

fn list() -> Value {
    request(1, "tools/list", json!({}))
}

/// A server whose `authorize` counts its calls, with `origins` and `hosts` (the default if `None`).
async fn counting(origins: AllowedOrigins, hosts: Option<AllowedHosts>) -> (Running, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let mut builder = McpHttp::builder(server()).allowed_origins(origins);
    if let Some(hosts) = hosts {
        builder = builder.allowed_hosts(hosts);
    }
    let service = builder
        .authorize(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .build();
    (serve(service).await, calls)
}

/// A complete HTTP/1.1 POST of `tools/list` with exactly the given `host` lines and `extra` fields.
fn raw_post(hosts: &[&str], extra: &[(&str, &str)]) -> Vec<u8> {
    let body = bytes(&list());
    let mut head = Vec::new();
    write!(head, "POST /mcp HTTP/1.1\r\n").expect("write");
    for host in hosts {
        write!(head, "host: {host}\r\n").expect("write");
    }
    for (name, value) in
        raw_standard("tools/list").iter().map(|(n, v)| (*n, v.as_str())).chain(extra.iter().copied())
    {
        write!(head, "{name}: {value}\r\n").expect("write");
    }
    write!(head, "content-length: {}\r\n\r\n", body.len()).expect("write");
    head.extend_from_slice(&body);
    head
}

/// Sends `bytes` on a fresh HTTP/1.1 connection: the response and whether the server then closed.
async fn raw_exchange(addr: SocketAddr, bytes: &[u8]) -> (RawResponse, bool) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(bytes).await.expect("write");
    let response = read_raw_response(&mut stream).await;
    (response, closed_within(&mut stream, Duration::from_secs(2)).await)
}

/// One HTTP/2 POST of `tools/list` whose `:authority` is `authority`, with `headers` added.
async fn h2_post(addr: SocketAddr, authority: &str, headers: HeaderMap) -> (u16, HeaderMap, Value) {
    let mut sender = h2_connect(addr).await.ready().await.expect("h2 ready");
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("http://{authority}/mcp"))
        .version(Version::HTTP_2)
        .body(())
        .expect("a request");
    request.headers_mut().extend(headers_for(&list()));
    request.headers_mut().extend(headers);
    let (response, mut stream) = sender.send_request(request, false).expect("send");
    stream.send_data(bytes(&list()), true).expect("send the body");
    let (status, headers, raw) = h2_read(response).await;
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    (status.as_u16(), headers, body)
}

/// Sends the rebound-name request shape over both protocols and asserts `status`, closed on HTTP/1.1.
async fn assert_rebound(addr: SocketAddr, rebound: &str, origin: Option<&str>, status: u16) {
    let extra: Vec<(&str, &str)> = origin.iter().map(|o| ("origin", *o)).collect();
    let (response, closed) = raw_exchange(addr, &raw_post(&[rebound], &extra)).await;
    assert_eq!(response.status, status, "{origin:?}: {response:?}");
    assert_eq!(response.json()["error"]["code"], -32600);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(closed, "a pre-body refusal closes the connection");
    assert!(!String::from_utf8_lossy(&response.body).contains("evil"), "the name is not echoed");

    let mut headers = HeaderMap::new();
    if let Some(origin) = origin {
        headers.insert("origin", origin.parse().expect("a value"));
    }
    let (h2_status, headers, body) = h2_post(addr, rebound, headers).await;
    assert_eq!(h2_status, status, "{origin:?}: {body}");
    assert!(headers.get("connection").is_none(), "never on HTTP/2");
}

#[tokio::test]
async fn refuses_a_rebound_host_with_421_before_origin_or_authorize() {
    bounded(async {
        // The rebound page is same-origin: it may send no Origin, or, with `AllowedOrigins::any()`
        // (where the Host check is the only DNS-rebinding defence), its own. Refused, unasked.
        for origins in [AllowedOrigins::list([ALLOWED_ORIGIN]), AllowedOrigins::any()] {
            let listed = matches!(origins, AllowedOrigins::List(_));
            let (server, calls) = counting(origins, None).await;
            let rebound = format!("evil.example:{}", server.addr.port());
            assert_rebound(server.addr, &rebound, None, 421).await;
            if !listed {
                assert_rebound(server.addr, &rebound, Some(&format!("http://{rebound}")), 421).await;
            }
            assert_eq!(calls.load(Ordering::SeqCst), 0, "authorize never ran");
        }
    })
    .await;
}

#[tokio::test]
async fn a_rebound_host_with_a_foreign_origin_is_403_as_mcp_requires_for_the_origin() {
    bounded(async {
        let (server, calls) = counting(AllowedOrigins::list([ALLOWED_ORIGIN]), None).await;
        let rebound = format!("evil.example:{}", server.addr.port());
        assert_rebound(server.addr, &rebound, Some(&format!("http://{rebound}")), 403).await;
        assert_eq!(calls.load(Ordering::SeqCst), 0, "authorize never ran");
    })
    .await;
}

#[tokio::test]
async fn the_default_admits_every_loopback_name() {
    bounded(async {
        let (server, calls) = counting(AllowedOrigins::any(), None).await;
        let port = server.addr.port();
        for name in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("LocalHost:{port}")] {
            let (response, _) = raw_exchange(server.addr, &raw_post(&[&name], &[])).await;
            assert_eq!(response.status, 200, "{name}: {response:?}");
            let (status, _, body) = h2_post(server.addr, &name, HeaderMap::new()).await;
            assert_eq!(status, 200, "{name}: {body}");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 6);
    })
    .await;
}

#[tokio::test]
async fn a_missing_repeated_or_disagreeing_host_is_400() {
    bounded(async {
        let (server, calls) = counting(AllowedOrigins::any(), None).await;
        let here = server.addr.to_string();
        for hosts in [&[][..], &[here.as_str(), here.as_str()][..], &["local host"][..]] {
            let (response, closed) = raw_exchange(server.addr, &raw_post(hosts, &[])).await;
            assert_eq!(response.status, 400, "{hosts:?}: {response:?}");
            assert!(closed, "{hosts:?}");
        }
        // HTTP/2: a `host` header naming another authority than `:authority`.
        let mut headers = HeaderMap::new();
        headers.insert("host", "evil.example".parse().expect("a value"));
        let (status, _, body) = h2_post(server.addr, &here, headers).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    })
    .await;
}

#[tokio::test]
async fn a_listed_public_name_is_served_and_loopback_then_refused() {
    bounded(async {
        let hosts = AllowedHosts::list(["mcp.example.com"]);
        let (server, _calls) = counting(AllowedOrigins::any(), Some(hosts)).await;
        for proto_h2 in [false, true] {
            let (public, local) = if proto_h2 {
                let (s, _, _) = h2_post(server.addr, "mcp.example.com:8443", HeaderMap::new()).await;
                let (l, _, _) = h2_post(server.addr, &server.addr.to_string(), HeaderMap::new()).await;
                (s, l)
            } else {
                let (s, _) = raw_exchange(server.addr, &raw_post(&["MCP.example.com"], &[])).await;
                let (l, _) = raw_exchange(server.addr, &raw_post(&[&server.addr.to_string()], &[])).await;
                (s.status, l.status)
            };
            assert_eq!((public, local), (200, 421), "h2: {proto_h2}");
        }
        // `AllowedHosts::any()` skips the check, rebound names included.
        let (open, _) = counting(AllowedOrigins::any(), Some(AllowedHosts::any())).await;
        let (response, _) = raw_exchange(open.addr, &raw_post(&["evil.example"], &[])).await;
        assert_eq!(response.status, 200);
    })
    .await;
}

/// The hyper clients of the other tests send `host: 127.0.0.1:PORT`: the default admits it.
#[tokio::test]
async fn the_fixture_clients_pass_the_default() {
    bounded(async {
        let server = start_default().await;
        for proto in BOTH {
            assert_eq!(post_message(server.addr, proto, &list()).await.status, 200);
        }
    })
    .await;
}
