//! rmcp's client against the weather catalog served over stdio by a child process (`weather-stdio`),
//! with every line in both directions recorded by a relay between the two.

mod common;
mod relayed;

use common::{Transcript, exercise, step};
use relayed::spawn_relayed;
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use serde_json::Value;
use tokio::io::DuplexStream;
use tokio::process::{Child, Command};

/// The client's name on the wire.
fn client_config() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("rmcp-interop", "0.0.0"))
}

/// Spawns `weather-stdio` and returns it with the (read, write) pair rmcp's client speaks through.
fn spawn_weather(log: &Transcript) -> (Child, (DuplexStream, DuplexStream)) {
    spawn_relayed(Command::new(env!("CARGO_BIN_EXE_weather-stdio")), log)
}

/// The JSON messages the client sent, in order.
fn sent(log: &Transcript) -> Vec<Value> {
    log.entries()
        .iter()
        .filter_map(|entry| entry.strip_prefix("-> "))
        .map(|line| serde_json::from_str(line).expect("the client sends JSON lines"))
        .collect()
}

/// Closes the client, then waits (bounded) for the child to exit on end of input.
async fn finish<S: rmcp::Service<rmcp::RoleClient>>(
    client: rmcp::service::RunningService<rmcp::RoleClient, S>,
    mut child: Child,
) {
    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    let status = step("child exit", child.wait()).await;
    assert!(status.success(), "weather-stdio exited with {status}");
}

/// `server/discover` then stateless 2026-07-28 requests, each carrying its own `_meta`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_2026_07_28_over_stdio() {
    let log = Transcript::default();
    let _print = log.print_on_drop("stdio, server/discover, 2026-07-28");
    let (child, transport) = spawn_weather(&log);
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = step("discover", client_config().serve_with_lifecycle(transport, lifecycle)).await;
    let info = client.peer_info().expect("discovered server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);

    exercise(&client).await;

    let sent = sent(&log);
    assert_eq!(sent[0]["method"], "server/discover", "{}", sent[0]);
    assert!(sent.iter().all(|m| m["method"] != "initialize"), "no initialize in the 2026-07-28 lifecycle");
    for message in sent.iter().filter(|m| m.get("id").is_some()) {
        let meta = &message["params"]["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{message}");
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object(), "{message}");
    }
    finish(client, child).await;
}

/// The 2025-11-25 lifecycle: `initialize` naming 2025-11-25, `notifications/initialized`, then requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_2025_11_25_over_stdio() {
    let log = Transcript::default();
    let _print = log.print_on_drop("stdio, initialize, 2025-11-25");
    let (child, transport) = spawn_weather(&log);
    let config = client_config().with_protocol_version(ProtocolVersion::V_2025_11_25);
    let client =
        step("initialize", config.serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)).await;
    let info = client.peer_info().expect("initialized server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);

    exercise(&client).await;

    let sent = sent(&log);
    assert_eq!(sent[0]["method"], "initialize", "{}", sent[0]);
    assert_eq!(sent[0]["params"]["protocolVersion"], "2025-11-25", "{}", sent[0]);
    assert_eq!(sent[1]["method"], "notifications/initialized", "{}", sent[1]);
    finish(client, child).await;
}

/// rmcp's plain `serve` (legacy lifecycle, default config): `initialize` naming rmcp's newest version,
/// 2026-07-28, which has no `initialize`; the server answers with the newest version that has one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_serve_over_stdio() {
    let log = Transcript::default();
    let _print = log.print_on_drop("stdio, rmcp default serve()");
    let (child, transport) = spawn_weather(&log);
    let client = step("initialize", client_config().serve(transport)).await;
    let info = client.peer_info().expect("initialized server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);

    exercise(&client).await;

    let sent = sent(&log);
    assert_eq!(sent[0]["method"], "initialize", "{}", sent[0]);
    assert_eq!(sent[0]["params"]["protocolVersion"], "2026-07-28", "{}", sent[0]);
    finish(client, child).await;
}

/// rmcp's `Auto` lifecycle: it probes with `server/discover` and stays on 2026-07-28 when answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_lifecycle_over_stdio() {
    let log = Transcript::default();
    let _print = log.print_on_drop("stdio, auto lifecycle");
    let (child, transport) = spawn_weather(&log);
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let client = step("auto lifecycle", client_config().serve_with_lifecycle(transport, lifecycle)).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);

    exercise(&client).await;

    let sent = sent(&log);
    assert_eq!(sent[0]["method"], "server/discover", "{}", sent[0]);
    finish(client, child).await;
}
