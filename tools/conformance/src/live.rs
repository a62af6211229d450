//! The harness's replaceable server, and the two diagnostic tools that replace it.
//!
//! The suite's `server-stateless` scenario checks change notifications on `subscriptions/listen`: it
//! opens a listen, calls `test_trigger_tool_change` (or `test_trigger_prompt_change`, arguments `{}`)
//! and waits for `notifications/tools/list_changed` (`…/prompts/list_changed`). A trigger makes a real
//! change of the advertised list: it toggles `test_dynamic_tool` (`test_dynamic_prompt`) in or out,
//! rebuilds the whole server from the two toggles with [`build`], the one place a server is built, and
//! serves it with `LiveServer::replace`. Requests in flight finish on the server they started with.
//!
//! Every rebuild keeps the request-state sealer, so a multi-round-trip retry sealed before a trigger
//! still opens after it. The suite calls the tool trigger three times a run and the prompt trigger once:
//! both toggled entries end that run listed, and later scenarios list and call them like any other.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use mcp_kernel::notify::{LogLevel, Notifications};
use mcp_kernel::sealing::HmacSealer;
use mcp_kernel::tasks::Tasks;
use mcp_kernel::transport::LiveServer;
use mcp_kernel::{BuildError, Server, ToolCall, ToolError, ToolOutput};

use crate::catalog::{self, DYNAMIC_PROMPT, DYNAMIC_TOOL, PROMPT_TRIGGER, TOOL_TRIGGER, Toggles};

/// The served server and what it is rebuilt from.
pub struct Harness {
    live: OnceLock<LiveServer>,
    toggles: Mutex<Toggles>,
    sealer: HmacSealer,
    /// One hub for every rebuild: a replacement announces to the listeners of the server it replaces.
    notifications: Notifications,
    /// One task store for every rebuild: a task created before a trigger is answered after it.
    tasks: Tasks,
}

impl Harness {
    /// Builds the first server (no toggled entry listed) and returns the harness with the live server
    /// to serve. The servers reach the harness weakly: it lives as long as the caller holds it.
    pub fn start(sealer: HmacSealer) -> Result<(Arc<Harness>, LiveServer), BuildError> {
        let notifications = Notifications::in_process();
        let tasks = crate::tasks::opt_in();
        let harness = Arc::new(Harness {
            live: OnceLock::new(),
            toggles: Mutex::default(),
            sealer,
            notifications,
            tasks,
        });
        let live = LiveServer::new(build(&harness, Toggles::default())?);
        harness.live.get_or_init(|| live.clone());
        Ok((harness, live))
    }

    /// Flips the entry `trigger` toggles, serves the rebuilt server, and says what is listed now.
    fn trigger(self: &Arc<Self>, trigger: &str) -> Result<ToolOutput, ToolError> {
        let live = self.live.get().ok_or_else(|| ToolError::new("the harness is not serving yet"))?;
        // Held across build and replace: two triggers at once still serve the toggles they agree on.
        let mut toggles = self.toggles.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = *toggles;
        let (name, listed) = if trigger == TOOL_TRIGGER {
            next.dynamic_tool = !next.dynamic_tool;
            (DYNAMIC_TOOL, next.dynamic_tool)
        } else {
            next.dynamic_prompt = !next.dynamic_prompt;
            (DYNAMIC_PROMPT, next.dynamic_prompt)
        };
        let server = build(self, next).map_err(|_| ToolError::new("the changed catalog does not build"))?;
        live.replace(server);
        *toggles = next;
        let now = if listed { "now listed" } else { "no longer listed" };
        Ok(ToolOutput::text(format!("{name} is {now}.")))
    }
}

/// The harness's server with `toggles`: the catalog, its readers, and every opt-in of the library.
fn build(harness: &Arc<Harness>, toggles: Toggles) -> Result<Server, BuildError> {
    let weak = Arc::downgrade(harness);
    Server::builder(catalog::capabilities(toggles))
        .server_name("mcp-kernel-conformance")
        .dispatch(move |call: ToolCall| dispatch(weak.clone(), call))
        .resource_reader(catalog::read_resource)
        .prompt_reader(catalog::get_prompt)
        .completer(catalog::complete)
        .request_state_sealer(harness.sealer.clone())
        .log_notifications(LogLevel::Debug) // 2025-11-25 clients set `debug`; 2026 needs a logLevel
        // Change notifications, through the harness's one hub: every server the harness serves is built
        // here, so the triggers' `LiveServer::replace` announces each change to the listen streams.
        .notifications(harness.notifications.clone())
        // The tasks extension, with a threshold well under the suite's one-second tasks (`crate::tasks`).
        .tasks(harness.tasks.clone())
        .build()
}

/// The triggers, answered here; every other tool, answered by the catalog.
async fn dispatch(harness: Weak<Harness>, call: ToolCall) -> Result<ToolOutput, ToolError> {
    if &*call.name == TOOL_TRIGGER || &*call.name == PROMPT_TRIGGER {
        let harness = harness.upgrade().ok_or_else(|| ToolError::new("the harness is stopping"))?;
        return harness.trigger(&call.name);
    }
    catalog::dispatch(call).await
}

#[cfg(test)]
mod tests {
    use mcp_kernel::testing::TestClient;
    use serde_json::{Value, json};

    use super::*;

    fn started() -> (Arc<Harness>, TestClient) {
        let sealer = catalog::request_state_sealer().expect("randomness for the key");
        let (harness, live) = Harness::start(sealer).expect("the catalog builds");
        (harness, TestClient::new(live))
    }

    async fn tool_names(client: &TestClient) -> Vec<String> {
        client.list_tools().await.expect("tools/list").into_iter().map(|t| t.name).collect()
    }

    async fn prompt_names(client: &TestClient) -> Vec<String> {
        client.list_prompts().await.expect("prompts/list").into_iter().map(|p| p.name).collect()
    }

    async fn trigger(client: &TestClient, name: &str) -> String {
        let called = client.call_tool(name, json!({})).await.expect("the trigger answers");
        assert_eq!(called.result.is_error, Some(false), "{:?}", called.result);
        serde_json::to_value(&called.result.content).expect("content")[0]["text"]
            .as_str()
            .expect("a text result")
            .to_owned()
    }

    #[tokio::test]
    async fn a_trigger_announces_exactly_its_list_change_to_listeners() {
        let sealer = catalog::request_state_sealer().expect("randomness for the key");
        let (_harness, live) = Harness::start(sealer).expect("the catalog builds");
        let listen = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "notifications": {"toolsListChanged": true, "promptsListChanged": true}}});
        let envelope = mcp_kernel::wire::Envelope::from_value(listen).expect("an object");
        let inbound = mcp_kernel::transport::Inbound::new();
        let mut stream = live.current().open_listen(envelope, inbound).await.expect("a listen opens");
        let client = TestClient::new(live);
        trigger(&client, PROMPT_TRIGGER).await;
        let told = tokio::time::timeout(std::time::Duration::from_secs(2), stream.next()).await;
        let told = told.expect("told within 2 s").expect("a notification");
        assert_eq!(told["method"], "notifications/prompts/list_changed");
        let quiet = tokio::time::timeout(std::time::Duration::from_millis(50), stream.next()).await;
        assert!(quiet.is_err(), "a prompt trigger announces prompts only");
    }

    #[tokio::test]
    async fn the_tool_trigger_toggles_test_dynamic_tool_in_and_out_of_the_served_list() {
        let (_harness, client) = started();
        let before = tool_names(&client).await;
        assert!(before.contains(&TOOL_TRIGGER.to_owned()) && before.contains(&PROMPT_TRIGGER.to_owned()));
        assert!(!before.contains(&DYNAMIC_TOOL.to_owned()));
        assert_eq!(trigger(&client, TOOL_TRIGGER).await, "test_dynamic_tool is now listed.");
        let after = tool_names(&client).await;
        assert_eq!(after.last().map(String::as_str), Some(DYNAMIC_TOOL));
        assert_eq!(after[0], "test_simple_text", "the suite calls tools[0]");
        let called = client.call_tool(DYNAMIC_TOOL, json!({})).await.expect("a listed tool answers");
        assert_eq!(called.result.is_error, Some(false));
        assert_eq!(trigger(&client, TOOL_TRIGGER).await, "test_dynamic_tool is no longer listed.");
        assert_eq!(tool_names(&client).await, before);
        let unknown = client.call_tool(DYNAMIC_TOOL, json!({})).await.expect_err("an unlisted tool");
        assert_eq!(unknown.rpc().map(|e| e.code), Some(-32602));
        assert!(!prompt_names(&client).await.contains(&DYNAMIC_PROMPT.to_owned()), "prompts unchanged");
    }

    #[tokio::test]
    async fn the_prompt_trigger_toggles_test_dynamic_prompt_in_and_out_of_the_served_list() {
        let (_harness, client) = started();
        let before = prompt_names(&client).await;
        let tools = tool_names(&client).await;
        assert_eq!(trigger(&client, PROMPT_TRIGGER).await, "test_dynamic_prompt is now listed.");
        let listed = prompt_names(&client).await;
        assert_eq!(listed.len(), before.len() + 1);
        assert!(listed.contains(&DYNAMIC_PROMPT.to_owned()), "{listed:?}");
        let got = client.get_prompt(DYNAMIC_PROMPT, Value::Null).await.expect("a listed prompt renders");
        assert_eq!(got.result.messages.len(), 1);
        assert_eq!(tool_names(&client).await, tools, "tools unchanged");
        assert_eq!(trigger(&client, PROMPT_TRIGGER).await, "test_dynamic_prompt is no longer listed.");
        assert_eq!(prompt_names(&client).await, before);
    }

    #[tokio::test]
    async fn a_suite_run_of_three_tool_triggers_and_one_prompt_trigger_leaves_both_entries_listed() {
        let (_harness, client) = started();
        for _ in 0..3 {
            trigger(&client, TOOL_TRIGGER).await;
        }
        trigger(&client, PROMPT_TRIGGER).await;
        let tools = tool_names(&client).await;
        assert_eq!(tools.iter().filter(|t| *t == DYNAMIC_TOOL).count(), 1);
        assert_eq!(tools[0], "test_simple_text");
        assert!(prompt_names(&client).await.contains(&DYNAMIC_PROMPT.to_owned()));
        let resources = client.list_resources().await.expect("resources/list");
        assert_eq!(resources.len(), 3, "the rest of the catalog is rebuilt as it was");
    }

    #[tokio::test]
    async fn a_request_state_sealed_before_a_trigger_opens_after_it() {
        let (harness, _) = started();
        let live = harness.live.get().expect("started").clone();
        let client = TestClient::new(live).client_capabilities(json!({"elicitation": {"form": {}}}));
        let name = "test_input_required_result_request_state";
        let first = client.request("tools/call", json!({"name": name, "arguments": {}})).await.expect("r1");
        assert_eq!(first.result["resultType"], "input_required", "{}", first.result);
        let state = first.result["requestState"].clone();
        trigger(&client, TOOL_TRIGGER).await;
        let retry = json!({"name": name, "arguments": {}, "requestState": state,
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}});
        let second = client.request("tools/call", retry).await.expect("the retry is answered");
        assert_eq!(second.result["resultType"], "complete", "{}", second.result);
        assert_eq!(second.result["content"][0]["text"], "state-ok: confirmed=true");
    }

    #[tokio::test]
    async fn a_trigger_answers_an_error_once_the_harness_is_gone() {
        let (harness, client) = started();
        drop(harness);
        let called = client.call_tool(TOOL_TRIGGER, json!({})).await.expect("a tool error, not a refusal");
        assert_eq!(called.result.is_error, Some(true));
    }
}
