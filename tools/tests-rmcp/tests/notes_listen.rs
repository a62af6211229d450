//! rmcp's client receives change notifications from the real `notes` example binary, over HTTP (a
//! bearer token from `NOTES_TOKENS` names the caller) and over stdio (the one local user), speaking
//! `2026-07-28`: `Peer::listen` opens `subscriptions/listen` for resources list changes and
//! `notes://index`, checks the acknowledgment, adds a note through `tools/call`, and is told that its
//! resources list changed and that the index was updated.
//!
//! The binary is `target/<profile>/examples/notes`, built by `cargo build --workspace --examples
//! --features mcp-kernel/connectome` (`cargo xtask ci` builds the examples before the tests); a test
//! fails when a source it was built from is newer than it, rather than test a stale one. The server
//! binds 127.0.0.1 on a port picked free, every wait is bounded, and the child is killed when its test
//! ends, failed or not.

#[allow(dead_code)]
mod common;
mod relayed;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use common::{Transcript, step, to_json};
use relayed::spawn_relayed;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService, Service};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long a notification may take to arrive once the change is made.
const ARRIVES: Duration = Duration::from_secs(10);
/// How long the HTTP server may take to say it is serving.
const STARTUP: Duration = Duration::from_secs(20);
/// How many ports are tried when another process takes the one picked before the server binds it.
const BIND_ATTEMPTS: usize = 5;
/// The most lines read from a child's stderr, or relayed in one direction (a bound, never reached).
const MAX_LINES: usize = 10_000;
/// The callers of the HTTP server: alice's token is `a-secret`.
const TOKENS: &str = "alice=a-secret,bob=b-secret";

/// The client's name on the wire.
fn client_config() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("rmcp-notes-listen", "0.0.0"))
}

/// rmcp's `server/discover` lifecycle at `2026-07-28` only.
fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

/// The `notes` example, as `cargo build --examples` put it beside the `deps/` directory of this test
/// binary; refused when missing, or older than a source its dep-info lists.
fn notes_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let examples = exe.parent().and_then(Path::parent).map(|profile| profile.join("examples"));
    let examples = examples.expect("the test binary is in target/<profile>/deps");
    let path = examples.join(format!("notes{}", std::env::consts::EXE_SUFFIX));
    let rebuild = "cargo build --workspace --examples --features mcp-kernel/connectome";
    let built = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} is missing: build it with `{rebuild}`", path.display()));
    let dep_info = std::fs::read_to_string(examples.join("notes.d")).unwrap_or_default();
    if let Some(newer) = newer_source(&dep_info, built) {
        panic!("{} is older than {}: rebuild it with `{rebuild}`", path.display(), newer.display());
    }
    path
}

/// A source that cargo's dep-info (`target: source source …`, spaces escaped) lists and that was
/// modified after `built`.
fn newer_source(dep_info: &str, built: SystemTime) -> Option<PathBuf> {
    let first = dep_info.lines().next()?;
    let (_, sources) = first.split_once(": ")?;
    let escaped = sources.replace("\\ ", "\u{0}");
    escaped.split_whitespace().map(|s| PathBuf::from(s.replace('\u{0}', " "))).find(|source| {
        std::fs::metadata(source).and_then(|m| m.modified()).is_ok_and(|modified| modified > built)
    })
}

/// Opens a listen for resources list changes and `notes://index`, checks its acknowledgment, adds a
/// note, and waits (bounded) until both a list change and the index's update have arrived.
async fn listen_add_and_hear<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    log: &Transcript,
) {
    let filter =
        SubscriptionFilter::builder().resources_list_changed().resource_subscription("notes://index").build();
    let mut subscription = step("subscriptions/listen", client.listen(filter.clone())).await;
    assert_eq!(subscription.acknowledged(), &filter, "everything asked is honoured");

    let arguments = json!({"title": "Milk", "body": "Buy milk"}).as_object().cloned().expect("an object");
    let added = step(
        "tools/call add_note",
        client.call_tool(CallToolRequestParams::new("add_note").with_arguments(arguments)),
    )
    .await;
    assert_eq!(to_json(&added)["structuredContent"], json!({"id": 1}), "{}", to_json(&added));

    let (mut list_changed, mut index_updated) = (false, false);
    // The add announces exactly two things this listen asked for; a third would be a bug.
    for _ in 0..2 {
        let next = tokio::time::timeout(ARRIVES, subscription.next()).await;
        let next = next.unwrap_or_else(|_| panic!("no notification within {ARRIVES:?}"));
        let notification = next.expect("a well-formed notification").expect("the stream is open");
        log.push(format!("rmcp's subscription yields: {}", to_json(&notification)));
        match notification {
            ServerNotification::ResourceListChangedNotification(_) => list_changed = true,
            ServerNotification::ResourceUpdatedNotification(updated) => {
                assert_eq!(updated.params.uri, "notes://index");
                index_updated = true;
            }
            other => panic!("not asked for: {other:?}"),
        }
    }
    assert!(list_changed && index_updated, "a list change and the index's update");
    step("cancel the subscription", subscription.cancel()).await;
}

// ---------------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------------

/// A port that was free a moment ago on 127.0.0.1.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("the bound address").port()
}

/// Reads `child`'s stderr until the server says it serves `addr` (`Ok`), or it exits (`Err` with what
/// it printed). Bounded by [`STARTUP`] and [`MAX_LINES`]; the rest of stderr is drained in the background.
async fn serving(child: &mut Child, addr: SocketAddr) -> Result<(), String> {
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let serving = format!("serving http://{addr}/mcp");
    let mut seen = String::new();
    let waited = tokio::time::timeout(STARTUP, async {
        for _ in 0..MAX_LINES {
            match lines.next_line().await {
                Ok(Some(line)) if line.contains(&serving) => return true,
                Ok(Some(line)) => seen.push_str(&format!("{line}\n")),
                _ => return false,
            }
        }
        false
    })
    .await;
    match waited {
        Ok(true) => {
            tokio::spawn(async move {
                for _ in 0..MAX_LINES {
                    if !matches!(lines.next_line().await, Ok(Some(_))) {
                        break;
                    }
                }
            });
            Ok(())
        }
        Ok(false) => Err(seen),
        Err(_) => panic!("notes --http {addr} did not serve within {STARTUP:?}; stderr:\n{seen}"),
    }
}

/// `notes --http 127.0.0.1:PORT` with [`TOKENS`], once it serves: the child and its endpoint. Another
/// port is tried (at most [`BIND_ATTEMPTS`] in all) when the one picked was taken meanwhile.
async fn start_http() -> (Child, String) {
    let notes = notes_binary();
    for _ in 0..BIND_ATTEMPTS {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut child = Command::new(&notes)
            .arg("--http")
            .arg(addr.to_string())
            .env("NOTES_TOKENS", TOKENS)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn notes --http");
        match serving(&mut child, addr).await {
            Ok(()) => return (child, format!("http://{addr}/mcp")),
            Err(stderr) if stderr.contains("Address already in use") || stderr.contains("AddrInUse") => {}
            Err(stderr) => panic!("notes --http {addr} exited before serving; stderr:\n{stderr}"),
        }
    }
    panic!("no free port could be bound in {BIND_ATTEMPTS} attempts");
}

/// rmcp's Streamable HTTP transport as alice, over a reqwest client that never uses a proxy.
fn transport_as_alice(url: String) -> StreamableHttpClientTransport<reqwest::Client> {
    let client = reqwest::Client::builder().no_proxy().build().expect("reqwest client");
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header("a-secret");
    StreamableHttpClientTransport::with_client(client, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_hears_the_notes_it_adds_over_http() {
    let log = Transcript::default();
    let _print = log.print_on_drop("notes over http, subscriptions/listen");
    let (mut child, url) = start_http().await;
    let client =
        step("discover", client_config().serve_with_lifecycle(transport_as_alice(url), modern())).await;
    assert_eq!(client.peer_info().expect("discovered").protocol_version, ProtocolVersion::V_2026_07_28);

    listen_add_and_hear(&client, &log).await;

    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    assert!(child.try_wait().expect("the child's status").is_none(), "notes --http still serves");
    step("kill notes --http", child.kill()).await;
}

// ---------------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_hears_the_notes_it_adds_over_stdio() {
    let log = Transcript::default();
    let _print = log.print_on_drop("notes over stdio, subscriptions/listen");
    let mut notes = Command::new(notes_binary());
    notes.env("NO_COLOR", "1");
    let (mut child, transport) = spawn_relayed(notes, &log);
    let client = step("discover", client_config().serve_with_lifecycle(transport, modern())).await;
    assert_eq!(client.peer_info().expect("discovered").protocol_version, ProtocolVersion::V_2026_07_28);

    listen_add_and_hear(&client, &log).await;

    // End of input drains the session: the process exits 0.
    step("client shutdown", async { client.cancel().await.map(drop) }).await;
    let status = step("notes exits at end of input", child.wait()).await;
    assert!(status.success(), "notes exited {status}");
}
