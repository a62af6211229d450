//! `--hold`: the memory per in-flight request with half its body sent, per server and round.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::options::Options;
use super::report::{Tally, finish, git_commit, machine, median_table};
use super::servers::{Pinning, run_load, start_http};

const HOLD_OUTPUT: &str = "target/bench/compare-hold.json";
const HOLD_CLIENTS: u32 = 200;
const HOLD_BODY_BYTES: u32 = 1 << 20;
const HOLD_SECS: u32 = 3;

/// `--hold`: memory per in-flight request with half its body sent, interleaved per round.
pub(super) fn run_hold(
    options: &Options,
    servers: &[(&'static str, &'static str)],
    pinning: &Pinning,
    release: &Path,
    load: &Path,
    root: &Path,
) -> Result<(), String> {
    const KEYS: [(&str, &str); 4] = [
        ("per_client_kib", "RSS growth per client (KiB)"),
        ("rss_before_kib", "RSS before (KiB)"),
        ("rss_during_kib", "RSS with all clients held (KiB)"),
        ("hwm_during_kib", "VmHWM with all clients held (KiB)"),
    ];
    eprintln!(
        "xtask: bench: --hold, {} rounds of {} (interleaved): {HOLD_CLIENTS} clients, each a {HOLD_BODY_BYTES}-byte \
         body half sent, held {HOLD_SECS} s",
        options.rounds,
        servers.iter().map(|s| s.0).collect::<Vec<_>>().join(" ")
    );
    let mut tally = Tally { runs: BTreeMap::new(), errors: BTreeMap::new(), failures: Vec::new() };
    let (clients, body, secs) =
        (HOLD_CLIENTS.to_string(), HOLD_BODY_BYTES.to_string(), HOLD_SECS.to_string());
    let started = Instant::now();
    for round in 1..=options.rounds {
        eprintln!("xtask: bench: hold round {round}/{}", options.rounds);
        for &(name, binary) in servers {
            let result = start_http(pinning, &release.join(binary), &[]).and_then(|server| {
                // `taskset` execs the server, so the child's pid is the server's.
                let pid = server.child.id().to_string();
                let argv = pinning.command(
                    1,
                    load,
                    &[
                        "hold",
                        "--url",
                        &server.url,
                        "--pid",
                        &pid,
                        "--clients",
                        &clients,
                        "--body-bytes",
                        &body,
                        "--hold-secs",
                        &secs,
                    ],
                );
                let result = run_load(&argv);
                drop(server);
                result
            });
            if let Some(v) = tally.check(name, "hold", result) {
                for (key, _) in KEYS {
                    tally.record(name, key, v[key].as_f64());
                }
                let early = v["answered_early"].as_u64().unwrap_or(0) + v["closed"].as_u64().unwrap_or(0);
                if early > 0 {
                    tally.failures.push(format!(
                        "{name} hold: {early} of {HOLD_CLIENTS} connections answered or closed before the body was complete ({})",
                        v["first_answer"].as_str().unwrap_or("closed")
                    ));
                }
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let names: Vec<&'static str> = servers.iter().map(|s| s.0).collect();
    let keys: Vec<(&str, &str, bool)> = KEYS.iter().map(|&(key, label)| (key, label, true)).collect();
    let metrics = median_table(&keys, &names, &tally, &|_, _| "—".to_owned());
    println!("(ratio < 1: kernel holds less memory per half-sent request; ±: half the range of the rounds)");
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let report = json!({
        "commit": git_commit(root),
        "unix_time": unix,
        "machine": machine(),
        "pinned": pinning.enabled,
        "settings": {"rounds": options.rounds, "clients": HOLD_CLIENTS, "body_bytes": HOLD_BODY_BYTES, "hold_s": HOLD_SECS},
        "servers": names,
        "measuring_s": elapsed,
        "metrics": metrics,
        "errors": tally.errors,
        "failures": tally.failures,
    });
    finish(root, HOLD_OUTPUT, &report, elapsed, &tally.failures)
}
