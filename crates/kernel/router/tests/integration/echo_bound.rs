//! The one echo bound (`mcp_kernel_wire::error::shorten`): every caller-supplied value an error repeats
//! (`data.uri` of a resource not found, `data.name` of a prompt error, `data.requested` of an unsupported
//! version) keeps at most 128 characters, cut on a character boundary and marked with a final `…`; a
//! value at the bound is repeated whole, and an unknown tool's name is never repeated at all.

use crate::support::official::assert_response;
use crate::support::*;
use mcp_kernel_router::resources::{ReadResource, ResourceTemplateSpec};
use mcp_kernel_router::wire::ProtocolVersion;
use mcp_kernel_router::wire::error::{MAX_ECHO_CHARS, SHORTENED_MARK, shorten};
use mcp_kernel_router::wire::types::ResourceContents;
use mcp_kernel_router::{Listing, ReaderError, Server};
use serde_json::{Value, json};

/// Values over the bound: ASCII, two-, three- and four-byte characters, and control characters.
fn long_values(prefix: &str) -> [String; 4] {
    [
        format!("{prefix}{}", "x".repeat(60 * 1024)),
        format!("{prefix}{}", "\u{e9}".repeat(1_000)),
        format!("{prefix}{}\u{0}\n", "\u{1F600}".repeat(2_000)),
        format!("{prefix}{}", "\u{2026}".repeat(MAX_ECHO_CHARS + 1)),
    ]
}

/// Asserts that `echoed` is `sent` under the bound: whole when short, else its first 128 characters
/// and the mark.
fn assert_bounded_echo(echoed: &Value, sent: &str) {
    let echoed = echoed.as_str().unwrap_or_else(|| panic!("a string echo, got {echoed}"));
    let chars = sent.chars().count();
    if chars <= MAX_ECHO_CHARS {
        assert_eq!(echoed, sent, "a value within the bound is repeated whole");
        return;
    }
    assert_eq!(echoed.chars().count(), MAX_ECHO_CHARS + 1, "128 characters and the mark");
    assert!(echoed.ends_with(SHORTENED_MARK), "a shortened echo ends with the mark");
    let kept: String = sent.chars().take(MAX_ECHO_CHARS).collect();
    assert_eq!(echoed.strip_suffix(SHORTENED_MARK), Some(kept.as_str()), "a prefix cut on a char boundary");
    assert_eq!(echoed, shorten(sent), "the one rule");
}

/// A server whose one template matches any `test://any/…` uri and whose reader refuses every read.
fn refusing_server() -> Server {
    let capabilities = Listing {
        resources: vec![ResourceTemplateSpec::new("test://any/{+rest}", "any").into()],
        ..Listing::default()
    };
    Server::builder(capabilities)
        .resource_reader(|_: ReadResource| async {
            Err::<Vec<ResourceContents>, _>(ReaderError::new("gone"))
        })
        .build()
        .expect("the catalog builds")
}

#[tokio::test]
async fn a_not_found_uri_is_echoed_within_the_bound_at_every_era() {
    let server = server();
    for uri in long_values("test://nowhere/") {
        for (request, expected, revision) in [
            (modern(1, "resources/read", json!({"uri": uri})), -32602, MODERN),
            (legacy(2, "resources/read", json!({"uri": uri})), -32002, LEGACY),
            (bare(3, "resources/read", json!({"uri": uri})), -32002, LEGACY),
        ] {
            let r = send(&server, request).await;
            assert_eq!(code(&r), expected);
            assert_response(revision, "", &r);
            assert_eq!(r["error"]["data"].as_object().map(|data| data.len()), Some(1), "{r:.200}");
            assert_bounded_echo(&r["error"]["data"]["uri"], &uri);
        }
    }
}

#[tokio::test]
async fn a_uri_the_reader_refuses_is_echoed_within_the_bound_beside_the_reason() {
    let server = refusing_server();
    for uri in long_values("test://any/") {
        let r = send(&server, modern(1, "resources/read", json!({"uri": uri}))).await;
        assert_eq!(code(&r), -32602);
        assert_response(MODERN, "", &r);
        assert_eq!(r["error"]["data"]["reason"], "gone");
        assert_bounded_echo(&r["error"]["data"]["uri"], &uri);
    }
}

#[tokio::test]
async fn an_unknown_prompt_name_is_echoed_within_the_bound() {
    let server = server();
    for name in long_values("p") {
        for (request, revision) in [
            (modern(1, "prompts/get", json!({"name": name})), MODERN),
            (bare(2, "prompts/get", json!({"name": name})), LEGACY),
        ] {
            let r = send(&server, request).await;
            assert_eq!(code(&r), -32602);
            assert_response(revision, "", &r);
            assert_eq!(r["error"]["data"].as_object().map(|data| data.len()), Some(1), "{r:.200}");
            assert_bounded_echo(&r["error"]["data"]["name"], &name);
        }
    }
}

#[tokio::test]
async fn an_unsupported_requested_version_is_echoed_within_the_bound() {
    let server = server();
    for version in long_values("2099-") {
        let mut request = modern(1, "tools/list", json!({}));
        request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(version);
        let r = send(&server, request).await;
        assert_eq!(code(&r), -32022);
        assert_response(MODERN, "", &r);
        assert_eq!(r["error"]["data"]["supported"], json!([MODERN, LEGACY]));
        assert_bounded_echo(&r["error"]["data"]["requested"], &version);
    }
    // A modern-only server answers `initialize` with -32022 naming the version asked for.
    let modern_only = Server::builder(Listing::default())
        .supported_versions([ProtocolVersion::V2026_07_28])
        .build()
        .expect("a modern-only server builds");
    for version in long_values("2099-") {
        let r = send(&modern_only, bare(1, "initialize", json!({"protocolVersion": version}))).await;
        assert_eq!(code(&r), -32022);
        assert_response(MODERN, "", &r);
        assert_bounded_echo(&r["error"]["data"]["requested"], &version);
    }
}

#[tokio::test]
async fn a_value_at_the_bound_is_echoed_whole() {
    let server = server();
    let prefix = "test://nowhere/";
    let uri = format!("{prefix}{}", "\u{1F600}".repeat(MAX_ECHO_CHARS - prefix.len()));
    let r = send(&server, modern(1, "resources/read", json!({"uri": uri}))).await;
    assert_eq!(r["error"]["data"]["uri"], uri.as_str());
    let name = "\u{e9}".repeat(MAX_ECHO_CHARS);
    let r = send(&server, modern(2, "prompts/get", json!({"name": name}))).await;
    assert_eq!(r["error"]["data"]["name"], name.as_str());
    let one_more = format!("{name}!");
    let r = send(&server, modern(3, "prompts/get", json!({"name": one_more}))).await;
    assert_eq!(r["error"]["data"]["name"], format!("{name}{SHORTENED_MARK}"));
}

#[tokio::test]
async fn an_unknown_tool_name_is_never_echoed() {
    let server = server();
    for name in long_values("t") {
        let r = send(&server, modern(1, "tools/call", json!({"name": name, "arguments": {}}))).await;
        assert_eq!(r["error"], json!({"code": -32602, "message": "Unknown tool"}));
    }
}
