//! The comparison, the default scenario: HTTP throughput and latency, stdio pipelined throughput
//! and peak RSS, stdio ping-pong latency, per server and round; its metrics, report and table.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::options::Options;
use super::report::{SATURATED_PCT, Tally, finish, git_commit, machine, median, number, spread};
use super::servers::{Pinning, run_load, start_http, stdio_argv, stdio_needs_handshake};

const HTTP_CONNECTIONS: u32 = 32;
const STDIO_REQUESTS: u32 = 20_000;
const LATENCY_REQUESTS: u32 = 2_000;
const OUTPUT: &str = "target/bench/compare.json";

/// Sent first, over stdio, to a server that does not answer a stateless request on its own.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"bench-handshake","method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"bench-load","version":"0.1.0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// One measured quantity.
struct Metric {
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    /// True when more is better (throughput); false for latency and memory.
    higher_is_better: bool,
    /// False for the generator's own numbers: shown, but not compared.
    compared: bool,
}

const fn compared(key: &'static str, label: &'static str, unit: &'static str, higher: bool) -> Metric {
    Metric { key, label, unit, higher_is_better: higher, compared: true }
}

const fn generator(key: &'static str, label: &'static str) -> Metric {
    Metric { key, label, unit: "%", higher_is_better: false, compared: false }
}

const METRICS: [Metric; 10] = [
    compared("http_rps", "HTTP throughput, 32 conn", "req/s", true),
    compared("http_p50_us", "HTTP latency p50", "µs", false),
    compared("http_p99_us", "HTTP latency p99", "µs", false),
    compared("stdio_rps", "stdio pipelined throughput", "req/s", true),
    compared("stdio_peak_rss_kib", "stdio peak RSS (pipelined)", "KiB", false),
    compared("latency_p50_us", "stdio ping-pong p50", "µs", false),
    compared("latency_p99_us", "stdio ping-pong p99", "µs", false),
    compared("latency_mean_us", "stdio ping-pong mean", "µs", false),
    generator("http_load_cpu_pct", "generator CPU, HTTP"),
    generator("stdio_load_cpu_pct", "generator CPU, stdio pipelined"),
];

/// The comparison proper: per round and server (interleaved), HTTP throughput and latency, stdio
/// pipelined throughput and peak RSS, stdio ping-pong latency; the table, and [`OUTPUT`].
pub(super) fn run_compare(
    options: &Options,
    servers: &[(&'static str, &'static str)],
    pinning: &Pinning,
    release: &Path,
    load: &Path,
    root: &Path,
    out_dir: &Path,
) -> Result<(), String> {
    let handshake = out_dir.join("stdio-handshake.jsonl");
    std::fs::write(&handshake, HANDSHAKE).map_err(|e| format!("{}: {e}", handshake.display()))?;

    let mut tally = Tally { runs: BTreeMap::new(), errors: BTreeMap::new(), failures: Vec::new() };
    let mut needs_handshake = BTreeMap::new();
    let mut active = Vec::new();
    for &(name, binary) in servers {
        match stdio_needs_handshake(pinning, load, &release.join(binary), &handshake) {
            Ok(needs) => {
                needs_handshake.insert(name, needs);
                active.push((name, binary));
            }
            Err(e) => {
                *tally.errors.entry(name).or_default() += 1;
                tally.failures.push(format!("{name}: {e}; left out"));
            }
        }
    }
    eprintln!(
        "xtask: bench: {} rounds of {} (interleaved); HTTP {HTTP_CONNECTIONS} connections, {} s warm-up + {} s; \
         stdio {STDIO_REQUESTS} pipelined, {LATENCY_REQUESTS} ping-pong; {}",
        options.rounds,
        active.iter().map(|s| s.0).collect::<Vec<_>>().join(" "),
        options.warmup_s,
        options.duration_s,
        if pinning.enabled {
            "servers on CPU 0, load on CPU 1"
        } else {
            "no pinning (no taskset or one CPU)"
        }
    );
    let started = Instant::now();
    let (warmup, duration) = (options.warmup_s.to_string(), options.duration_s.to_string());
    let (connections, stdio_requests, latency_requests) =
        (HTTP_CONNECTIONS.to_string(), STDIO_REQUESTS.to_string(), LATENCY_REQUESTS.to_string());
    for round in 1..=options.rounds {
        eprintln!("xtask: bench: round {round}/{}", options.rounds);
        // HTTP throughput.
        for &(name, binary) in &active {
            let result = start_http(pinning, &release.join(binary), &[]).and_then(|server| {
                let argv = pinning.command(
                    1,
                    load,
                    &[
                        "http",
                        "--url",
                        &server.url,
                        "--connections",
                        &connections,
                        "--warmup",
                        &warmup,
                        "--duration",
                        &duration,
                    ],
                );
                let result = run_load(&argv);
                drop(server);
                result
            });
            if let Some(v) = tally.check(name, "http", result) {
                tally.record(name, "http_rps", v["rps"].as_f64());
                tally.record(name, "http_p50_us", v["p50_us"].as_f64());
                tally.record(name, "http_p99_us", v["p99_us"].as_f64());
                tally.record(name, "http_load_cpu_pct", v["load_cpu_pct"].as_f64());
            }
        }
        // stdio pipelined throughput and peak RSS.
        for &(name, binary) in &active {
            let argv = stdio_argv(
                pinning,
                load,
                "stdio-throughput",
                &stdio_requests,
                needs_handshake[name],
                &handshake,
                &release.join(binary),
            );
            if let Some(v) = tally.check(name, "stdio-throughput", run_load(&argv)) {
                tally.record(name, "stdio_rps", v["rps"].as_f64());
                tally.record(name, "stdio_peak_rss_kib", v["peak_rss_kib"].as_f64().filter(|&k| k > 0.0));
                tally.record(name, "stdio_load_cpu_pct", v["load_cpu_pct"].as_f64());
            }
        }
        // stdio ping-pong latency.
        for &(name, binary) in &active {
            let argv = stdio_argv(
                pinning,
                load,
                "stdio-latency",
                &latency_requests,
                needs_handshake[name],
                &handshake,
                &release.join(binary),
            );
            if let Some(v) = tally.check(name, "stdio-latency", run_load(&argv)) {
                tally.record(name, "latency_p50_us", v["p50_us"].as_f64());
                tally.record(name, "latency_p99_us", v["p99_us"].as_f64());
                tally.record(name, "latency_mean_us", v["mean_us"].as_f64());
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();

    let names: Vec<&'static str> = active.iter().map(|s| s.0).collect();
    let report = report(options, &names, &tally, pinning, &needs_handshake, elapsed, root);
    print_table(&names, &report);
    for (key, what) in [("http_load_cpu_pct", "HTTP"), ("stdio_load_cpu_pct", "stdio pipelined")] {
        for name in &names {
            if let Some(pct) = report["metrics"][key]["median"][*name].as_f64().filter(|&p| p > SATURATED_PCT)
            {
                eprintln!(
                    "xtask: bench: the generator used {pct:.0}% of its core for {name} ({what}): \
                     {name} may be faster than measured there"
                );
            }
        }
    }
    finish(root, OUTPUT, &report, elapsed, &tally.failures)
}

#[allow(clippy::too_many_arguments)]
fn report(
    options: &Options,
    names: &[&'static str],
    tally: &Tally,
    pinning: &Pinning,
    needs_handshake: &BTreeMap<&'static str, bool>,
    elapsed: f64,
    root: &Path,
) -> Value {
    let mut metrics = serde_json::Map::new();
    for metric in &METRICS {
        let values =
            |name: &str| tally.runs.get(name).and_then(|r| r.get(metric.key)).cloned().unwrap_or_default();
        let mut runs = serde_json::Map::new();
        let mut medians = serde_json::Map::new();
        let mut spreads = serde_json::Map::new();
        for &name in names {
            let v = values(name);
            runs.insert(name.to_owned(), json!(v));
            medians.insert(name.to_owned(), json!(median(&v)));
            spreads.insert(name.to_owned(), json!(spread(&v)));
        }
        let mut ratios = serde_json::Map::new();
        let kernel = median(&values("kernel"));
        for other in ["rmcp", "floor"] {
            if metric.compared && names.contains(&"kernel") && names.contains(&other) {
                let ratio = kernel.zip(median(&values(other))).filter(|(_, o)| *o > 0.0).map(|(k, o)| k / o);
                ratios.insert(format!("kernel/{other}"), json!(ratio));
            }
        }
        metrics.insert(
            metric.key.to_owned(),
            json!({
                "label": metric.label,
                "unit": metric.unit,
                "better": if !metric.compared { "n/a" } else if metric.higher_is_better { "higher" } else { "lower" },
                "median": medians,
                "spread_pct": spreads,
                "ratio": ratios,
                "runs": runs,
            }),
        );
    }
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    json!({
        "commit": git_commit(root),
        "unix_time": unix,
        "machine": machine(),
        "pinned": pinning.enabled,
        "settings": {
            "quick": options.quick,
            "rounds": options.rounds,
            "http_connections": HTTP_CONNECTIONS,
            "http_warmup_s": options.warmup_s,
            "http_duration_s": options.duration_s,
            "stdio_requests": STDIO_REQUESTS,
            "latency_requests": LATENCY_REQUESTS,
        },
        "servers": names,
        "stdio_handshake": needs_handshake,
        "measuring_s": elapsed,
        "metrics": metrics,
        "errors": tally.errors,
        "failures": tally.failures,
    })
}

fn print_table(names: &[&'static str], report: &Value) {
    let mut header = format!("{:<30} {:>6}", "median of the rounds", "unit");
    for name in names {
        header.push_str(&format!(" {:>15}", name));
    }
    let ratio_keys: Vec<String> = ["rmcp", "floor"]
        .iter()
        .filter(|o| names.contains(&"kernel") && names.contains(o))
        .map(|o| format!("kernel/{o}"))
        .collect();
    for key in &ratio_keys {
        header.push_str(&format!(" {key:>12}"));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.chars().count()));
    for metric in &METRICS {
        let m = &report["metrics"][metric.key];
        let mut line = format!("{:<30} {:>6}", metric.label, metric.unit);
        for name in names {
            let cell = match (m["median"][*name].as_f64(), m["spread_pct"][*name].as_f64()) {
                (Some(v), Some(s)) => format!("{} ±{s:.0}%", number(v)),
                (Some(v), None) => number(v),
                _ => "—".to_owned(),
            };
            line.push_str(&format!(" {cell:>15}"));
        }
        for key in &ratio_keys {
            let cell = m["ratio"][key].as_f64().map_or("—".to_owned(), |r| format!("{r:.2}"));
            line.push_str(&format!(" {cell:>12}"));
        }
        println!("{line}");
    }
    println!(
        "(throughput ratio > 1: kernel faster; latency and RSS ratio < 1: kernel lower; ±: half the range of the rounds)"
    );
}
