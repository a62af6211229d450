//! The notes host's change notifications and per-caller resources, in process: listens opened on the
//! real server as a transport opens them (`Server::open_listen`, the caller attached), changes made
//! through the test client.

use std::sync::Arc;
use std::time::Duration;

use mcp_kernel::testing::TestClient;
use mcp_kernel::transport::{Inbound, Listen};
use mcp_kernel::wire::Envelope;
use mcp_kernel::wire::types::{Resource, ResourceContents};
use mcp_kernel::{Extensions, Server};
use serde_json::{Value, json};

use crate::export::Pace;
use crate::host::{self, Caller};
use crate::store::Store;

/// The tag every message of a listen stream carries.
const TAG: &str = "io.modelcontextprotocol/subscriptionId";
/// How long a notification may take to arrive.
const ARRIVES: Duration = Duration::from_secs(5);

fn notes() -> Server {
    host::server(&Arc::new(Store::default()), Pace::default()).expect("the notes catalog builds")
}

fn client(server: &Server, who: &str) -> TestClient {
    TestClient::new(server.clone()).principal(Caller(who.to_owned()))
}

async fn add(client: &TestClient, title: &str) -> u64 {
    let added =
        client.call_tool("add_note", json!({"title": title, "body": "text"})).await.expect("answered");
    let id = added.result.structured_content.as_ref().and_then(|s| s["id"].as_u64());
    id.unwrap_or_else(|| panic!("structured {{id}}: {:?}", added.result))
}

async fn delete(client: &TestClient, id: u64) {
    let deleted = client.call_tool("delete_note", json!({"id": id})).await.expect("answered");
    assert_eq!(deleted.result.structured_content, Some(json!({"id": id})), "{:?}", deleted.result);
}

/// A `subscriptions/listen` asking for resources list changes and updates of `uris`, opened by `who`;
/// and for tools list changes, which the tests send as markers (notes never announces one itself).
async fn listen(server: &Server, who: &str, uris: &[&str]) -> Listen {
    let message = json!({
        "jsonrpc": "2.0", "id": format!("{who}-listen"), "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "notifications": {
                "toolsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": uris
            }
        }
    });
    let mut extensions = Extensions::new();
    extensions.insert(Caller(who.to_owned()));
    let envelope = Envelope::from_value(message).expect("an object");
    let opened = server.open_listen(envelope, Inbound::new().extensions(extensions)).await;
    opened.unwrap_or_else(|handled| panic!("a listen opens: {:?}", handled.response))
}

/// What the acknowledgment of `listen` honoured.
fn acknowledged(listen: &Listen) -> Value {
    let ack = listen.acknowledgment();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    ack["params"]["notifications"].clone()
}

/// The next notification of `listen`, as (method, uri if any), checking its tag.
async fn next(listen: &mut Listen) -> (String, Option<String>) {
    let told = tokio::time::timeout(ARRIVES, listen.next()).await.expect("told in time").expect("not ended");
    assert_eq!(&told["params"]["_meta"][TAG], listen.id(), "tagged: {told}");
    let method = told["method"].as_str().expect("a method").to_owned();
    (method, told["params"]["uri"].as_str().map(str::to_owned))
}

fn updated(uri: &str) -> (String, Option<String>) {
    ("notifications/resources/updated".to_owned(), Some(uri.to_owned()))
}

fn list_changed() -> (String, Option<String>) {
    ("notifications/resources/list_changed".to_owned(), None)
}

/// The marker: a tools list change, which only the test sends.
fn marker() -> (String, Option<String>) {
    ("notifications/tools/list_changed".to_owned(), None)
}

#[tokio::test]
async fn notes_advertise_list_changes_and_resource_subscriptions() {
    let discovered = client(&notes(), "alice").request("server/discover", json!({})).await.expect("answered");
    let capabilities = &discovered.result["capabilities"];
    assert_eq!(capabilities["resources"], json!({"listChanged": true, "subscribe": true}), "{capabilities}");
    assert_eq!(capabilities["tools"]["listChanged"], true, "{capabilities}");
}

#[tokio::test]
async fn adding_and_deleting_a_note_is_told_to_its_owners_listeners_only() {
    let server = notes();
    let (alice, bob) = (client(&server, "alice"), client(&server, "bob"));
    let mut hers = listen(&server, "alice", &["notes://index"]).await;
    let mut his = listen(&server, "bob", &["notes://index"]).await;
    assert_eq!(
        acknowledged(&hers),
        json!({"toolsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": ["notes://index"]})
    );

    let id = add(&alice, "hers").await;
    // The note was not subscribed to (it did not exist): the index and the list.
    assert_eq!(next(&mut hers).await, updated("notes://index"));
    assert_eq!(next(&mut hers).await, list_changed());

    // Now her note can be listened to; bob names the same uri, which is not his.
    let mut note = listen(&server, "alice", &["notes://index", "notes://note/1"]).await;
    let resources = json!(["notes://index", "notes://note/1"]);
    assert_eq!(acknowledged(&note)["resourceSubscriptions"], resources);
    let mut his_note = listen(&server, "bob", &["notes://index", "notes://note/1"]).await;
    assert_eq!(acknowledged(&his_note)["resourceSubscriptions"], json!(["notes://index"]));

    delete(&alice, id).await;
    assert_eq!(next(&mut note).await, updated("notes://index"));
    assert_eq!(next(&mut note).await, updated("notes://note/1"));
    assert_eq!(next(&mut note).await, list_changed());
    assert_eq!(next(&mut hers).await, updated("notes://index"), "the delete, on her first listen too");
    assert_eq!(next(&mut hers).await, list_changed());

    // A feed delivers in order, so a marker sent to bob after alice's changes is the first thing his
    // listens hear: nothing of alice's add and delete reached them.
    let notifier = server.notifier().expect("notes is built with notifications");
    notifier.to_caller("bob").tools_list_changed();
    for listen in [&mut his, &mut his_note] {
        assert_eq!(next(listen).await, marker());
    }
    // And the other way round: bob's add is his, then a marker to alice is the first she hears.
    add(&bob, "his").await;
    for listen in [&mut his, &mut his_note] {
        assert_eq!(next(listen).await, updated("notes://index"));
        assert_eq!(next(listen).await, list_changed());
    }
    notifier.to_caller("alice").tools_list_changed();
    for listen in [&mut hers, &mut note] {
        assert_eq!(next(listen).await, marker());
    }
}

#[tokio::test]
async fn a_listen_naming_another_callers_note_has_it_left_out_as_an_unknown_uri() {
    let server = notes();
    let (alice, bob) = (client(&server, "alice"), client(&server, "bob"));
    add(&alice, "hers").await;
    let asking = |uri: &'static str| ["notes://index", uri, "notes://note/1"];
    // Before bob has a note 3, and after: the acknowledgment is the same, and the same as for a
    // note nobody has.
    let before = listen(&server, "alice", &asking("notes://note/3")).await.acknowledgment().clone();
    for n in 1..=3 {
        add(&bob, &format!("his {n}")).await;
    }
    let foreign = listen(&server, "alice", &asking("notes://note/3")).await.acknowledgment().clone();
    let unknown = listen(&server, "alice", &asking("notes://note/9")).await.acknowledgment().clone();
    assert_eq!(foreign, before);
    assert_eq!(foreign, unknown);
    assert_eq!(
        foreign["params"]["notifications"]["resourceSubscriptions"],
        json!(["notes://index", "notes://note/1"])
    );
}

#[tokio::test]
async fn resources_list_shows_each_caller_their_own_notes_sorted_by_uri() {
    let server = notes();
    let (alice, bob) = (client(&server, "alice"), client(&server, "bob"));
    for n in 1..=11 {
        add(&alice, &format!("hers {n}")).await;
    }
    add(&bob, "his").await;
    let listed = |resources: Vec<Resource>| -> Vec<(String, Option<String>)> {
        resources.into_iter().map(|r| (r.uri, r.title)).collect()
    };
    let his = listed(bob.list_resources().await.expect("listed"));
    assert_eq!(his, [("notes://index".into(), None), ("notes://note/1".into(), Some("his".into()))]);
    let hers = listed(alice.list_resources().await.expect("listed"));
    let uris: Vec<&str> = hers.iter().map(|(uri, _)| uri.as_str()).collect();
    assert_eq!(uris[..4], ["notes://index", "notes://note/1", "notes://note/10", "notes://note/11"]);
    assert_eq!(uris.len(), 12);
    // Listed = accepted: every uri listed for her reads her note.
    for (uri, title) in &hers[1..] {
        let read = alice.read_resource(uri).await.expect("a listed uri is read");
        let title = title.as_deref().expect("a note is titled");
        let [ResourceContents::Text(text)] = read.result.contents.as_slice() else {
            panic!("{uri}: one text: {:?}", read.result.contents)
        };
        assert!(text.text.starts_with(&format!("# {title}\n")), "{uri}: {}", text.text);
    }
    // No template: a note is a resource of its owner's, never a pattern anyone may read through.
    assert!(alice.list_resource_templates().await.expect("listed").is_empty());
}
