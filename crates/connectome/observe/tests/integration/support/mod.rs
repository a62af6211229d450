//! A fixture host for the observe tests: a server whose tools use their arguments, with a collector
//! installed through `observe_dispatch`, driven through the public `Server::handle` API.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use connectome_observe::Collector;
use futures_util::FutureExt;
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

/// The server name of the fixture.
pub const SERVER: &str = "obs";

/// Every argument object dispatch received, as JSON text: proof that a payload reached dispatch.
#[derive(Clone, Default)]
pub struct DispatchLog(pub Arc<Mutex<Vec<String>>>);

impl DispatchLog {
    /// True when some dispatched call carried `needle` in its arguments.
    pub fn saw(&self, needle: &str) -> bool {
        self.0.lock().unwrap().iter().any(|args| args.contains(needle))
    }
}

fn catalog() -> Listing {
    let any = json!({"type": "object", "additionalProperties": true});
    Listing {
        tools: vec![
            ToolSpec::new("echo", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"outer": {"type": "object"}, "text": {"type": "string"}}
            })),
            ToolSpec::new("fetch", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"uri": {"type": "string"}},
                "required": ["uri"]
            })),
            ToolSpec::new("fail", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"reason": {"type": "string"}}
            })),
            ToolSpec::new("boom", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"message": {"type": "string"}}
            })),
            ToolSpec::new("strict", Mode::ReadOnly).input_schema(json!({
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"]
            })),
            ToolSpec::new("noop", Mode::ReadOnly).input_schema(any),
        ],
        ..Listing::default()
    }
}

/// The fixture server: `echo` returns its arguments, `fetch` names its uri in its text, `fail` returns
/// its reason as a tool error, `boom` panics with its message, `strict` needs an integer, `noop` does
/// nothing. Every call logs its arguments in `log` before doing anything else.
pub fn server(collector: &Collector, log: &DispatchLog) -> Server {
    let log = log.clone();
    Server::builder(catalog())
        .server_name(SERVER)
        .dispatch(move |call: ToolCall| {
            let arguments = call.arguments.to_value();
            log.0.lock().unwrap().push(arguments.to_string());
            async move {
                let text =
                    |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
                match &*call.name {
                    "echo" => ToolOutput::json(&arguments),
                    "fetch" => Ok(ToolOutput::text(format!("fetched {}", text("uri")))),
                    "fail" => Err(ToolError::new(text("reason"))),
                    "boom" => panic!("{}", text("message")),
                    _ => Ok(ToolOutput::text("done")),
                }
            }
        })
        .observe_dispatch(collector.clone())
        .build()
        .expect("the fixture catalog builds")
}

/// A 2026-07-28 `tools/call` with the `_meta` that revision requires on every request.
pub fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "name": tool,
            "arguments": arguments
        }
    })
}

/// Sends one message through `Server::handle` (every fixture tool is ready at once) and returns the
/// response as JSON.
pub fn send(server: &Server, message: Value) -> Value {
    let handled = server.handle(message).now_or_never().expect("the fixture tools are ready at once");
    handled.response.map(|r| r.to_value()).unwrap_or(Value::Null)
}
