//! Progress: a request's `notifications/progress` lines precede its response line (MCP S-52).

use std::time::Duration;

use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_stdio::{StdioOptions, serve_io};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::harness::bounded;

async fn count(call: ToolCall) -> Result<ToolOutput, ToolError> {
    for step in [0.0, 50.0, 100.0] {
        call.context.progress().report(step, Some(100.0), None);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(ToolOutput::text("counted"))
}

fn server() -> Server {
    let catalog = Listing { tools: vec![ToolSpec::new("count", Mode::ReadOnly)], ..Listing::default() };
    Server::builder(catalog).dispatch(count).build().expect("builds")
}

fn call(id: i64, token: Option<Value>) -> Value {
    let mut params = json!({"name": "count"});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// Sends `messages`, closes the input, and returns every output line.
async fn exchange(messages: &[Value]) -> Vec<String> {
    let (mut input, server_input) = tokio::io::duplex(64 * 1024);
    let (server_output, output) = tokio::io::duplex(64 * 1024);
    let served = tokio::spawn(serve_io(server(), server_input, server_output, StdioOptions::default()));
    for message in messages {
        input.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    drop(input);
    let mut lines = Vec::new();
    let mut output = BufReader::new(output).lines();
    while let Some(line) = output.next_line().await.unwrap() {
        lines.push(line);
    }
    served.await.unwrap().unwrap();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_lines_precede_the_response_of_their_request() {
    bounded(async {
        let lines = exchange(&[call(1, Some(json!("a"))), call(2, Some(json!(9)))]).await;
        let messages: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(messages.len(), 8, "{lines:?}");
        for (id, token) in [(1, json!("a")), (2, json!(9))] {
            let own: Vec<&Value> =
                messages.iter().filter(|m| m["id"] == id || m["params"]["progressToken"] == token).collect();
            let progress: Vec<f64> =
                own[..3].iter().map(|m| m["params"]["progress"].as_f64().unwrap()).collect();
            assert_eq!(progress, [0.0, 50.0, 100.0], "{lines:?}");
            assert_eq!(own[3]["id"], id, "the response comes last: {lines:?}");
            assert_eq!(own[3]["result"]["content"][0]["text"], "counted");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_progress_token_only_the_response_is_written() {
    bounded(async {
        let lines = exchange(&[call(1, None)]).await;
        assert_eq!(
            lines,
            [r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"counted"}],"isError":false}}"#]
        );
    })
    .await;
}

/// Reports from a spawned task, 1, 2, 3, … every 5 ms (at most 400), and never answers itself.
async fn ticker(call: ToolCall) -> Result<ToolOutput, ToolError> {
    if &*call.name == "quick" {
        return Ok(ToolOutput::text("quick"));
    }
    let progress = call.context.progress().clone();
    tokio::spawn(async move {
        for step in 1..=400 {
            progress.report(f64::from(step), None, None);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    std::future::pending::<()>().await;
    Ok(ToolOutput::text("never"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_writes_no_more_progress_and_no_response() {
    bounded(async {
        let catalog = Listing {
            tools: vec![ToolSpec::new("tick", Mode::ReadOnly), ToolSpec::new("quick", Mode::ReadOnly)],
            ..Listing::default()
        };
        let server = Server::builder(catalog).dispatch(ticker).build().expect("builds");
        let (mut input, server_input) = tokio::io::duplex(64 * 1024);
        let (server_output, output) = tokio::io::duplex(64 * 1024);
        let served = tokio::spawn(serve_io(server, server_input, server_output, StdioOptions::default()));
        let mut output = BufReader::new(output).lines();
        let send = |message: Value| format!("{message}\n");
        let tick = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "tick", "_meta": {"progressToken": "t"}}});
        input.write_all(send(tick).as_bytes()).await.unwrap();
        let first: Value = serde_json::from_str(&output.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(first["method"], "notifications/progress", "{first}");
        assert_eq!(first["params"]["progressToken"], "t");

        // The cancellation is read before the next request, so that request's answer is a fence:
        // whatever the cancelled request queued was written before it, and nothing of it after.
        let cancel =
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
        input.write_all(send(cancel).as_bytes()).await.unwrap();
        let quick = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "quick"}});
        input.write_all(send(quick).as_bytes()).await.unwrap();
        loop {
            let line: Value = serde_json::from_str(&output.next_line().await.unwrap().unwrap()).unwrap();
            assert_ne!(line["id"], 1, "a cancelled request is never answered: {line}");
            if line["id"] == 2 {
                break;
            }
            assert_eq!(line["params"]["progressToken"], "t", "only the ticker's progress before the fence");
        }
        // The spawned task keeps reporting for up to 2 s; give it time to try.
        tokio::time::sleep(Duration::from_millis(200)).await;
        drop(input);
        let mut after = Vec::new();
        while let Some(line) = output.next_line().await.unwrap() {
            after.push(line);
        }
        assert!(after.is_empty(), "nothing after the cancellation took effect: {after:?}");
        served.await.unwrap().unwrap();
    })
    .await;
}
