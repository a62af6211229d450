//! rmcp's client as the proxy tests drive it: the `server/discover` lifecycle at `2026-07-28` over
//! Streamable HTTP, with a handler that accepts every elicitation and records every progress
//! notification with the moment it arrived. `tests/shared_state.rs` connects it declaring the tasks
//! extension too ([`connect_with`]), and reads the task statuses and listen acknowledgments it records.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::ClientHandler;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProgressNotificationParam, ProtocolVersion,
    SubscriptionsAcknowledgedNotificationParams, TaskStatusNotificationParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RoleClient, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::common::{step, to_json};

/// A progress notification and when it arrived.
#[derive(Debug, Clone)]
pub struct Arrived {
    /// Its `progress` value.
    pub progress: f64,
    /// When the instance sent it (`sent_at_unix_ms=` in its message).
    pub sent_ms: u128,
    /// When the client's handler saw it.
    pub arrived_ms: u128,
}

/// Milliseconds since the Unix epoch, on the one clock the instances and the test share.
pub fn unix_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0)
}

/// The client's side: accepts each elicitation (`{"ok": true}`), records what arrives.
#[derive(Clone, Default)]
pub struct Harness {
    /// Whether it declares the tasks extension.
    tasks: bool,
    progress: Arc<Mutex<Vec<Arrived>>>,
    asked: Arc<Mutex<Vec<String>>>,
    statuses: Arc<Mutex<Vec<Value>>>,
    acknowledged: Arc<Mutex<Vec<Value>>>,
}

impl Harness {
    /// Every progress notification so far, in arrival order.
    pub fn progress(&self) -> Vec<Arrived> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The message of every elicitation so far.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Every `notifications/tasks` so far that no rmcp subscription took (those of a listen sent as a
    /// custom request), as JSON, `_meta` included, in arrival order.
    pub fn statuses(&self) -> Vec<Value> {
        self.statuses.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Every listen acknowledgment so far that no rmcp subscription took, as JSON.
    pub fn acknowledged(&self) -> Vec<Value> {
        self.acknowledged.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl ClientHandler for Harness {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = to_json(&request)["message"].as_str().unwrap_or_default().to_owned();
        self.asked.lock().unwrap_or_else(PoisonError::into_inner).push(message);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"ok": true})))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let arrived_ms = unix_ms();
        let sent_ms = params
            .message
            .as_deref()
            .and_then(|m| m.strip_prefix("sent_at_unix_ms="))
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(0);
        let arrived = Arrived { progress: params.progress, sent_ms, arrived_ms };
        self.progress.lock().unwrap_or_else(PoisonError::into_inner).push(arrived);
    }

    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        context: NotificationContext<RoleClient>,
    ) {
        let mut status = to_json(&params);
        status["_meta"] = to_json(&context.meta);
        self.statuses.lock().unwrap_or_else(PoisonError::into_inner).push(status);
    }

    async fn on_subscriptions_acknowledged(
        &self,
        params: SubscriptionsAcknowledgedNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        self.acknowledged.lock().unwrap_or_else(PoisonError::into_inner).push(to_json(&params));
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({"elicitation": {}});
        if self.tasks {
            capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
        }
        let capabilities: ClientCapabilities =
            serde_json::from_value(capabilities).expect("client capabilities");
        ClientConfig::new(capabilities, Implementation::new("rmcp-proxy-test", "0.0.0"))
    }
}

/// A connected client.
pub type Client = RunningService<RoleClient, Harness>;

/// Connects rmcp's client to `url` (`server/discover`, `2026-07-28`), with `token` as its bearer
/// token when given; its reqwest client never uses a proxy from the environment.
pub async fn connect(url: &str, token: Option<&str>) -> (Client, Harness) {
    connect_with(url, token, false).await
}

/// The same, declaring the tasks extension when `tasks` is set.
pub async fn connect_with(url: &str, token: Option<&str>, tasks: bool) -> (Client, Harness) {
    let http = reqwest::Client::builder().no_proxy().build().expect("reqwest client");
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let harness = Harness { tasks, ..Harness::default() };
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = step("discover", harness.clone().serve_with_lifecycle(transport, lifecycle)).await;
    (client, harness)
}

/// Closes a client (bounded).
pub async fn close(client: Client) {
    step("client shutdown", async { client.cancel().await.map(drop) }).await;
}

/// `tools/call name arguments`, with its structured content.
pub fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let arguments = arguments.as_object().cloned().expect("arguments are an object");
    CallToolRequestParams::new(name).with_arguments(arguments)
}

/// The structured content of a tool result, checked not to be an error.
pub fn structured(result: &impl serde::Serialize) -> Value {
    let result = to_json(result);
    assert_ne!(result["isError"], json!(true), "{result}");
    result["structuredContent"].clone()
}

/// The longest one call of the load may take.
pub const CALL: Duration = Duration::from_secs(15);
