//! The notes host's unit tests, through the in-process test client: no process, no socket, the real
//! router and wire format.

use std::sync::Arc;

use mcp_kernel::Server;
use mcp_kernel::testing::{Called, ClientError, TestClient};
use mcp_kernel::wire::ProtocolVersion;
use mcp_kernel::wire::types::{ContentBlock, ResourceContents};
use serde_json::{Value, json};

use crate::export::Pace;
use crate::host::{self, Caller};
use crate::store::Store;

fn notes() -> Server {
    host::server(&Arc::new(Store::default()), Pace::default()).expect("the notes catalog builds")
}

fn client(server: &Server, who: &str) -> TestClient {
    TestClient::new(server.clone()).principal(Caller(who.to_owned()))
}

async fn add(client: &TestClient, title: &str, body: &str) -> u64 {
    let added = client.call_tool("add_note", json!({"title": title, "body": body})).await.expect("answered");
    assert_eq!(added.result.is_error, Some(false), "{:?}", added.result);
    let id = added.result.structured_content.as_ref().and_then(|s| s["id"].as_u64());
    id.expect("structured {id}")
}

fn text_of(contents: &[ResourceContents]) -> String {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::Text(text) => text.text.clone(),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn tools_are_listed_with_derived_input_and_output_schemas() {
    let tools = client(&notes(), "alice").list_tools().await.expect("listed");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add_note", "search_notes", "delete_note", "export_notes"]);
    let add = &tools[0];
    assert_eq!(add.input_schema["required"], json!(["title", "body"]));
    assert_eq!(add.output_schema.as_ref().map(|s| &s["properties"]["id"]["type"]), Some(&json!("integer")));
    let delete = tools[2].annotations.as_ref().expect("annotations");
    assert_eq!(delete.destructive_hint, Some(true));
    assert_eq!(tools[0].annotations.as_ref().and_then(|a| a.destructive_hint), Some(false));
}

#[tokio::test]
async fn add_note_returns_its_id_as_structured_output() {
    let server = notes();
    let alice = client(&server, "alice");
    assert_eq!(add(&alice, "Rust", "ownership").await, 1);
    assert_eq!(add(&alice, "Go", "goroutines").await, 2);
}

#[tokio::test]
async fn search_shows_only_the_callers_notes_and_honours_the_limit() {
    let server = notes();
    let (alice, bob) = (client(&server, "alice"), client(&server, "bob"));
    add(&alice, "Rust", "ownership").await;
    add(&alice, "Rust again", "borrowing").await;
    add(&bob, "Rust for bob", "lifetimes").await;
    let found =
        alice.call_tool("search_notes", json!({"query": "rust", "limit": 1})).await.expect("answered");
    let notes = &found.result.structured_content.expect("structured")["notes"];
    assert_eq!(notes.as_array().map(Vec::len), Some(1));
    assert_eq!(notes[0]["title"], "Rust");
    let found = bob.call_tool("search_notes", json!({"query": "rust"})).await.expect("answered");
    let titles: Vec<Value> = found.result.structured_content.expect("structured")["notes"]
        .as_array()
        .expect("an array")
        .iter()
        .map(|n| n["title"].clone())
        .collect();
    assert_eq!(titles, [json!("Rust for bob")]);
}

#[tokio::test]
async fn a_limit_outside_1_to_50_is_refused_by_the_schema() {
    let alice = client(&notes(), "alice");
    for limit in [0, 51] {
        let refused =
            alice.call_tool("search_notes", json!({"query": "x", "limit": limit})).await.expect("a result");
        assert_eq!(refused.result.is_error, Some(true), "limit {limit}");
        assert!(
            refused.result.structured_content.is_none(),
            "a tool with an output schema sends none on error"
        );
    }
}

/// Every request that names a note by id, as one client sends it: `delete_note` and a read of the
/// note's template, with their whole answers (result or JSON-RPC error, notifications and all).
async fn answers_naming(client: &TestClient, id: u64) -> Vec<Result<Called<Value>, ClientError>> {
    vec![
        client.request("tools/call", json!({"name": "delete_note", "arguments": {"id": id}})).await,
        client.request("resources/read", json!({"uri": format!("notes://note/{id}")})).await,
    ]
}

/// `answers` printed, with the uri the read echoes spelled with id `to` instead of `from`.
fn with_id(answers: &[Result<Called<Value>, ClientError>], from: u64, to: u64) -> String {
    let text = format!("{answers:?}");
    text.replace(&format!("notes://note/{from}"), &format!("notes://note/{to}"))
}

#[tokio::test]
async fn a_foreign_note_is_answered_exactly_as_a_missing_one() {
    for era in [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25] {
        let server = notes();
        let (alice, bob) = (client(&server, "alice"), client(&server, "bob").era(era));
        add(&bob, "bob's", "text").await;
        // bob asks for note 3 before anyone has one: a missing note.
        let missing = answers_naming(&bob, 3).await;
        for n in 1..=3 {
            add(&alice, &format!("alice's {n}"), "keep out").await;
        }
        // alice's note 3 now exists: bob's answers are the same, byte for byte.
        let foreign = answers_naming(&bob, 3).await;
        assert_eq!(foreign, missing, "{era:?}");
        // And the same as for an id nobody ever used (but for the uri the read echoes).
        let never_used = answers_naming(&bob, 9).await;
        assert_eq!(with_id(&never_used, 9, 3), format!("{foreign:?}"), "{era:?}");
        // Each answer is the miss: the tool's error, the read's not-found of a uri not listed.
        let Ok(deleted) = &foreign[0] else { panic!("{era:?}: a tool result: {foreign:?}") };
        assert_eq!(deleted.result["isError"], true, "{era:?}");
        assert_eq!(deleted.result["content"], json!([{"type": "text", "text": "there is no such note"}]));
        let read = foreign[1].as_ref().expect_err("not found").rpc().expect("a JSON-RPC error");
        assert_eq!(read.data, Some(json!({"uri": "notes://note/3"})), "{era:?}");
        // bob's delete touched nothing of alice's.
        let hers = alice.read_resource("notes://note/3").await.expect("alice still reads her note 3");
        assert!(text_of(&hers.result.contents).starts_with("# alice's 3\n"), "{era:?}");
    }
}

#[tokio::test]
async fn note_ids_reveal_nothing_about_other_callers_notes() {
    let (quiet, busy) = (notes(), notes());
    let alice = client(&busy, "alice");
    for n in 1..=5 {
        add(&alice, &format!("alice's {n}"), "text").await;
    }
    let mut ids = Vec::new();
    for server in [&quiet, &busy] {
        let bob = client(server, "bob");
        let first = add(&bob, "bob's first", "text").await;
        let second = add(&bob, "bob's second", "text").await;
        let index = text_of(&bob.read_resource("notes://index").await.expect("read").result.contents);
        ids.push((first, second, index));
    }
    assert_eq!(ids[0], ids[1], "bob's ids are the same whether alice added 5 notes first or none");
    assert_eq!(ids[0], (1, 2, "1\tbob's first\n2\tbob's second\n".to_owned()));
}

#[tokio::test]
async fn a_caller_deletes_her_own_note_once() {
    let server = notes();
    let alice = client(&server, "alice");
    let id = add(&alice, "mine", "text").await;
    let deleted = alice.call_tool("delete_note", json!({"id": id})).await.expect("a result");
    assert_eq!(deleted.result.structured_content, Some(json!({"id": id})));
    let gone = alice.call_tool("delete_note", json!({"id": id})).await.expect("a result");
    assert_eq!(gone.result.is_error, Some(true));
    assert_eq!(gone.result.content, [ContentBlock::text("there is no such note")]);
    // Ids are not reused: a stale id never names a newer note.
    assert_eq!(add(&alice, "newer", "text").await, id + 1);
}

#[tokio::test]
async fn the_index_lists_the_callers_notes_one_per_line() {
    let server = notes();
    let (alice, bob) = (client(&server, "alice"), client(&server, "bob"));
    add(&alice, "Rust", "ownership").await;
    add(&bob, "Go", "goroutines").await;
    add(&alice, "Zig", "comptime").await;
    let index = alice.read_resource("notes://index").await.expect("read");
    assert_eq!(text_of(&index.result.contents), "1\tRust\n2\tZig\n");
}

#[tokio::test]
async fn a_note_is_read_by_its_owner_under_the_uri_it_is_listed_under_only() {
    let server = notes();
    let alice = client(&server, "alice");
    for n in 0..42 {
        add(&alice, &format!("note {}", n + 1), "text").await;
    }
    let read = alice.read_resource("notes://note/42").await.expect("read");
    assert_eq!(text_of(&read.result.contents), "# note 42\n\ntext\n\ntags: \n");
    // Listed = accepted: the same id spelled otherwise is not listed, so not read.
    for other in ["notes://note/%34%32", "notes://note/042"] {
        let error = alice.read_resource(other).await.expect_err("not listed");
        assert_eq!(error.rpc().map(|e| e.code), Some(-32602), "{other}");
    }
}

#[tokio::test]
async fn a_non_numeric_unknown_or_foreign_note_uri_is_answered_as_one_not_listed() {
    let server = notes();
    let (alice, bob) = (client(&server, "alice"), client(&server, "bob"));
    let id = add(&alice, "mine", "text").await;
    for (reader, uri) in [
        (&alice, "notes://note/abc".to_owned()),
        (&alice, "notes://note/999".to_owned()),
        (&bob, format!("notes://note/{id}")),
        (&bob, "notes://nothing".to_owned()),
    ] {
        let error = reader.read_resource(&uri).await.expect_err("not found");
        let error = error.rpc().expect("a JSON-RPC error").clone();
        assert_eq!(error.code, -32602, "2026-07-28's not-found code for {uri}");
        assert_eq!(error.data, Some(json!({"uri": uri})), "no reason: nothing is said of the uri");
    }
}

#[tokio::test]
async fn summarize_renders_the_callers_notes_on_the_topic() {
    let server = notes();
    let alice = client(&server, "alice");
    add(&alice, "Rust", "ownership").await;
    let prompts = alice.list_prompts().await.expect("listed");
    assert_eq!(
        prompts[0].arguments.as_ref().map(|a| (a[0].name.as_str(), a[0].required)),
        Some(("topic", Some(true)))
    );
    let got = alice.get_prompt("summarize", json!({"topic": "rust"})).await.expect("rendered");
    let text = serde_json::to_string(&got.result.messages).expect("json");
    assert!(text.contains("Summarize my notes about rust") && text.contains("Rust: ownership"), "{text}");
}

#[tokio::test]
async fn legacy_clients_are_served_the_same_notes() {
    let server = notes();
    let modern = client(&server, "alice");
    add(&modern, "Rust", "ownership").await;
    let legacy = client(&server, "alice").era(ProtocolVersion::V2025_11_25);
    let found = legacy.call_tool("search_notes", json!({"query": "rust"})).await.expect("answered");
    assert_eq!(found.result.structured_content.expect("structured")["notes"][0]["id"], 1);
}
