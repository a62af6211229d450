//! The one echo bound over stdio: a value the caller sent is repeated in an error (`data.uri`,
//! `data.name`, `data.requested`) with at most 128 characters and a final `…`, however long the line
//! that carried it (up to the line cap).

use mcp_kernel_router::prompts::{GetPrompt, PromptOutput, PromptSpec};
use mcp_kernel_router::resources::{ReadResource, ResourceTemplateSpec};
use mcp_kernel_router::wire::error::{MAX_ECHO_CHARS, SHORTENED_MARK, shorten};
use mcp_kernel_router::wire::types::ResourceContents;
use mcp_kernel_router::{Listing, ReaderError, Server};
use mcp_kernel_stdio::{MAX_LINE_BYTES, StdioOptions};
use serde_json::{Value, json};

use crate::harness::{Session, bounded, error};

/// A uri or name of about 900 KiB: under the line cap once wrapped in a request.
const LONG: usize = 900 * 1024;

/// A server with one resource template, `test://place/{name}`, whose reader refuses every read, and
/// one prompt, `forecast`.
fn server() -> Server {
    let capabilities = Listing {
        resources: vec![ResourceTemplateSpec::new("test://place/{name}", "place").into()],
        prompts: vec![PromptSpec::new("forecast")],
        ..Listing::default()
    };
    Server::builder(capabilities)
        .resource_reader(|_: ReadResource| async {
            Err::<Vec<ResourceContents>, _>(ReaderError::new("gone"))
        })
        .prompt_reader(|_: GetPrompt| async { Err::<PromptOutput, _>(ReaderError::new("never rendered")) })
        .build()
        .expect("the catalog builds")
}

/// `params._meta` of a 2026-07-28 request declaring `version`.
fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A request; `modern` adds the 2026-07-28 `_meta`.
fn request(id: i64, method: &str, mut params: Value, modern: bool) -> Value {
    if modern {
        params["_meta"] = meta("2026-07-28");
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Asserts that `echoed` is `sent` shortened by the one rule: 128 characters and the mark.
fn assert_shortened(echoed: &Value, sent: &str) {
    let echoed = echoed.as_str().unwrap_or_else(|| panic!("a string echo, got {echoed}"));
    assert_eq!(echoed.chars().count(), MAX_ECHO_CHARS + 1);
    assert!(echoed.ends_with(SHORTENED_MARK));
    assert!(sent.starts_with(echoed.trim_end_matches(SHORTENED_MARK)), "a prefix of what was sent");
    assert_eq!(echoed, shorten(sent));
}

/// Sends `message` (checked to fit the line cap) and returns its answer, whose line must be short.
async fn exchange(session: &mut Session, message: Value) -> Value {
    let mut line = message.to_string().into_bytes();
    assert!(line.len() <= MAX_LINE_BYTES, "the request fits the line cap");
    line.push(b'\n');
    session.send(&line).await;
    let response = session.expect().await;
    let size = response.to_string().len();
    assert!(size < 2048, "an answer of {size} bytes to a request of {} bytes", line.len());
    response
}

#[tokio::test]
async fn a_not_found_uri_is_echoed_within_the_bound_over_stdio() {
    bounded(async {
        let mut session = Session::start(server(), StdioOptions::default());
        let unmatched = format!("test://nowhere/{}", "\u{1F600}".repeat(LONG / 4));
        // Under the 64 KiB a uri may have to be tried against the templates, so the reader runs.
        let refused = format!("test://place/{}", "\u{e9}".repeat(30 * 1024));
        for (id, uri, modern, code) in
            [(1, &unmatched, true, -32602), (2, &unmatched, false, -32002), (3, &refused, true, -32602)]
        {
            let response =
                exchange(&mut session, request(id, "resources/read", json!({"uri": uri}), modern)).await;
            assert_eq!(response["id"], id);
            assert_eq!(error(&response)["code"], code);
            assert_shortened(&error(&response)["data"]["uri"], uri);
            let reason = if id == 3 { json!("gone") } else { Value::Null };
            assert_eq!(error(&response)["data"]["reason"], reason, "the host's reason, when it refused");
        }
        session.close();
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test]
async fn an_unknown_prompt_name_is_echoed_within_the_bound_over_stdio() {
    bounded(async {
        let mut session = Session::start(server(), StdioOptions::default());
        let name = "p".repeat(LONG);
        for (id, modern) in [(1, true), (2, false)] {
            let response =
                exchange(&mut session, request(id, "prompts/get", json!({"name": name}), modern)).await;
            assert_eq!(error(&response)["code"], -32602);
            assert_eq!(error(&response)["data"].as_object().map(|data| data.len()), Some(1));
            assert_shortened(&error(&response)["data"]["name"], &name);
        }
        session.close();
        session.finish().await.expect("a clean end");
    })
    .await;
}

#[tokio::test]
async fn an_unsupported_requested_version_is_echoed_within_the_bound_over_stdio() {
    bounded(async {
        let mut session = Session::start(server(), StdioOptions::default());
        let version = format!("2099-{}", "9".repeat(LONG));
        let params = json!({"_meta": meta(&version)});
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params});
        let response = exchange(&mut session, message).await;
        assert_eq!(error(&response)["code"], -32022);
        assert_shortened(&error(&response)["data"]["requested"], &version);
        session.close();
        session.finish().await.expect("a clean end");
    })
    .await;
}
