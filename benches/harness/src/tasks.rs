//! `--tasks N[,N…]`: what the tasks extension costs mcp-kernel, each figure beside a baseline measured
//! in the same round against the same `bench-kernel` binary (its `wait` tool, task mode optional).
//! Only the kernel is measured (rmcp and the floor have no tasks). Per round, each run on a fresh
//! server on CPU 0 with `bench-load` on CPU 1:
//!
//! 1. **The store on the request path.** `bench-load http` on `HTTP_CONNECTIONS` keep-alive
//!    connections for the warm-up and window of `--quick` or not: `tools/call` of `echo` (the
//!    baseline), then `tasks/get` of a `working` task (one per connection, created before the clock
//!    starts); over stdio, `bench-load stdio-latency`, one request at a time, the same two.
//! 2. **Memory, per N.** `bench-load tasks-memory --as tasks`: N live tasks (handlers waiting),
//!    the server's RSS growth per task; `--as calls`: N ordinary calls of the same tool held open,
//!    each on its own connection (what a client without the extension does instead), the growth per
//!    held call; `bench-load idle`: N idle keep-alive connections, the growth per connection (so that
//!    held call − idle connection is the call's own part).
//! 3. **Notifications, per K in `NOTIFY_STREAMS`.** `bench-load tasks-notify --tasks K`: K tasks, each
//!    watched by a `subscriptions/listen` stream of its own (`taskIds`), completing `SPACING_MS` apart;
//!    the time from a handler's return until its stream read the `notifications/tasks`, beside the time
//!    from an ordinary call's return until its caller read the answer (measured first, on the same
//!    server); and the server's CPU per completion beside its CPU per ordinary call.
//!
//! The kernel runs with its connection and listen limits raised to what a run opens plus `SPARE`. Medians of
//! the rounds go to `target/bench/compare-tasks.json`.

use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::drip::open_files_soft_limit;
use super::listen::{Values, one, record, table};
use super::options::Options;
use super::report::{SATURATED_PCT, finish, git_commit, machine, median, number, spread};
use super::servers::{Pinning, run_load};

const TASKS_OUTPUT: &str = "target/bench/compare-tasks.json";
/// Connections beyond the ones a run opens that the server must admit (the probe, the creators).
const SPARE: u32 = 64;
/// The closed loop's connections over HTTP (as `compare`'s).
const HTTP_CONNECTIONS: u32 = 32;
/// Requests one at a time over stdio, after 200 unmeasured ones.
const STDIO_REQUESTS: u32 = 2_000;
/// The listen streams (one per task) of the notification runs.
const NOTIFY_STREAMS: [u32; 2] = [100, 1_000];
/// The time between two completions of a notification run (ms).
const SPACING_MS: u32 = 10;
/// The ordinary calls of a notification run's baseline, one at a time.
const BASELINE_CALLS: u32 = 1_000;
/// The variables through which bench-kernel raises its limits.
const MAX_CONNECTIONS_ENV: &str = "BENCH_KERNEL_MAX_CONNECTIONS";
const MAX_LISTENS_ENV: &str = "BENCH_KERNEL_MAX_LISTENS";

/// The request-path rows: (key, label); each is measured for `echo` (key `…`) and `tasks/get`
/// (key `get_…`), recorded under column 0 and 1.
const PATH_ROWS: [(&str, &str); 8] = [
    ("http_rps", "HTTP throughput, 32 conn (req/s)"),
    ("http_p50_us", "HTTP latency p50 (µs)"),
    ("http_p99_us", "HTTP latency p99 (µs)"),
    ("http_server_cpu_us", "HTTP server CPU per request (µs)"),
    ("http_load_cpu_pct", "generator CPU, HTTP (%)"),
    ("stdio_p50_us", "stdio ping-pong p50 (µs)"),
    ("stdio_p99_us", "stdio ping-pong p99 (µs)"),
    ("stdio_server_cpu_us", "stdio server CPU per request (µs)"),
];

/// The memory rows, per N.
const MEMORY_ROWS: [(&str, &str); 9] = [
    ("task_kib", "RSS growth per live task (KiB)"),
    ("held_call_kib", "RSS growth per held call (KiB)"),
    ("idle_connection_kib", "RSS growth per idle connection (KiB)"),
    ("task_over_held_call", "live task / held call"),
    ("call_own_kib", "held call − idle connection (KiB)"),
    ("task_over_call_own", "live task / (held call − idle conn.)"),
    ("made_per_s", "tasks created per second"),
    ("creation_p50_us", "task creation round trip p50 (µs)"),
    ("creation_p99_us", "task creation round trip p99 (µs)"),
];

/// The notification rows, per K.
const NOTIFY_ROWS: [(&str, &str); 11] = [
    ("notified_p50_us", "completion → notification read, p50 (µs)"),
    ("notified_p99_us", "completion → notification read, p99 (µs)"),
    ("notified_max_us", "completion → notification read, max (µs)"),
    ("answer_p50_us", "return → answer read, p50 (µs)"),
    ("answer_p99_us", "return → answer read, p99 (µs)"),
    ("notified_over_answer_p50", "notification / answer, p50"),
    ("notified_over_answer_p99", "notification / answer, p99"),
    ("server_cpu_us_per_completion", "server CPU per completion (µs)"),
    ("server_cpu_us_per_call", "server CPU per ordinary call (µs)"),
    ("completion_over_call_cpu", "completion / call, server CPU"),
    ("handler_late_p50_us", "handler late on its due time, p50 (µs)"),
];

/// The request path, both methods over HTTP and stdio, recorded under 0 (`echo`) and 1 (`tasks/get`).
fn request_path(
    options: &Options,
    pinning: &Pinning,
    kernel: &Path,
    load: &Path,
    values: &mut Values,
    failures: &mut Vec<String>,
) {
    let (warmup, duration) = (options.warmup_s.to_string(), options.duration_s.to_string());
    let connections = HTTP_CONNECTIONS.to_string();
    for (column, method) in [(0, "call"), (1, "task-get")] {
        let args = [
            "http",
            "--connections",
            &connections,
            "--warmup",
            &warmup,
            "--duration",
            &duration,
            "--method",
            method,
        ];
        if let Some(v) = one(pinning, kernel, load, &[], &args, &format!("http {method}"), failures) {
            record(values, "http_rps", column, v["rps"].as_f64());
            record(values, "http_p50_us", column, v["p50_us"].as_f64());
            record(values, "http_p99_us", column, v["p99_us"].as_f64());
            record(values, "http_load_cpu_pct", column, v["load_cpu_pct"].as_f64());
            record(values, "http_server_cpu_us", column, v["server_cpu_us_per_request"].as_f64());
        }
        let requests = STDIO_REQUESTS.to_string();
        let mut argv =
            pinning.command(1, load, &["stdio-latency", "--requests", &requests, "--method", method, "--"]);
        argv.extend(pinning.command(0, kernel, &["stdio"]));
        match run_load(&argv) {
            Ok(v) if v["errors"].as_u64().unwrap_or(0) == 0 => {
                record(values, "stdio_p50_us", column, v["p50_us"].as_f64());
                record(values, "stdio_p99_us", column, v["p99_us"].as_f64());
                record(values, "stdio_server_cpu_us", column, v["server_cpu_us_per_unit"].as_f64());
            }
            Ok(v) => failures
                .push(format!("stdio {method}: {} errors; first: {}", v["errors"], v["first_errors"][0])),
            Err(e) => failures.push(format!("stdio {method}: {e}")),
        }
    }
}

/// The memory runs at `n`.
fn memory(
    pinning: &Pinning,
    kernel: &Path,
    load: &Path,
    n: u32,
    values: &mut Values,
    failures: &mut Vec<String>,
) {
    let env = vec![(MAX_CONNECTIONS_ENV, (n + SPARE).to_string())];
    let count = n.to_string();
    let what = |kind: &str| format!("{kind}, N={n}");
    let tasks = one(
        pinning,
        kernel,
        load,
        &env,
        &["tasks-memory", "--count", &count, "--as", "tasks"],
        &what("live tasks"),
        failures,
    );
    let task = tasks.as_ref().and_then(|v| v["per_item_kib"].as_f64());
    record(values, "task_kib", n, task);
    for key in ["made_per_s", "creation_p50_us", "creation_p99_us"] {
        record(values, key, n, tasks.as_ref().and_then(|v| v[key].as_f64()));
    }
    let calls = one(
        pinning,
        kernel,
        load,
        &env,
        &["tasks-memory", "--count", &count, "--as", "calls"],
        &what("held calls"),
        failures,
    );
    let held = calls.as_ref().and_then(|v| v["per_item_kib"].as_f64());
    record(values, "held_call_kib", n, held);
    let idle = one(
        pinning,
        kernel,
        load,
        &env,
        &["idle", "--steps", &count, "--hold-secs", "1"],
        &what("idle connections"),
        failures,
    );
    let connection = idle.as_ref().and_then(|v| v["steps"][0]["per_connection_kib"].as_f64());
    record(values, "idle_connection_kib", n, connection);
    if let (Some(task), Some(held)) = (task, held) {
        record(values, "task_over_held_call", n, Some(task / held));
        if let Some(connection) = connection {
            record(values, "call_own_kib", n, Some(held - connection));
            record(values, "task_over_call_own", n, Some(task / (held - connection)));
        }
    }
}

/// The notification run with `k` streams.
fn notify(
    pinning: &Pinning,
    kernel: &Path,
    load: &Path,
    k: u32,
    values: &mut Values,
    failures: &mut Vec<String>,
) {
    let limit = (k + SPARE).to_string();
    let env = vec![(MAX_CONNECTIONS_ENV, limit.clone()), (MAX_LISTENS_ENV, limit)];
    let (streams, spacing, calls) = (k.to_string(), SPACING_MS.to_string(), BASELINE_CALLS.to_string());
    let args = ["tasks-notify", "--tasks", &streams, "--spacing-ms", &spacing, "--calls", &calls];
    let Some(v) = one(pinning, kernel, load, &env, &args, &format!("notifications, K={k}"), failures) else {
        return;
    };
    for (key, _) in NOTIFY_ROWS {
        record(values, key, k, v[key].as_f64());
    }
    let cpu = v["server_cpu_us_per_completion"].as_f64().zip(v["server_cpu_us_per_call"].as_f64());
    record(
        values,
        "completion_over_call_cpu",
        k,
        cpu.filter(|(_, call)| *call > 0.0).map(|(c, call)| c / call),
    );
}

/// Prints the request path's medians (`echo`, `tasks/get`, their ratio) and returns them.
fn path_table(values: &Values) -> serde_json::Map<String, Value> {
    let header = format!(
        "{:<36} {:>16} {:>16} {:>16}",
        "median of the rounds", "tools/call echo", "tasks/get", "tasks/get / echo"
    );
    println!("{header}");
    println!("{}", "-".repeat(header.chars().count()));
    let mut metrics = serde_json::Map::new();
    for (key, label) in PATH_ROWS {
        let column = |c: u32| values.get(key).and_then(|m| m.get(&c)).cloned().unwrap_or_default();
        let (echo, get) = (column(0), column(1));
        let cell = |v: &[f64]| match (median(v), spread(v)) {
            (Some(m), Some(s)) => format!("{} ±{s:.0}%", number(m)),
            _ => "—".to_owned(),
        };
        let ratio = median(&get).zip(median(&echo)).filter(|(_, e)| *e > 0.0).map(|(g, e)| g / e);
        let shown = match ratio {
            Some(r) if key != "http_load_cpu_pct" => format!("{r:.2}"),
            _ => String::new(),
        };
        println!("{label:<36} {:>16} {:>16} {shown:>16}", cell(&echo), cell(&get));
        metrics.insert(
            key.to_owned(),
            json!({"label": label, "median": {"echo": median(&echo), "tasks_get": median(&get)},
                   "ratio": {"tasks_get/echo": ratio}, "runs": {"echo": echo, "tasks_get": get}}),
        );
    }
    metrics
}

/// `--tasks N[,N…]`: the tasks scenario alone, each round: the request path, the memory per N, the
/// notifications per K.
pub(super) fn run_tasks(
    options: &Options,
    counts: &[u32],
    servers: &[(&'static str, &'static str)],
    pinning: &Pinning,
    release: &Path,
    load: &Path,
    root: &Path,
) -> Result<(), String> {
    let Some(&(_, binary)) = servers.iter().find(|(name, _)| *name == "kernel") else {
        return Err("--tasks measures the kernel only: keep it in --only".into());
    };
    let most = counts.iter().chain(NOTIFY_STREAMS.iter()).copied().max().unwrap_or(0);
    let needed = u64::from(most + SPARE);
    if let Some(soft) = open_files_soft_limit().filter(|&soft| soft < needed) {
        return Err(format!(
            "--tasks {most}: the server needs {needed} open files and the limit is {soft}: raise `ulimit -n`"
        ));
    }
    eprintln!(
        "xtask: bench: --tasks, {} rounds (kernel only): tools/call echo against tasks/get (HTTP/1.1 {HTTP_CONNECTIONS} \
         connections, {} s + {} s; stdio {STDIO_REQUESTS} one at a time), memory per live task against a held call and an \
         idle connection at N = {counts:?}, completion notifications at K = {NOTIFY_STREAMS:?} streams, {SPACING_MS} ms apart",
        options.rounds, options.warmup_s, options.duration_s
    );
    let kernel = release.join(binary);
    let (mut path, mut memories, mut notified) = (Values::new(), Values::new(), Values::new());
    let mut failures = Vec::new();
    let started = Instant::now();
    for r in 1..=options.rounds {
        eprintln!("xtask: bench: tasks round {r}/{}: the request path", options.rounds);
        request_path(options, pinning, &kernel, load, &mut path, &mut failures);
        for &n in counts {
            eprintln!("xtask: bench: tasks round {r}/{}: memory, N = {n}", options.rounds);
            memory(pinning, &kernel, load, n, &mut memories, &mut failures);
        }
        for k in NOTIFY_STREAMS {
            eprintln!("xtask: bench: tasks round {r}/{}: notifications, K = {k}", options.rounds);
            notify(pinning, &kernel, load, k, &mut notified, &mut failures);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let path_metrics = path_table(&path);
    println!();
    let memory_metrics = table("N", counts, &MEMORY_ROWS, &memories);
    println!();
    let notify_metrics = table("K", &NOTIFY_STREAMS, &NOTIFY_ROWS, &notified);
    println!(
        "(±: half the range of the rounds; K: listen streams, one per task, each watching only its own)"
    );
    for (column, name) in [(0, "tools/call"), (1, "tasks/get")] {
        let pct = path.get("http_load_cpu_pct").and_then(|m| m.get(&column)).and_then(|v| median(v));
        if let Some(pct) = pct.filter(|p| *p > SATURATED_PCT) {
            eprintln!(
                "xtask: bench: the generator was busy ({pct:.0}%) over HTTP for {name}: the server may be faster"
            );
        }
    }
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let report = json!({
        "commit": git_commit(root),
        "unix_time": unix,
        "machine": machine(),
        "load_average": std::fs::read_to_string("/proc/loadavg").ok().map(|l| l.trim().to_owned()),
        "pinned": pinning.enabled,
        "settings": {
            "rounds": options.rounds,
            "http_connections": HTTP_CONNECTIONS,
            "http_warmup_s": options.warmup_s,
            "http_duration_s": options.duration_s,
            "stdio_requests": STDIO_REQUESTS,
            "memory_counts": counts,
            "notify_streams": NOTIFY_STREAMS,
            "spacing_ms": SPACING_MS,
            "baseline_calls": BASELINE_CALLS,
        },
        "measuring_s": elapsed,
        "metrics": {"request_path": path_metrics, "memory": memory_metrics, "notifications": notify_metrics},
        "failures": failures,
    });
    finish(root, TASKS_OUTPUT, &report, elapsed, &failures)
}
