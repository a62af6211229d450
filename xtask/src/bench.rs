//! `cargo xtask bench compare [--quick] [--rounds N] [--only kernel,floor] [--no-build]`: the same
//! echo tool served by mcp-kernel (`bench-kernel`), by rmcp (`bench-rmcp`) and by the bare minimum of
//! JSON work (`bench-floor`), measured by `bench-load`, all from the separate workspace
//! `benches/compare/` (so that ordinary builds never compile rmcp).
//!
//! The servers run interleaved, round by round (kernel, rmcp, floor, kernel, rmcp, floor, …), so that
//! a slow spell of the machine falls on all of them alike. With `taskset` and two CPUs, each server
//! is pinned to CPU 0 and the load generator to CPU 1. What is reported is the median of the rounds
//! per server and the ratios of the medians — kernel/rmcp and kernel/floor — which carry across
//! machines far better than the absolute numbers. The table is printed and written as JSON to
//! `target/bench/compare.json`. See `docs/performance.md`.
//!
//! `--hold` runs only the memory scenario instead: per server and round, `bench-load hold` opens
//! `HOLD_CLIENTS` connections that each send a request head for a `HOLD_BODY_BYTES` body and then
//! half of it, and reads the server's RSS growth per connection; medians and ratios go to
//! `target/bench/compare-hold.json`.
//!
//! `--drip N` runs only the slow-body scenario instead: per server and round, `bench-load drip`
//! opens N connections that each send a request head and then one body byte per second, measures
//! `DRIP_REQUESTS` legitimate `tools/call`s sent one at a time on another connection while they are
//! open (and the same requests before, as a baseline), and records when the server answered (408)
//! or closed the drips, waiting at most `DRIP_WAIT_S` after each head (mcp-kernel's body deadline,
//! 15 s, and a margin); a drip still open then is "held". The kernel is started with
//! `BENCH_KERNEL_MAX_CONNECTIONS` set so that its connection limits admit all N drips. Medians and
//! the ratios of the legitimate p50 and p99 go to `target/bench/compare-drip.json`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The servers in their interleaving order: (short name, binary).
const SERVERS: [(&str, &str); 3] =
    [("kernel", "bench-kernel"), ("rmcp", "bench-rmcp"), ("floor", "bench-floor")];
const LOAD: &str = "bench-load";
const HTTP_CONNECTIONS: u32 = 32;
const STDIO_REQUESTS: u32 = 20_000;
const LATENCY_REQUESTS: u32 = 2_000;
const OUTPUT: &str = "target/bench/compare.json";
const HOLD_OUTPUT: &str = "target/bench/compare-hold.json";
const HOLD_CLIENTS: u32 = 200;
const HOLD_BODY_BYTES: u32 = 1 << 20;
const HOLD_SECS: u32 = 3;
const DRIP_OUTPUT: &str = "target/bench/compare-drip.json";
/// Upper bound on `--drip` (bench-load's own).
const MAX_DRIPS: u32 = 30_000;
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
/// Sent first, over stdio, to a server that does not answer a stateless request on its own.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"bench-handshake","method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"bench-load","version":"0.1.0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);
/// A stateless `tools/call` of `echo`, to see that an HTTP server answers before it is loaded.
const PROBE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"#,
    r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#,
    r#""name":"echo","arguments":{"message":"hello"}}}"#
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
/// Generator CPU above this share of its core means the server may have been faster than measured.
const SATURATED_PCT: f64 = 80.0;

struct Options {
    quick: bool,
    rounds: u32,
    warmup_s: f64,
    duration_s: f64,
    only: Vec<&'static str>,
    build: bool,
    hold: bool,
    /// `--drip N`: the number of drip connections.
    drip: Option<u32>,
}

const USAGE: &str = "usage: cargo xtask bench compare [--quick] [--rounds N] [--only kernel,rmcp,floor] [--no-build] \
                     [--hold | --drip N]";

fn parse(args: &[String]) -> Result<Options, String> {
    let mut it = args.iter();
    if it.next().map(String::as_str) != Some("compare") {
        return Err(USAGE.into());
    }
    let mut quick = false;
    let mut rounds = None;
    let mut only: Vec<&'static str> = SERVERS.iter().map(|(name, _)| *name).collect();
    let mut build = true;
    let mut hold = false;
    let mut drip = None;
    let (mut warmup_s, mut duration_s) = (None, None);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--quick" => quick = true,
            "--no-build" => build = false,
            "--hold" => hold = true,
            "--drip" => {
                let v = value()?;
                drip = Some(
                    v.parse::<u32>()
                        .ok()
                        .filter(|n| (1..=MAX_DRIPS).contains(n))
                        .ok_or_else(|| format!("--drip: 1 to {MAX_DRIPS}"))?,
                );
            }
            "--rounds" => {
                let v = value()?;
                rounds =
                    Some(v.parse::<u32>().ok().filter(|r| (1..=50).contains(r)).ok_or("--rounds: 1 to 50")?);
            }
            "--warmup" => warmup_s = Some(seconds(value()?)?),
            "--duration" => duration_s = Some(seconds(value()?)?),
            "--only" => {
                let v = value()?;
                only = Vec::new();
                for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    let known = SERVERS
                        .iter()
                        .find(|(n, _)| *n == name)
                        .ok_or_else(|| format!("--only: unknown server {name:?} (kernel, rmcp, floor)"))?;
                    if !only.contains(&known.0) {
                        only.push(known.0);
                    }
                }
                if only.is_empty() {
                    return Err("--only names no server".into());
                }
                // Keep the fixed interleaving order whatever the order given.
                only.sort_by_key(|n| SERVERS.iter().position(|(s, _)| s == n));
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if hold && drip.is_some() {
        return Err("--hold and --drip are separate runs: give one of them".into());
    }
    Ok(Options {
        quick,
        rounds: rounds.unwrap_or(if quick { 3 } else { 5 }),
        warmup_s: warmup_s.unwrap_or(if quick { 1.0 } else { 2.0 }),
        duration_s: duration_s.unwrap_or(if quick { 2.0 } else { 5.0 }),
        only,
        build,
        hold,
        drip,
    })
}

fn seconds(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| (0.0..=120.0).contains(s))
        .ok_or_else(|| format!("{v}: 0 to 120 seconds"))
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The main workspace's root (the parent of `xtask/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The compare workspace's target directory, as cargo reports it.
fn compare_target(manifest: &Path) -> Result<PathBuf, String> {
    let out = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
        .arg(manifest)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    meta["target_directory"].as_str().map(PathBuf::from).ok_or_else(|| "no target_directory".into())
}

/// `taskset -c CPU` before a command when `taskset` exists and two CPUs are there to pin to.
struct Pinning {
    enabled: bool,
}

impl Pinning {
    fn detect() -> Pinning {
        let two = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
        let works = Command::new("taskset")
            .args(["-c", "0,1", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        Pinning { enabled: two && works }
    }

    /// The argument vector of `program args…` on `cpu`.
    fn command(&self, cpu: u32, program: &Path, args: &[&str]) -> Vec<String> {
        let mut v = Vec::new();
        if self.enabled {
            v.extend(["taskset".to_owned(), "-c".to_owned(), cpu.to_string()]);
        }
        v.push(program.display().to_string());
        v.extend(args.iter().map(|a| (*a).to_owned()));
        v
    }
}

fn spawn(argv: &[String]) -> Command {
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..]);
    c
}

/// Runs `bench-load` and returns its JSON line (also when it reports errors: exit code 1).
fn run_load(argv: &[String]) -> Result<Value, String> {
    run_load_with(argv, Stdio::inherit())
}

fn run_load_with(argv: &[String], stderr: Stdio) -> Result<Value, String> {
    let out = spawn(argv)
        .stdin(Stdio::null())
        .stderr(stderr)
        .output()
        .map_err(|e| format!("{}: {e}", argv.join(" ")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().rev().find_map(|l| serde_json::from_str::<Value>(l.trim()).ok()) {
        Some(v) if v.is_object() => Ok(v),
        _ => Err(format!("`{}` gave no result ({})", argv.join(" "), out.status)),
    }
}

/// An HTTP server under test; killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `binary http 127.0.0.1:0` with `env` added to its environment, reads the URL it prints,
/// and waits until it answers a call.
fn start_http(pinning: &Pinning, binary: &Path, env: &[(&str, String)]) -> Result<HttpServer, String> {
    let argv = pinning.command(0, binary, &["http", "127.0.0.1:0"]);
    let mut child = spawn(&argv)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", argv.join(" ")))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut server = HttpServer { child, url: String::new() };
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.contains("listening on ") {
                break;
            }
            line.clear();
        }
        let _ = send.send(line);
        // Keep draining so that the server never blocks on a full pipe.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = receive
        .recv_timeout(Duration::from_secs(30))
        .map_err(|_| format!("{} printed no address", binary.display()))?;
    let url = line
        .split("listening on ")
        .nth(1)
        .map(str::trim)
        .filter(|u| u.starts_with("http://127.0.0.1:"))
        .ok_or_else(|| format!("{} printed no 127.0.0.1 address: {line:?}", binary.display()))?;
    server.url = url.to_owned();
    let started = Instant::now();
    loop {
        match probe(&server.url) {
            Ok(()) => return Ok(server),
            Err(e) if started.elapsed() > Duration::from_secs(15) => {
                return Err(format!("{} does not answer at {}: {e}", binary.display(), server.url));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// One `tools/call` over a fresh connection: Ok when the answer is 200 and echoes `hello`.
fn probe(url: &str) -> Result<(), String> {
    let rest = url.trim_start_matches("http://");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).map_err(|e| e.to_string())?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PROBE}",
        PROBE.len()
    );
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.lines().next().unwrap_or_default();
    if !status.starts_with("HTTP/1.1 200") {
        return Err(format!("status {status:?}"));
    }
    if !answer.contains("\"hello\"") {
        return Err("the answer does not echo the message".into());
    }
    Ok(())
}

/// Whether a stdio server needs the handshake first: it answers a lone stateless call, or only after
/// the handshake, or neither (an error).
fn stdio_needs_handshake(
    pinning: &Pinning,
    load: &Path,
    binary: &Path,
    handshake: &Path,
) -> Result<bool, String> {
    let server = pinning.command(0, binary, &["stdio"]);
    let handshake = handshake.display().to_string();
    for (preamble, needs) in [(None, false), (Some(handshake.as_str()), true)] {
        let mut args = vec!["stdio-latency", "--requests", "3", "--warmup", "0", "--timeout", "5"];
        if let Some(file) = preamble {
            args.extend(["--preamble", file]);
        }
        args.push("--");
        let mut argv = pinning.command(1, load, &args);
        argv.extend(server.iter().cloned());
        let result = run_load_with(&argv, Stdio::null());
        if result.as_ref().is_ok_and(|v| v["errors"] == 0) {
            return Ok(needs);
        }
    }
    Err(format!("{} answers no stdio tools/call, with or without a handshake", binary.display()))
}

/// The measurements of one server: metric key → one value per round.
type Runs = BTreeMap<&'static str, Vec<f64>>;

struct Tally {
    runs: BTreeMap<&'static str, Runs>,
    errors: BTreeMap<&'static str, u64>,
    failures: Vec<String>,
}

impl Tally {
    fn record(&mut self, server: &'static str, key: &'static str, value: Option<f64>) {
        if let Some(v) = value {
            self.runs.entry(server).or_default().entry(key).or_default().push(v);
        }
    }

    /// Takes the error count of a result, or records a failure.
    fn check(&mut self, server: &'static str, what: &str, result: Result<Value, String>) -> Option<Value> {
        match result {
            Ok(v) => {
                let errors = v["errors"].as_u64().unwrap_or(0);
                if errors > 0 {
                    *self.errors.entry(server).or_default() += errors;
                    self.failures.push(format!(
                        "{server} {what}: {errors} errors; first: {}",
                        v["first_errors"].get(0).and_then(Value::as_str).unwrap_or("?")
                    ));
                }
                Some(v)
            }
            Err(e) => {
                *self.errors.entry(server).or_default() += 1;
                self.failures.push(format!("{server} {what}: {e}"));
                None
            }
        }
    }
}

fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 })
}

/// Half the range of the values, relative to their median, in percent.
fn spread(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    (m > 0.0).then(|| (hi - lo) / 2.0 / m * 100.0)
}

fn number(v: f64) -> String {
    if v >= 100.0 { format!("{v:.0}") } else { format!("{v:.1}") }
}

fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(str::trim)
        .unwrap_or("unknown");
    let nproc = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    json!({"nproc": nproc, "cpu": model})
}

fn git_commit(root: &Path) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(["rev-parse", "--short", "HEAD"]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `cargo xtask bench …`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let root = root();
    let manifest = root.join("benches/compare/Cargo.toml");
    if !manifest.exists() {
        return Err(format!("{} is missing", manifest.display()));
    }
    let servers: Vec<(&'static str, &'static str)> =
        SERVERS.iter().copied().filter(|(name, _)| options.only.contains(name)).collect();
    if options.build {
        let mut build = Command::new(cargo());
        build.args(["build", "--release", "--manifest-path"]).arg(&manifest).args(["--bin", LOAD]);
        for (_, binary) in &servers {
            build.args(["--bin", binary]);
        }
        eprintln!(
            "xtask: bench: building {LOAD} and {} in release",
            servers.iter().map(|s| s.1).collect::<Vec<_>>().join(", ")
        );
        let status = build.status().map_err(|e| format!("cargo build: {e}"))?;
        if !status.success() {
            return Err("the compare workspace does not build (try --only kernel,floor)".into());
        }
    }
    let release = compare_target(&manifest)?.join("release");
    let load = release.join(LOAD);
    for (_, binary) in std::iter::once(&("load", LOAD)).chain(servers.iter()) {
        if !release.join(binary).exists() {
            return Err(format!(
                "{} is missing (build it, or drop --no-build)",
                release.join(binary).display()
            ));
        }
    }
    let pinning = Pinning::detect();
    let out_dir = root.join("target/bench");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    if options.hold {
        return run_hold(&options, &servers, &pinning, &release, &load, &root);
    }
    if let Some(drips) = options.drip {
        return run_drip(&options, drips, &servers, &pinning, &release, &load, &root);
    }
    let handshake = out_dir.join("stdio-handshake.jsonl");
    std::fs::write(&handshake, HANDSHAKE).map_err(|e| format!("{}: {e}", handshake.display()))?;

    let mut tally = Tally { runs: BTreeMap::new(), errors: BTreeMap::new(), failures: Vec::new() };
    let mut needs_handshake = BTreeMap::new();
    let mut active = Vec::new();
    for &(name, binary) in &servers {
        match stdio_needs_handshake(&pinning, &load, &release.join(binary), &handshake) {
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
            let result = start_http(&pinning, &release.join(binary), &[]).and_then(|server| {
                let argv = pinning.command(
                    1,
                    &load,
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
                &pinning,
                &load,
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
                &pinning,
                &load,
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
    let report = report(&options, &names, &tally, &pinning, &needs_handshake, elapsed, &root);
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
    finish(&root, OUTPUT, &report, elapsed, &tally.failures)
}

/// `--hold`: memory per in-flight request with half its body sent, interleaved per round.
fn run_hold(
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

/// Prints the medians of the rounds per server, with ratios kernel/rmcp and kernel/floor for the
/// keys marked so, and returns them as JSON metrics. `empty(server, key)` is the cell of a key
/// without values.
fn median_table(
    keys: &[(&str, &str, bool)],
    names: &[&'static str],
    tally: &Tally,
    empty: &dyn Fn(&str, &str) -> String,
) -> serde_json::Map<String, Value> {
    let values = |name: &str, key: &str| -> Vec<f64> {
        tally.runs.get(name).and_then(|r| r.get(key)).cloned().unwrap_or_default()
    };
    let ratio_keys: Vec<&str> =
        ["rmcp", "floor"].into_iter().filter(|o| names.contains(&"kernel") && names.contains(o)).collect();
    let mut header = format!("{:<36}", "median of the rounds");
    for name in names {
        header.push_str(&format!(" {name:>15}"));
    }
    for other in &ratio_keys {
        header.push_str(&format!(" {:>12}", format!("kernel/{other}")));
    }
    println!("{header}");
    println!("{}", "-".repeat(header.chars().count()));
    let mut metrics = serde_json::Map::new();
    for &(key, label, with_ratio) in keys {
        let mut line = format!("{label:<36}");
        let (mut medians, mut runs, mut ratios) =
            (serde_json::Map::new(), serde_json::Map::new(), serde_json::Map::new());
        for name in names {
            let v = values(name, key);
            let cell = match (median(&v), spread(&v)) {
                (Some(m), Some(s)) => format!("{} ±{s:.0}%", number(m)),
                (Some(m), None) => number(m),
                _ => empty(name, key),
            };
            line.push_str(&format!(" {cell:>15}"));
            medians.insert((*name).to_owned(), json!(median(&v)));
            runs.insert((*name).to_owned(), json!(v));
        }
        for other in &ratio_keys {
            let ratio = median(&values("kernel", key))
                .zip(median(&values(other, key)))
                .filter(|(_, o)| *o > 0.0)
                .map(|(k, o)| k / o);
            let cell = match ratio {
                Some(r) if with_ratio => format!("{r:.2}"),
                _ => String::new(),
            };
            line.push_str(&format!(" {cell:>12}"));
            if with_ratio {
                ratios.insert(format!("kernel/{other}"), json!(ratio));
            }
        }
        println!("{line}");
        metrics.insert(
            key.to_owned(),
            json!({"label": label, "median": medians, "ratio": ratios, "runs": runs}),
        );
    }
    metrics
}

/// `--drip N`: legitimate latency while N slow-body connections are open, interleaved per round.
#[allow(clippy::too_many_arguments)]
fn run_drip(
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
fn open_files_soft_limit() -> Option<u64> {
    soft_limit_of(&std::fs::read_to_string("/proc/self/limits").ok()?, "Max open files")
}

/// The soft limit of the row `name` in the text of `/proc/PID/limits`; `None` when unlimited or absent.
fn soft_limit_of(limits: &str, name: &str) -> Option<u64> {
    limits
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

/// Writes a run's report under `root` and fails when any run had errors.
fn finish(
    root: &Path,
    output: &str,
    report: &Value,
    elapsed: f64,
    failures: &[String],
) -> Result<(), String> {
    let path = root.join(output);
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("xtask: bench: written to {output} ({elapsed:.0} s of measuring)");
    if failures.is_empty() {
        return Ok(());
    }
    for f in failures {
        eprintln!("xtask: bench: {f}");
    }
    Err(format!("{} runs had errors", failures.len()))
}

fn stdio_argv(
    pinning: &Pinning,
    load: &Path,
    mode: &str,
    requests: &str,
    handshake: bool,
    handshake_file: &Path,
    binary: &Path,
) -> Vec<String> {
    let file = handshake_file.display().to_string();
    let mut args = vec![mode, "--requests", requests];
    if handshake {
        args.extend(["--preamble", file.as_str()]);
    }
    args.push("--");
    let mut argv = pinning.command(1, load, &args);
    argv.extend(pinning.command(0, binary, &["stdio"]));
    argv
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn medians_and_spreads() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(spread(&[90.0, 100.0, 110.0]), Some(10.0));
    }

    #[test]
    fn options() {
        let quick = parse(&args(&["compare", "--quick"])).unwrap();
        assert_eq!((quick.rounds, quick.warmup_s, quick.duration_s), (3, 1.0, 2.0));
        let full = parse(&args(&["compare", "--rounds", "7", "--only", "floor,kernel"])).unwrap();
        assert_eq!((full.rounds, full.warmup_s, full.duration_s), (7, 2.0, 5.0));
        assert_eq!(full.only, ["kernel", "floor"]);
        assert!(parse(&args(&["compare", "--only", "other"])).is_err());
        assert!(parse(&args(&["other"])).is_err());
        assert!(!full.hold);
        assert!(parse(&args(&["compare", "--hold"])).unwrap().hold);
    }

    #[test]
    fn drip_options() {
        assert_eq!(parse(&args(&["compare"])).unwrap().drip, None);
        let drip = parse(&args(&["compare", "--drip", "12000", "--rounds", "1"])).unwrap();
        assert_eq!((drip.drip, drip.rounds, drip.hold), (Some(12_000), 1, false));
        for bad in [&["compare", "--drip"][..], &["compare", "--drip", "0"], &["compare", "--drip", "30001"]]
        {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
        assert!(parse(&args(&["compare", "--drip", "10", "--hold"])).is_err());
    }

    #[test]
    fn open_file_limits_are_read() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(soft_limit_of(limits, "Max open files"), Some(1024));
        assert_eq!(soft_limit_of(limits, "Max cpu time"), None);
        assert_eq!(soft_limit_of(limits, "Max processes"), None);
    }
}
