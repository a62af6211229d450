//! A `subscriptions/listen` client without hyper: the request written by hand over a `TcpStream`
//! (HTTP/1.1, its chunked response decoded here) or sent with the `h2` crate (HTTP/2), and the SSE
//! response read event by event as it arrives — messages and comment lines alike.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use mcp_kernel_router::Server;
use mcp_kernel_router::notify::Notifications;

use super::edge::connect_from;
use super::{
    EXCHANGE_TIMEOUT, Proto, bytes, catalog, dispatch, get_prompt, h2_connect_from, h2_request,
    read_resource, request, standard_headers,
};

/// The fixture catalog served with change notifications through `notifications`.
pub fn notifying_server(notifications: &Notifications) -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .defer_header_annotation_faults(true)
        .notifications(notifications.clone())
        .build()
        .expect("the fixture catalog builds")
}

/// A `subscriptions/listen` request asking for `filter`, with the modern `_meta`.
pub fn listen_request(id: impl Into<Value>, filter: Value) -> Value {
    request(id, "subscriptions/listen", json!({ "notifications": filter }))
}

/// The headers a listen needs: `MCP-Protocol-Version`, `Mcp-Method`, and the JSON and SSE `Accept`.
pub fn listen_headers() -> HeaderMap {
    standard_headers("subscriptions/listen", None)
}

/// One piece of an SSE stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A `data:` event's JSON-RPC message.
    Message(Value),
    /// A comment line (without its colon), such as a keep-alive.
    Comment(String),
}

enum Reader {
    H1 { stream: TcpStream, raw: Vec<u8>, framing: Framing },
    H2 { body: h2::RecvStream, _sender: h2::client::SendRequest<Bytes> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// `transfer-encoding: chunked`.
    Chunked,
    /// `content-length`: the bytes still to come.
    Length(usize),
}

/// An open listen: its response head, then its body read as it arrives.
pub struct Listening {
    /// The status.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    reader: Reader,
    /// The decoded body not yet parsed into events.
    pending: Vec<u8>,
    ended: bool,
    /// The body ended without its end (the connection or the stream was cut).
    cut: bool,
}

/// Opens a listen from the loopback address `source` over `proto`: writes `message` with `headers`
/// and reads the response head.
pub async fn open_listen_from(
    source: IpAddr,
    addr: SocketAddr,
    proto: Proto,
    message: &Value,
    headers: HeaderMap,
) -> Listening {
    tokio::time::timeout(EXCHANGE_TIMEOUT, async {
        match proto {
            Proto::H1 => {
                let stream = connect_from(source, addr).await.expect("connect");
                open_h1(stream, addr, message, headers).await
            }
            Proto::H2 => {
                let sender = h2_connect_from(source, addr).await;
                open_h2(sender, addr, message, headers).await
            }
        }
    })
    .await
    .expect("the listen's response head in time")
}

/// Opens a listen from 127.0.0.1.
pub async fn open_listen(addr: SocketAddr, proto: Proto, message: &Value, headers: HeaderMap) -> Listening {
    open_listen_from(super::edge::loopback(1), addr, proto, message, headers).await
}

/// Writes the listen on an HTTP/1.1 `stream` already connected (one whose socket options the caller
/// chose) and reads the response head.
pub async fn open_h1(
    mut stream: TcpStream,
    addr: SocketAddr,
    message: &Value,
    headers: HeaderMap,
) -> Listening {
    let body = bytes(message);
    let mut head = format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-length: {}\r\n", body.len());
    for (name, value) in &headers {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().expect("ASCII")));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write the head");
    stream.write_all(&body).await.expect("write the body");
    read_h1_head(stream).await
}

/// Reads an HTTP/1.1 response head from `stream`; the body is read later, as it arrives.
async fn read_h1_head(mut stream: TcpStream) -> Listening {
    let mut raw = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).await.expect("read the head");
        assert!(n > 0, "closed before a response head");
        raw.extend_from_slice(&chunk[..n]);
    };
    let text = String::from_utf8(raw[..end].to_vec()).expect("an ASCII head");
    let mut lines = text.split("\r\n");
    let status =
        lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("a status");
    let mut parsed = HeaderMap::new();
    for (name, value) in lines.filter_map(|line| line.split_once(':')) {
        let name = HeaderName::from_bytes(name.trim().as_bytes()).expect("a header name");
        parsed.append(name, HeaderValue::from_str(value.trim()).expect("a header value"));
    }
    let chunked = parsed.get("transfer-encoding").is_some_and(|v| v == "chunked");
    let length = parsed.get("content-length").and_then(|v| v.to_str().ok()?.parse().ok()).unwrap_or(0);
    let framing = if chunked { Framing::Chunked } else { Framing::Length(length) };
    let raw = raw[end + 4..].to_vec();
    Listening {
        status,
        headers: parsed,
        reader: Reader::H1 { stream, raw, framing },
        pending: Vec::new(),
        ended: false,
        cut: false,
    }
}

/// Opens a GET from 127.0.0.1 over `proto` (a legacy session's stream) with `headers`, and reads the
/// response head.
pub async fn open_get(addr: SocketAddr, proto: Proto, headers: HeaderMap) -> Listening {
    tokio::time::timeout(EXCHANGE_TIMEOUT, async {
        match proto {
            Proto::H1 => {
                let mut stream = connect_from(super::edge::loopback(1), addr).await.expect("connect");
                let mut head = format!("GET /mcp HTTP/1.1\r\nhost: {addr}\r\n");
                for (name, value) in &headers {
                    head.push_str(&format!("{name}: {}\r\n", value.to_str().expect("ASCII")));
                }
                head.push_str("\r\n");
                stream.write_all(head.as_bytes()).await.expect("write the head");
                read_h1_head(stream).await
            }
            Proto::H2 => {
                let sender = h2_connect_from(super::edge::loopback(1), addr).await;
                let mut sender = sender.ready().await.expect("a stream may open");
                let mut request = h2_request(addr, headers);
                *request.method_mut() = http::Method::GET;
                let (response, _) = sender.send_request(request, true).expect("send");
                let (parts, body) = response.await.expect("an HTTP/2 response").into_parts();
                Listening {
                    status: parts.status.as_u16(),
                    headers: parts.headers,
                    reader: Reader::H2 { body, _sender: sender },
                    pending: Vec::new(),
                    ended: false,
                    cut: false,
                }
            }
        }
    })
    .await
    .expect("the GET's response head in time")
}

/// An HTTP/2 connection to `addr` that lets DATA frames pile up unread: the `h2` crate closes a
/// connection itself (`ENHANCE_YOUR_CALM`) once about 200 small frames wait unread, which would hide
/// what the server does with a client that stops reading.
pub async fn h2_connect_patient(addr: SocketAddr) -> h2::client::SendRequest<Bytes> {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) =
        h2::client::Builder::new().data_frame_budget(64 << 20).handshake(stream).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
}

/// Opens a listen as a new stream of the HTTP/2 connection `sender` (waiting for the connection to
/// admit one more stream) and reads the response head.
pub async fn open_h2(
    mut sender: h2::client::SendRequest<Bytes>,
    addr: SocketAddr,
    message: &Value,
    headers: HeaderMap,
) -> Listening {
    sender = sender.ready().await.expect("a stream may open");
    let (response, mut body) = sender.send_request(h2_request(addr, headers), false).expect("send");
    body.send_data(bytes(message), true).expect("data");
    let (parts, body) = response.await.expect("an HTTP/2 response").into_parts();
    Listening {
        status: parts.status.as_u16(),
        headers: parts.headers,
        reader: Reader::H2 { body, _sender: sender },
        pending: Vec::new(),
        ended: false,
        cut: false,
    }
}

impl Listening {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The next decoded body bytes; `None` at the end of the body (or when the connection ends).
    async fn more(&mut self) -> Option<Vec<u8>> {
        match &mut self.reader {
            Reader::H2 { body, .. } => match body.data().await {
                Some(Ok(data)) => {
                    let _ = body.flow_control().release_capacity(data.len());
                    Some(data.to_vec())
                }
                Some(Err(_)) => {
                    self.cut = true;
                    None
                }
                None => None,
            },
            Reader::H1 { stream, raw, framing } => loop {
                match *framing {
                    Framing::Length(0) => return None,
                    Framing::Length(left) if !raw.is_empty() => {
                        let take = left.min(raw.len());
                        *framing = Framing::Length(left - take);
                        return Some(raw.drain(..take).collect());
                    }
                    Framing::Chunked => {
                        if let Some(line) = raw.windows(2).position(|w| w == b"\r\n") {
                            let size_text = std::str::from_utf8(&raw[..line]).expect("a chunk size");
                            let size = usize::from_str_radix(size_text.trim(), 16).expect("a hex size");
                            if size == 0 {
                                return None;
                            }
                            if raw.len() >= line + 2 + size + 2 {
                                let data = raw[line + 2..line + 2 + size].to_vec();
                                raw.drain(..line + 2 + size + 2);
                                return Some(data);
                            }
                        }
                    }
                    Framing::Length(_) => {}
                }
                let mut chunk = [0u8; 16 * 1024];
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => {
                        self.cut = true;
                        return None;
                    }
                    Ok(n) => raw.extend_from_slice(&chunk[..n]),
                }
            },
        }
    }

    /// The next event, or `None` at the end of the stream; waits at most `within`.
    pub async fn next_event_within(&mut self, within: Duration) -> Option<Event> {
        tokio::time::timeout(within, self.next_event_unbounded()).await.unwrap_or_else(|_| {
            panic!("no event within {within:?}; pending {:?}", String::from_utf8_lossy(&self.pending))
        })
    }

    /// The next event, or `None` at the end of the stream, within [`EXCHANGE_TIMEOUT`].
    pub async fn next_event(&mut self) -> Option<Event> {
        self.next_event_within(EXCHANGE_TIMEOUT).await
    }

    async fn next_event_unbounded(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.pending.drain(..end + 2).collect();
                let text = String::from_utf8(block).expect("UTF-8 events");
                if let Some(data) = text.lines().find_map(|line| line.strip_prefix("data: ")) {
                    return Some(Event::Message(serde_json::from_str(data).expect("one JSON message")));
                }
                if let Some(comment) = text.lines().find_map(|line| line.strip_prefix(':')) {
                    return Some(Event::Comment(comment.trim().to_owned()));
                }
                continue;
            }
            if self.ended {
                return None;
            }
            match self.more().await {
                Some(bytes) => self.pending.extend_from_slice(&bytes),
                None => {
                    self.ended = true;
                    assert!(self.pending.is_empty(), "a partial event at the end: {:?}", self.pending);
                    return None;
                }
            }
        }
    }

    /// The next message, skipping comment lines, or `None` at the end of the stream.
    pub async fn next_message(&mut self) -> Option<Value> {
        for _ in 0..100_000 {
            match self.next_event().await? {
                Event::Message(message) => return Some(message),
                Event::Comment(_) => {}
            }
        }
        panic!("no message among 100,000 comments")
    }

    /// Every message left, until the end of the stream (comments skipped).
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(message) = self.next_message().await {
            messages.push(message);
            assert!(messages.len() < 100_000, "a stream that does not end");
        }
        messages
    }

    /// Every whole message until the stream ends or is cut (a partial last event is dropped), within
    /// `within`, and whether it was cut rather than ended.
    pub async fn messages_until_cut(&mut self, within: Duration) -> (Vec<Value>, bool) {
        let mut messages = Vec::new();
        let read = tokio::time::timeout(within, async {
            while let Some(bytes) = self.more().await {
                self.pending.extend_from_slice(&bytes);
                assert!(self.pending.len() < 64 * 1024 * 1024, "a stream that does not end");
            }
        })
        .await;
        assert!(read.is_ok(), "the stream neither ended nor was cut within {within:?}");
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        for block in text.split("\n\n") {
            if let Some(data) = block.lines().find_map(|line| line.strip_prefix("data: "))
                && let Ok(message) = serde_json::from_str(data)
            {
                messages.push(message);
            }
        }
        self.pending.clear();
        self.ended = true;
        (messages, self.cut)
    }

    /// The whole body of an answer that is not a stream (a refusal), as JSON.
    pub async fn json(&mut self) -> Value {
        let mut body = Vec::new();
        tokio::time::timeout(EXCHANGE_TIMEOUT, async {
            while let Some(bytes) = self.more().await {
                body.extend_from_slice(&bytes);
            }
        })
        .await
        .expect("the body in time");
        serde_json::from_slice(&body).unwrap_or_else(|e| panic!("a JSON body ({e}): {body:?}"))
    }

    /// Asserts the head of a listen stream: 200 and the SSE headers.
    pub fn assert_stream(&self) {
        assert_eq!(self.status, 200, "{:?}", self.headers);
        assert_eq!(self.header("content-type"), Some("text/event-stream"));
        assert_eq!(self.header("cache-control"), Some("no-cache"));
        assert_eq!(self.header("x-accel-buffering"), Some("no"));
    }

    /// Asserts a refusal for want of a slot — 503, `retry-after: 1`, the JSON-RPC error of a busy
    /// server — and returns its body.
    pub async fn assert_busy(&mut self) -> Value {
        assert_eq!(self.status, 503, "{:?}", self.headers);
        assert_eq!(self.header("retry-after"), Some("1"));
        assert_eq!(self.header("content-type"), Some("application/json"));
        let body = self.json().await;
        assert_eq!(body["error"]["code"], -32603, "{body}");
        assert_eq!(body["error"]["message"], "Server busy; retry later", "{body}");
        body
    }
}

/// The subscription id a message is tagged with.
pub fn tag(message: &Value) -> &Value {
    let meta = match message.get("result") {
        Some(result) => &result["_meta"],
        None => &message["params"]["_meta"],
    };
    &meta["io.modelcontextprotocol/subscriptionId"]
}

/// Asserts that `message` is the acknowledgment of the listen `id`, naming `filter`.
pub fn assert_acknowledgment(message: &Value, id: &Value, filter: &Value) {
    assert_eq!(message["method"], "notifications/subscriptions/acknowledged", "{message}");
    assert_eq!(tag(message), id, "{message}");
    assert_eq!(&message["params"]["notifications"], filter, "{message}");
    assert!(message.get("id").is_none(), "a notification: {message}");
}

/// Asserts that `message` is the completion result of the listen `id`.
pub fn assert_completion(message: &Value, id: &Value) {
    assert_eq!(&message["id"], id, "{message}");
    assert_eq!(message["result"]["resultType"], "complete", "{message}");
    assert_eq!(tag(message), id, "{message}");
}
