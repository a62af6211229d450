//! Below rmcp: a `2025-11-25` client of a legacy session on the wire, whose requests a test sends to
//! the instance it names (straight to one, or through the proxy), whose answers it reads byte for
//! byte, and whose SSE streams (a call's, the session's GET stream) it reads event by event; and a
//! raw `2026-07-28` request. Every request and every read is bounded in time.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};

/// The longest one request, or one wait for the next event of a stream, may take.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// The legacy revision the client speaks.
pub const LEGACY: &str = "2025-11-25";

/// The 404 of an unknown session, exactly as the transport sends it.
pub const SESSION_NOT_FOUND: &str =
    r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found"}}"#;

/// The 400 of an answer no request of the session awaits, exactly as the transport sends it.
pub const NOT_AWAITED: &str = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: no request of this session awaits this answer"}}"#;

/// A reqwest client that never goes through a proxy from the environment.
fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().expect("reqwest client")
}

/// One whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// Every header but `date`, in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body's bytes, as text.
    pub body: String,
}

impl Reply {
    /// The value of header `name`, if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON; of an SSE answer, its last event's data (the response).
    pub fn json(&self) -> Value {
        let is_stream = self.header("content-type").is_some_and(|ct| ct.starts_with("text/event-stream"));
        let text = if is_stream {
            let data = self.body.lines().filter_map(|line| line.strip_prefix("data:")).next_back();
            data.map(str::trim).unwrap_or_default()
        } else {
            self.body.as_str()
        };
        serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {self:?}"))
    }
}

/// Reads a whole response (bounded).
async fn whole(response: reqwest::Response) -> Reply {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str() != "date")
        .map(|(name, value)| {
            (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned())
        })
        .collect();
    let body = tokio::time::timeout(DEADLINE, response.text()).await;
    let body = body.expect("the body within the deadline").expect("a readable body");
    Reply { status, headers, body }
}

/// Sends `request` (bounded) and returns its response, unread.
async fn send(request: reqwest::RequestBuilder, what: &str) -> reqwest::Response {
    match tokio::time::timeout(DEADLINE, request.send()).await {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => panic!("{what}: {error}"),
        Err(_) => panic!("{what}: no answer within {DEADLINE:?}"),
    }
}

/// A JSON-RPC request of the legacy revision.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `tools/call name arguments`, as a legacy request.
pub fn tool_call(id: i64, name: &str, arguments: Value) -> Value {
    request(id, "tools/call", json!({"name": name, "arguments": arguments}))
}

/// The client's answer to the server's request `asked`: accepted, `{"ok": ok}`.
pub fn accept(asked: &Value, ok: bool) -> Value {
    json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"ok": ok}}})
}

/// A `2025-11-25` client of one principal (its bearer token) and, once initialized, one session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The bearer token: the principal, as `cluster-host` names callers.
    pub token: String,
    /// The session id `initialize` minted (or one the test presents).
    pub id: String,
}

impl Session {
    /// `initialize` at `url`, declaring form elicitation, as `token`; the session it minted.
    pub async fn initialize(url: &str, token: &str) -> Self {
        let reply = Self::initialize_presenting(url, token, None).await;
        assert_eq!(reply.status, 200, "initialize: {reply:?}");
        let id = reply.header("mcp-session-id").unwrap_or_else(|| panic!("a session id: {reply:?}"));
        let session = Self { token: token.to_owned(), id: id.to_owned() };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(session.post(url, &initialized).await.status, 202, "notifications/initialized");
        session
    }

    /// `initialize` at `url` as `token`, presenting `session` (an id the client chose) if given.
    pub async fn initialize_presenting(url: &str, token: &str, session: Option<&str>) -> Reply {
        let message = request(
            1,
            "initialize",
            json!({
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "raw-session-client", "version": "0.0.0"}
            }),
        );
        let mut builder = http()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .body(message.to_string());
        if let Some(session) = session {
            builder = builder.header("mcp-session-id", session);
        }
        whole(send(builder, "initialize").await).await
    }

    /// The same principal presenting another session id.
    pub fn presenting(&self, id: &str) -> Self {
        Self { token: self.token.clone(), id: id.to_owned() }
    }

    /// Another principal presenting this session's id.
    pub fn as_principal(&self, token: &str) -> Self {
        Self { token: token.to_owned(), id: self.id.clone() }
    }

    /// A request of the session to `url`, with the headers a `2025-11-25` client sends.
    fn build(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        http()
            .request(method, url)
            .header("mcp-protocol-version", LEGACY)
            .header("mcp-session-id", &self.id)
            .header("authorization", format!("Bearer {}", self.token))
    }

    /// POSTs `message` in the session to `url` and reads the whole answer.
    pub async fn post(&self, url: &str, message: &Value) -> Reply {
        let request = self
            .build(reqwest::Method::POST, url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message.to_string());
        whole(send(request, "POST").await).await
    }

    /// POSTs `message` in the session to `url` and reads the answer as it arrives: an SSE stream.
    pub async fn open(&self, url: &str, message: &Value) -> Events {
        let request = self
            .build(reqwest::Method::POST, url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(message.to_string());
        Events::of(send(request, "POST (a stream)").await).await
    }

    /// Opens the session's GET stream at `url`.
    pub async fn listen(&self, url: &str) -> Events {
        let request = self.build(reqwest::Method::GET, url).header("accept", "text/event-stream");
        Events::of(send(request, "GET").await).await
    }

    /// GET at `url`, read whole (for a refusal).
    pub async fn get(&self, url: &str) -> Reply {
        let request = self.build(reqwest::Method::GET, url).header("accept", "text/event-stream");
        whole(send(request, "GET").await).await
    }

    /// DELETE at `url`: ends the session.
    pub async fn delete(&self, url: &str) -> Reply {
        whole(send(self.build(reqwest::Method::DELETE, url), "DELETE").await).await
    }

    /// A request of the session answered with its result (checked not to be an error).
    pub async fn result(&self, url: &str, message: &Value) -> Value {
        let reply = self.post(url, message).await;
        assert_eq!(reply.status, 200, "{message}: {reply:?}");
        let answer = reply.json();
        assert!(answer.get("error").is_none(), "{message}: {answer}");
        answer["result"].clone()
    }
}

/// An SSE stream being read: a call's answer, or the session's GET stream.
pub struct Events {
    response: reqwest::Response,
    /// Bytes read and not yet split into events.
    buffer: Vec<u8>,
    /// Messages split and not yet taken.
    ready: VecDeque<Value>,
}

impl Events {
    /// Checks that `response` is an open SSE stream.
    async fn of(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok());
        let is_stream = content_type.is_some_and(|ct| ct.starts_with("text/event-stream"));
        if status != 200 || !is_stream {
            panic!("not an SSE stream: {:?}", whole(response).await);
        }
        Self { response, buffer: Vec::new(), ready: VecDeque::new() }
    }

    /// The next message (an event's `data`) if one comes within `within`: `Ok(None)` when the stream
    /// ended, `Err` when nothing came in time.
    pub async fn poll(&mut self, within: Duration) -> Result<Option<Value>, tokio::time::error::Elapsed> {
        let read = async {
            loop {
                if let Some(message) = self.ready.pop_front() {
                    return Some(message);
                }
                match self.response.chunk().await {
                    Ok(Some(chunk)) => {
                        self.buffer.extend_from_slice(&chunk);
                        self.split();
                    }
                    Ok(None) | Err(_) => return None,
                }
            }
        };
        tokio::time::timeout(within, read).await
    }

    /// The next message, waiting at most `within` (a panic past it); `None` when the stream ended.
    pub async fn next_within(&mut self, within: Duration) -> Option<Value> {
        self.poll(within).await.unwrap_or_else(|_| panic!("no event within {within:?}"))
    }

    /// Checks that nothing arrives for `quiet`, the stream staying open.
    pub async fn silent_for(&mut self, quiet: Duration) {
        if let Ok(message) = self.poll(quiet).await {
            panic!("expected nothing for {quiet:?}, got {message:?}");
        }
    }

    /// The next message, within [`DEADLINE`]; the stream must still be open.
    pub async fn next(&mut self) -> Value {
        self.next_within(DEADLINE).await.expect("the stream is open")
    }

    /// Moves every whole event of the buffer to `ready` (comments, such as keep-alives, skipped).
    fn split(&mut self) {
        let text = String::from_utf8_lossy(&self.buffer).replace("\r\n", "\n");
        let Some(end) = text.rfind("\n\n") else { return };
        for event in text[..end].split("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if !data.is_empty() {
                let message = serde_json::from_str(&data.join("\n"))
                    .unwrap_or_else(|_| panic!("an event's data is JSON: {event:?}"));
                self.ready.push_back(message);
            }
        }
        self.buffer = text.as_bytes()[end + 2..].to_vec();
    }
}

/// A raw `2026-07-28` request to `url` as `token`, declaring form elicitation: its whole answer.
pub async fn modern(url: &str, token: &str, id: i64, method: &str, params: Value) -> Reply {
    let name = params["name"].as_str().map(str::to_owned);
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {token}"))
        .body(body.to_string());
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    whole(send(request, method).await).await
}

/// A session id nobody was given: 32 hex digits, as the minted ones are.
pub fn guessed_id(seed: u64) -> String {
    format!("{:016x}{:016x}", seed.wrapping_mul(0x9e37_79b9_7f4a_7c15), !seed)
}
