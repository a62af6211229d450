//! Shared fixture of the HTTP integration tests: a catalog, a real server on 127.0.0.1, and real
//! clients (hyper over HTTP/1.1 and HTTP/2 with prior knowledge, a raw `TcpStream`, the `h2` crate).
//!
//! Every test file is its own crate and uses part of this module only.
#![allow(dead_code)]

use std::future::Future;
use std::io::Write as _;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONNECTION, CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Version};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use mcp_kernel_http::{
    AllowedOrigins, Authorize, Builder, LegacyClients, McpHttp, McpService, NoAuthorize, ServeOptions,
};
use mcp_kernel_router::wire::types::{
    BlobResourceContents, ContentBlock, PromptMessage, ResourceContents, Role, TextResourceContents,
};
use mcp_kernel_router::{
    GetPrompt, Listing, Mode, PromptArgument, PromptOutput, PromptSpec, ReadResource, ReaderError,
    ResourceSpec, ResourceTemplateSpec, Server, ToolCall, ToolError, ToolOutput, ToolSpec,
};

/// The one revision served over HTTP.
pub const MODERN: &str = "2026-07-28";
/// The legacy revision (never served over HTTP).
pub const LEGACY: &str = "2025-11-25";
/// The origin the fixture admits.
pub const ALLOWED_ORIGIN: &str = "http://localhost:4000";
/// A second admitted origin.
pub const ALLOWED_ORIGIN_2: &str = "http://127.0.0.1:4000";
/// The bound of every test.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(20);
/// The bound of one client exchange.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);
/// `_meta` key of the declared revision.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities.
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

// ---------------------------------------------------------------------------------------------------
// The catalog
// ---------------------------------------------------------------------------------------------------

/// The schema of `search`: three annotated top-level properties, one nested, one unannotated.
pub fn search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "exact": {"type": "boolean", "x-mcp-header": "Exact"},
            "filter": {
                "type": "object",
                "properties": {"owner": {"type": "string", "x-mcp-header": "Owner"}}
            },
            "note": {"type": "string"}
        }
    })
}

/// The fixture catalog.
pub fn catalog() -> Listing {
    Listing {
        tools: vec![
            ToolSpec::new("get_weather", Mode::ReadOnly).description("Read the weather.").input_schema(
                json!({
                    "type": "object",
                    "properties": {"place": {"type": "string"}},
                    "required": ["place"],
                    "additionalProperties": false
                }),
            ),
            ToolSpec::new("echo", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"]
            })),
            ToolSpec::new("slow", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 5000}},
                "required": ["ms"]
            })),
            ToolSpec::new("panics", Mode::ReadOnly),
            ToolSpec::new("search", Mode::ReadOnly).input_schema(search_schema()),
            ToolSpec::new("elicit", Mode::Proposal).requires_client_capabilities(json!({"elicitation": {}})),
            // `number` may not be mirrored (MCP S-21): kept by `defer_header_annotation_faults`.
            ToolSpec::new("bad_header", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"n": {"type": "number", "x-mcp-header": "N"}}
            })),
        ],
        resources: vec![
            ResourceSpec::new("test://b", "b").mime_type("text/plain").into(),
            ResourceSpec::new("test://a", "a").into(),
            ResourceSpec::new("test://bytes", "bytes").mime_type("application/octet-stream").into(),
            ResourceSpec::new("test://panics", "panics").into(),
            ResourceTemplateSpec::new("test://place/{name}", "place").into(),
            ResourceTemplateSpec::new("test://files/{+path}", "files").into(),
        ],
        prompts: vec![
            PromptSpec::new("forecast")
                .description("Ask for a forecast.")
                .argument(PromptArgument::new("place").required(true)),
            PromptSpec::new("alpha"),
            PromptSpec::new("panics"),
        ],
    }
}

/// The fixture's dispatch.
pub async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "get_weather" => ToolOutput::json(&json!({"place": call.arguments.get("place"), "sky": "clear"})),
        "echo" => ToolOutput::json(&json!({"message": call.arguments.get("message")})),
        "slow" => {
            let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(0).min(5000);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ToolOutput::json(&json!({"slept": ms}))
        }
        "panics" => panic!("host bug: secret-panic-detail"),
        "search" | "bad_header" => ToolOutput::json(&call.arguments.to_value()),
        "elicit" => ToolOutput::json(&json!({"elicited": true})),
        _ => Err(ToolError::new("not in the fixture")),
    }
}

/// The fixture's resource reader.
pub async fn read_resource(request: ReadResource) -> Result<Vec<ResourceContents>, ReaderError> {
    match request.uri.as_str() {
        "test://bytes" => Ok(vec![BlobResourceContents::new("test://bytes", "AAEC/w==").into()]),
        "test://panics" => panic!("reader bug: secret-reader-detail"),
        uri => Ok(vec![TextResourceContents::new(uri, format!("contents of {uri}")).into()]),
    }
}

/// The fixture's prompt renderer.
pub async fn get_prompt(request: GetPrompt) -> Result<PromptOutput, ReaderError> {
    if &*request.name == "panics" {
        panic!("prompt bug: secret-prompt-detail");
    }
    let place = request.arguments.get_str("place").unwrap_or("nowhere").to_owned();
    Ok(PromptOutput {
        description: Some("rendered".into()),
        messages: vec![PromptMessage::new(Role::User, ContentBlock::text(format!("Forecast for {place}")))],
    })
}

/// The fixture server (header-annotation faults deferred, so `bad_header` is listed).
pub fn server() -> Server {
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .page_size(NonZeroUsize::new(50).expect("non-zero"))
        .defer_header_annotation_faults(true)
        .build()
        .expect("the fixture catalog builds")
}

// ---------------------------------------------------------------------------------------------------
// The running server
// ---------------------------------------------------------------------------------------------------

/// A builder over the fixture server with the fixture's origins, before `authorize`.
pub fn builder() -> Builder<AllowedOrigins, NoAuthorize> {
    McpHttp::builder(server()).allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN, ALLOWED_ORIGIN_2]))
}

/// A server on 127.0.0.1 (port 0), stopped when dropped.
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// Asks the server to stop and waits (bounded) for its accept loop to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Serves `service` with `mcp_kernel_http::serve` on 127.0.0.1, port 0.
pub async fn serve(service: McpService) -> Running {
    serve_with(service, ServeOptions::default()).await
}

/// Serves `service` with `mcp_kernel_http::serve_with` and `options` on 127.0.0.1, port 0.
pub async fn serve_with(service: McpService, options: ServeOptions) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("the bound address");
    let (tx, rx) = oneshot::channel::<()>();
    let shutdown = async move {
        let _ = rx.await;
    };
    let task = tokio::spawn(mcp_kernel_http::serve_with(listener, service, shutdown, options));
    Running { addr, shutdown: Some(tx), task: Some(task) }
}

/// Starts the fixture with `authorize` admitting everyone and `tweak` applied to the builder.
pub async fn start(
    tweak: impl FnOnce(Builder<AllowedOrigins, Authorize>) -> Builder<AllowedOrigins, Authorize>,
) -> Running {
    serve(tweak(builder().authorize(|_| Ok(()))).build()).await
}

/// Starts the fixture as is.
pub async fn start_default() -> Running {
    start(|b| b).await
}

/// Runs `test` within [`TEST_TIMEOUT`].
pub async fn bounded<F: Future>(test: F) -> F::Output {
    tokio::time::timeout(TEST_TIMEOUT, test).await.expect("the test did not finish within its bound")
}

// ---------------------------------------------------------------------------------------------------
// Messages and headers
// ---------------------------------------------------------------------------------------------------

/// A modern `params._meta`.
pub fn meta() -> Value {
    json!({META_VERSION: MODERN, META_CAPABILITIES: {}})
}

/// A modern request: `params` (an object) gets the modern `_meta`.
pub fn request(id: impl Into<Value>, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A `2025-11-25` request: no `_meta` unless the params carry one.
pub fn legacy(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A notification (no `_meta`, no id).
pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// `Content-Type: application/json`, the `Accept` of JSON and SSE, and `MCP-Protocol-Version: version`.
fn versioned_headers(version: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert("accept", HeaderValue::from_static("application/json, text/event-stream"));
    headers.insert("mcp-protocol-version", HeaderValue::from_static(version));
    headers
}

/// What a `2025-11-25` client sends after `initialize`: `Content-Type`, `Accept` and the version header.
pub fn legacy_headers() -> HeaderMap {
    versioned_headers(LEGACY)
}

/// `MCP-Protocol-Version`, `Mcp-Method` and, when given, `Mcp-Name` (its wire value, as is).
pub fn standard_headers(method: &str, name: Option<&str>) -> HeaderMap {
    let mut headers = versioned_headers(MODERN);
    headers.insert("mcp-method", HeaderValue::from_str(method).expect("a header value"));
    if let Some(name) = name {
        headers.insert("mcp-name", HeaderValue::from_str(name).expect("a header value"));
    }
    headers
}

/// The standard headers a message needs: `Mcp-Name` from `params.name` or `params.uri` where required.
pub fn headers_for(message: &Value) -> HeaderMap {
    let method = message["method"].as_str().expect("a method");
    let name = match method {
        "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
        "resources/read" => message["params"]["uri"].as_str(),
        _ => None,
    };
    standard_headers(method, name)
}

/// Adds (appends) a header given as raw bytes.
pub fn with(mut headers: HeaderMap, name: &str, value: &[u8]) -> HeaderMap {
    let name = HeaderName::from_bytes(name.as_bytes()).expect("a header name");
    headers.append(name, HeaderValue::from_bytes(value).expect("a header value"));
    headers
}

/// Removes a header.
pub fn without(mut headers: HeaderMap, name: &str) -> HeaderMap {
    headers.remove(name);
    headers
}

/// Replaces a header.
pub fn replace(headers: HeaderMap, name: &str, value: &[u8]) -> HeaderMap {
    with(without(headers, name), name, value)
}

/// The bytes of a JSON value.
pub fn bytes(message: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(message).expect("JSON"))
}

// ---------------------------------------------------------------------------------------------------
// The hyper clients
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// The raw HTTP/1.1 client
// ---------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------
// The h2 client (control of DATA frames)
// ---------------------------------------------------------------------------------------------------

/// An HTTP/2 connection driven by the `h2` crate.
pub async fn h2_connect(addr: SocketAddr) -> h2::client::SendRequest<Bytes> {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) = h2::client::handshake(stream).await.expect("h2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
}

/// A POST head for the `h2` client.
pub fn h2_request(addr: SocketAddr, headers: HeaderMap) -> Request<()> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("http://{addr}/mcp"))
        .version(Version::HTTP_2)
        .body(())
        .expect("a request");
    request.headers_mut().extend(headers);
    request
}

/// Reads an `h2` response whole: (status, headers, body).
pub async fn h2_read(response: h2::client::ResponseFuture) -> (StatusCode, HeaderMap, Bytes) {
    tokio::time::timeout(EXCHANGE_TIMEOUT, async {
        let response = response.await.expect("an HTTP/2 response");
        let (parts, mut body) = response.into_parts();
        let mut data = Vec::new();
        for _ in 0..100_000 {
            match body.data().await {
                None => break,
                Some(Ok(chunk)) => {
                    let _ = body.flow_control().release_capacity(chunk.len());
                    data.extend_from_slice(&chunk);
                }
                // A reset after the response (the request body was never finished) ends the body.
                Some(Err(_)) => break,
            }
        }
        (parts.status, parts.headers, Bytes::from(data))
    })
    .await
    .expect("an HTTP/2 response in time")
}

// ---------------------------------------------------------------------------------------------------
// Log capture
// ---------------------------------------------------------------------------------------------------

static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

/// A writer appending to the shared log buffer.
struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs (once per test binary) a global subscriber writing every event into a shared buffer.
pub fn capture_logs() {
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&buffer);
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || LogWriter(Arc::clone(&writer)))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        buffer
    });
}

/// Everything logged so far in this test binary.
pub fn logs() -> String {
    let buffer = LOGS.get().expect("capture_logs() was called");
    String::from_utf8_lossy(&buffer.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
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

// ---------------------------------------------------------------------------------------------------
// A host that reports progress
// ---------------------------------------------------------------------------------------------------

/// The dispatch of [`reporting_server`]: `count` reports 0, 50 and 100 of 100 (5 ms apart), then
/// answers `counted`; any other tool answers `quiet` without reporting anything.
pub async fn reporting_dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "count" => {
            for step in [0.0, 50.0, 100.0] {
                call.context.progress().report(step, Some(100.0), Some("counting"));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(ToolOutput::text("counted"))
        }
        _ => Ok(ToolOutput::text("quiet")),
    }
}

/// A server with two tools: `count` (reports progress) and `quiet` (reports nothing).
pub fn reporting_server() -> Server {
    let catalog = Listing {
        tools: vec![ToolSpec::new("count", Mode::ReadOnly), ToolSpec::new("quiet", Mode::ReadOnly)],
        ..Listing::default()
    };
    Server::builder(catalog).dispatch(reporting_dispatch).build().expect("the reporting catalog builds")
}

/// Serves [`reporting_server`] on 127.0.0.1 (port 0), admitting everyone from the fixture's origins,
/// with `legacy` as its legacy-client policy.
pub async fn start_reporting(legacy: LegacyClients) -> Running {
    let service = McpHttp::builder(reporting_server())
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN, ALLOWED_ORIGIN_2]))
        .legacy_clients(legacy)
        .authorize(|_| Ok(()))
        .build();
    serve(service).await
}

pub mod edge;
