//! The comparison, the default scenario: the server's own CPU per request over HTTP, stdio
//! pipelined and stdio ping-pong (the headline, with the large payloads' CPU and page faults per
//! call), HTTP throughput and latency, stdio pipelined throughput and peak RSS, stdio ping-pong latency, per
//! server and round; its metrics, report, table and headline.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::PAYLOAD_MALLOC;
use super::headline::{PAYLOAD_TARGET, REQUEST_TARGET, headline};
use super::options::Options;
use super::report::{SATURATED_PCT, Tally, finish, git_commit, machine, median, number, spread};
use super::servers::{Pinning, run_load, run_load_env, start_http, stdio_argv, stdio_needs_handshake};

const HTTP_CONNECTIONS: u32 = 32;
/// The paced HTTP row's rate, as a share of the lower of the kernel's and the floor's saturated rates
/// in the same round: every server then answers the same requests in the same time, and its CPU per
/// request no longer depends on which side of a closed loop is the bottleneck. Half, so that neither
/// server queues: at 0.7 the generator's millisecond bursts already queue the slower one, and its p99
/// measures the queue.
const PACED_SHARE: f64 = 0.5;
/// Pipelined stdio requests, and the same with `--quick`. A run must outlast the session's start (the
/// first growth of its buffers, the first of each path): at 20,000 requests, about 0.1 s of work, the
/// kernel read 1.2–1.6 times the floor's CPU per request where 100,000 read 1.1.
const STDIO_REQUESTS: (u32, u32) = (100_000, 20_000);
/// Ping-pong stdio calls: enough that the rounds agree (at 2,000 the floor's figure moved ±23 %).
const LATENCY_REQUESTS: u32 = 10_000;
const OUTPUT: &str = "target/bench/compare.json";

/// Sent first, over stdio, to a server that does not answer a stateless request on its own.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"bench-handshake","method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"bench-load","version":"0.1.0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// One large payload of the comparison: an `echo` of a message this large, over stdio one call at
/// a time and over HTTP/1.1 on one connection (the sizes of the `payload` curve).
struct Payload {
    /// The message's size in bytes.
    bytes: usize,
    /// The metric of its server CPU per stdio call.
    stdio_key: &'static str,
    /// The metric of its server CPU per HTTP call.
    http_key: &'static str,
    /// The metrics of the server's minor page faults per call, over stdio and over HTTP.
    faults_keys: (&'static str, &'static str),
    /// Measured and warm-up calls over stdio (halved with `--quick`).
    stdio_calls: (u32, u32),
}

/// The large payloads: 64 KiB, and 1 MiB − 1 KiB (the most the kernel's default 1 MiB caps on a
/// stdio line and an HTTP body take, with the rest of the request).
const PAYLOADS: [Payload; 2] = [
    Payload {
        bytes: 64 << 10,
        stdio_key: "stdio_64kib_cpu_us",
        http_key: "http_64kib_cpu_us",
        faults_keys: ("stdio_64kib_minflt", "http_64kib_minflt"),
        stdio_calls: (200, 20),
    },
    Payload {
        bytes: (1 << 20) - (1 << 10),
        stdio_key: "stdio_1mib_cpu_us",
        http_key: "http_1mib_cpu_us",
        faults_keys: ("stdio_1mib_minflt", "http_1mib_minflt"),
        stdio_calls: (100, 10),
    },
];

/// The large payloads' HTTP warm-up and measured window, in seconds, and the same with `--quick`. Two
/// seconds hold about 380 calls of 1 MiB and a few thousand of 64 KiB (0.75 s held about 140 of
/// 1 MiB); the 1 MiB row still moves with the allocator's page faults, which its own row shows.
const PAYLOAD_HTTP_WINDOW: (f64, f64) = (0.5, 2.0);
const PAYLOAD_HTTP_WINDOW_QUICK: (f64, f64) = (0.1, 0.3);

/// The large payloads' HTTP warm-up and window, in seconds.
fn payload_window(quick: bool) -> (f64, f64) {
    if quick { PAYLOAD_HTTP_WINDOW_QUICK } else { PAYLOAD_HTTP_WINDOW }
}

/// What the large payloads' servers get added to their environment: glibc's malloc thresholds fixed
/// ([`PAYLOAD_MALLOC`]), unless `--payload-malloc-default` asked for glibc's defaults.
fn payload_env(options: &Options) -> Vec<(&'static str, String)> {
    if options.payload_malloc_default {
        Vec::new()
    } else {
        vec![(PAYLOAD_MALLOC.0, PAYLOAD_MALLOC.1.to_owned())]
    }
}

/// Pipelined stdio requests of one run.
fn stdio_requests(quick: bool) -> u32 {
    if quick { STDIO_REQUESTS.1 } else { STDIO_REQUESTS.0 }
}

/// Measured and warm-up stdio calls of `payload`.
fn payload_calls(payload: &Payload, quick: bool) -> (u32, u32) {
    let (n, warmup) = payload.stdio_calls;
    if quick { (n / 2, warmup / 2) } else { (n, warmup) }
}

/// One measured quantity.
struct Metric {
    key: &'static str,
    label: &'static str,
    unit: &'static str,
    /// True when more is better (throughput); false for latency, memory and CPU.
    higher_is_better: bool,
    /// False for the generator's own numbers: shown, but not compared.
    compared: bool,
}

const fn compared(key: &'static str, label: &'static str, unit: &'static str, higher: bool) -> Metric {
    Metric { key, label, unit, higher_is_better: higher, compared: true }
}

/// The server's own CPU time per request, in µs: lower is better.
const fn cpu(key: &'static str, label: &'static str) -> Metric {
    compared(key, label, "µs", false)
}

/// The server's minor page faults per call (the operating system mapping it a fresh page): lower is
/// better. At a megabyte a call they can cost more than the call's own work, and they depend on the
/// allocator's state as much as on the server's code ("Fifth round" in `docs/performance.md`).
const fn faults(key: &'static str, label: &'static str) -> Metric {
    compared(key, label, "faults", false)
}

const fn generator(key: &'static str, label: &'static str) -> Metric {
    Metric { key, label, unit: "%", higher_is_better: false, compared: false }
}

/// The metrics in the order of the table: the server's CPU per request first.
const METRICS: [Metric; 24] = [
    cpu("http_cpu_us", "server CPU/req, HTTP 32 conn"),
    cpu("http_paced_cpu_us", "server CPU/req, HTTP paced"),
    cpu("stdio_cpu_us", "server CPU/req, stdio pipelined"),
    cpu("latency_cpu_us", "server CPU/req, stdio ping-pong"),
    cpu("stdio_64kib_cpu_us", "server CPU/call, 64 KiB, stdio"),
    cpu("http_64kib_cpu_us", "server CPU/call, 64 KiB, HTTP"),
    cpu("stdio_1mib_cpu_us", "server CPU/call, 1 MiB, stdio"),
    cpu("http_1mib_cpu_us", "server CPU/call, 1 MiB, HTTP"),
    faults("stdio_64kib_minflt", "page faults/call, 64 KiB, stdio"),
    faults("http_64kib_minflt", "page faults/call, 64 KiB, HTTP"),
    faults("stdio_1mib_minflt", "page faults/call, 1 MiB, stdio"),
    faults("http_1mib_minflt", "page faults/call, 1 MiB, HTTP"),
    compared("http_rps", "HTTP throughput, 32 conn", "req/s", true),
    compared("http_p50_us", "HTTP latency p50", "µs", false),
    compared("http_p99_us", "HTTP latency p99", "µs", false),
    compared("http_paced_rps", "HTTP paced rate (all alike)", "req/s", true),
    compared("http_paced_p99_us", "HTTP paced latency p99", "µs", false),
    compared("stdio_rps", "stdio pipelined throughput", "req/s", true),
    compared("stdio_peak_rss_kib", "stdio peak RSS (pipelined)", "KiB", false),
    compared("latency_p50_us", "stdio ping-pong p50", "µs", false),
    compared("latency_p99_us", "stdio ping-pong p99", "µs", false),
    compared("latency_mean_us", "stdio ping-pong mean", "µs", false),
    generator("http_load_cpu_pct", "generator CPU, HTTP"),
    generator("stdio_load_cpu_pct", "generator CPU, stdio pipelined"),
];

/// What every run of a comparison needs.
struct Bench<'a> {
    pinning: &'a Pinning,
    release: &'a Path,
    load: &'a Path,
    handshake: &'a Path,
}

impl Bench<'_> {
    /// `bench-load http ARGS… --url URL --pid PID` against a fresh HTTP server of `binary`, started
    /// with `env` added to its environment.
    fn http(&self, binary: &str, args: &[&str], env: &[(&str, String)]) -> Result<Value, String> {
        start_http(self.pinning, &self.release.join(binary), env).and_then(|server| {
            let pid = server.child.id().to_string();
            let mut all = vec!["http", "--url", &server.url, "--pid", &pid];
            all.extend_from_slice(args);
            let result = run_load(&self.pinning.command(1, self.load, &all));
            drop(server);
            result
        })
    }

    /// `bench-load ARGS… -- <binary> stdio` (with the handshake first when the server needs it), with
    /// `env` added to the environment of both.
    fn stdio(
        &self,
        binary: &str,
        handshake: bool,
        args: &[&str],
        env: &[(&str, String)],
    ) -> Result<Value, String> {
        run_load_env(
            &stdio_argv(self.pinning, self.load, args, handshake, self.handshake, &self.release.join(binary)),
            env,
        )
    }
}

/// The comparison proper: per round and server (interleaved), HTTP throughput, latency and server
/// CPU, stdio pipelined throughput, peak RSS and server CPU, stdio ping-pong latency and server
/// CPU, and the large payloads' server CPU and page faults per call; the table, the headline, and
/// [`OUTPUT`].
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
    let bench = Bench { pinning, release, load, handshake: &handshake };

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
    let (payload_warmup_s, payload_duration_s) = payload_window(options.quick);
    eprintln!(
        "xtask: bench: {} rounds of {} (interleaved); HTTP {HTTP_CONNECTIONS} connections, {} s warm-up + {} s; \
         stdio {} pipelined, {LATENCY_REQUESTS} ping-pong; {}; {}",
        options.rounds,
        active.iter().map(|s| s.0).collect::<Vec<_>>().join(" "),
        options.warmup_s,
        options.duration_s,
        stdio_requests(options.quick),
        if options.payload {
            format!(
                "large payloads (64 KiB: {} calls over stdio; 1 MiB − 1 KiB: {}; HTTP 1 connection, {} s + {} s; {})",
                payload_calls(&PAYLOADS[0], options.quick).0,
                payload_calls(&PAYLOADS[1], options.quick).0,
                payload_warmup_s,
                payload_duration_s,
                payload_env(options)
                    .iter()
                    .map(|(name, value)| format!("{name}={value}"))
                    .next()
                    .unwrap_or_else(|| "glibc malloc's default thresholds".to_owned())
            )
        } else {
            "no large payloads".to_owned()
        },
        if pinning.enabled {
            "servers on CPU 0, load on CPU 1"
        } else {
            "no pinning (no taskset or one CPU)"
        }
    );
    let started = Instant::now();
    let (warmup, duration) = (options.warmup_s.to_string(), options.duration_s.to_string());
    let (payload_warmup, payload_duration) = (payload_warmup_s.to_string(), payload_duration_s.to_string());
    let (connections, stdio_requests, latency_requests) = (
        HTTP_CONNECTIONS.to_string(),
        stdio_requests(options.quick).to_string(),
        LATENCY_REQUESTS.to_string(),
    );
    let malloc = payload_env(options);
    for round in 1..=options.rounds {
        eprintln!("xtask: bench: round {round}/{}", options.rounds);
        // HTTP throughput, latency and the server's CPU over the window.
        let closed_loop = [
            "--connections",
            connections.as_str(),
            "--warmup",
            warmup.as_str(),
            "--duration",
            duration.as_str(),
        ];
        for &(name, binary) in &active {
            if let Some(v) = tally.check(name, "http", bench.http(binary, &closed_loop, &[])) {
                tally.record(name, "http_rps", v["rps"].as_f64());
                tally.record(name, "http_p50_us", v["p50_us"].as_f64());
                tally.record(name, "http_p99_us", v["p99_us"].as_f64());
                tally.record(name, "http_load_cpu_pct", v["load_cpu_pct"].as_f64());
                tally.record(name, "http_cpu_us", v["server_cpu_us_per_request"].as_f64());
            }
        }
        // The same load at one rate for every server, below what the slower of the kernel and the
        // floor answered just now (or of whichever servers ran).
        if let Some(rate) = paced_rate(&tally, &active) {
            let rate = format!("{rate:.0}");
            let paced = [&closed_loop[..], &["--rate", rate.as_str()]].concat();
            for &(name, binary) in &active {
                if let Some(v) = tally.check(name, "http paced", bench.http(binary, &paced, &[])) {
                    // A server slower than the rate (rmcp, usually) has no figure at it: said, not failed.
                    if v["kept_rate"] == json!(false) {
                        eprintln!(
                            "xtask: bench: {name} paced at {rate} req/s answered {:.0} a second: it fell \
                             behind, so it has no paced figures this round",
                            v["rps"].as_f64().unwrap_or(0.0)
                        );
                        continue;
                    }
                    tally.record(name, "http_paced_rps", v["rps"].as_f64());
                    tally.record(name, "http_paced_p99_us", v["p99_us"].as_f64());
                    tally.record(name, "http_paced_cpu_us", v["server_cpu_us_per_request"].as_f64());
                }
            }
        }
        // stdio pipelined throughput, peak RSS and the server's CPU from the first write to the last answer.
        for &(name, binary) in &active {
            let args = ["stdio-throughput", "--requests", stdio_requests.as_str()];
            if let Some(v) =
                tally.check(name, "stdio-throughput", bench.stdio(binary, needs_handshake[name], &args, &[]))
            {
                tally.record(name, "stdio_rps", v["rps"].as_f64());
                tally.record(name, "stdio_peak_rss_kib", v["peak_rss_kib"].as_f64().filter(|&k| k > 0.0));
                tally.record(name, "stdio_load_cpu_pct", v["load_cpu_pct"].as_f64());
                tally.record(name, "stdio_cpu_us", v["server_cpu_us_per_request"].as_f64());
            }
        }
        // stdio ping-pong latency and the server's CPU over the measured calls.
        for &(name, binary) in &active {
            let args = ["stdio-latency", "--requests", latency_requests.as_str()];
            if let Some(v) =
                tally.check(name, "stdio-latency", bench.stdio(binary, needs_handshake[name], &args, &[]))
            {
                tally.record(name, "latency_p50_us", v["p50_us"].as_f64());
                tally.record(name, "latency_p99_us", v["p99_us"].as_f64());
                tally.record(name, "latency_mean_us", v["mean_us"].as_f64());
                tally.record(name, "latency_cpu_us", v["server_cpu_us_per_unit"].as_f64());
            }
        }
        // The large payloads: the server's CPU per call, over stdio one at a time and over HTTP/1.1.
        for payload in PAYLOADS.iter().filter(|_| options.payload) {
            let bytes = payload.bytes.to_string();
            let (n, w) = payload_calls(payload, options.quick);
            let (n, w) = (n.to_string(), w.to_string());
            for &(name, binary) in &active {
                let args = [
                    "stdio-latency",
                    "--requests",
                    n.as_str(),
                    "--warmup",
                    w.as_str(),
                    "--method",
                    "call",
                    "--message-bytes",
                    bytes.as_str(),
                    "--timeout",
                    "120",
                ];
                let what = format!("stdio-latency, {bytes}-byte messages");
                if let Some(v) =
                    tally.check(name, &what, bench.stdio(binary, needs_handshake[name], &args, &malloc))
                {
                    tally.record(name, payload.stdio_key, v["server_cpu_us_per_unit"].as_f64());
                    tally.record(name, payload.faults_keys.0, v["server_minflt_per_unit"].as_f64());
                }
            }
            for &(name, binary) in &active {
                let args = [
                    "--connections",
                    "1",
                    "--message-bytes",
                    bytes.as_str(),
                    "--warmup",
                    payload_warmup.as_str(),
                    "--duration",
                    payload_duration.as_str(),
                ];
                let what = format!("http, {bytes}-byte messages");
                if let Some(v) = tally.check(name, &what, bench.http(binary, &args, &malloc)) {
                    tally.record(name, payload.http_key, v["server_cpu_us_per_request"].as_f64());
                    tally.record(name, payload.faults_keys.1, v["server_minflt_per_request"].as_f64());
                }
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();

    let names: Vec<&'static str> = active.iter().map(|s| s.0).collect();
    let mut report = report(options, &names, &tally, pinning, &needs_handshake, elapsed, root);
    print_table(&names, &report);
    let (lines, json) = headline(&report["metrics"]);
    if !lines.is_empty() {
        println!(
            "\nThe server's own CPU per request (user + system, every thread, over the measured window), \
             kernel against floor; target kernel/floor ≤ {REQUEST_TARGET}, ≤ {PAYLOAD_TARGET} for the large payloads:"
        );
        for line in &lines {
            println!("  {line}");
        }
    }
    report["headline"] = json;
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

/// The paced row's rate for this round: [`PACED_SHARE`] of the lower of the kernel's and the floor's
/// saturated HTTP rates in it (of every server's, when neither ran); `None` before any was measured.
fn paced_rate(tally: &Tally, active: &[(&'static str, &'static str)]) -> Option<f64> {
    let last =
        |name: &str| tally.runs.get(name).and_then(|r| r.get("http_rps")).and_then(|v| v.last().copied());
    let pair: Vec<f64> = ["kernel", "floor"].into_iter().filter_map(last).collect();
    let rates = if pair.is_empty() { active.iter().filter_map(|s| last(s.0)).collect() } else { pair };
    rates.into_iter().reduce(f64::min).filter(|r| *r >= 1.0).map(|r| r * PACED_SHARE)
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
            "http_paced_share": PACED_SHARE,
            "http_warmup_s": options.warmup_s,
            "http_duration_s": options.duration_s,
            "stdio_requests": stdio_requests(options.quick),
            "latency_requests": LATENCY_REQUESTS,
            "payload": options.payload.then(|| json!({
                "message_bytes": PAYLOADS.iter().map(|p| p.bytes).collect::<Vec<_>>(),
                "stdio_calls": PAYLOADS
                    .iter()
                    .map(|p| payload_calls(p, options.quick))
                    .map(|(n, warmup)| json!({"measured": n, "warmup": warmup}))
                    .collect::<Vec<_>>(),
                "http_connections": 1,
                "http_warmup_s": payload_window(options.quick).0,
                "http_duration_s": payload_window(options.quick).1,
                "server_env": payload_env(options)
                    .into_iter()
                    .map(|(name, value)| (name.to_owned(), Value::from(value)))
                    .collect::<serde_json::Map<_, _>>(),
            })),
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
    let mut header = format!("{:<32} {:>6}", "median of the rounds", "unit");
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
        // A row no server has a value for (the large payloads with `--no-payload`) is left out.
        if names.iter().all(|name| m["median"][*name].is_null()) {
            continue;
        }
        let mut line = format!("{:<32} {:>6}", metric.label, metric.unit);
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
        "(server CPU/req: the server's own user + system time per answered request, lower is better; 1 MiB: a \
         1 MiB − 1 KiB message; throughput ratio > 1: kernel faster; CPU, latency, RSS and page-fault ratio < 1: kernel lower \
         (— when the other server's median is 0); ±: half the range of the rounds)"
    );
}

#[cfg(test)]
mod tests {
    use super::super::headline::HEADLINES;
    use super::*;

    #[test]
    fn the_servers_cpu_per_request_comes_first_and_every_headline_is_a_metric() {
        let cpu = METRICS.iter().take_while(|m| m.key.ends_with("_cpu_us")).count();
        assert_eq!(cpu, HEADLINES.len());
        assert!(METRICS[..cpu].iter().all(|m| m.unit == "µs" && !m.higher_is_better && m.compared));
        for h in &HEADLINES {
            assert!(METRICS[..cpu].iter().any(|m| m.key == h.key), "{} is no CPU metric", h.key);
        }
        for p in &PAYLOADS {
            assert!(
                HEADLINES.iter().any(|h| h.key == p.stdio_key)
                    && HEADLINES.iter().any(|h| h.key == p.http_key)
            );
            let (stdio, http) = p.faults_keys;
            assert!(
                [stdio, http].iter().all(|k| METRICS.iter().any(|m| m.key == *k && m.unit == "faults")),
                "every payload row has its page faults beside it"
            );
        }
        assert!(METRICS.iter().all(|m| m.label.chars().count() <= 32), "labels fit their column");
    }

    #[test]
    fn the_paced_rate_is_a_share_of_the_slower_of_kernel_and_floor_this_round() {
        let mut tally = Tally { runs: BTreeMap::new(), errors: BTreeMap::new(), failures: Vec::new() };
        let active = [("kernel", "bench-kernel"), ("rmcp", "bench-rmcp"), ("floor", "bench-floor")];
        assert_eq!(paced_rate(&tally, &active), None);
        tally.record("rmcp", "http_rps", Some(10_000.0));
        assert_eq!(paced_rate(&tally, &active), Some(10_000.0 * PACED_SHARE), "neither ran: every server's");
        for (name, rps) in [("kernel", 40_000.0), ("floor", 90_000.0), ("kernel", 50_000.0)] {
            tally.record(name, "http_rps", Some(rps));
        }
        // The latest round's kernel (50,000) against the floor's 90,000; rmcp's slower rate is not used.
        assert_eq!(paced_rate(&tally, &active), Some(50_000.0 * PACED_SHARE));
    }

    #[test]
    fn quick_halves_the_payload_calls_and_shortens_their_window() {
        assert_eq!(payload_calls(&PAYLOADS[0], false), (200, 20));
        assert_eq!(payload_calls(&PAYLOADS[1], true), (50, 5));
        let (full, quick) = (payload_window(false), payload_window(true));
        assert!(quick.0 < full.0 && quick.1 < full.1);
    }
}
