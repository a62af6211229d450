//! The bridge with a real client: rmcp's client in its `2025-11-25` lifecycle (`initialize`), with an
//! elicitation handler, calls tools written once with `input_required` (`asking-stdio`, a child process)
//! and gets their final answers — the server asked it `elicitation/create` over the same pipes, once,
//! then twice across two rounds. The same tool, asked by a `2026-07-28` request (raw JSON-RPC on the
//! pipes), answers `input_required` unchanged.

#[allow(dead_code)]
mod common;
mod relayed;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use common::{Transcript, step};
use relayed::spawn_relayed;
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// A user who answers every form: `name` is "Ada", `colour` is "blue". It records each message asked.
#[derive(Clone, Default)]
struct Ada {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Ada {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        self.asked.lock().unwrap_or_else(PoisonError::into_inner).push(message);
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let mut content = serde_json::Map::new();
        for field in schema["properties"].as_object().into_iter().flat_map(|p| p.keys()) {
            let value = if field == "colour" { "blue" } else { "Ada" };
            content.insert(field.clone(), Value::from(value));
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("rmcp reads capabilities");
        ClientConfig::new(capabilities, Implementation::new("rmcp-bridge", "0.0.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// The text of a tool result's first block.
fn text(result: &rmcp::model::CallToolResult) -> String {
    let result = serde_json::to_value(result).expect("rmcp results serialise");
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {result}")).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcps_legacy_client_answers_elicitations_through_the_bridge_over_stdio() {
    let log = Transcript::default();
    let _print = log.print_on_drop("stdio, the bridge, rmcp 2025-11-25");
    let (mut child, transport) = spawn_relayed(Command::new(env!("CARGO_BIN_EXE_asking-stdio")), &log);
    let user = Ada::default();
    let client =
        step("initialize", user.clone().serve_with_lifecycle(transport, ClientLifecycleMode::Initialize))
            .await;
    let info = client.peer_info().expect("initialized server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);

    let greeted = step("tools/call greet", client.call_tool(CallToolRequestParams::new("greet"))).await;
    assert_eq!(text(&greeted), "Hello, Ada!");
    let two = step("tools/call two_step", client.call_tool(CallToolRequestParams::new("two_step"))).await;
    assert_eq!(text(&two), "Ada likes blue");
    let asked = user.asked.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(asked, ["What is your name?", "What is your name?", "Favourite colour?"]);

    // On the wire: the server's own requests, with ids it minted, and the client's answers to them.
    let entries = log.entries();
    let from_server: Vec<Value> = entries
        .iter()
        .filter_map(|entry| entry.strip_prefix("<- "))
        .filter_map(|line| serde_json::from_str(line).ok())
        .filter(|message: &Value| message["method"] == "elicitation/create")
        .collect();
    assert_eq!(from_server.len(), 3, "{entries:?}");
    for request in &from_server {
        let id = request["id"].as_str().expect("a string id");
        assert!(id.starts_with("mcp-kernel-"), "{request}");
        let answered = entries.iter().filter_map(|entry| entry.strip_prefix("-> ")).any(|line| {
            serde_json::from_str::<Value>(line)
                .is_ok_and(|m| m["id"] == id && m["result"]["action"] == "accept")
        });
        assert!(answered, "the client answered {id}");
    }

    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    let status = step("child exit", child.wait()).await;
    assert!(status.success(), "asking-stdio exited with {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_request_to_the_same_tool_gets_input_required_unchanged() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_asking-stdio"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn asking-stdio");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"_meta": meta, "name": "greet", "arguments": {}}});
    stdin.write_all(format!("{call}\n").as_bytes()).await.expect("the server reads");
    let line = tokio::time::timeout(Duration::from_secs(15), lines.next_line()).await;
    let line = line.expect("an answer in time").expect("readable").expect("a line");
    let response: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(response["id"], 1, "the answer, with no question before it: {response}");
    let result = &response["result"];
    assert_eq!(result["resultType"], "input_required", "{response}");
    let asked = &result["inputRequests"]["name"];
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["message"], "What is your name?");
    assert!(result["requestState"].is_string());
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait()).await;
    assert!(status.expect("exits in time").expect("waited").success());
}
