//! `--drip N`: legitimate latency while N slow-body connections are open, per server and round,
//! and the limit on open files that so many connections need.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::options::Options;
use super::report::{SATURATED_PCT, Tally, finish, git_commit, machine, median, median_table};
use super::servers::{Pinning, run_load, start_http};

const DRIP_OUTPUT: &str = "target/bench/compare-drip.json";

/// Legitimate requests per drip run (and as many in its baseline), sent this far apart.
const DRIP_REQUESTS: u32 = 200;
const DRIP_INTERVAL_MS: u32 = 20;
/// How long a drip is watched after its head: mcp-kernel's body deadline (15 s) and a margin.
const DRIP_WAIT_S: u32 = 20;
/// Connections beyond the drips that a server must admit (the probe, the legitimate ones) and the
/// open files it needs beyond them.
const DRIP_SPARE: u32 = 64;
/// The environment variable through which bench-kernel raises its connection limits.
const KERNEL_MAX_CONNECTIONS_ENV: &str = "BENCH_KERNEL_MAX_CONNECTIONS";
/// The reference figure: a legitimate request's latency with 12,000 drips open stays below this.
const DRIP_TARGET_MS: f64 = 10.0;

/// `--drip N`: legitimate latency while N slow-body connections are open, interleaved per round.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_drip(
    options: &Options,
    drips: u32,
    servers: &[(&'static str, &'static str)],
    pinning: &Pinning,
    release: &Path,
    load: &Path,
    root: &Path,
) -> Result<(), String> {
    // (bench-load key, label, with ratios).
    const KEYS: [(&str, &str, bool); 19] = [
        ("p50_us", "legit p50, drips open (µs)", true),
        ("p99_us", "legit p99, drips open (µs)", true),
        ("max_us", "legit max, drips open (µs)", false),
        ("ok", "legit requests answered", false),
        ("base_p50_us", "legit p50, no drips (µs)", true),
        ("base_p99_us", "legit p99, no drips (µs)", true),
        ("open_at_start", "drips open, phase start", false),
        ("open_at_end", "drips open, phase end", false),
        ("answered_408", "drips answered 408", false),
        ("closed", "drips closed unanswered", false),
        ("held", "drips held to the end", false),
        ("ended_min_s", "drip ended, min (s after head)", false),
        ("ended_median_s", "drip ended, median (s)", false),
        ("ended_max_s", "drip ended, max (s)", false),
        ("rss_during_kib", "server RSS, drips open (KiB)", false),
        ("per_drip_kib", "server RSS growth per drip (KiB)", true),
        ("open_s", "opening all drips (s)", false),
        ("max_write_lag_ms", "generator write lag, max (ms)", false),
        ("phase_cpu_pct", "generator CPU, drip phase (%)", false),
    ];
    // The server inherits this process's limit on open files.
    let needed = u64::from(drips + DRIP_SPARE);
    if let Some(soft) = open_files_soft_limit().filter(|&soft| soft < needed) {
        return Err(format!(
            "--drip {drips}: each server needs {needed} open files and the limit is {soft}: raise `ulimit -n`"
        ));
    }
    let kernel_limit = (drips + DRIP_SPARE).to_string();
    eprintln!(
        "xtask: bench: --drip, {} rounds of {} (interleaved): {drips} drip connections (head, then a body byte a \
         second), {DRIP_REQUESTS} legitimate requests {DRIP_INTERVAL_MS} ms apart while they are open, each drip \
         watched {DRIP_WAIT_S} s; {KERNEL_MAX_CONNECTIONS_ENV}={kernel_limit}",
        options.rounds,
        servers.iter().map(|s| s.0).collect::<Vec<_>>().join(" ")
    );
    let mut tally = Tally { runs: BTreeMap::new(), errors: BTreeMap::new(), failures: Vec::new() };
    let env = [(KERNEL_MAX_CONNECTIONS_ENV, kernel_limit.clone())];
    let (count, requests, interval, wait) =
        (drips.to_string(), DRIP_REQUESTS.to_string(), DRIP_INTERVAL_MS.to_string(), DRIP_WAIT_S.to_string());
    let started = Instant::now();
    for round in 1..=options.rounds {
        eprintln!("xtask: bench: drip round {round}/{}", options.rounds);
        for &(name, binary) in servers {
            let result = start_http(pinning, &release.join(binary), &env).and_then(|server| {
                // `taskset` execs the server, so the child's pid is the server's.
                let pid = server.child.id().to_string();
                let argv = pinning.command(
                    1,
                    load,
                    &[
                        "drip",
                        "--url",
                        &server.url,
                        "--drips",
                        &count,
                        "--requests",
                        &requests,
                        "--interval-ms",
                        &interval,
                        "--wait-secs",
                        &wait,
                        "--pid",
                        &pid,
                    ],
                );
                let result = run_load(&argv);
                drop(server);
                result
            });
            if let Some(v) = tally.check(name, "drip", result) {
                for (key, _, _) in KEYS {
                    tally.record(name, key, v[key].as_f64());
                }
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let names: Vec<&'static str> = servers.iter().map(|s| s.0).collect();
    let held = |name: &str| {
        tally.runs.get(name).and_then(|r| r.get("held")).and_then(|v| median(v)).is_some_and(|h| h > 0.0)
    };
    let metrics = median_table(&KEYS, &names, &tally, &|name, key| {
        if key.starts_with("ended_") && held(name) { "held".to_owned() } else { "—".to_owned() }
    });
    println!(
        "(latency ratio < 1: kernel lower; \"held\": no drip was answered or closed within {DRIP_WAIT_S} s of its head; \
         ±: half the range of the rounds)"
    );
    let kernel_p99_ms =
        metrics.get("p99_us").and_then(|m| m["median"]["kernel"].as_f64()).map(|us| us / 1000.0);
    if let Some(p99) = kernel_p99_ms {
        println!(
            "target: legitimate latency < {DRIP_TARGET_MS} ms with 12,000 drips open; kernel p99 {p99:.2} ms with {drips} \
             drips: {}",
            if p99 < DRIP_TARGET_MS { "met" } else { "NOT met" }
        );
    }
    for name in &names {
        let m = |key: &str| metrics.get(key).and_then(|m| m["median"][*name].as_f64());
        if m("phase_cpu_pct").is_some_and(|p| p > SATURATED_PCT)
            || m("max_write_lag_ms").is_some_and(|l| l > 500.0)
        {
            eprintln!(
                "xtask: bench: the generator was busy during {name}'s drip phase (CPU {:.0}%, write lag up to {:.0} ms): \
                 the drips were slower than one byte a second",
                m("phase_cpu_pct").unwrap_or(0.0),
                m("max_write_lag_ms").unwrap_or(0.0)
            );
        }
    }
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let report = json!({
        "commit": git_commit(root),
        "unix_time": unix,
        "machine": machine(),
        "pinned": pinning.enabled,
        "settings": {
            "rounds": options.rounds,
            "drips": drips,
            "requests": DRIP_REQUESTS,
            "interval_ms": DRIP_INTERVAL_MS,
            "wait_s": DRIP_WAIT_S,
            "kernel_max_connections": drips + DRIP_SPARE,
        },
        "target": {"p99_below_ms": DRIP_TARGET_MS, "with_drips": 12_000, "kernel_p99_ms": kernel_p99_ms},
        "servers": names,
        "measuring_s": elapsed,
        "metrics": metrics,
        "errors": tally.errors,
        "failures": tally.failures,
    });
    finish(root, DRIP_OUTPUT, &report, elapsed, &tally.failures)
}

/// The soft limit on open files of this process (inherited by the servers), from `/proc/self/limits`.
pub(super) fn open_files_soft_limit() -> Option<u64> {
    soft_limit_of(&std::fs::read_to_string("/proc/self/limits").ok()?, "Max open files")
}

/// The soft limit of the row `name` in the text of `/proc/PID/limits`; `None` when unlimited or absent.
pub(super) fn soft_limit_of(limits: &str, name: &str) -> Option<u64> {
    limits
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}
