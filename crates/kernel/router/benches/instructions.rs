//! A fixed number of modern `tools/call`s through the core, or of `serde_json` parsing and writing the
//! same bytes: the loop to run under `valgrind --tool=callgrind`, whose instruction counts the machine's
//! load does not move (criterion's times on a shared 2-core machine swing by more than a 10% change).
//!
//! ```text
//! cargo bench -p mcp-kernel-router --bench instructions --no-run
//! INSTRUCTIONS_PATH=core INSTRUCTIONS_N=2000 valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/instructions-…
//! ```
//!
//! Run each path at two counts (2,000 and 6,000) and divide the difference of the totals by the
//! difference of the counts: start-up and the catalog build cancel out. `INSTRUCTIONS_PATH` is `core`
//! (the default), `traced` (the same call carrying a `traceparent` in `_meta`, no subscriber) or `serde`
//! (the baseline: `serde_json` parse to a `Value` and write it back).
#![allow(missing_docs)]

#[allow(dead_code, reason = "the typed server and the catalogs are for the criterion benches")]
mod support;

use criterion::black_box;
use support::{MODERN_CALL, one_call, plain_server};

/// `MODERN_CALL` carrying a W3C `traceparent` in `_meta` (the `traced` path of the instructions
/// harness: what continuing a trace costs when no subscriber wants the span).
pub const MODERN_TRACED_CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"},"name":"echo","arguments":{"message":"hello"}}}"#;

fn main() {
    // One call unless told: `cargo test --benches` runs it as a smoke test.
    let n: usize = std::env::var("INSTRUCTIONS_N").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let path = std::env::var("INSTRUCTIONS_PATH").unwrap_or_else(|_| "core".to_owned());
    let mut written = 0usize;
    match path.as_str() {
        "core" => {
            let server = plain_server();
            for _ in 0..n {
                written += one_call(&server, black_box(MODERN_CALL)).len();
            }
        }
        "traced" => {
            let server = plain_server();
            for _ in 0..n {
                written += one_call(&server, black_box(MODERN_TRACED_CALL)).len();
            }
        }
        "serde" => {
            for _ in 0..n {
                let value: serde_json::Value = serde_json::from_slice(black_box(MODERN_CALL)).expect("JSON");
                written += serde_json::to_vec(&value).expect("encodes").len();
            }
        }
        other => {
            eprintln!("instructions: INSTRUCTIONS_PATH={other:?} is not core, traced or serde");
            std::process::exit(2);
        }
    }
    println!("instructions: {path} ×{n}: {written} bytes written");
}
