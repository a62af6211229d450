//! The fixture of the legacy-session tests: the fixture catalog with three tools of its own — `ask`,
//! which asks the client through the session's channel itself, as the core's bridge does
//! (`mcp_kernel_http::testing::ChannelSlot`, feature `test-util`), `greet`, which asks for a name the
//! `2026-07-28` way (`input_required`, through the bridge), and `speak`, which logs at four levels — served with notifications (caller key: the principal) and log notifications at `debug`,
//! behind an `authorize` that names the bearer token's text as the principal; and a `2025-11-25`
//! client that keeps its session id.

use std::net::SocketAddr;

use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method};
use serde_json::{Value, json};

use mcp_kernel_http::testing::ChannelSlot;
use mcp_kernel_http::{AllowedOrigins, LegacySessions, McpHttp, Refused};
use mcp_kernel_router::notify::{LogLevel, Notifications};
use mcp_kernel_router::transport::ClientFault;
use mcp_kernel_router::{InputRequired, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};

use super::{
    ALLOWED_ORIGIN, LEGACY, Listening, Proto, Reply, Running, bytes, catalog, dispatch, get_prompt, legacy,
    legacy_headers, open_get, open_listen, post, read_resource, send, serve, without,
};

/// The principal a request's bearer token names (`authorization: Bearer <name>`); none: 401.
pub fn bearer(parts: &Parts) -> Result<String, Refused> {
    let header = parts.headers.get("authorization").and_then(|value| value.to_str().ok());
    match header.and_then(|value| value.strip_prefix("Bearer ")) {
        Some(name) if !name.is_empty() => Ok(name.to_owned()),
        _ => Err(Refused::unauthenticated("no bearer token")),
    }
}

/// What a fault of the session's channel is called in `ask`'s answer.
fn fault_name(fault: &ClientFault) -> &'static str {
    match fault {
        ClientFault::Refused(_) => "refused",
        ClientFault::TimedOut => "timed out",
        ClientFault::Closed => "closed",
        ClientFault::Busy => "busy",
        ClientFault::TooLarge => "too large",
        ClientFault::Unavailable => "unavailable",
        _ => "other",
    }
}

/// `ask`: one `elicitation/create` through the request's channel; its result, or the fault's name.
async fn ask(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let slot = call.context.extensions().get::<ChannelSlot>().cloned();
    let Some(channel) = slot.and_then(|slot| slot.channel()) else {
        return ToolOutput::json(&json!({"fault": "no channel"}));
    };
    let message = call.arguments.get("message").cloned().unwrap_or(json!("Who are you?"));
    let params = json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    });
    match channel.request("elicitation/create", params).await {
        Ok(result) => ToolOutput::json(&json!({"answer": result})),
        Err(fault) => ToolOutput::json(&json!({"fault": fault_name(&fault)})),
    }
}

/// The session fixture's dispatch: `ask`, `speak`, then the fixture's.
async fn session_dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    match &*call.name {
        "ask" => ask(call).await,
        "greet" => {
            let input = call.context.retry_input();
            let name = input.and_then(|input| input.accepted("user_name")).and_then(|c| c.get("name"));
            match name.and_then(Value::as_str) {
                Some(name) => Ok(ToolOutput::text(format!("Hello, {name}!"))),
                None => {
                    let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                    let asked = InputRequired::new().elicit("user_name", "What is your name?", form);
                    Ok(ToolOutput::input_required(asked))
                }
            }
        }
        "speak" => {
            for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Warning, LogLevel::Error] {
                call.context.log(level, Some("speak"), json!(level));
            }
            Ok(ToolOutput::text("spoken"))
        }
        _ => dispatch(call).await,
    }
}

/// The session fixture's server, announcing through `notifications`.
pub fn session_server(notifications: &Notifications) -> Server {
    let mut listing = catalog();
    let message = json!({"type": "object", "properties": {"message": {"type": "string"}}});
    listing.tools.push(ToolSpec::new("ask", Mode::ReadOnly).input_schema(message));
    listing.tools.push(ToolSpec::new("greet", Mode::ReadOnly));
    listing.tools.push(ToolSpec::new("speak", Mode::ReadOnly));
    let notifications = notifications.clone().caller_key(|context| context.principal::<String>().cloned());
    Server::builder(listing)
        .dispatch(session_dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .defer_header_annotation_faults(true)
        .notifications(notifications)
        .log_notifications(LogLevel::Debug)
        .build()
        .expect("the session fixture builds")
}

/// The session fixture served with `sessions` (and `tweak` applied to the builder); its notifications.
pub async fn start_sessions_with(
    sessions: LegacySessions,
    tweak: impl FnOnce(
        mcp_kernel_http::Builder<AllowedOrigins, mcp_kernel_http::Authorize>,
    ) -> mcp_kernel_http::Builder<AllowedOrigins, mcp_kernel_http::Authorize>,
) -> (Running, Notifications) {
    let notifications = Notifications::in_process();
    (start_instance(sessions, &notifications, tweak).await, notifications)
}

/// One instance of the session fixture: `sessions` (a store other instances may share) and
/// `notifications` (a hub other instances may share), `tweak` applied to the builder.
pub async fn start_instance(
    sessions: LegacySessions,
    notifications: &Notifications,
    tweak: impl FnOnce(
        mcp_kernel_http::Builder<AllowedOrigins, mcp_kernel_http::Authorize>,
    ) -> mcp_kernel_http::Builder<AllowedOrigins, mcp_kernel_http::Authorize>,
) -> Running {
    let builder = McpHttp::builder(session_server(notifications))
        .allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN]))
        .authorize(bearer)
        .legacy_sessions(sessions);
    serve(tweak(builder).build()).await
}

/// The session fixture served with `sessions`; its notifications.
pub async fn start_sessions(sessions: LegacySessions) -> (Running, Notifications) {
    start_sessions_with(sessions, |b| b).await
}

/// The 2025-11-25 `initialize` a client opens with (declaring elicitation).
pub fn legacy_initialize() -> Value {
    initialize_declaring(json!({"elicitation": {}}))
}

/// The 2025-11-25 `initialize` of a client declaring `capabilities`.
pub fn initialize_declaring(capabilities: Value) -> Value {
    legacy(
        1,
        "initialize",
        json!({
            "protocolVersion": LEGACY,
            "capabilities": capabilities,
            "clientInfo": {"name": "session-client", "version": "1.0.0"}
        }),
    )
}

/// A `2025-11-25` client of one principal, keeping the session id `initialize` gave it.
#[derive(Debug, Clone)]
pub struct SessionClient {
    pub addr: SocketAddr,
    pub proto: Proto,
    /// The bearer token's text: the principal.
    pub principal: &'static str,
    /// The session id, once initialized.
    pub id: Option<String>,
}

impl SessionClient {
    /// A client of `principal` with no session yet.
    pub fn new(addr: SocketAddr, proto: Proto, principal: &'static str) -> Self {
        Self { addr, proto, principal, id: None }
    }

    /// The same client, its session and all, talking to the instance at `addr`.
    pub fn at(&self, addr: SocketAddr) -> Self {
        Self { addr, ..self.clone() }
    }

    /// The same client presenting `id` as its session.
    pub fn presenting(&self, id: &str) -> Self {
        Self { id: Some(id.to_owned()), ..self.clone() }
    }

    /// The headers of a request after `initialize`: the legacy ones, the token, and the session id.
    pub fn headers(&self) -> HeaderMap {
        let mut headers = legacy_headers();
        let token = format!("Bearer {}", self.principal);
        headers.insert("authorization", HeaderValue::from_str(&token).expect("a header value"));
        if let Some(id) = &self.id {
            headers.insert("mcp-session-id", HeaderValue::from_str(id).expect("a header value"));
        }
        headers
    }

    /// `initialize`, without a version header, as the SDKs send it; keeps the session id it mints.
    pub async fn initialize(&mut self) -> Reply {
        self.initialize_with(legacy_initialize()).await
    }

    /// `initialize` as `message`; keeps the session id it mints.
    pub async fn initialize_with(&mut self, message: Value) -> Reply {
        let headers = without(without(self.headers(), "mcp-protocol-version"), "mcp-session-id");
        let reply = post(self.addr, self.proto, headers, bytes(&message)).await;
        self.id =
            reply.headers.get("mcp-session-id").map(|id| id.to_str().expect("visible ASCII").to_owned());
        reply
    }

    /// A client of `principal` with a session.
    pub async fn initialized(addr: SocketAddr, proto: Proto, principal: &'static str) -> Self {
        let mut client = Self::new(addr, proto, principal);
        let reply = client.initialize().await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(client.id.is_some(), "a session id: {reply:?}");
        client
    }

    /// POSTs `message` in the session and reads the whole answer.
    pub async fn post(&self, message: &Value) -> Reply {
        post(self.addr, self.proto, self.headers(), bytes(message)).await
    }

    /// POSTs `message` in the session and reads its answer as it arrives (an SSE stream).
    pub async fn stream(&self, message: &Value) -> Listening {
        open_listen(self.addr, self.proto, message, self.headers()).await
    }

    /// Opens the session's GET stream.
    pub async fn get(&self) -> Listening {
        let mut headers = self.headers();
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        open_get(self.addr, self.proto, headers).await
    }

    /// Ends the session.
    pub async fn delete(&self) -> Reply {
        send(self.addr, self.proto, Method::DELETE, self.headers(), bytes::Bytes::new()).await
    }
}
