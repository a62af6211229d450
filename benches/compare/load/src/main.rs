//! `bench-load`: the load generator for the comparison servers (`bench-kernel`, `bench-rmcp`,
//! `bench-floor`). Every run is bounded in count and time and talks to 127.0.0.1 only.
//!
//! ```text
//! bench-load stdio-throughput --requests N [--preamble FILE] [--timeout SECS] -- CMD ARGS...
//! bench-load stdio-latency    --requests N [--warmup N] [--preamble FILE] [--timeout SECS] -- CMD ARGS...
//! bench-load http --url URL --connections C --warmup SECS --duration SECS
//! bench-load hold --url URL --pid PID [--clients N] [--body-bytes B] [--hold-secs SECS]
//! bench-load drip --url URL --drips N [--requests R] [--interval-ms MS] [--wait-secs SECS] [--open-rate R] [--pid PID]
//! ```
//!
//! `hold` (module `hold`) measures the server's memory per in-flight request whose body is half
//! sent. `drip` (module `drip`) measures legitimate requests' latency while N connections each send
//! a request head and then one body byte per second, and when the server ends those connections.
//!
//! Each request is an MCP 2026-07-28 stateless `tools/call` of the tool `echo` with the message
//! `hello`; every response is checked (JSON-RPC 2.0, a known id answered once, no error, no
//! `isError`, `content[0].text == "hello"`). The result is one JSON line on stdout and a human line
//! on stderr. The exit code is 0 when every request was answered correctly, 1 when some were not
//! (the JSON line is still printed), 2 when the run could not be made at all.

#![forbid(unsafe_code)]

mod drip;
mod hold;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, timeout_at};

const PROTOCOL: &str = "2026-07-28";
const MESSAGE: &str = "hello";
/// How many distinct error messages a run keeps to show.
const KEPT_ERRORS: usize = 5;
/// Upper bounds on what a command line may ask for: every run stays bounded.
const MAX_REQUESTS: u64 = 10_000_000;
const MAX_CONNECTIONS: usize = 1024;
const MAX_SECONDS: f64 = 600.0;

const USAGE: &str = "usage:
  bench-load stdio-throughput --requests N [--preamble FILE] [--timeout SECS] -- CMD ARGS...
  bench-load stdio-latency    --requests N [--warmup N] [--preamble FILE] [--timeout SECS] -- CMD ARGS...
  bench-load http --url http://127.0.0.1:PORT/mcp --connections C --warmup SECS --duration SECS
  bench-load hold --url http://127.0.0.1:PORT/mcp --pid PID [--clients N] [--body-bytes B] [--hold-secs SECS]
  bench-load drip --url http://127.0.0.1:PORT/mcp --drips N [--requests R] [--interval-ms MS] [--wait-secs SECS] [--open-rate R] [--pid PID]";

/// The JSON-RPC request with id `id`, as one line without its newline.
fn request_body(id: u64) -> String {
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"_meta":{{"#,
            r#""io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}},"#,
            r#""name":"echo","arguments":{{"message":"{}"}}}}}}"#
        ),
        id, PROTOCOL, MESSAGE
    )
}

/// Checks one response: its numeric id if it has one, and whether it is a correct echo.
fn check_response(v: &Value) -> (Option<u64>, Result<(), String>) {
    let id = v.get("id").and_then(Value::as_u64);
    let verdict = (|| {
        if v.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err("response without \"jsonrpc\":\"2.0\"".to_owned());
        }
        if id.is_none() {
            return Err(format!("response without a numeric id: {}", short(v)));
        }
        if let Some(error) = v.get("error") {
            return Err(format!("error response: {}", short(error)));
        }
        let result = v.get("result").ok_or_else(|| format!("response without result: {}", short(v)))?;
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Err(format!("tool error: {}", short(result)));
        }
        match result.pointer("/content/0/text").and_then(Value::as_str) {
            Some(MESSAGE) => Ok(()),
            Some(other) => Err(format!("content[0].text is {other:?}, not {MESSAGE:?}")),
            None => Err(format!("result without content[0].text: {}", short(result))),
        }
    })();
    (id, verdict)
}

fn short(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 200 {
        let mut cut = 200;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// Errors of a run: how many, and the first few distinct messages.
#[derive(Default)]
struct Errors {
    count: u64,
    kept: Vec<String>,
}

impl Errors {
    fn add(&mut self, message: impl Into<String>) {
        self.count += 1;
        let message = message.into();
        if self.kept.len() < KEPT_ERRORS && !self.kept.contains(&message) {
            self.kept.push(message);
        }
    }

    fn merge(&mut self, other: Errors) {
        self.count += other.count;
        for m in other.kept {
            if self.kept.len() < KEPT_ERRORS && !self.kept.contains(&m) {
                self.kept.push(m);
            }
        }
    }
}

/// p50, p99, mean and max of latencies in µs.
struct Summary {
    p50: u64,
    p99: u64,
    mean: f64,
    max: u64,
}

fn summarize(mut micros: Vec<u32>) -> Summary {
    micros.sort_unstable();
    let pick = |p: f64| -> u64 {
        if micros.is_empty() {
            return 0;
        }
        let rank = ((p / 100.0) * micros.len() as f64).ceil() as usize;
        u64::from(micros[rank.clamp(1, micros.len()) - 1])
    };
    let mean = if micros.is_empty() {
        0.0
    } else {
        micros.iter().map(|&m| m as f64).sum::<f64>() / micros.len() as f64
    };
    Summary { p50: pick(50.0), p99: pick(99.0), mean, max: micros.last().copied().map_or(0, u64::from) }
}

/// CPU time (user + system) this process has used so far, in seconds: from `/proc/self/stat`, in
/// clock ticks of 1/100 s (the Linux default). Reported so that a run can tell when the generator,
/// not the server, was the bottleneck.
fn own_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of the file (utime, stime) are 11 and 12 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// The generator's CPU use since `cpu0` over `wall` seconds, in percent of one core.
fn cpu_percent(cpu0: f64, wall: f64) -> f64 {
    if wall > 0.0 { (own_cpu_seconds() - cpu0) / wall * 100.0 } else { 0.0 }
}

fn micros_since(t: Instant) -> u32 {
    u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

struct Args {
    flags: Vec<(String, String)>,
    command: Vec<String>,
}

impl Args {
    fn parse(raw: &[String]) -> Result<Args, String> {
        let mut flags = Vec::new();
        let mut it = raw.iter();
        let mut command = Vec::new();
        while let Some(arg) = it.next() {
            if arg == "--" {
                command = it.cloned().collect();
                break;
            }
            let name = arg.strip_prefix("--").ok_or_else(|| format!("unexpected argument {arg:?}"))?;
            let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
            flags.push((name.to_owned(), value.clone()));
        }
        Ok(Args { flags, command })
    }

    fn take(&mut self, name: &str) -> Option<String> {
        let at = self.flags.iter().position(|(n, _)| n == name)?;
        Some(self.flags.remove(at).1)
    }

    fn number<T: std::str::FromStr>(&mut self, name: &str, default: Option<T>) -> Result<T, String> {
        match self.take(name) {
            Some(v) => v.parse().map_err(|_| format!("--{name}: not a number: {v:?}")),
            None => default.ok_or_else(|| format!("--{name} is required")),
        }
    }

    fn finish(self, wants_command: bool) -> Result<Vec<String>, String> {
        if let Some((name, _)) = self.flags.first() {
            return Err(format!("unknown option --{name}"));
        }
        if wants_command && self.command.is_empty() {
            return Err("the server command is missing after --".into());
        }
        if !wants_command && !self.command.is_empty() {
            return Err("this mode takes no command".into());
        }
        Ok(self.command)
    }
}

fn seconds(name: &str, v: f64) -> Result<Duration, String> {
    if !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(format!("--{name} must be between 0 and {MAX_SECONDS} seconds"));
    }
    Ok(Duration::from_secs_f64(v))
}

fn requests(v: u64) -> Result<u64, String> {
    if v == 0 || v > MAX_REQUESTS {
        return Err(format!("--requests must be between 1 and {MAX_REQUESTS}"));
    }
    Ok(v)
}

/// The outcome of a mode: its JSON line, a human line, and the error count.
struct Report {
    json: Value,
    human: String,
    errors: u64,
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = raw.first().cloned() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("bench-load: no runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = Args::parse(&raw[1..]).and_then(|args| {
        runtime.block_on(async move {
            match mode.as_str() {
                "stdio-throughput" => stdio_throughput(args).await,
                "stdio-latency" => stdio_latency(args).await,
                "http" => http(args).await,
                "hold" => hold::hold(args).await,
                "drip" => drip::drip(args).await,
                "-h" | "--help" | "help" => Err(USAGE.to_owned()),
                other => Err(format!("unknown mode {other:?}\n{USAGE}")),
            }
        })
    });
    match outcome {
        Ok(report) => {
            println!("{}", report.json);
            eprintln!("{}", report.human);
            if report.errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(e) => {
            eprintln!("bench-load: {e}");
            ExitCode::from(2)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------

/// A spawned stdio server: killed when dropped.
struct Server {
    child: Child,
    pid: u32,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

enum Message {
    /// A message that is no response (a notification or request of the server's): ignored.
    Other,
    Response(Value),
    Unparsable(String),
}

impl Server {
    fn spawn(command: &[String]) -> Result<Server, String> {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{}: {e}", command[0]))?;
        let pid = child.id().ok_or("the server exited at once")?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::with_capacity(256 * 1024, child.stdout.take().ok_or("no stdout")?);
        Ok(Server { child, pid, stdin, stdout, line: Vec::with_capacity(4096) })
    }

    /// The next non-empty line of the server's stdout, classified; `None` at end of stream.
    async fn next(&mut self) -> Result<Option<Message>, String> {
        next_message(&mut self.stdout, &mut self.line).await
    }

    /// Sends the preamble: each line is written, and a line that is a request (a `method` and
    /// an `id`) waits for the response with that id.
    async fn preamble(&mut self, file: Option<PathBuf>, deadline: Instant) -> Result<(), String> {
        let Some(file) = file else { return Ok(()) };
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let v: Value =
                serde_json::from_str(line).map_err(|e| format!("preamble line is not JSON ({e}): {line}"))?;
            let mut bytes = line.as_bytes().to_vec();
            bytes.push(b'\n');
            self.stdin.write_all(&bytes).await.map_err(|e| format!("writing the preamble: {e}"))?;
            self.stdin.flush().await.map_err(|e| format!("writing the preamble: {e}"))?;
            let (Some(id), true) = (v.get("id"), v.get("method").is_some()) else { continue };
            loop {
                let message = timeout_at(deadline, self.next())
                    .await
                    .map_err(|_| format!("no answer to the preamble request {id}"))??;
                match message {
                    None => return Err("the server closed stdout during the preamble".into()),
                    Some(Message::Response(r)) if r.get("id") == Some(id) => {
                        if let Some(error) = r.get("error") {
                            return Err(format!("the preamble request {id} failed: {}", short(error)));
                        }
                        break;
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    async fn shut_down(self) {
        shut_down(self.child, self.stdin).await;
    }
}

/// Closes stdin and waits a little for the server to exit; it is killed otherwise.
async fn shut_down(mut child: Child, stdin: ChildStdin) {
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(5), child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}

async fn next_message(
    reader: &mut BufReader<ChildStdout>,
    line: &mut Vec<u8>,
) -> Result<Option<Message>, String> {
    loop {
        line.clear();
        let n = reader.read_until(b'\n', line).await.map_err(|e| format!("reading stdout: {e}"))?;
        if n == 0 {
            return Ok(None);
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        return Ok(Some(match serde_json::from_slice::<Value>(text) {
            Ok(v) if v.get("method").is_some() => Message::Other,
            Ok(v) => Message::Response(v),
            Err(e) => Message::Unparsable(format!(
                "not JSON ({e}): {}",
                String::from_utf8_lossy(&text[..text.len().min(200)])
            )),
        }));
    }
}

/// Peak resident set (`VmHWM`) of a process in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Samples `VmHWM` every 10 ms into `peak` until aborted.
fn sample_rss(pid: u32, peak: Arc<AtomicU64>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        loop {
            tick.tick().await;
            if let Some(kib) = vm_hwm_kib(pid) {
                peak.fetch_max(kib, Ordering::Relaxed);
            }
        }
    })
}

async fn stdio_throughput(mut args: Args) -> Result<Report, String> {
    let n = requests(args.number("requests", None)?)?;
    let preamble = args.take("preamble").map(PathBuf::from);
    let limit = seconds("timeout", args.number("timeout", Some(300.0))?)?;
    let command = args.finish(true)?;

    let mut server = Server::spawn(&command)?;
    let deadline = Instant::now() + limit;
    server.preamble(preamble, deadline).await?;
    let pid = server.pid;
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = sample_rss(pid, peak.clone());

    let Server { child, stdin, mut stdout, mut line, .. } = server;
    let cpu0 = own_cpu_seconds();
    let started = Instant::now();
    // The writer: all requests, pipelined, through one buffer. It hands stdin back, still open.
    let writer = tokio::spawn(async move {
        let mut out = BufWriter::with_capacity(64 * 1024, stdin);
        for id in 1..=n {
            let mut body = request_body(id);
            body.push('\n');
            out.write_all(body.as_bytes()).await?;
        }
        out.flush().await?;
        Ok::<_, std::io::Error>(out.into_inner())
    });
    // The reader: every response checked until all ids are answered, stdout ends, or time is up.
    let reader = tokio::spawn(async move {
        let mut seen = vec![false; n as usize + 1];
        let mut answered = 0u64;
        let mut ok = 0u64;
        let mut errors = Errors::default();
        while answered < n {
            let message = match timeout_at(deadline, next_message(&mut stdout, &mut line)).await {
                Err(_) => {
                    errors.add(format!("timed out with {} of {n} answered", answered));
                    break;
                }
                Ok(Err(e)) => {
                    errors.add(e);
                    break;
                }
                Ok(Ok(None)) => {
                    errors.add(format!("the server closed stdout with {answered} of {n} answered"));
                    break;
                }
                Ok(Ok(Some(m))) => m,
            };
            let response = match message {
                Message::Other => continue,
                Message::Unparsable(e) => {
                    errors.add(e);
                    continue;
                }
                Message::Response(v) => v,
            };
            let (id, verdict) = check_response(&response);
            match id {
                Some(id) if id >= 1 && id <= n && !seen[id as usize] => {
                    seen[id as usize] = true;
                    answered += 1;
                    match verdict {
                        Ok(()) => ok += 1,
                        Err(e) => errors.add(e),
                    }
                }
                Some(id) if id >= 1 && id <= n => errors.add(format!("id {id} answered twice")),
                _ => errors.add(match verdict {
                    Err(e) => e,
                    Ok(()) => format!("unknown id in {}", short(&response)),
                }),
            }
        }
        // Every request not answered is an error too.
        let missing = n - answered;
        if missing > 0 {
            errors.count += missing - 1; // one was added above with the reason
        }
        (ok, errors)
    });
    let (ok, errors) = reader.await.map_err(|e| format!("reader task: {e}"))?;
    let wall = started.elapsed();
    let load_cpu = cpu_percent(cpu0, wall.as_secs_f64());
    // The peak just before stdin is closed.
    if let Some(kib) = vm_hwm_kib(pid) {
        peak.fetch_max(kib, Ordering::Relaxed);
    }
    sampler.abort();
    let stdin = match tokio::time::timeout(Duration::from_secs(5), writer).await {
        Ok(Ok(Ok(stdin))) => Some(stdin),
        Ok(Ok(Err(e))) => {
            eprintln!("bench-load: writing requests: {e}");
            None
        }
        _ => None,
    };
    match stdin {
        Some(stdin) => shut_down(child, stdin).await,
        None => {
            let mut child = child;
            let _ = child.kill().await;
        }
    }
    let peak_kib = peak.load(Ordering::Relaxed);
    let rps = ok as f64 / wall.as_secs_f64();
    let first_errors = errors.kept.clone();
    Ok(Report {
        human: format!(
            "stdio-throughput: {ok}/{n} ok, {} errors, {:.3} s, {rps:.0} req/s, peak RSS {:.1} MiB, generator CPU {load_cpu:.0}%{}",
            errors.count,
            wall.as_secs_f64(),
            peak_kib as f64 / 1024.0,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "stdio-throughput",
            "command": command,
            "requests": n,
            "ok": ok,
            "errors": errors.count,
            "first_errors": first_errors,
            "wall_s": wall.as_secs_f64(),
            "rps": rps,
            "peak_rss_kib": peak_kib,
            "load_cpu_pct": load_cpu,
        }),
        errors: errors.count,
    })
}

fn error_suffix(kept: &[String]) -> String {
    if kept.is_empty() { String::new() } else { format!("; first errors: {}", kept.join(" | ")) }
}

async fn stdio_latency(mut args: Args) -> Result<Report, String> {
    let n = requests(args.number("requests", None)?)?;
    let warmup: u64 = args.number("warmup", Some(200))?;
    if warmup > MAX_REQUESTS {
        return Err(format!("--warmup must be at most {MAX_REQUESTS}"));
    }
    let preamble = args.take("preamble").map(PathBuf::from);
    let limit = seconds("timeout", args.number("timeout", Some(300.0))?)?;
    let command = args.finish(true)?;

    let mut server = Server::spawn(&command)?;
    let deadline = Instant::now() + limit;
    server.preamble(preamble, deadline).await?;
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = sample_rss(server.pid, peak.clone());
    let mut micros = Vec::with_capacity(n as usize);
    let mut errors = Errors::default();
    let started = Instant::now();
    'requests: for id in 1..=warmup + n {
        let mut body = request_body(id);
        body.push('\n');
        let sent = Instant::now();
        if let Err(e) = server.stdin.write_all(body.as_bytes()).await {
            errors.add(format!("writing request {id}: {e}"));
            errors.count += warmup + n - id;
            break;
        }
        loop {
            let message = match timeout_at(deadline, server.next()).await {
                Err(_) => {
                    errors.add(format!("timed out at request {id}"));
                    errors.count += warmup + n - id;
                    break 'requests;
                }
                Ok(Err(e)) | Ok(Ok(Some(Message::Unparsable(e)))) => {
                    errors.add(e);
                    continue 'requests;
                }
                Ok(Ok(None)) => {
                    errors.add(format!("the server closed stdout at request {id}"));
                    errors.count += warmup + n - id;
                    break 'requests;
                }
                Ok(Ok(Some(Message::Other))) => continue,
                Ok(Ok(Some(Message::Response(v)))) => v,
            };
            let elapsed = micros_since(sent);
            match check_response(&message) {
                (Some(got), Ok(())) if got == id => {
                    if id > warmup {
                        micros.push(elapsed);
                    }
                }
                (Some(got), Err(e)) if got == id => errors.add(e),
                (Some(got), _) if got < id => {
                    errors.add(format!("a late or repeated answer to id {got}"));
                    continue;
                }
                (_, verdict) => errors.add(verdict.err().unwrap_or_else(|| "unknown id".into())),
            }
            break;
        }
    }
    let wall = started.elapsed();
    if let Some(kib) = vm_hwm_kib(server.pid) {
        peak.fetch_max(kib, Ordering::Relaxed);
    }
    sampler.abort();
    server.shut_down().await;
    let measured = micros.len();
    let s = summarize(micros);
    let peak_kib = peak.load(Ordering::Relaxed);
    let first_errors = errors.kept.clone();
    Ok(Report {
        human: format!(
            "stdio-latency: {measured}/{n} ok (+{warmup} warm-up), {} errors, p50 {} µs, p99 {} µs, mean {:.1} µs, max {} µs, {:.3} s{}",
            errors.count,
            s.p50,
            s.p99,
            s.mean,
            s.max,
            wall.as_secs_f64(),
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "stdio-latency",
            "command": command,
            "requests": n,
            "warmup_requests": warmup,
            "ok": measured,
            "errors": errors.count,
            "first_errors": first_errors,
            "wall_s": wall.as_secs_f64(),
            "p50_us": s.p50,
            "p99_us": s.p99,
            "mean_us": s.mean,
            "max_us": s.max,
            "peak_rss_kib": peak_kib,
        }),
        errors: errors.count,
    })
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

/// `http://HOST:PORT/PATH` with a loopback host: (authority, path).
fn parse_url(url: &str) -> Result<(String, String), String> {
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let host = match authority.rfind(':') {
        Some(at) if !authority.ends_with(']') => &authority[..at],
        _ => authority,
    };
    let loopback = host == "localhost"
        || host == "[::1]"
        || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err(format!("{host} is not a loopback address: this tool only loads 127.0.0.1"));
    }
    if !authority.contains(':') || authority.ends_with(']') {
        return Err("the URL needs an explicit port".into());
    }
    Ok((authority.to_owned(), path.to_owned()))
}

/// What one connection measured.
#[derive(Default)]
struct ConnectionStats {
    micros: Vec<u32>,
    warmup_ok: u64,
    /// Answered correctly but finished after the window closed: neither counted nor an error.
    late: u64,
    connects: u64,
    errors: Errors,
}

async fn http(mut args: Args) -> Result<Report, String> {
    let url = args.take("url").ok_or("--url is required")?;
    let connections: usize = args.number("connections", Some(32))?;
    let warmup = seconds("warmup", args.number("warmup", Some(2.0))?)?;
    let duration = seconds("duration", args.number("duration", Some(5.0))?)?;
    args.finish(false)?;
    if connections == 0 || connections > MAX_CONNECTIONS {
        return Err(format!("--connections must be between 1 and {MAX_CONNECTIONS}"));
    }
    if duration.is_zero() {
        return Err("--duration must be positive".into());
    }
    let (authority, path) = parse_url(&url)?;
    let cpu0 = own_cpu_seconds();
    let start = Instant::now();
    let window = (start + warmup, start + warmup + duration);
    let tasks: Vec<_> = (0..connections)
        .map(|index| tokio::spawn(connection_loop(index as u64, authority.clone(), path.clone(), window)))
        .collect();
    let mut all = ConnectionStats::default();
    for task in tasks {
        let stats = task.await.map_err(|e| format!("connection task: {e}"))?;
        all.micros.extend(stats.micros);
        all.warmup_ok += stats.warmup_ok;
        all.late += stats.late;
        all.connects += stats.connects;
        all.errors.merge(stats.errors);
    }
    let load_cpu = cpu_percent(cpu0, start.elapsed().as_secs_f64());
    let measured = all.micros.len();
    let rps = measured as f64 / duration.as_secs_f64();
    let s = summarize(all.micros);
    let first_errors = all.errors.kept.clone();
    Ok(Report {
        human: format!(
            "http: {connections} connections, {measured} ok in {:.1} s = {rps:.0} req/s, {} errors, p50 {} µs, p99 {} µs, mean {:.1} µs, max {} µs ({} warm-up, {} connects), generator CPU {load_cpu:.0}%{}",
            duration.as_secs_f64(),
            all.errors.count,
            s.p50,
            s.p99,
            s.mean,
            s.max,
            all.warmup_ok,
            all.connects,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "http",
            "url": url,
            "connections": connections,
            "warmup_s": warmup.as_secs_f64(),
            "duration_s": duration.as_secs_f64(),
            "requests": measured,
            "warmup_requests": all.warmup_ok,
            "late_requests": all.late,
            "connects": all.connects,
            "errors": all.errors.count,
            "first_errors": first_errors,
            "rps": rps,
            "p50_us": s.p50,
            "p99_us": s.p99,
            "mean_us": s.mean,
            "max_us": s.max,
            "load_cpu_pct": load_cpu,
        }),
        errors: all.errors.count,
    })
}

/// One keep-alive connection, closed loop: the next request leaves when the last one is answered.
/// A broken connection is counted as an error and opened again while the window lasts.
async fn connection_loop(
    index: u64,
    authority: String,
    path: String,
    (measure_from, end): (Instant, Instant),
) -> ConnectionStats {
    let mut stats = ConnectionStats::default();
    let mut next_id = (index + 1) * 1_000_000_000;
    // A request still out when the window closes gets this long before it counts as an error.
    let grace = Duration::from_secs(5);
    while Instant::now() < end {
        let stream = match timeout_at(end, TcpStream::connect(&authority)).await {
            Err(_) => break,
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                stats.errors.add(format!("connect {authority}: {e}"));
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        stats.connects += 1;
        let (mut sender, connection) =
            match hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream)).await {
                Ok(pair) => pair,
                Err(e) => {
                    stats.errors.add(format!("HTTP/1.1 handshake: {e}"));
                    continue;
                }
            };
        let driver = tokio::spawn(connection);
        while Instant::now() < end {
            if let Err(e) = sender.ready().await {
                stats.errors.add(format!("connection closed: {e}"));
                break;
            }
            next_id += 1;
            let id = next_id;
            let request = echo_request(&authority, &path, id);
            let sent = Instant::now();
            let outcome = timeout_at(end + grace, exchange(&mut sender, request, id)).await;
            let done = Instant::now();
            match outcome {
                Err(_) => {
                    stats.errors.add("no answer within 5 s after the window closed");
                    break;
                }
                Ok(Err((e, broken))) => {
                    stats.errors.add(e);
                    if broken {
                        break;
                    }
                }
                Ok(Ok(())) => {
                    if sent < measure_from {
                        stats.warmup_ok += 1;
                    } else if done <= end {
                        stats.micros.push(u32::try_from((done - sent).as_micros()).unwrap_or(u32::MAX));
                    } else {
                        stats.late += 1;
                    }
                }
            }
        }
        drop(sender);
        driver.abort();
    }
    stats
}

/// The `tools/call` of `echo` with id `id`, with the standard MCP headers.
fn echo_request(authority: &str, path: &str, id: u64) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(Full::new(Bytes::from(request_body(id))))
        .expect("a valid request")
}

/// Sends one request and checks its answer; an error says whether the connection is broken.
async fn exchange(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
    id: u64,
) -> Result<(), (String, bool)> {
    let response = sender.send_request(request).await.map_err(|e| (format!("request: {e}"), true))?;
    let status = response.status();
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| (format!("reading the body: {e}"), true))?
        .to_bytes();
    if status != hyper::StatusCode::OK {
        return Err((
            format!("HTTP {status}: {}", String::from_utf8_lossy(&body[..body.len().min(200)])),
            false,
        ));
    }
    let message = if sse { sse_response(&body, id) } else { serde_json::from_slice(&body).ok() };
    let Some(message) = message else {
        return Err((
            format!(
                "body is no JSON-RPC response: {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            ),
            false,
        ));
    };
    match check_response(&message) {
        (Some(got), Ok(())) if got == id => Ok(()),
        (Some(got), Ok(())) => Err((format!("answer for id {got} to request {id}"), false)),
        (_, verdict) => Err((verdict.err().unwrap_or_else(|| "no id".into()), false)),
    }
}

/// The response with id `id` among the events of an SSE body.
fn sse_response(body: &[u8], id: u64) -> Option<Value> {
    let text = std::str::from_utf8(body).ok()?;
    let mut events: VecDeque<String> = VecDeque::new();
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.is_empty() {
            if !data.is_empty() {
                events.push_back(std::mem::take(&mut data));
            }
        } else if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    events
        .into_iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e).ok())
        .find(|v| v.get("id").and_then(Value::as_u64) == Some(id) && v.get("method").is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_json() {
        let v: Value = serde_json::from_str(&request_body(7)).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["params"]["arguments"]["message"], "hello");
        assert_eq!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    }

    #[test]
    fn responses_are_checked() {
        let good = json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello"}]}});
        assert_eq!(check_response(&good).0, Some(3));
        assert!(check_response(&good).1.is_ok());
        let wrong = json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"bye"}]}});
        assert!(check_response(&wrong).1.is_err());
        let error = json!({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}});
        assert!(check_response(&error).1.is_err());
    }

    #[test]
    fn only_loopback_urls() {
        assert!(parse_url("http://127.0.0.1:8080/mcp").is_ok());
        assert!(parse_url("http://localhost:1/mcp").is_ok());
        assert!(parse_url("http://10.0.0.1:80/mcp").is_err());
        assert!(parse_url("http://example.com:80/").is_err());
        assert!(parse_url("http://127.0.0.1/mcp").is_err());
    }

    #[test]
    fn sse_bodies_are_read() {
        let body = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n";
        assert_eq!(sse_response(body, 5).unwrap()["id"], 5);
        assert!(sse_response(body, 6).is_none());
    }

    #[test]
    fn percentiles() {
        let s = summarize((1..=100).collect());
        assert_eq!((s.p50, s.p99, s.max), (50, 99, 100));
    }
}
