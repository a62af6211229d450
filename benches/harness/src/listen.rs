//! `--listen N[,N…]`: what open `subscriptions/listen` streams cost mcp-kernel, beside what idle
//! keep-alive connections cost it, and how fast one change reaches every stream. Only `bench-kernel`
//! is measured (rmcp and the floor serve no listen streams); what is compared is the kernel with
//! itself: a stream against an idle connection. Per round and N, each on a fresh server:
//!
//! 1. `bench-load idle --steps N`: N keep-alive connections that made one `tools/call` each; the
//!    server's RSS growth per connection, and its CPU over `BASELINE_HOLD_S` while they idle;
//! 2. `bench-load listen --streams N` at the server's default keep-alive interval: RSS growth per
//!    stream, the server's CPU over `IDLE_S` while the streams idle, then one `announce` call, the
//!    time until each stream read the `tools/list_changed`, and both processes' CPU meanwhile;
//! 3. the same with `BENCH_KERNEL_LISTEN_KEEP_ALIVE_MS=SHORT_KEEP_ALIVE_MS`, so that the keep-alives'
//!    CPU shows within the window.
//!
//! The kernel runs with its connection and listen limits raised to N + `SPARE` (all clients share
//! 127.0.0.1). Medians of the rounds per N go to `target/bench/compare-listen.json`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::drip::open_files_soft_limit;
use super::options::Options;
use super::report::{SATURATED_PCT, finish, git_commit, machine, median, number, spread};
use super::servers::{Pinning, run_load, start_http};

const LISTEN_OUTPUT: &str = "target/bench/compare-listen.json";
/// Connections beyond the N measured that the server must admit (the probe, the announce call).
const SPARE: u32 = 64;
/// The idle window over which the server's CPU is read while the streams idle (s): longer than the
/// default keep-alive interval (15 s), so that every stream is sent about one keep-alive in it.
const IDLE_S: u32 = 20;
/// How long the baseline's idle connections are held, their CPU read meanwhile (s): shorter than
/// `IDLE_S` because the kernel closes a keep-alive connection idle for 15 s, and the first of 10,000
/// connections opened at 3,000 a second made its request 4.3 s before the hold begins.
const BASELINE_HOLD_S: u32 = 5;
/// The short keep-alive interval of the third run (ms).
const SHORT_KEEP_ALIVE_MS: u32 = 1_000;
/// The variables through which bench-kernel raises its limits and sets the keep-alive interval.
const MAX_CONNECTIONS_ENV: &str = "BENCH_KERNEL_MAX_CONNECTIONS";
const MAX_LISTENS_ENV: &str = "BENCH_KERNEL_MAX_LISTENS";
const KEEP_ALIVE_ENV: &str = "BENCH_KERNEL_LISTEN_KEEP_ALIVE_MS";

/// The table's rows: (key, label). Keys without a prefix come from the run at the default
/// keep-alive, `short_` ones from the run at `SHORT_KEEP_ALIVE_MS`, `idle_` ones from the baseline.
const ROWS: [(&str, &str); 19] = [
    ("change_p50_us", "change read, p50 (µs)"),
    ("change_p99_us", "change read, p99 (µs)"),
    ("change_max_us", "change read, max (µs)"),
    ("announce_call_us", "announce call round trip (µs)"),
    ("fanout_server_cpu_us_per_stream", "server CPU per stream, fan-out (µs)"),
    ("fanout_load_cpu_pct", "generator CPU, fan-out (%)"),
    ("per_stream_kib", "RSS growth per listen stream (KiB)"),
    ("idle_per_connection_kib", "RSS growth per idle connection (KiB)"),
    ("stream_over_connection", "stream / idle connection"),
    ("stream_minus_connection_kib", "stream − idle connection (KiB)"),
    ("server_idle_cpu_pct", "server CPU, streams idle, default (%)"),
    ("keepalives", "keep-alives read in the window, default"),
    ("short_server_idle_cpu_pct", "server CPU, streams idle, short (%)"),
    ("short_keepalives", "keep-alives read in the window, short"),
    ("short_cpu_per_keepalive_us", "server CPU per keep-alive, short (µs)"),
    ("idle_hold_cpu_pct", "server CPU, idle connections (%)"),
    ("short_change_p99_us", "change read, p99, short (µs)"),
    ("open_s", "opening all streams (s)"),
    ("load_idle_cpu_pct", "generator CPU, idle window, short (%)"),
];

/// Every round's values: key → N → one value per round.
pub(super) type Values = BTreeMap<&'static str, BTreeMap<u32, Vec<f64>>>;

pub(super) fn record(values: &mut Values, key: &'static str, n: u32, value: Option<f64>) {
    if let Some(v) = value.filter(|v| v.is_finite()) {
        values.entry(key).or_default().entry(n).or_default().push(v);
    }
}

/// One `bench-load` run of `args` against a fresh kernel with `env`; the server's pid is passed as
/// `--pid`. Errors of the run are added to `failures`.
pub(super) fn one(
    pinning: &Pinning,
    kernel: &Path,
    load: &Path,
    env: &[(&str, String)],
    args: &[&str],
    what: &str,
    failures: &mut Vec<String>,
) -> Option<Value> {
    let result = start_http(pinning, kernel, env).and_then(|server| {
        // `taskset` execs the server, so the child's pid is the server's.
        let pid = server.child.id().to_string();
        let mut all = vec![args[0], "--url", &server.url, "--pid", &pid];
        all.extend(&args[1..]);
        let result = run_load(&pinning.command(1, load, &all));
        drop(server);
        result
    });
    match result {
        Ok(v) => {
            let errors = v["errors"].as_u64().unwrap_or(0);
            if errors > 0 {
                failures.push(format!(
                    "{what}: {errors} errors; first: {}",
                    v["first_errors"].get(0).and_then(Value::as_str).unwrap_or("?")
                ));
            }
            Some(v)
        }
        Err(e) => {
            failures.push(format!("{what}: {e}"));
            None
        }
    }
}

/// One round at `n`: the baseline and the two listen runs, recorded into `values`.
fn round(
    pinning: &Pinning,
    kernel: &Path,
    load: &Path,
    n: u32,
    values: &mut Values,
    failures: &mut Vec<String>,
) {
    let limit = (n + SPARE).to_string();
    let env = vec![(MAX_CONNECTIONS_ENV, limit.clone()), (MAX_LISTENS_ENV, limit)];
    let (count, idle, hold) = (n.to_string(), IDLE_S.to_string(), BASELINE_HOLD_S.to_string());
    let baseline = one(
        pinning,
        kernel,
        load,
        &env,
        &["idle", "--steps", &count, "--hold-secs", &hold],
        &format!("idle connections, N={n}"),
        failures,
    );
    let idle_per_connection = baseline.as_ref().and_then(|v| v["steps"][0]["per_connection_kib"].as_f64());
    record(values, "idle_per_connection_kib", n, idle_per_connection);
    record(values, "idle_hold_cpu_pct", n, baseline.as_ref().and_then(|v| v["hold_cpu_pct"].as_f64()));
    let listen = ["listen", "--streams", &count, "--idle-secs", &idle];
    if let Some(v) = one(pinning, kernel, load, &env, &listen, &format!("listen, N={n}"), failures) {
        for key in [
            "change_p50_us",
            "change_p99_us",
            "change_max_us",
            "announce_call_us",
            "fanout_server_cpu_us_per_stream",
            "fanout_load_cpu_pct",
            "per_stream_kib",
            "server_idle_cpu_pct",
            "keepalives",
            "open_s",
        ] {
            record(values, key, n, v[key].as_f64());
        }
        let per_stream = v["per_stream_kib"].as_f64();
        if let (Some(stream), Some(connection)) = (per_stream, idle_per_connection) {
            record(values, "stream_over_connection", n, Some(stream / connection));
            record(values, "stream_minus_connection_kib", n, Some(stream - connection));
        }
    }
    let mut short_env = env.clone();
    short_env.push((KEEP_ALIVE_ENV, SHORT_KEEP_ALIVE_MS.to_string()));
    let what = format!("listen, N={n}, keep-alive {SHORT_KEEP_ALIVE_MS} ms");
    if let Some(v) = one(pinning, kernel, load, &short_env, &listen, &what, failures) {
        record(values, "short_server_idle_cpu_pct", n, v["server_idle_cpu_pct"].as_f64());
        record(values, "short_keepalives", n, v["keepalives"].as_f64());
        record(values, "short_change_p99_us", n, v["change_p99_us"].as_f64());
        record(values, "load_idle_cpu_pct", n, v["load_idle_cpu_pct"].as_f64());
        let cpu_s = v["server_idle_cpu_pct"].as_f64().zip(v["idle_s"].as_f64()).map(|(p, s)| p / 100.0 * s);
        let per_keepalive =
            cpu_s.zip(v["keepalives"].as_f64()).filter(|(_, k)| *k > 0.0).map(|(c, k)| c / k * 1e6);
        record(values, "short_cpu_per_keepalive_us", n, per_keepalive);
    }
}

/// Prints the medians per count (columns, headed `{name} = {count}`) of the `rows` (key, label) and
/// returns them with every round's values.
pub(super) fn table(
    name: &str,
    counts: &[u32],
    rows: &[(&'static str, &str)],
    values: &Values,
) -> serde_json::Map<String, Value> {
    let mut header = format!("{:<42}", "median of the rounds");
    for n in counts {
        header.push_str(&format!(" {:>16}", format!("{name} = {n}")));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.chars().count()));
    let mut metrics = serde_json::Map::new();
    for &(key, label) in rows {
        let mut line = format!("{label:<42}");
        let (mut medians, mut runs) = (serde_json::Map::new(), serde_json::Map::new());
        for n in counts {
            let v = values.get(key).and_then(|m| m.get(n)).cloned().unwrap_or_default();
            let cell = match (median(&v), spread(&v)) {
                (Some(m), Some(s)) if m.abs() < 10.0 => format!("{m:.2} ±{s:.0}%"),
                (Some(m), Some(s)) => format!("{} ±{s:.0}%", number(m)),
                (Some(m), None) => number(m),
                _ => "—".to_owned(),
            };
            line.push_str(&format!(" {cell:>16}"));
            medians.insert(n.to_string(), json!(median(&v)));
            runs.insert(n.to_string(), json!(v));
        }
        println!("{line}");
        metrics.insert(key.to_owned(), json!({"label": label, "median": medians, "runs": runs}));
    }
    metrics
}

/// `--listen N[,N…]`: the listen scenario alone, interleaved per round over the counts.
pub(super) fn run_listen(
    options: &Options,
    counts: &[u32],
    servers: &[(&'static str, &'static str)],
    pinning: &Pinning,
    release: &Path,
    load: &Path,
    root: &Path,
) -> Result<(), String> {
    let Some(&(_, binary)) = servers.iter().find(|(name, _)| *name == "kernel") else {
        return Err("--listen measures the kernel only: keep it in --only".into());
    };
    let most = counts.iter().copied().max().unwrap_or(0);
    let needed = u64::from(most + SPARE);
    if let Some(soft) = open_files_soft_limit().filter(|&soft| soft < needed) {
        return Err(format!(
            "--listen {most}: the server needs {needed} open files and the limit is {soft}: raise `ulimit -n`"
        ));
    }
    eprintln!(
        "xtask: bench: --listen, {} rounds of N = {counts:?} (kernel only, HTTP/1.1, one stream per connection): idle \
         connections held {BASELINE_HOLD_S} s, then listen streams idle {IDLE_S} s at the default keep-alive and at \
         {SHORT_KEEP_ALIVE_MS} ms, one announce each; limits raised to N + {SPARE}",
        options.rounds
    );
    let kernel = release.join(binary);
    let mut values = Values::new();
    let mut failures = Vec::new();
    let started = Instant::now();
    for r in 1..=options.rounds {
        for &n in counts {
            eprintln!("xtask: bench: listen round {r}/{}, N = {n}", options.rounds);
            round(pinning, &kernel, load, n, &mut values, &mut failures);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let metrics = table("N", counts, &ROWS, &values);
    println!(
        "(default: the kernel's default keep-alive interval; short: {SHORT_KEEP_ALIVE_MS} ms; CPU in % of one core over \
         {IDLE_S} s, idle connections over {BASELINE_HOLD_S} s; ±: half the range of the rounds)"
    );
    let generator = metrics.get("load_idle_cpu_pct").and_then(|m| m["median"].as_object().cloned());
    for (n, pct) in generator.into_iter().flatten() {
        if let Some(pct) = pct.as_f64().filter(|p| *p > SATURATED_PCT) {
            eprintln!(
                "xtask: bench: the generator was busy ({pct:.0}%) reading N = {n} streams' keep-alives"
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
            "streams": counts,
            "protocol": "http1, one stream per connection",
            "idle_s": IDLE_S,
            "baseline_hold_s": BASELINE_HOLD_S,
            "short_keep_alive_ms": SHORT_KEEP_ALIVE_MS,
            "kernel_limits": counts.iter().map(|n| n + SPARE).collect::<Vec<_>>(),
        },
        "measuring_s": elapsed,
        "metrics": metrics,
        "failures": failures,
    });
    finish(root, LISTEN_OUTPUT, &report, elapsed, &failures)
}
