//! The typed host API against the plain one, measured side by side in one process: the same
//! `tools/call` through a `Tools` registry (arguments deserialized into a struct, the name written
//! once) and through a plain `dispatch` function (arguments read by key), interleaved round by round
//! so that both see the same machine. Prints each path's median time per call and the ratio
//! typed / plain. `cargo bench -p mcp-kernel-router --bench host_api`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use mcp_kernel_router::{
    Listing, Mode, RequestContext, Server, ToolCall, ToolError, ToolOutput, ToolSpec, Tools,
};
use serde_json::json;

const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"message":"hello"}}}"#;

fn schema() -> serde_json::Value {
    json!({"type":"object","properties":{"message":{"type":"string"}},"required":["message"],"additionalProperties":false})
}

fn plain() -> Server {
    let listing = Listing {
        tools: vec![ToolSpec::new("echo", Mode::ReadOnly).input_schema(schema())],
        ..Listing::default()
    };
    Server::builder(listing)
        .dispatch(|call: ToolCall| {
            let text = call.arguments.get_str("message").unwrap_or_default().to_owned();
            std::future::ready(Ok::<_, ToolError>(ToolOutput::text(text)))
        })
        .build()
        .expect("the plain catalog")
}

fn typed() -> Server {
    #[derive(serde::Deserialize)]
    struct Echo {
        message: String,
    }
    let tools = Tools::new().add(
        ToolSpec::new("echo", Mode::ReadOnly).input_schema(schema()),
        |args: Echo, _cx: RequestContext| {
            std::future::ready(Ok::<_, ToolError>(ToolOutput::text(args.message)))
        },
    );
    Server::builder(Listing::new()).tools(tools).build().expect("the typed catalog")
}

fn one_call(server: &Server) -> Vec<u8> {
    let message = mcp_kernel_router::wire::read_message(black_box(CALL)).expect("a valid request");
    let handled = server.handle(serde_json::Value::Object(message)).now_or_never().expect("ready");
    handled.response.expect("a response").to_bytes()
}

/// The time per call of `calls` calls.
fn round(server: &Server, calls: u32) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(one_call(server));
    }
    start.elapsed() / calls
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    // `cargo test --benches` runs this with `--test`: a smoke run, no figure.
    let smoke = std::env::args().any(|a| a == "--test");
    let (plain, typed) = (plain(), typed());
    assert_eq!(one_call(&plain), one_call(&typed), "the same answer, byte for byte");
    let (rounds, calls) = if smoke { (2, 10) } else { (41, 20_000) };
    round(&plain, calls);
    round(&typed, calls);
    let (mut plain_times, mut typed_times) = (Vec::new(), Vec::new());
    for i in 0..rounds {
        // Alternate which goes first, so neither always runs on a warmer or a cooler machine.
        if i % 2 == 0 {
            plain_times.push(round(&plain, calls));
            typed_times.push(round(&typed, calls));
        } else {
            typed_times.push(round(&typed, calls));
            plain_times.push(round(&plain, calls));
        }
    }
    if smoke {
        return;
    }
    let (plain, typed) = (median(plain_times), median(typed_times));
    println!("host_api/plain_dispatch   median {:>8.3} µs per call", plain.as_secs_f64() * 1e6);
    println!("host_api/typed_registry   median {:>8.3} µs per call", typed.as_secs_f64() * 1e6);
    println!("host_api/typed_over_plain {:.3}", typed.as_secs_f64() / plain.as_secs_f64());
}
