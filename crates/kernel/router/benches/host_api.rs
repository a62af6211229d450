//! The typed host API against the plain one, measured side by side in one process: the same
//! `tools/call` through a `Tools` registry (arguments deserialized into a struct, the name written
//! once) and through a plain `dispatch` function (arguments read by key), interleaved round by round
//! so that both see the same machine. Prints each path's median time per call and the ratio
//! typed / plain. `cargo bench -p mcp-kernel-router --bench host_api`.
#![allow(missing_docs)]

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcp_kernel_router::Server;
use support::{MODERN_CALL, plain_server as plain, typed_server as typed};

fn one_call(server: &Server) -> Vec<u8> {
    support::one_call(server, black_box(MODERN_CALL))
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
