//! The stdio modes: `stdio-throughput` (every request written at once, the answers read as they
//! come) and `stdio-latency` (one request at a time), against a spawned server whose peak RSS is
//! sampled.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, timeout_at};

use crate::args::{Args, requests, seconds};
use crate::report::{
    Errors, Report, ThreadTimes, cpu_percent, cpu_us_per, error_suffix, faults_per, micros_since,
    minor_faults, own_cpu_seconds, summarize,
};
use crate::work::{MAX_PAGES, Step, Work};
use crate::{MAX_REQUESTS, check_answer, check_response, request_body, short};

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

    /// Creates a task that waits `LONG_WAIT_MS` (for `--method task-get`): its id.
    async fn create_task(&mut self, deadline: Instant) -> Result<String, String> {
        // An id the measured requests never reach.
        let id = MAX_REQUESTS * 10;
        let mut line = crate::tasks::wait_body(id, crate::tasks::LONG_WAIT_MS, true);
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.map_err(|e| format!("creating a task: {e}"))?;
        self.stdin.flush().await.map_err(|e| format!("creating a task: {e}"))?;
        loop {
            let message = timeout_at(deadline, self.next())
                .await
                .map_err(|_| "no answer to the task's creation".to_owned())??;
            match message {
                None => return Err("the server closed stdout before the task was created".into()),
                Some(Message::Response(v)) if v.get("id").and_then(Value::as_u64) == Some(id) => {
                    return crate::tasks::created_task(&v, id).map_err(|e| format!("creating a task: {e}"));
                }
                Some(_) => {}
            }
        }
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

pub(crate) async fn stdio_throughput(mut args: Args) -> Result<Report, String> {
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
    // The server's CPU over the window, from the first write to the last answer.
    let server_pid = pid.to_string();
    let server_cpu0 = ThreadTimes::read(&server_pid);
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
    let server_cpu = ThreadTimes::read(&server_pid);
    let load_cpu = cpu_percent(cpu0, wall.as_secs_f64());
    let server_cpu_s = server_cpu0.as_ref().zip(server_cpu.as_ref()).map(|(a, b)| b.since(a) as f64 / 1e9);
    let server_cpu_us = cpu_us_per(server_cpu0.as_ref(), server_cpu.as_ref(), ok);
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
            "stdio-throughput: {ok}/{n} ok, {} errors, {:.3} s, {rps:.0} req/s, peak RSS {:.1} MiB, server CPU {} µs per request, \
             generator CPU {load_cpu:.0}%{}",
            errors.count,
            wall.as_secs_f64(),
            peak_kib as f64 / 1024.0,
            server_cpu_us.map_or("?".to_owned(), |us| format!("{us:.1}")),
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
            "server_cpu_s": server_cpu_s,
            "server_cpu_us_per_request": server_cpu_us,
        }),
        errors: errors.count,
    })
}

/// How one unit of `stdio-latency` ended.
enum Unit {
    /// Answered and checked; `items` listed, `pages` requests sent, `bytes` of answers read.
    Done { pages: u64, items: u64, bytes: u64 },
    /// A wrong answer: counted, and the next unit goes on.
    Wrong,
    /// The server is gone or out of time: no later unit can run.
    Fatal,
}

/// One unit of work, one request at a time (a walk sends its pages one after another): `first`
/// is its first request line, built before the clock started, with the id `*next_id`; later pages
/// take the ids after it.
async fn one_unit(
    server: &mut Server,
    work: &Work,
    first: String,
    next_id: &mut u64,
    deadline: Instant,
    errors: &mut Errors,
) -> Unit {
    let (mut cursor, mut pages, mut items, mut bytes) = (None::<String>, 0u64, 0u64, 0u64);
    let mut first = Some(first);
    loop {
        pages += 1;
        if pages > MAX_PAGES {
            errors.add(format!("a walk took more than {MAX_PAGES} pages"));
            return Unit::Wrong;
        }
        let body = match first.take() {
            Some(line) => line,
            None => {
                *next_id += 1;
                let mut line = work.request(*next_id, cursor.as_deref());
                line.push('\n');
                line
            }
        };
        let id = *next_id;
        if let Err(e) = server.stdin.write_all(body.as_bytes()).await {
            errors.add(format!("writing request {id}: {e}"));
            return Unit::Fatal;
        }
        let step = loop {
            let message = match timeout_at(deadline, server.next()).await {
                Err(_) => {
                    errors.add(format!("timed out at request {id}"));
                    return Unit::Fatal;
                }
                Ok(Err(e)) | Ok(Ok(Some(Message::Unparsable(e)))) => {
                    errors.add(e);
                    return Unit::Wrong;
                }
                Ok(Ok(None)) => {
                    errors.add(format!("the server closed stdout at request {id}"));
                    return Unit::Fatal;
                }
                Ok(Ok(Some(Message::Other))) => continue,
                Ok(Ok(Some(Message::Response(v)))) => v,
            };
            // The line buffer still holds the answer just read.
            bytes += server.line.len() as u64;
            match check_answer(&message, work) {
                (Some(got), Ok(step)) if got == id => break step,
                (Some(got), Err(e)) if got == id => {
                    errors.add(e);
                    return Unit::Wrong;
                }
                (Some(got), _) if got < id => {
                    errors.add(format!("a late or repeated answer to id {got}"));
                    continue;
                }
                (_, verdict) => {
                    errors.add(verdict.err().unwrap_or_else(|| "unknown id".into()));
                    return Unit::Wrong;
                }
            }
        };
        match step {
            Step::Done { items: last } => {
                items += last;
                if let Err(e) = work.check_total(items) {
                    errors.add(e);
                    return Unit::Wrong;
                }
                return Unit::Done { pages, items, bytes };
            }
            Step::Next { cursor: next, items: page } => {
                items += page;
                cursor = Some(next);
            }
        }
    }
}

pub(crate) async fn stdio_latency(mut args: Args) -> Result<Report, String> {
    let n = requests(args.number("requests", None)?)?;
    let warmup: u64 = args.number("warmup", Some(200))?;
    if warmup > MAX_REQUESTS {
        return Err(format!("--warmup must be at most {MAX_REQUESTS}"));
    }
    let mut work = Work::parse(&mut args)?;
    let preamble = args.take("preamble").map(PathBuf::from);
    let limit = seconds("timeout", args.number("timeout", Some(300.0))?)?;
    let command = args.finish(true)?;
    if work.legacy() {
        return Err("--method legacy and legacy-session are over HTTP only (bench-load http)".into());
    }

    let mut server = Server::spawn(&command)?;
    let deadline = Instant::now() + limit;
    server.preamble(preamble, deadline).await?;
    // `tasks/get` reads a working task created before the clock starts.
    if let Work::TaskGet { id } = &mut work {
        *id = server.create_task(deadline).await?;
    }
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = sample_rss(server.pid, peak.clone());
    let mut micros = Vec::with_capacity(n as usize);
    let mut errors = Errors::default();
    let (mut next_id, mut pages, mut items, mut bytes) = (0u64, 0u64, 0u64, 0u64);
    let cpu0 = own_cpu_seconds();
    let started = Instant::now();
    // The server's CPU time over the measured units (from the first one after the warm-up).
    let (mut server_cpu0, mut server_faults0) = (None, None);
    for unit in 1..=warmup + n {
        if unit == warmup + 1 {
            server_cpu0 = ThreadTimes::read(&server.pid.to_string());
            server_faults0 = minor_faults(&server.pid.to_string());
        }
        next_id += 1;
        let mut first = work.request(next_id, None);
        first.push('\n');
        let sent = Instant::now();
        match one_unit(&mut server, &work, first, &mut next_id, deadline, &mut errors).await {
            Unit::Done { pages: p, items: i, bytes: b } => {
                let elapsed = micros_since(sent);
                if unit > warmup {
                    micros.push(elapsed);
                    (pages, items, bytes) = (p, i, b);
                }
            }
            Unit::Wrong => {}
            Unit::Fatal => {
                errors.count += warmup + n - unit;
                break;
            }
        }
    }
    let wall = started.elapsed();
    let load_cpu = cpu_percent(cpu0, wall.as_secs_f64());
    // Every thread's time on a CPU (ns), finer than the 10 ms ticks of `/proc/PID/stat`.
    let server_cpu = ThreadTimes::read(&server.pid.to_string());
    let server_faults = minor_faults(&server.pid.to_string());
    let server_cpu_s = server_cpu0.as_ref().zip(server_cpu.as_ref()).map(|(a, b)| b.since(a) as f64 / 1e9);
    if let Some(kib) = vm_hwm_kib(server.pid) {
        peak.fetch_max(kib, Ordering::Relaxed);
    }
    sampler.abort();
    server.shut_down().await;
    let measured = micros.len();
    let server_cpu_us = cpu_us_per(server_cpu0.as_ref(), server_cpu.as_ref(), measured as u64);
    let server_faults = faults_per(server_faults0, server_faults, measured as u64);
    let s = summarize(micros);
    let peak_kib = peak.load(Ordering::Relaxed);
    let first_errors = errors.kept.clone();
    Ok(Report {
        human: format!(
            "stdio-latency ({}): {measured}/{n} ok (+{warmup} warm-up), {} errors, p50 {} µs, p99 {} µs, mean {:.1} µs, max {} µs, \
             {pages} requests, {items} items and {bytes} bytes of answers per unit, server CPU {} µs per unit, {:.3} s, \
             generator CPU {load_cpu:.0}%{}",
            work.method(),
            errors.count,
            s.p50,
            s.p99,
            s.mean,
            s.max,
            server_cpu_us.map_or("?".to_owned(), |us| format!("{us:.0}")),
            wall.as_secs_f64(),
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "stdio-latency",
            "method": work.method(),
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
            "pages_per_unit": pages,
            "items_per_unit": items,
            "answer_bytes_per_unit": bytes,
            "load_cpu_pct": load_cpu,
            "server_cpu_s": server_cpu_s,
            "server_cpu_us_per_unit": server_cpu_us,
            "server_minflt_per_unit": server_faults,
            "peak_rss_kib": peak_kib,
        }),
        errors: errors.count,
    })
}
