//! The package holds no tool, domain or catalog of its own (`docs/will-not-implement.md` H-11): a
//! server built from an empty catalog lists nothing, and calls, reads and gets nothing.

use crate::support::*;
use mcp_kernel_router::{Listing, Server};
use serde_json::json;

#[tokio::test]
async fn an_empty_catalog_lists_nothing_and_serves_nothing() {
    let server = Server::builder(Listing::default()).build().expect("an empty catalog builds");
    let lists = [
        ("tools/list", "tools"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ];
    for (method, key) in lists {
        let answer = send(&server, modern(1, method, json!({}))).await;
        assert_eq!(answer["result"][key], json!([]), "{method}: {answer}");
    }
    let uses = [
        ("tools/call", json!({"name": "echo", "arguments": {}})),
        ("resources/read", json!({"uri": "file:///etc/passwd"})),
        ("prompts/get", json!({"name": "greet"})),
    ];
    for (method, params) in uses {
        let answer = send(&server, modern(2, method, params)).await;
        let refused = answer.get("error").is_some() || answer["result"]["isError"] == json!(true);
        assert!(refused, "{method} is served by nothing: {answer}");
    }
}
