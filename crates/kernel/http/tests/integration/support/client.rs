//! The hyper clients (HTTP/1.1, and HTTP/2 with prior knowledge): a connection, one request on a
//! fresh one, the reply read whole, and the messages of an SSE reply.

use std::net::SocketAddr;

use bytes::Bytes;
use http::header::{CONNECTION, CONTENT_TYPE, HOST};
use http::{HeaderMap, Method, Request, StatusCode, Version};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::net::TcpStream;

use super::{EXCHANGE_TIMEOUT, bytes, headers_for};

/// Which HTTP version a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// HTTP/1.1.
    H1,
    /// HTTP/2 with prior knowledge (cleartext).
    H2,
}

/// Both versions, for tests that run over each.
pub const BOTH: [Proto; 2] = [Proto::H1, Proto::H2];

/// One response, read whole.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The protocol it came over.
    pub proto: Proto,
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body bytes.
    pub raw: Bytes,
    /// The body as JSON (`Value::Null` when empty).
    pub body: Value,
}

impl Reply {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        self.body["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {self:?}"))
    }

    /// The JSON-RPC error message.
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or_else(|| panic!("not an error: {self:?}"))
    }

    /// The `id` member (`Value::Null` when absent or null).
    pub fn id(&self) -> &Value {
        &self.body["id"]
    }

    /// The result.
    pub fn result(&self) -> &Value {
        assert!(self.body.get("result").is_some(), "not a result: {self:?}");
        &self.body["result"]
    }

    /// Whether the response carries `connection: close`.
    pub fn closes(&self) -> bool {
        self.headers.get_all(CONNECTION).iter().any(|v| v.as_bytes().eq_ignore_ascii_case(b"close"))
    }

    /// Asserts status, JSON-RPC code and id of an error reply.
    pub fn assert_error(&self, status: u16, code: i64, id: &Value) {
        assert_eq!(self.status.as_u16(), status, "status of {self:?}");
        assert_eq!(self.code(), code, "code of {self:?}");
        assert_eq!(self.id(), id, "id of {self:?}");
        assert_eq!(self.body["jsonrpc"], "2.0", "{self:?}");
        assert_eq!(self.headers[CONTENT_TYPE], "application/json", "{self:?}");
    }

    /// Asserts the `connection: close` placement of a pre-body refusal: on HTTP/1.1, never on HTTP/2.
    pub fn assert_pre_body_close(&self) {
        match self.proto {
            Proto::H1 => assert!(self.closes(), "a pre-body refusal closes HTTP/1.1: {self:?}"),
            Proto::H2 => assert!(self.headers.get(CONNECTION).is_none(), "never on HTTP/2: {self:?}"),
        }
    }

    /// Asserts that the connection is kept (no `connection` header at all).
    pub fn assert_kept(&self) {
        assert!(self.headers.get(CONNECTION).is_none(), "the connection is kept: {self:?}");
    }
}

/// One open client connection.
pub enum Conn {
    /// HTTP/1.1.
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    /// HTTP/2.
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

/// Opens a connection speaking `proto` to `addr`.
pub async fn connect(addr: SocketAddr, proto: Proto) -> Conn {
    connect_local(addr, proto).await.0
}

/// Opens a connection speaking `proto` to `addr`; also returns the client's own address.
pub async fn connect_local(addr: SocketAddr, proto: Proto) -> (Conn, SocketAddr) {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let local = stream.local_addr().expect("the local address");
    (connect_stream(stream, proto).await, local)
}

/// Opens a connection speaking `proto` to `addr` from the loopback address `source`.
pub async fn connect_source(source: std::net::IpAddr, addr: SocketAddr, proto: Proto) -> Conn {
    let stream = super::edge::connect_from(source, addr).await.expect("connect");
    connect_stream(stream, proto).await
}

async fn connect_stream(stream: TcpStream, proto: Proto) -> Conn {
    let io = TokioIo::new(stream);
    match proto {
        Proto::H1 => {
            let (sender, connection) = hyper::client::conn::http1::handshake(io).await.expect("handshake");
            tokio::spawn(async move {
                let _ = connection.await;
            });
            Conn::H1(sender)
        }
        Proto::H2 => {
            let (sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                .await
                .expect("HTTP/2 handshake");
            tokio::spawn(async move {
                let _ = connection.await;
            });
            Conn::H2(sender)
        }
    }
}

impl Conn {
    /// The protocol spoken.
    pub fn proto(&self) -> Proto {
        match self {
            Conn::H1(_) => Proto::H1,
            Conn::H2(_) => Proto::H2,
        }
    }

    /// Sends one request to `path` and reads the whole response; `Err` when the connection failed.
    pub async fn try_send(
        &mut self,
        addr: SocketAddr,
        path: &str,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Reply, hyper::Error> {
        let proto = self.proto();
        let uri = match proto {
            Proto::H1 => path.to_owned(),
            Proto::H2 => format!("http://{addr}{path}"),
        };
        let mut request = Request::builder().method(method).uri(uri);
        if proto == Proto::H1 {
            request = request.header(HOST, addr.to_string());
        } else {
            request = request.version(Version::HTTP_2);
        }
        let mut request = request.body(Full::new(body)).expect("a request");
        request.headers_mut().extend(headers);
        let response = match self {
            Conn::H1(sender) => {
                sender.ready().await?;
                sender.send_request(request).await?
            }
            Conn::H2(sender) => {
                sender.ready().await?;
                sender.send_request(request).await?
            }
        };
        let (parts, body) = response.into_parts();
        let raw = body.collect().await?.to_bytes();
        // A body that is not JSON (an adapter's own answer) reads as null; `raw` keeps it.
        let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
        Ok(Reply { proto, status: parts.status, headers: parts.headers, raw, body })
    }

    /// Sends one request to `/mcp` (bounded) and reads the whole response.
    pub async fn send(&mut self, addr: SocketAddr, method: Method, headers: HeaderMap, body: Bytes) -> Reply {
        self.send_to(addr, "/mcp", method, headers, body).await
    }

    /// Sends one request to `path` (bounded) and reads the whole response.
    pub async fn send_to(
        &mut self,
        addr: SocketAddr,
        path: &str,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Reply {
        tokio::time::timeout(EXCHANGE_TIMEOUT, self.try_send(addr, path, method, headers, body))
            .await
            .expect("the exchange did not finish in time")
            .expect("the exchange failed")
    }

    /// POSTs on this connection.
    pub async fn post(&mut self, addr: SocketAddr, headers: HeaderMap, body: impl Into<Bytes>) -> Reply {
        self.send(addr, Method::POST, headers, body.into()).await
    }
}

/// One request on a fresh connection.
pub async fn send(addr: SocketAddr, proto: Proto, method: Method, headers: HeaderMap, body: Bytes) -> Reply {
    connect(addr, proto).await.send(addr, method, headers, body).await
}

/// One POST on a fresh connection.
pub async fn post(addr: SocketAddr, proto: Proto, headers: HeaderMap, body: impl Into<Bytes>) -> Reply {
    send(addr, proto, Method::POST, headers, body.into()).await
}

/// POSTs `message` with the standard headers it needs.
pub async fn post_message(addr: SocketAddr, proto: Proto, message: &Value) -> Reply {
    post(addr, proto, headers_for(message), bytes(message)).await
}

/// The JSON messages of an SSE answer (one per `data:` line), after checking it is a 200 event stream.
pub fn sse_events(reply: &Reply) -> Vec<Value> {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.headers[CONTENT_TYPE], "text/event-stream", "{reply:?}");
    let text = std::str::from_utf8(&reply.raw).expect("UTF-8");
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("one JSON message per data line"))
        .collect()
}

/// The `data:` lines of an SSE answer as sent (not parsed), after checking it is a 200 event stream.
pub fn sse_data(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.headers[CONTENT_TYPE], "text/event-stream", "{reply:?}");
    let text = std::str::from_utf8(&reply.raw).expect("UTF-8");
    text.lines().filter_map(|line| line.strip_prefix("data: ")).map(str::to_owned).collect()
}
