//! The raw HTTP/1.1 client: request heads written by hand over a `TcpStream`, a response read off the
//! socket, and whether the peer closed.

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{EXCHANGE_TIMEOUT, MODERN};

/// A response read off a raw socket.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// The status code.
    pub status: u16,
    /// The header fields, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (per `content-length`).
    pub body: Vec<u8>,
}

impl RawResponse {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("a JSON body ({e}): {self:?}"))
    }
}

/// A request head (request line, host, the given fields, the blank line).
pub fn raw_head(method: &str, addr: SocketAddr, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut head = Vec::new();
    write!(head, "{method} /mcp HTTP/1.1\r\nhost: {addr}\r\n").expect("write");
    for (name, value) in fields {
        write!(head, "{name}: {value}\r\n").expect("write");
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// `message` as one raw HTTP/1.1 POST with its standard headers and its length (kept alive unless the
/// server says otherwise).
pub fn raw_post_message(addr: SocketAddr, message: &Value) -> Vec<u8> {
    let body = super::bytes(message);
    let headers = super::headers_for(message);
    let length = body.len().to_string();
    let mut fields: Vec<(&str, &str)> =
        headers.iter().map(|(n, v)| (n.as_str(), v.to_str().expect("an ASCII header"))).collect();
    fields.push(("content-length", &length));
    let mut request = raw_head("POST", addr, &fields);
    request.extend_from_slice(&body);
    request
}

/// The standard header fields of `method` as `(name, value)` pairs for [`raw_head`].
pub fn raw_standard(method: &str) -> Vec<(&'static str, String)> {
    vec![
        ("content-type", "application/json".to_owned()),
        ("mcp-protocol-version", MODERN.to_owned()),
        ("mcp-method", method.to_owned()),
    ]
}

/// Reads one response (head and `content-length` body) off `stream`, within [`EXCHANGE_TIMEOUT`].
pub async fn read_raw_response(stream: &mut (impl AsyncRead + Unpin)) -> RawResponse {
    tokio::time::timeout(EXCHANGE_TIMEOUT, read_raw_response_unbounded(stream))
        .await
        .expect("a response in time")
}

async fn read_raw_response_unbounded(stream: &mut (impl AsyncRead + Unpin)) -> RawResponse {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        assert!(buffer.len() < 64 * 1024, "a response head under 64 KiB");
        let n = stream.read(&mut chunk).await.expect("read the response");
        assert!(n > 0, "the connection closed before a response: {:?}", String::from_utf8_lossy(&buffer));
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("a status line");
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.expect("read the body");
        assert!(n > 0, "the connection closed in the body");
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    RawResponse { status, headers, body }
}

/// True when the peer closes `stream` (EOF or reset) within `within`; any further bytes are skipped.
pub async fn closed_within(stream: &mut (impl AsyncRead + Unpin), within: Duration) -> bool {
    let mut chunk = [0u8; 4096];
    let outcome = tokio::time::timeout(within, async {
        for _ in 0..10_000 {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            }
        }
        false
    })
    .await;
    outcome.unwrap_or(false)
}
