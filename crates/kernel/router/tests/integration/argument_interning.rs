//! Caller keys never become anything the process keeps (protocol.md E-7, E-8).

use std::sync::{Arc, Mutex};

use crate::support::*;
use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use serde_json::{Map, Value, json};

#[tokio::test]
async fn ten_thousand_undeclared_keys_reach_neither_dispatch_nor_any_table() {
    let seen: Arc<Mutex<Vec<Vec<Arc<str>>>>> = Arc::default();
    let record = seen.clone();
    let server = Server::builder(Listing {
        tools: vec![ToolSpec::new("t", Mode::ReadOnly).input_schema(json!({
            "type": "object", "properties": {"declared": {"type": "string"}}, "additionalProperties": true
        }))],
        ..Default::default()
    })
    .dispatch(move |call: ToolCall| {
        record.lock().unwrap().push(call.arguments.iter().map(|(k, _)| k.clone()).collect());
        async { Ok::<_, ToolError>(ToolOutput::text("ok")) }
    })
    .build()
    .unwrap();
    let mut args = Map::new();
    args.insert("declared".into(), json!("v"));
    for i in 0..10_000 {
        args.insert(format!("caller_key_{i}"), Value::from(i));
    }
    let r = send(&server, modern(1, "tools/call", json!({"name":"t","arguments":args}))).await;
    assert_eq!(r["result"]["isError"], false);
    // A second call: the declared key is the very same allocation, so nothing was created per call.
    send(&server, modern(2, "tools/call", json!({"name":"t","arguments":{"declared":"w","another":1}})))
        .await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].len(), 1);
    assert_eq!(&*seen[0][0], "declared");
    assert!(Arc::ptr_eq(&seen[0][0], &seen[1][0]));
}

#[tokio::test]
async fn prompt_arguments_are_keyed_by_declared_names_only() {
    let server = server();
    let mut args = Map::new();
    args.insert("place".into(), json!("Oslo"));
    for i in 0..10_000 {
        args.insert(format!("k{i}"), json!("v"));
    }
    // Undeclared prompt arguments are refused (additionalProperties false), before the reader runs.
    let r = send(&server, modern(1, "prompts/get", json!({"name":"forecast","arguments":args}))).await;
    assert_eq!(code(&r), -32602);
    assert!(r.to_string().len() < 1_000, "the refusal does not echo the caller's keys");
}
