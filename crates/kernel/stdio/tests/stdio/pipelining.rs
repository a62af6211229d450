//! A client that pipelines its requests: the read loop holds their answers back to write them
//! together, and that takes nothing from the progress lines of the requests being served.

use mcp_kernel_router::{Listing, Mode, Server, ToolCall, ToolError, ToolOutput, ToolSpec};
use mcp_kernel_stdio::{StdioOptions, serve_io};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::harness::bounded;

/// `report`: after one yield (so it runs on a task of its own), ten progress reports, then its answer.
async fn report(call: ToolCall) -> Result<ToolOutput, ToolError> {
    tokio::task::yield_now().await;
    for step in 0..10 {
        call.context.progress().report(f64::from(step), Some(10.0), None);
    }
    Ok(ToolOutput::text("reported"))
}

fn server() -> Server {
    let catalog = Listing { tools: vec![ToolSpec::new("report", Mode::ReadOnly)], ..Listing::default() };
    Server::builder(catalog).dispatch(report).build().expect("the catalog builds")
}

/// One `report` call with a progress token, then 200 pings, written in one go.
fn report_then_pings() -> Vec<u8> {
    let report = json!({"jsonrpc":"2.0","id":0,"method":"tools/call",
        "params":{"name":"report","_meta":{"progressToken":"p"}}});
    let pings = (1..=200).map(|id| json!({"jsonrpc":"2.0","id":id,"method":"ping"}));
    std::iter::once(report).chain(pings).flat_map(|m| format!("{m}\n").into_bytes()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_lines_are_not_crowded_out_by_the_answers_of_pipelined_requests() {
    // Twenty runs: with the answers of the pings queued one by one, the queue filled and some runs
    // lost progress lines (about one run in five).
    for run in 0..20 {
        let (mut input, server_input) = tokio::io::duplex(1 << 20);
        let (server_output, output) = tokio::io::duplex(1 << 20);
        let served = tokio::spawn(serve_io(server(), server_input, server_output, StdioOptions::default()));
        input.write_all(&report_then_pings()).await.expect("the input takes the requests");
        drop(input);
        let lines = bounded(async {
            let mut lines = Vec::new();
            let mut output = BufReader::new(output).lines();
            while let Some(line) = output.next_line().await.expect("the output reads") {
                lines.push(serde_json::from_str::<Value>(&line).expect("one JSON message a line"));
            }
            lines
        })
        .await;
        bounded(served).await.expect("the session task").expect("served to the end");
        let progress = lines.iter().filter(|l| l["method"] == "notifications/progress").count();
        assert_eq!(lines.len() - progress, 201, "run {run}: every request answered");
        assert_eq!(progress, 10, "run {run}: every progress line of a client reading as fast as it can");
    }
}
