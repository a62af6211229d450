//! Servers for the `LiveServer` tests of the transports: each request is served to its end by the
//! server current when it arrived, and the next one sees the replacement. [`versioned`] builds a server
//! that says which version answered, with a tool that waits on a gate, so a test can hold a call on the
//! old server while it replaces it.

use std::sync::Arc;

use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::json;
use tokio::sync::{Semaphore, mpsc};

/// A server answering `gate` with `version` once a permit of `gate` is available (reporting each start
/// on `started`), and listing `extra` tools that answer their own name.
pub fn versioned(
    version: &'static str,
    extra: &[&str],
    gate: &Arc<Semaphore>,
    started: &mpsc::UnboundedSender<&'static str>,
) -> Server {
    let tools = std::iter::once("gate")
        .chain(extra.iter().copied())
        .map(|name| ToolSpec::new(name, Mode::ReadOnly))
        .collect();
    let gate = Arc::clone(gate);
    let started = started.clone();
    Server::builder(Listing { tools, ..Listing::default() })
        .dispatch(move |call: ToolCall| {
            let gate = Arc::clone(&gate);
            let started = started.clone();
            async move {
                if &*call.name == "gate" {
                    let _ = started.send(version);
                    let permit = gate.acquire().await.map_err(|_| ToolError::new("closed"))?;
                    permit.forget();
                }
                ToolOutput::json(&json!({"server": version, "tool": &*call.name}))
            }
        })
        .build()
        .expect("the versioned catalog builds")
}
