//! rmcp's client receives change notifications from the real `notes` example binary, over HTTP (a
//! bearer token from `NOTES_TOKENS` names the caller) and over stdio (the one local user), speaking
//! `2026-07-28`: `Peer::listen` opens `subscriptions/listen` for resources list changes and
//! `notes://index`, checks the acknowledgment, adds a note through `tools/call`, and is told that its
//! resources list changed and that the index was updated.
//!
//! The binary is `target/<profile>/examples/notes` (`notes_example` finds it, and refuses a stale one).
//! The server binds 127.0.0.1 on a port picked free, every wait is bounded, and the child is killed
//! when its test ends, failed or not.

#[allow(dead_code)]
mod common;
mod notes_example;
mod relayed;

use std::time::Duration;

use common::{Transcript, step, to_json};
use notes_example::{modern, notes_binary, start_http, transport_with_token};
use relayed::spawn_relayed;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::{ClientServiceExt, RoleClient, RunningService, Service};
use serde_json::json;
use tokio::process::Command;

/// How long a notification may take to arrive once the change is made.
const ARRIVES: Duration = Duration::from_secs(10);

/// The client's name on the wire.
fn client_config() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("rmcp-notes-listen", "0.0.0"))
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_hears_the_notes_it_adds_over_http() {
    let log = Transcript::default();
    let _print = log.print_on_drop("notes over http, subscriptions/listen");
    let (mut child, url) = start_http(&[]).await;
    let client = step(
        "discover",
        client_config().serve_with_lifecycle(transport_with_token(url, "a-secret"), modern()),
    )
    .await;
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
