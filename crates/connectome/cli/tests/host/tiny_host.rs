//! tiny-host: an MCP server over tiny-tools, outside the mcp-kernel repository. `declared <facts.json>
//! <out.json>` writes its declared graph; `observe <instance> <out-prefix>` serves a fixed set of calls
//! and writes what its collector saw: `<prefix>.json`, `<prefix>.sidecar.json`, `<prefix>.timing.json`.

use futures_util::FutureExt;
use mcp_kernel::connectome;
use mcp_kernel::connectome::graph::declared::Declared;
use mcp_kernel::connectome::graph::{Algorithm, CallFacts};
use mcp_kernel::connectome::observe::Collector;
use mcp_kernel::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The tools the host declares.
fn declared_listing() -> Listing {
    let tools = ["add", "sum", "shout", "count"].map(|t| ToolSpec::new(t, Mode::ReadOnly)).to_vec();
    Listing { tools, ..Listing::default() }
}

/// The tools it serves: the declared ones and `echo`, a debugging aid nobody declared.
fn served_listing() -> Listing {
    let mut listing = declared_listing();
    listing.tools.push(ToolSpec::new("echo", Mode::ReadOnly));
    listing
}

/// The tool calls, served by tiny-tools.
async fn dispatch(call: ToolCall) -> Result<ToolOutput, ToolError> {
    let args: Value = call.arguments.deserialize().map_err(|_| ToolError::new("bad arguments"))?;
    let int = |k: &str| args[k].as_i64().ok_or_else(|| ToolError::new("an integer argument"));
    let text = || args["text"].as_str().unwrap_or_default().to_owned();
    match &*call.name {
        "add" => ToolOutput::json(&json!(tiny_tools::math::add(int("a")?, int("b")?))),
        "sum" => {
            let xs: Vec<i64> =
                args["xs"].as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
            ToolOutput::json(&json!(tiny_tools::math::sum(&xs)))
        }
        "shout" => Ok(ToolOutput::text(tiny_tools::text::shout(&text()))),
        "count" => ToolOutput::json(&json!(tiny_tools::text::count(&text()))),
        "echo" => Ok(ToolOutput::text(text())),
        _ => Err(ToolError::new("no such tool")),
    }
}

/// `declared <facts.json> <out.json>`.
fn declared(facts: &str, out: &str) -> Result<(), Error> {
    let facts = CallFacts::from_json(&std::fs::read(facts)?)?;
    let build = Declared::builder("tiny")
        .catalog(connectome::declared_catalog(&declared_listing()))
        .tool_module("add", "tiny_tools::math")
        .tool_module("sum", "tiny_tools::math")
        .tool_module("shout", "tiny_tools::text")
        .tool_module("count", "tiny_tools::text")
        .facts(facts)
        .build()?;
    std::fs::write(out, build.graph.to_canonical_bytes(Algorithm::Sha256)?)?;
    Ok(())
}

/// The calls each instance serves.
fn calls(instance: &str) -> Vec<Value> {
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    match instance {
        "a" => vec![
            call("add", json!({"a": 2, "b": 3})),
            call("add", json!({"a": 5, "b": 8})),
            call("add", json!({"a": 13, "b": 21})),
            call("shout", json!({"text": "hello"})),
        ],
        _ => vec![
            call("add", json!({"a": 1, "b": 1})),
            call("add", json!({"a": 2, "b": 2})),
            call("sum", json!({"xs": [1, 2, 3]})),
            call("echo", json!({"text": "debug"})),
        ],
    }
}

/// `observe <instance> <out-prefix>`.
fn observe(instance: &str, prefix: &str) -> Result<(), Error> {
    let collector = Collector::new();
    collector.start();
    let server = Server::builder(served_listing())
        .server_name("tiny")
        .observe_dispatch(collector.clone())
        .dispatch(dispatch)
        .build()?;
    for (id, params) in calls(instance).into_iter().enumerate() {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
        let message = mcp_kernel::wire::read_message(line.as_bytes())?;
        let answer =
            server.handle(Value::Object(message)).now_or_never().ok_or("the host answers at once")?;
        eprintln!("tiny-host {instance}: {answer:?}");
    }
    let (graph, timings) = collector.snapshot_with_timings()?;
    std::fs::write(format!("{prefix}.json"), graph.to_canonical_bytes(Algorithm::Sha256)?)?;
    std::fs::write(format!("{prefix}.sidecar.json"), graph.to_sidecar_bytes()?)?;
    std::fs::write(format!("{prefix}.timing.json"), timings.to_bytes()?)?;
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["declared", facts, out] => declared(facts, out),
        ["observe", instance, prefix] => observe(instance, prefix),
        _ => {
            Err("usage: tiny-host declared <facts.json> <out.json> | observe <instance> <out-prefix>".into())
        }
    }
}
