//! The client's own wire handling: the requests it writes and how strictly it reads answers.

use serde_json::json;

use mcp_kernel_wire::types::CallToolResult;

use super::TestClient;
use super::exchange::{check_notification, decode, read_response};
use super::outcome::ClientError;
use crate::catalog::spec::Listing;
use crate::notify::log::LogLevel;
use crate::server::Server;
use mcp_kernel_wire::ProtocolVersion;

fn client() -> TestClient {
    TestClient::new(Server::builder(Listing::default()).build().expect("an empty catalog builds"))
}

#[test]
fn ids_are_increasing_integers_from_one() {
    let client = client();
    let ids: Vec<_> = (0..3).map(|_| client.message("ping", json!({})).0).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3)]);
}

#[test]
fn a_2026_request_declares_its_era_capabilities_level_and_a_fresh_token() {
    let client =
        client().client_capabilities(json!({"roots": {}})).log_level(LogLevel::Warning).progress(true);
    let (_, first) = client.message("tools/list", json!({}));
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
            "io.modelcontextprotocol/logLevel": "warning",
            "progressToken": "test-client-1"
        }}})
    );
    let (_, second) = client.message("tools/list", json!(null));
    assert_eq!(second["params"]["_meta"]["progressToken"], "test-client-2");
}

#[test]
fn a_2025_request_carries_no_meta_unless_it_asks_for_progress() {
    let client = client().era(ProtocolVersion::V2025_11_25).log_level(LogLevel::Debug);
    let (_, plain) = client.message("tools/call", json!({"name": "x"}));
    assert_eq!(plain, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}));
    let (_, progress) = client.progress(true).message("ping", json!({}));
    assert_eq!(progress["params"], json!({"_meta": {"progressToken": "test-client-2"}}));
}

#[test]
fn the_callers_meta_keys_win_and_other_params_pass_unchanged() {
    let client = client();
    let (_, overridden) =
        client.message("ping", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}));
    let meta = &overridden["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "1999-01-01");
    assert_eq!(meta["io.modelcontextprotocol/clientCapabilities"], json!({}));
    assert_eq!(client.message("ping", json!([1])).1["params"], json!([1]));
    assert_eq!(client.message("ping", json!({"_meta": 3})).1["params"], json!({"_meta": 3}));
}

#[test]
fn a_result_of_the_wrong_shape_is_an_error_naming_the_type_and_the_place() {
    let error = decode::<CallToolResult>("tools/call", json!({"content": [{"type": "text"}]})).unwrap_err();
    let ClientError::Malformed { method, reason } = error else { panic!("{error:?}") };
    assert_eq!(method, "tools/call");
    assert!(reason.contains("CallToolResult") && reason.contains("content[0]"), "{reason}");
}

#[test]
fn responses_are_read_strictly() {
    let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 1}});
    assert_eq!(read_response("m", &json!(1), ok.clone()), Ok(json!({"a": 1})));
    let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}});
    let answered = read_response("m", &json!(1), error).unwrap_err();
    assert_eq!(answered.rpc().map(|e| e.code), Some(-32601));
    for bad in [
        json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
        json!({"jsonrpc": "1.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}),
        json!([ok]),
    ] {
        let refused = read_response("m", &json!(1), bad.clone());
        assert!(matches!(refused, Err(ClientError::Malformed { .. })), "{bad}: {refused:?}");
    }
}

#[test]
fn notifications_are_checked_against_their_wire_types_and_the_token() {
    let progress = |token| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1.0}})
    };
    assert_eq!(check_notification("m", &progress("t"), Some(&json!("t"))), Ok(()));
    assert!(check_notification("m", &progress("other"), Some(&json!("t"))).is_err());
    assert!(check_notification("m", &progress("t"), None).is_err());
    let log =
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}});
    assert_eq!(check_notification("m", &log, None), Ok(()));
    let bad_log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "LOUD"}});
    assert!(check_notification("m", &bad_log, None).is_err());
    let with_id = json!({"jsonrpc": "2.0", "id": 1, "method": "notifications/other"});
    assert!(check_notification("m", &with_id, None).is_err());
}
