//! Legacy requests served in a stored session (`Inbound::stored_session`, the HTTP transport's
//! sessions): the session's revision and capabilities, `resources/subscribe` / `unsubscribe` and
//! `logging/setLevel` through the store, `initialize` advertising what a session honours, and the
//! session's stream (`Server::session_stream`) told of list changes and of its subscribed uris only.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_kernel_router::notify::{LogLevel, Notifications};
use mcp_kernel_router::sessions::{
    InProcessSessionStore, SessionLimits, SessionRecord, SessionStore, SessionStream, StoredSession,
    StreamRefused,
};
use mcp_kernel_router::tasks::now_ms;
use mcp_kernel_router::transport::{Inbound, NotificationSink};
use mcp_kernel_router::visibility::Listed;
use mcp_kernel_router::{Extensions, RequestContext, Server};
use serde_json::{Value, json};

use crate::support::{catalog, dispatch, get_prompt, legacy, read_resource};

const LIMITS: SessionLimits = SessionLimits::new(16, 100, Duration::from_secs(3600), 16);

/// The fixture with notifications (the caller key: the principal, a `String`), log notifications at
/// `debug` and a filter hiding `test://b` from everyone but "admin".
fn server(notifications: &Notifications) -> Server {
    let notifications = notifications.clone().caller_key(|context| context.principal::<String>().cloned());
    Server::builder(catalog())
        .dispatch(dispatch)
        .resource_reader(read_resource)
        .prompt_reader(get_prompt)
        .notifications(notifications)
        .log_notifications(LogLevel::Debug)
        .visibility(|item: Listed<'_>, context: &RequestContext| match item {
            Listed::Resource("test://b") => context.principal::<String>().is_some_and(|p| p == "admin"),
            _ => true,
        })
        .build()
        .expect("the fixture builds")
}

struct Fixture {
    server: Server,
    notifications: Notifications,
    store: Arc<InProcessSessionStore>,
}

impl Fixture {
    fn new() -> Self {
        let notifications = Notifications::in_process();
        Self { server: server(&notifications), notifications, store: Arc::new(InProcessSessionStore::new()) }
    }

    /// Stores a session `id` with `capabilities`, as a transport does after `initialize`.
    async fn open(&self, id: &str, capabilities: Value) {
        let record = SessionRecord::new(id, None, "2025-11-25", capabilities, now_ms(), LIMITS.idle);
        self.store.create(record, &LIMITS).await.expect("stored");
    }

    /// The session `id` as the transport resumes it for one request.
    async fn resumed(&self, id: &str) -> StoredSession {
        let record = self.store.resume(id, None, now_ms(), &LIMITS).await.expect("reachable").expect("live");
        let store: Arc<dyn SessionStore> = self.store.clone();
        StoredSession::new(record, store, LIMITS)
    }

    /// Sends `message` in session `id` as `principal`, with `sink` for its notifications.
    async fn send_as(
        &self,
        id: &str,
        principal: &str,
        message: Value,
        sink: Option<NotificationSink>,
    ) -> Value {
        let mut extensions = Extensions::new();
        extensions.insert(principal.to_owned());
        let mut inbound = Inbound::new().extensions(extensions).stored_session(self.resumed(id).await);
        if let Some(sink) = sink {
            inbound = inbound.notifications(sink);
        }
        let handled = self.server.handle_inbound(message, inbound).await;
        handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
    }

    async fn send(&self, id: &str, message: Value) -> Value {
        self.send_as(id, "alice", message, None).await
    }

    /// A stream of session `id` for `principal`, not yet the session's own.
    async fn opened_as(&self, id: &str, principal: &str) -> SessionStream {
        let mut extensions = Extensions::new();
        extensions.insert(principal.to_owned());
        self.server.session_stream(self.resumed(id).await, extensions).expect("a stream")
    }

    /// A stream of session `id` for `principal`, which took the session over.
    async fn stream_as(&self, id: &str, principal: &str) -> SessionStream {
        let mut stream = self.opened_as(id, principal).await;
        assert_eq!(stream.take_over().await, Ok(true), "the session is live");
        stream
    }
}

async fn next(stream: &mut SessionStream) -> Value {
    tokio::time::timeout(Duration::from_secs(1), stream.next()).await.expect("within a second").expect("open")
}

async fn stays_quiet(stream: &mut SessionStream) -> bool {
    tokio::time::timeout(Duration::from_millis(50), stream.next()).await.is_err()
}

fn subscribe(id: i64, uri: &str) -> Value {
    legacy(id, "resources/subscribe", json!({"uri": uri}))
}

#[tokio::test]
async fn a_session_request_is_served_with_the_capabilities_the_session_remembers() {
    let fixture = Fixture::new();
    fixture.open("s", json!({"elicitation": {}})).await;
    let call = legacy(1, "tools/call", json!({"name": "needs_elicitation", "arguments": {}}));
    let answer = fixture.send("s", call.clone()).await;
    assert!(answer.get("result").is_some(), "the session declared elicitation: {answer}");
    assert!(answer["result"].get("resultType").is_none(), "legacy-shaped: {answer}");
    let stateless = fixture.server.handle_inbound(call, Inbound::new().sessionless()).await;
    let stateless = stateless.response.expect("answered").to_value();
    assert_eq!(stateless["error"]["code"], -32021, "without a session, nothing was declared");
}

#[tokio::test]
async fn subscribe_and_unsubscribe_edit_the_store_with_the_stdio_permission_check() {
    let fixture = Fixture::new();
    fixture.open("s", json!({})).await;
    assert_eq!(fixture.send("s", subscribe(1, "test://a")).await["result"], json!({}));
    assert_eq!(fixture.send("s", subscribe(2, "test://zz")).await["error"]["code"], -32002, "unknown");
    assert_eq!(
        fixture.send("s", subscribe(3, "test://b")).await["error"]["code"],
        -32002,
        "hidden from alice"
    );
    let admin = fixture.send_as("s", "admin", subscribe(4, "test://b"), None).await;
    assert_eq!(admin["result"], json!({}), "shown to admin");
    let kept = fixture.resumed("s").await.record().subscriptions.clone();
    assert_eq!(kept.into_iter().collect::<Vec<_>>(), ["test://a", "test://b"]);
    let unsubscribe = legacy(5, "resources/unsubscribe", json!({"uri": "test://a"}));
    assert_eq!(fixture.send("s", unsubscribe).await["result"], json!({}));
    assert_eq!(fixture.resumed("s").await.record().subscriptions.len(), 1);
    assert_eq!(fixture.send("s", legacy(6, "resources/subscribe", json!({}))).await["error"]["code"], -32602);
}

#[tokio::test]
async fn a_subscription_past_the_sessions_bound_is_invalid_params() {
    let fixture = Fixture::new();
    fixture.open("s", json!({})).await;
    for n in 0..LIMITS.subscriptions {
        let answer = fixture.send("s", subscribe(1, &format!("test://place/{n}"))).await;
        assert_eq!(answer["result"], json!({}), "{n}");
    }
    let refused = fixture.send("s", subscribe(2, "test://place/past")).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[tokio::test]
async fn an_ended_session_edit_is_refused_and_shutdown_stays_unserved() {
    let fixture = Fixture::new();
    fixture.open("s", json!({})).await;
    let session = fixture.resumed("s").await;
    assert!(fixture.store.end("s").await.expect("in process"));
    let inbound = Inbound::new().sessionless().stored_session(session.clone());
    let answer = fixture.server.handle_inbound(subscribe(1, "test://a"), inbound).await;
    assert_eq!(answer.response.expect("answered").to_value()["error"]["code"], -32600);
    let inbound = Inbound::new().sessionless().stored_session(session);
    let shutdown = fixture.server.handle_inbound(legacy(2, "shutdown", json!({})), inbound).await;
    assert_eq!(shutdown.response.expect("answered").to_value()["error"]["code"], -32601);
}

/// A host of its own, whose one tool logs at four levels (the fixture's dispatch does not log).
#[tokio::test]
async fn set_level_is_scoped_to_the_session_and_later_requests_log_at_it() {
    use mcp_kernel_router::{Listing, Mode, ToolCall, ToolError, ToolOutput, ToolSpec};
    async fn speak(call: ToolCall) -> Result<ToolOutput, ToolError> {
        for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Warning, LogLevel::Error] {
            call.context.log(level, Some("speak"), json!(level));
        }
        Ok(ToolOutput::text("spoken"))
    }
    let catalog = Listing { tools: vec![ToolSpec::new("speak", Mode::ReadOnly)], ..Listing::default() };
    let server =
        Server::builder(catalog).dispatch(speak).log_notifications(LogLevel::Info).build().expect("builds");
    let fixture = Fixture { server, ..Fixture::new() };
    fixture.open("s", json!({})).await;
    fixture.open("t", json!({})).await;
    let levels = |session: &'static str| {
        let fixture = &fixture;
        async move {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let kept = Arc::clone(&seen);
            let sink: NotificationSink =
                Arc::new(move |n: Value| kept.lock().unwrap().push(n["params"]["level"].clone()));
            let call = legacy(1, "tools/call", json!({"name": "speak", "arguments": {}}));
            fixture.send_as(session, "alice", call, Some(sink)).await;
            seen.lock().unwrap().clone()
        }
    };
    assert_eq!(levels("s").await, ["info", "warning", "error"], "the host's minimum at first");
    let set = legacy(2, "logging/setLevel", json!({"level": "warning"}));
    assert_eq!(fixture.send("s", set).await["result"], json!({}));
    assert_eq!(levels("s").await, ["warning", "error"], "the session's level from now on");
    assert_eq!(levels("t").await, ["info", "warning", "error"], "another session keeps its own");
    let below = legacy(3, "logging/setLevel", json!({"level": "debug"}));
    assert_eq!(fixture.send("s", below).await["result"], json!({}));
    assert_eq!(levels("s").await, ["info", "warning", "error"], "never below the host's minimum");
    let bad = legacy(4, "logging/setLevel", json!({"level": "loud"}));
    assert_eq!(fixture.send("s", bad).await["error"]["code"], -32602);
}

#[tokio::test]
async fn initialize_advertises_what_a_kept_session_honours_only_when_the_server_can() {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let fixture = Fixture::new();
    let kept =
        fixture.server.handle_inbound(initialize.clone(), Inbound::new().sessionless().keeps_session()).await;
    let capabilities = kept.response.expect("answered").to_value()["result"]["capabilities"].clone();
    assert_eq!(capabilities["resources"], json!({"listChanged": true, "subscribe": true}));
    assert_eq!(capabilities["tools"], json!({"listChanged": true}));
    assert_eq!(capabilities["logging"], json!({}));
    let stateless = fixture.server.handle_inbound(initialize.clone(), Inbound::new().sessionless()).await;
    let capabilities = stateless.response.expect("answered").to_value()["result"]["capabilities"].clone();
    assert_eq!(capabilities["resources"], json!({"listChanged": false, "subscribe": false}));
    let plain = crate::support::server();
    let quiet = plain.handle_inbound(initialize, Inbound::new().sessionless().keeps_session()).await;
    let capabilities = quiet.response.expect("answered").to_value()["result"]["capabilities"].clone();
    assert_eq!(
        capabilities["resources"],
        json!({"listChanged": false, "subscribe": false}),
        "no notifications"
    );
    assert!(capabilities.get("logging").is_none(), "no log notifications");
}

#[tokio::test]
async fn the_session_stream_carries_list_changes_and_updates_of_subscribed_uris_only() {
    let fixture = Fixture::new();
    fixture.open("s", json!({})).await;
    let mut stream = fixture.stream_as("s", "alice").await;
    let notifier = fixture.notifications.notifier();
    notifier.resource_updated("test://a");
    notifier.tools_list_changed();
    assert_eq!(
        next(&mut stream).await,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(fixture.send("s", subscribe(1, "test://a")).await["result"], json!({}));
    notifier.resource_updated("test://c");
    notifier.resource_updated("test://a");
    let updated =
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://a"}});
    assert_eq!(next(&mut stream).await, updated, "only the subscribed uri, read from the store as it comes");
    let unsubscribe = legacy(2, "resources/unsubscribe", json!({"uri": "test://a"}));
    assert_eq!(fixture.send("s", unsubscribe).await["result"], json!({}));
    notifier.resource_updated("test://a");
    assert!(stays_quiet(&mut stream).await, "an unsubscribe stops the updates");
    notifier.prompts_list_changed();
    assert_eq!(next(&mut stream).await["method"], "notifications/prompts/list_changed");
}

#[tokio::test]
async fn the_session_stream_hears_only_its_callers_changes_and_ends_with_its_session() {
    let fixture = Fixture::new();
    fixture.open("s", json!({})).await;
    let mut alices = fixture.stream_as("s", "alice").await;
    let notifier = fixture.notifications.notifier();
    notifier.to_caller("bob").resources_list_changed();
    notifier.to_caller("alice").tools_list_changed();
    assert_eq!(next(&mut alices).await["method"], "notifications/tools/list_changed", "bob's change skipped");
    assert_eq!(fixture.send("s", subscribe(1, "test://a")).await["result"], json!({}));
    assert!(fixture.store.end("s").await.expect("in process"));
    notifier.resource_updated("test://a");
    let ended = tokio::time::timeout(Duration::from_secs(1), alices.next()).await.expect("within a second");
    assert_eq!(ended, None, "an update finds the session ended: the stream ends");
}

#[tokio::test]
async fn a_session_stream_speaks_only_while_it_is_its_sessions_own() {
    let fixture = Fixture::new();
    fixture.open("s", json!({})).await;
    let notifier = fixture.notifications.notifier();
    let mut never_taken = fixture.opened_as("s", "alice").await;
    let mut older = fixture.stream_as("s", "alice").await;
    let check = older.check();
    assert!(check.holds().await, "its own");
    let mut newer = fixture.stream_as("s", "alice").await;
    assert!(!check.holds().await, "taken over");
    notifier.tools_list_changed();
    assert_eq!(next(&mut newer).await["method"], "notifications/tools/list_changed");
    for stream in [&mut older, &mut never_taken] {
        let ended = tokio::time::timeout(Duration::from_secs(1), stream.next()).await.expect("at once");
        assert_eq!(ended, None, "a stream not its session's delivers nothing, and ends");
    }
    let mut late = fixture.opened_as("s", "alice").await;
    assert!(fixture.store.end("s").await.expect("in process"));
    assert_eq!(late.take_over().await, Ok(false), "an ended session is taken over by no stream");
}

#[tokio::test]
async fn a_server_without_notifications_opens_no_session_stream() {
    let fixture = Fixture::new();
    fixture.open("s", json!({})).await;
    let plain = crate::support::server();
    let refused = plain.session_stream(fixture.resumed("s").await, Extensions::new()).err();
    assert_eq!(refused, Some(StreamRefused::NoNotifications));
}
