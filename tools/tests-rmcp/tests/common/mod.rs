//! Shared by the stdio and HTTP tests: bounded steps, a transcript of what went over the wire, and one
//! walk through the weather catalog with rmcp's client.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::{RoleClient, RunningService, Service};
use serde_json::{Value, json};

/// The longest any one step (connect, one request, shutdown) may take.
pub const STEP: Duration = Duration::from_secs(15);

/// Runs one fallible step under [`STEP`], panicking with `what` on an error or a timeout.
pub async fn step<T, E: Debug>(what: &str, future: impl Future<Output = Result<T, E>>) -> T {
    match tokio::time::timeout(STEP, future).await {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => panic!("{what} failed: {error:?}"),
        Err(_) => panic!("{what} timed out after {STEP:?}"),
    }
}

/// Everything seen on the wire, in order, shared between the relay and the test.
#[derive(Clone, Default)]
pub struct Transcript(Arc<Mutex<Vec<String>>>);

impl Transcript {
    /// Appends one entry.
    pub fn push(&self, entry: String) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(entry);
    }

    /// A copy of every entry so far.
    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A guard that prints the transcript when dropped, so a failing test shows what was exchanged.
    pub fn print_on_drop(&self, title: &'static str) -> PrintOnDrop {
        PrintOnDrop { transcript: self.clone(), title }
    }
}

/// Prints a [`Transcript`] when dropped (also while a failed assertion unwinds).
pub struct PrintOnDrop {
    /// What is printed.
    transcript: Transcript,
    /// The heading.
    title: &'static str,
}

impl Drop for PrintOnDrop {
    fn drop(&mut self) {
        let mut out = format!("==== wire transcript: {} ====\n", self.title);
        for entry in self.transcript.entries() {
            out.push_str(&entry);
            out.push('\n');
        }
        eprint!("{out}");
    }
}

/// A serialisable rmcp value as JSON, for assertions that do not depend on rmcp's Rust types.
pub fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).expect("rmcp values serialise")
}

/// Checks that a request was answered with a JSON-RPC error object (not a transport failure).
fn assert_mcp_error<T: Debug>(what: &str, outcome: Result<T, ServiceError>) {
    match outcome {
        Err(ServiceError::McpError(error)) => {
            eprintln!("{what}: JSON-RPC error {} {:?}", error.code.0, error.message)
        }
        other => panic!("{what}: expected a JSON-RPC error, got {other:?}"),
    }
}

/// Lists, calls, reads and renders everything in the weather catalog, checking every answer.
pub async fn exercise<S: Service<RoleClient>>(client: &RunningService<RoleClient, S>) {
    // tools/list
    let tools = step("tools/list", client.list_all_tools()).await;
    let tools = to_json(&tools);
    let tool = tools
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["name"] == "get_weather"))
        .unwrap_or_else(|| panic!("get_weather missing from {tools}"));
    assert_eq!(tool["inputSchema"]["properties"]["place"]["type"], "string", "{tool}");
    assert_eq!(tool["inputSchema"]["required"], json!(["place"]), "{tool}");

    // tools/call
    let arguments = json!({"place": "Oslo"}).as_object().cloned().expect("an object");
    let called = step(
        "tools/call get_weather",
        client.call_tool(CallToolRequestParams::new("get_weather").with_arguments(arguments)),
    )
    .await;
    let called = to_json(&called);
    assert_ne!(called["isError"], json!(true), "{called}");
    assert_eq!(called["structuredContent"], json!({"place": "Oslo", "temperature_c": 12}), "{called}");

    // A tool failure is a result with isError, not a protocol error.
    let arguments = json!({"place": "Atlantis"}).as_object().cloned().expect("an object");
    let failed = step(
        "tools/call get_weather (unknown place)",
        client.call_tool(CallToolRequestParams::new("get_weather").with_arguments(arguments)),
    )
    .await;
    let failed = to_json(&failed);
    assert_eq!(failed["isError"], json!(true), "{failed}");

    // Unknown names are JSON-RPC errors, which rmcp must parse as such.
    let unknown_tool = client.call_tool(CallToolRequestParams::new("no_such_tool")).await;
    assert_mcp_error("tools/call no_such_tool", unknown_tool);
    let unknown_place =
        client.read_resource(ReadResourceRequestParams::new("weather://place/Atlantis")).await;
    assert_mcp_error("resources/read weather://place/Atlantis", unknown_place);

    // resources/list and resources/templates/list
    let resources = to_json(&step("resources/list", client.list_all_resources()).await);
    assert!(
        resources.as_array().is_some_and(|list| list.iter().any(|r| r["uri"] == "weather://places")),
        "{resources}"
    );
    let templates = to_json(&step("resources/templates/list", client.list_all_resource_templates()).await);
    assert!(
        templates
            .as_array()
            .is_some_and(|list| list.iter().any(|t| t["uriTemplate"] == "weather://place/{name}")),
        "{templates}"
    );

    // resources/read, a plain resource and one from the template
    let places = to_json(
        &step(
            "resources/read weather://places",
            client.read_resource(ReadResourceRequestParams::new("weather://places")),
        )
        .await,
    );
    assert_eq!(places["contents"][0]["uri"], "weather://places", "{places}");
    assert_eq!(places["contents"][0]["text"], "Oslo\nLima", "{places}");
    let lima = to_json(
        &step(
            "resources/read weather://place/Lima",
            client.read_resource(ReadResourceRequestParams::new("weather://place/Lima")),
        )
        .await,
    );
    assert_eq!(lima["contents"][0]["uri"], "weather://place/Lima", "{lima}");
    assert_eq!(lima["contents"][0]["text"], "12°C", "{lima}");

    // prompts/list and prompts/get
    let prompts = to_json(&step("prompts/list", client.list_all_prompts()).await);
    let forecast = prompts
        .as_array()
        .and_then(|list| list.iter().find(|prompt| prompt["name"] == "forecast"))
        .unwrap_or_else(|| panic!("forecast missing from {prompts}"));
    assert_eq!(forecast["arguments"][0]["name"], "place", "{forecast}");
    assert_eq!(forecast["arguments"][0]["required"], true, "{forecast}");
    let arguments = json!({"place": "Oslo"}).as_object().cloned().expect("an object");
    let prompt = to_json(
        &step(
            "prompts/get forecast",
            client.get_prompt(GetPromptRequestParams::new("forecast").with_arguments(arguments)),
        )
        .await,
    );
    assert_eq!(prompt["messages"][0]["role"], "user", "{prompt}");
    assert_eq!(prompt["messages"][0]["content"]["text"], "What is the forecast for Oslo?", "{prompt}");
}
