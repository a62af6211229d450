//! rmcp's client in its `2025-11-25` lifecycle (`initialize`) over Streamable HTTP with a session: it
//! declares form elicitation and accepts every question (`{"ok": true}`), recording each message
//! asked, and records, in arrival order, the list changes and resource updates its GET stream brings.
//!
//! The transport is told not to hide what a test checks: it must get a session (`allow_stateless`
//! off: a server that answers statelessly fails the connect) and never initializes again on a 404
//! (`reinit_on_expired_session` off: a session another instance does not know fails the request).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProtocolVersion, ResourceUpdatedNotificationParam,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RoleClient, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::common::{step, to_json};

/// What the GET stream brought, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// `notifications/resources/list_changed`.
    ListChanged,
    /// `notifications/resources/updated` for this uri.
    Updated(String),
}

/// The user: answers every question, records what it is asked and what it hears.
#[derive(Clone, Default)]
pub struct User {
    asked: Arc<Mutex<Vec<String>>>,
    heard: Arc<Mutex<Vec<Heard>>>,
    arrived: Arc<Notify>,
}

impl User {
    /// The message of every question so far.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Everything heard so far.
    pub fn heard(&self) -> Vec<Heard> {
        self.heard.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Forgets what was heard.
    pub fn forget(&self) {
        self.heard.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// Waits (at most `within`) until what was heard satisfies `done`; what was heard then, or
    /// `None` if it never did.
    pub async fn heard_within(
        &self,
        within: Duration,
        done: impl Fn(&[Heard]) -> bool,
    ) -> Option<Vec<Heard>> {
        let started = Instant::now();
        loop {
            let notified = self.arrived.notified();
            let heard = self.heard();
            if done(&heard) {
                return Some(heard);
            }
            let left = within.saturating_sub(started.elapsed());
            if left.is_zero() {
                return None;
            }
            let _ = tokio::time::timeout(left, notified).await;
        }
    }

    /// The same, panicking when it never did.
    pub async fn until(&self, within: Duration, done: impl Fn(&[Heard]) -> bool) -> Vec<Heard> {
        match self.heard_within(within, done).await {
            Some(heard) => heard,
            None => panic!("not heard within {within:?}; heard {:?}", self.heard()),
        }
    }

    fn hear(&self, heard: Heard) {
        self.heard.lock().unwrap_or_else(PoisonError::into_inner).push(heard);
        self.arrived.notify_waiters();
    }
}

impl ClientHandler for User {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = to_json(&request)["message"].as_str().unwrap_or_default().to_owned();
        self.asked.lock().unwrap_or_else(PoisonError::into_inner).push(message);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"ok": true})))
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.hear(Heard::Updated(params.uri));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.hear(Heard::ListChanged);
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("rmcp reads capabilities");
        ClientConfig::new(capabilities, Implementation::new("rmcp-legacy-session", "0.0.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// A connected legacy client.
pub type Legacy = RunningService<RoleClient, User>;

/// Connects rmcp's legacy client to `url` as `token` (`initialize`, `2025-11-25`), with a session.
pub async fn connect(url: &str, token: &str) -> (Legacy, User) {
    let http = reqwest::Client::builder().no_proxy().build().expect("reqwest client");
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token.to_owned());
    config.allow_stateless = false;
    config.reinit_on_expired_session = false;
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let user = User::default();
    let client =
        step("initialize", user.clone().serve_with_lifecycle(transport, ClientLifecycleMode::Initialize))
            .await;
    let info = client.peer_info().expect("initialized server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25, "the legacy lifecycle");
    (client, user)
}

/// `tools/call name {item}` through `client`: the tool's structured content, checked not an error.
pub async fn call(client: &Legacy, name: &'static str, arguments: Value) -> Value {
    let arguments = arguments.as_object().cloned().expect("arguments are an object");
    let result =
        step(name, client.call_tool(CallToolRequestParams::new(name).with_arguments(arguments))).await;
    let result = to_json(&result);
    assert_ne!(result["isError"], json!(true), "{name}: {result}");
    result["structuredContent"].clone()
}

/// `resources/subscribe uri` through `client` (bounded).
#[allow(deprecated, reason = "rmcp marks resources/subscribe legacy-only: this client is a 2025-11-25 one")]
pub async fn subscribe(client: &Legacy, uri: &str) {
    step("resources/subscribe", client.subscribe(SubscribeRequestParams::new(uri))).await;
}

/// `resources/unsubscribe uri` through `client` (bounded).
#[allow(deprecated, reason = "rmcp marks resources/unsubscribe legacy-only: this client is a 2025-11-25 one")]
pub async fn unsubscribe(client: &Legacy, uri: &str) {
    step("resources/unsubscribe", client.unsubscribe(UnsubscribeRequestParams::new(uri))).await;
}

/// Closes a client (bounded): rmcp ends its session with a DELETE.
pub async fn close(client: Legacy) {
    step("client shutdown", async { client.cancel().await.map(drop) }).await;
}

/// Calls `touch` through `toucher` until `user` hears a list change (at most 50 times, 200 ms apart):
/// its GET stream is open and reading then. What was heard is forgotten.
pub async fn until_listening(toucher: &Legacy, user: &User) {
    for _ in 0..50 {
        call(toucher, "touch", json!({})).await;
        let heard = user.heard_within(Duration::from_millis(200), |h| h.contains(&Heard::ListChanged)).await;
        if heard.is_some() {
            // The update of the same touch, if subscribed, may follow: let it land before forgetting.
            tokio::time::sleep(Duration::from_millis(200)).await;
            user.forget();
            return;
        }
    }
    panic!("the GET stream carried no list change after 50 touches");
}
