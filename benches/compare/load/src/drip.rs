//! `bench-load drip`: the latency of legitimate requests while N "drip" connections hold the
//! server, and what the server does with the drips.
//!
//! Each drip connection sends a complete `POST` head with the `Content-Length` of an ordinary
//! `tools/call` (its id 0) and then one byte of that body per second, so that the body is never
//! complete within any body deadline (it would take about 200 s). While they are open, `--requests`
//! checked `tools/call`s go one at a time over a separate keep-alive connection, `--interval-ms`
//! apart, after `LEGIT_WARMUP` unmeasured ones (the drip phase). The same requests are measured
//! first on another connection, before any drip is open (the baseline).
//!
//! Every drip is watched until the server answers it (408 or any status) or closes it, or until
//! `--wait-secs` after its head: then it is "held", which is a property of the server, not an error
//! of the run. A drip that cannot connect or send its head is an error.
//!
//! Drips are opened at `--open-rate` a second, evenly spaced (see `DEFAULT_OPEN_RATE`). The
//! generator must not be the bottleneck: drip `i` writes its bytes at `t0 + i/N s + k s`, one
//! task per drip on tokio's timer wheel, so the N bytes of each second are spread evenly over it
//! instead of leaving in a burst; the largest lateness of a write against its slot is reported
//! (`max_write_lag_ms`), and so is the generator's CPU use over the drip phase. The soft limit on
//! open files is raised to the hard limit when the drips need it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::{Instant, sleep, sleep_until, timeout_at};

use crate::hold::proc_status_kib;
use crate::{
    Args, Errors, PROTOCOL, Report, cpu_percent, echo_request, error_suffix, exchange, own_cpu_seconds,
    parse_url, request_body, seconds, summarize,
};

/// Upper bound on `--drips`.
const MAX_DRIPS: usize = 30_000;
/// Upper bound on `--requests`.
const MAX_LEGIT_REQUESTS: u64 = 100_000;
/// Upper bound on `--interval-ms`.
const MAX_INTERVAL_MS: u64 = 10_000;
/// Drips opened per second by default, evenly spaced. A connection is established by the kernel
/// before the server accepts it, so a client that opens them as fast as it can fills the listen
/// backlog (128 for tokio's listeners) faster than a busy server on one core drains it, and each
/// connection over the backlog costs a 1 s SYN retransmission. 3,000 a second opens 12,000 drips
/// in 4 s, well inside a 15 s body deadline.
const DEFAULT_OPEN_RATE: u32 = 3_000;
/// Upper bound on `--open-rate`.
const MAX_OPEN_RATE: u32 = 100_000;
/// Drips connecting at once: well below the servers' listen backlog (128), which more would overflow
/// (each overflow costs a 1 s SYN retransmission).
const CONNECTING_AT_ONCE: usize = 32;
/// File descriptors needed beside the drips (the legitimate connections, stdio, the runtime).
const SPARE_FDS: u64 = 64;
/// How long one drip may take to connect and send its head.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// How long opening all drips may take before the drip phase starts anyway.
const OPEN_ALL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one legitimate request may take before it counts as an error.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The time between the last drip's head and the drip phase: every drip has then sent a byte.
const SETTLE: Duration = Duration::from_secs(1);
/// Unmeasured requests at the start of each run of legitimate requests (the first included).
const LEGIT_WARMUP: u64 = 20;
/// Ids of the drip phase's requests start above this (the baseline's start at 1).
const DRIP_PHASE_IDS: u64 = 1_000_000;

#[derive(Debug, PartialEq)]
struct Settings {
    url: String,
    drips: usize,
    requests: u64,
    interval: Duration,
    wait: Duration,
    /// Drips opened per second.
    open_rate: u32,
    pid: Option<u32>,
}

impl Settings {
    fn parse(mut args: Args) -> Result<Settings, String> {
        let url = args.take("url").ok_or("--url is required")?;
        let drips: usize = args.number("drips", None)?;
        let requests: u64 = args.number("requests", Some(200))?;
        let interval_ms: u64 = args.number("interval-ms", Some(20))?;
        let wait = seconds("wait-secs", args.number("wait-secs", Some(20.0))?)?;
        let open_rate: u32 = args.number("open-rate", Some(DEFAULT_OPEN_RATE))?;
        let pid = match args.take("pid") {
            Some(p) => Some(p.parse().map_err(|_| format!("--pid: not a number: {p:?}"))?),
            None => None,
        };
        args.finish(false)?;
        if drips == 0 || drips > MAX_DRIPS {
            return Err(format!("--drips must be between 1 and {MAX_DRIPS}"));
        }
        if requests == 0 || requests > MAX_LEGIT_REQUESTS {
            return Err(format!("--requests must be between 1 and {MAX_LEGIT_REQUESTS}"));
        }
        if interval_ms > MAX_INTERVAL_MS {
            return Err(format!("--interval-ms must be at most {MAX_INTERVAL_MS}"));
        }
        if wait.is_zero() {
            return Err("--wait-secs must be positive".into());
        }
        if !(1..=MAX_OPEN_RATE).contains(&open_rate) {
            return Err(format!("--open-rate must be between 1 and {MAX_OPEN_RATE}"));
        }
        Ok(Settings {
            url,
            drips,
            requests,
            interval: Duration::from_millis(interval_ms),
            wait,
            open_rate,
            pid,
        })
    }
}

/// The new soft limit on open files when `needed` exceed the current one (`None` is unlimited):
/// `Ok(None)` when it suffices, `Ok(Some(soft))` to raise it (to the hard limit), an error when
/// even the hard limit is too low.
fn raised_soft_limit(current: Option<u64>, maximum: Option<u64>, needed: u64) -> Result<Option<u64>, String> {
    if current.is_none_or(|c| c >= needed) {
        return Ok(None);
    }
    match maximum {
        None => Ok(Some(needed)),
        Some(max) if max >= needed => Ok(Some(max)),
        Some(max) => Err(format!(
            "the drips need {needed} open files and the hard limit is {max} (raise it: ulimit -Hn)"
        )),
    }
}

/// Raises the soft limit on open files if `needed` exceed it; the limit now in force.
fn raise_fd_limit(needed: u64) -> Result<u64, String> {
    let limit = getrlimit(Resource::Nofile);
    let Some(soft) = raised_soft_limit(limit.current, limit.maximum, needed)? else {
        return Ok(limit.current.unwrap_or(u64::MAX));
    };
    setrlimit(Resource::Nofile, Rlimit { current: Some(soft), maximum: limit.maximum })
        .map_err(|e| format!("raising the open-file limit to {soft}: {e}"))?;
    Ok(soft)
}

/// How one drip connection ended, seen from the client.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// It never connected or never got its head out.
    Failed(String),
    /// The server answered with this status (0: unreadable), `after_s` seconds after the head.
    Answered { status: u16, after_s: f64 },
    /// The server closed it (end of stream or reset) without an answer.
    Closed { after_s: f64 },
    /// Still open and unanswered when the wait ended.
    Held,
}

/// The status code of the first bytes of an HTTP/1.x response; 0 when they are none.
fn status_of(first: &[u8]) -> u16 {
    let text = String::from_utf8_lossy(&first[..first.len().min(64)]);
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(v), Some(code)) if v.starts_with("HTTP/1.") => code.parse().unwrap_or(0),
        _ => 0,
    }
}

/// What the drips came to.
#[derive(Default)]
struct Outcomes {
    opened: usize,
    failed: usize,
    answered_408: usize,
    answered_other: usize,
    /// The first status other than 408, if any.
    other_status: Option<u16>,
    closed: usize,
    held: usize,
    /// Seconds after the head at which answered or closed drips ended: min, median, max.
    ended_s: Option<[f64; 3]>,
    /// The first few distinct reasons of failed drips.
    failures: Errors,
}

fn tally(outcomes: &[Outcome]) -> Outcomes {
    let mut t = Outcomes::default();
    let mut ended = Vec::new();
    for outcome in outcomes {
        match outcome {
            Outcome::Failed(e) => {
                t.failed += 1;
                t.failures.add(e.clone());
            }
            Outcome::Answered { status, after_s } => {
                if *status == 408 {
                    t.answered_408 += 1;
                } else {
                    t.answered_other += 1;
                    t.other_status.get_or_insert(*status);
                }
                ended.push(*after_s);
            }
            Outcome::Closed { after_s } => {
                t.closed += 1;
                ended.push(*after_s);
            }
            Outcome::Held => t.held += 1,
        }
    }
    t.opened = outcomes.len() - t.failed;
    ended.sort_by(f64::total_cmp);
    if let (Some(&min), Some(&max)) = (ended.first(), ended.last()) {
        let mid = ended.len() / 2;
        let median = if ended.len() % 2 == 1 { ended[mid] } else { (ended[mid - 1] + ended[mid]) / 2.0 };
        t.ended_s = Some([min, median, max]);
    }
    t
}

/// What every drip task shares.
struct Shared {
    authority: String,
    head: Bytes,
    body: Bytes,
    connecting: Semaphore,
    /// The origin of the write slots.
    t0: Instant,
    drips: usize,
    open_rate: u32,
    wait: Duration,
    /// Drips whose head is out.
    opened: AtomicUsize,
    /// Drips whose head is out or that failed.
    settled: AtomicUsize,
    /// Drips answered or closed by the server.
    ended: AtomicUsize,
    max_lag_us: AtomicU64,
    /// The longest a drip took from its first try to connect to having sent its head.
    max_open_us: AtomicU64,
    bytes_sent: AtomicU64,
}

impl Shared {
    /// Drips open right now (head out, neither answered nor closed, not yet given up on).
    fn open_now(&self) -> usize {
        self.opened.load(Ordering::Relaxed).saturating_sub(self.ended.load(Ordering::Relaxed))
    }
}

async fn open_drip(shared: &Shared) -> Result<TcpStream, String> {
    let deadline = Instant::now() + OPEN_TIMEOUT;
    let mut stream = timeout_at(deadline, TcpStream::connect(&shared.authority))
        .await
        .map_err(|_| "connect timed out".to_owned())?
        .map_err(|e| format!("connect: {e}"))?;
    // One byte a second must leave at once, not wait for an acknowledgement.
    let _ = stream.set_nodelay(true);
    timeout_at(deadline, stream.write_all(&shared.head))
        .await
        .map_err(|_| "sending the head timed out".to_owned())?
        .map_err(|e| format!("sending the head: {e}"))?;
    Ok(stream)
}

/// One drip: connect, send the head, then a byte per slot until the server answers or closes, or
/// `wait` has passed since the head.
async fn run_drip(index: usize, shared: Arc<Shared>) -> Outcome {
    sleep_until(shared.t0 + Duration::from_secs_f64(index as f64 / f64::from(shared.open_rate))).await;
    let opened = {
        let _permit = shared.connecting.acquire().await;
        let started = Instant::now();
        let opened = open_drip(&shared).await;
        let took = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        shared.max_open_us.fetch_max(took, Ordering::Relaxed);
        opened
    };
    let mut stream = match opened {
        Ok(stream) => stream,
        Err(e) => {
            shared.settled.fetch_add(1, Ordering::Relaxed);
            return Outcome::Failed(e);
        }
    };
    let head_at = Instant::now();
    shared.opened.fetch_add(1, Ordering::Relaxed);
    shared.settled.fetch_add(1, Ordering::Relaxed);
    let outcome = watch(index, &shared, &mut stream, head_at).await;
    if outcome != Outcome::Held {
        shared.ended.fetch_add(1, Ordering::Relaxed);
    }
    outcome
}

async fn watch(index: usize, shared: &Shared, stream: &mut TcpStream, head_at: Instant) -> Outcome {
    let give_up = head_at + shared.wait;
    let phase = Duration::from_micros(index as u64 * 1_000_000 / shared.drips as u64);
    let mut slot = shared.t0 + phase;
    while slot <= head_at {
        slot += Duration::from_secs(1);
    }
    let mut sent = 0;
    let mut buf = [0u8; 64];
    loop {
        let wake = if sent < shared.body.len() { slot.min(give_up) } else { give_up };
        tokio::select! {
            biased;
            read = stream.read(&mut buf) => {
                let after_s = head_at.elapsed().as_secs_f64();
                return match read {
                    Ok(0) | Err(_) => Outcome::Closed { after_s },
                    Ok(n) => Outcome::Answered { status: status_of(&buf[..n]), after_s },
                };
            }
            () = sleep_until(wake) => {
                let now = Instant::now();
                if now >= give_up {
                    return Outcome::Held;
                }
                let lag = u64::try_from(now.saturating_duration_since(slot).as_micros()).unwrap_or(u64::MAX);
                shared.max_lag_us.fetch_max(lag, Ordering::Relaxed);
                if stream.write_all(&shared.body[sent..=sent]).await.is_err() {
                    // Closed by the server; an answer it sent first may still be there.
                    let after_s = head_at.elapsed().as_secs_f64();
                    return match stream.try_read(&mut buf) {
                        Ok(n) if n > 0 => Outcome::Answered { status: status_of(&buf[..n]), after_s },
                        _ => Outcome::Closed { after_s },
                    };
                }
                sent += 1;
                shared.bytes_sent.fetch_add(1, Ordering::Relaxed);
                slot += Duration::from_secs(1);
            }
        }
    }
}

/// What a run of legitimate requests measured.
#[derive(Default)]
struct Legit {
    micros: Vec<u32>,
    /// The connection's first request (connect included), not in `micros`.
    first_us: Option<u32>,
    reconnects: u64,
    errors: Errors,
}

/// `requests` checked calls, one at a time on one keep-alive connection, `interval` apart, after
/// `LEGIT_WARMUP` unmeasured ones; a broken connection is opened again (and counted).
async fn legit(authority: &str, path: &str, requests: u64, interval: Duration, first_id: u64) -> Legit {
    let mut run = Legit::default();
    let mut sender = None;
    let mut id = first_id;
    let (mut warm, mut measured) = (0, 0);
    // Each attempt is bounded; a broken connection costs an attempt, so this ends.
    let mut attempts = 0;
    while measured < requests && attempts < LEGIT_WARMUP + requests + 10 {
        attempts += 1;
        let started = Instant::now();
        if sender.is_none() {
            match connect(authority).await {
                Ok(s) => sender = Some(s),
                Err(e) => {
                    run.errors.add(e);
                    sleep(interval.max(Duration::from_millis(20))).await;
                    continue;
                }
            }
            if run.first_us.is_some() {
                run.reconnects += 1;
            }
        }
        let Some(s) = sender.as_mut() else { continue };
        if let Err(e) = s.ready().await {
            run.errors.add(format!("connection closed: {e}"));
            sender = None;
            continue;
        }
        id += 1;
        let outcome =
            tokio::time::timeout(REQUEST_TIMEOUT, exchange(s, echo_request(authority, path, id), id)).await;
        let micros = u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX);
        match outcome {
            Err(_) => {
                run.errors.add(format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()));
                sender = None;
            }
            Ok(Err((e, broken))) => {
                run.errors.add(e);
                if broken {
                    sender = None;
                }
            }
            Ok(Ok(())) if warm < LEGIT_WARMUP => {
                run.first_us.get_or_insert(micros);
                warm += 1;
            }
            Ok(Ok(())) => {
                run.micros.push(micros);
                measured += 1;
            }
        }
        sleep(interval).await;
    }
    let missing = requests - measured;
    if missing > 0 {
        run.errors.add(format!("{missing} of {requests} requests not answered"));
    }
    run
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(authority: &str) -> Result<Sender, String> {
    let stream = tokio::time::timeout(REQUEST_TIMEOUT, TcpStream::connect(authority))
        .await
        .map_err(|_| format!("connect {authority}: timed out"))?
        .map_err(|e| format!("connect {authority}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
    // The driver ends with the connection.
    tokio::spawn(connection);
    Ok(sender)
}

pub(crate) async fn drip(args: Args) -> Result<Report, String> {
    let settings = Settings::parse(args)?;
    let Settings { ref url, drips, requests, interval, wait, open_rate, pid } = settings;
    let (authority, path) = parse_url(url)?;
    let fd_limit = raise_fd_limit(drips as u64 + SPARE_FDS)?;
    let body = Bytes::from(request_body(0));
    let head = Bytes::from(format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\n\r\n",
        body.len()
    ));
    let cpu0 = own_cpu_seconds();
    let started = Instant::now();
    let rss_before = pid.and_then(|p| proc_status_kib(p, "VmRSS"));

    let baseline = legit(&authority, &path, requests, interval, 0).await;

    let shared = Arc::new(Shared {
        authority: authority.clone(),
        head,
        body,
        connecting: Semaphore::new(CONNECTING_AT_ONCE),
        t0: Instant::now(),
        drips,
        open_rate,
        wait,
        opened: AtomicUsize::new(0),
        settled: AtomicUsize::new(0),
        ended: AtomicUsize::new(0),
        max_lag_us: AtomicU64::new(0),
        max_open_us: AtomicU64::new(0),
        bytes_sent: AtomicU64::new(0),
    });
    let tasks: Vec<_> = (0..drips).map(|i| tokio::spawn(run_drip(i, shared.clone()))).collect();
    // Every drip connects or fails within OPEN_TIMEOUT once it has a permit; all of them together
    // get OPEN_ALL_TIMEOUT before the drip phase starts anyway.
    let open_deadline = Instant::now() + OPEN_ALL_TIMEOUT;
    while shared.settled.load(Ordering::Relaxed) < drips && Instant::now() < open_deadline {
        sleep(Duration::from_millis(10)).await;
    }
    let open_s = shared.t0.elapsed().as_secs_f64();
    sleep(SETTLE).await;
    let rss_during = pid.and_then(|p| proc_status_kib(p, "VmRSS"));
    let open_at_start = shared.open_now();
    let (phase_cpu0, phase_start) = (own_cpu_seconds(), Instant::now());
    let during = legit(&authority, &path, requests, interval, DRIP_PHASE_IDS).await;
    let phase_s = phase_start.elapsed().as_secs_f64();
    let phase_cpu = cpu_percent(phase_cpu0, phase_s);
    let open_at_end = shared.open_now();
    // Each drip ends by itself, at most `wait` after its head.
    let mut outcomes = Vec::with_capacity(drips);
    for task in tasks {
        outcomes.push(task.await.map_err(|e| format!("drip task: {e}"))?);
    }
    let wall = started.elapsed().as_secs_f64();
    let load_cpu = cpu_percent(cpu0, wall);
    let t = tally(&outcomes);

    let mut errors = Errors::default();
    if t.failed > 0 {
        errors.add(format!(
            "{} of {drips} drips did not open: {}",
            t.failed,
            t.failures.kept.first().map_or("?", String::as_str)
        ));
        errors.count += t.failed as u64 - 1;
    }
    let (base_errors, during_errors) = (baseline.errors.count, during.errors.count);
    errors.merge(baseline.errors);
    errors.merge(during.errors);
    let first_errors = errors.kept.clone();
    let (base_measured, measured) = (baseline.micros.len(), during.micros.len());
    let (b, s) = (summarize(baseline.micros), summarize(during.micros));
    let max_lag_ms = shared.max_lag_us.load(Ordering::Relaxed) as f64 / 1000.0;
    let [ended_min, ended_median, ended_max] = t.ended_s.map_or([None; 3], |e| e.map(Some));
    let seconds_or_dash = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
    // The server's memory per open drip (its RSS growth over the drips open when it was sampled).
    let per_drip_kib = rss_before
        .zip(rss_during)
        .filter(|_| open_at_start > 0)
        .map(|(before, during)| (during as f64 - before as f64) / open_at_start as f64);
    // Two objects: one `json!` of all the keys exceeds the macro's recursion limit.
    let mut json = json!({
        "mode": "drip",
        "url": url,
        "drips": drips,
        "requests": requests,
        "interval_ms": interval.as_millis() as u64,
        "wait_s": wait.as_secs_f64(),
        "open_rate": open_rate,
        "fd_limit": fd_limit,
        "opened": t.opened,
        "failed": t.failed,
        "open_s": open_s,
        "max_open_ms": shared.max_open_us.load(Ordering::Relaxed) as f64 / 1000.0,
        "open_at_start": open_at_start,
        "open_at_end": open_at_end,
        "ok": measured,
        "p50_us": s.p50,
        "p99_us": s.p99,
        "max_us": s.max,
        "mean_us": s.mean,
        "first_us": during.first_us,
        "reconnects": during.reconnects,
        "phase_s": phase_s,
    });
    let drips_json = json!({
        "base_ok": base_measured,
        "base_p50_us": b.p50,
        "base_p99_us": b.p99,
        "base_max_us": b.max,
        "answered_408": t.answered_408,
        "answered_other": t.answered_other,
        "other_status": t.other_status,
        "closed": t.closed,
        "held": t.held,
        "ended_min_s": ended_min,
        "ended_median_s": ended_median,
        "ended_max_s": ended_max,
        "bytes_sent": shared.bytes_sent.load(Ordering::Relaxed),
        "max_write_lag_ms": max_lag_ms,
        "rss_before_kib": rss_before,
        "rss_during_kib": rss_during,
        "per_drip_kib": per_drip_kib,
        "phase_cpu_pct": phase_cpu,
        "load_cpu_pct": load_cpu,
        "wall_s": wall,
        "baseline_errors": base_errors,
        "drip_phase_errors": during_errors,
        "errors": errors.count,
        "first_errors": first_errors,
    });
    if let (Some(all), serde_json::Value::Object(more)) = (json.as_object_mut(), drips_json) {
        all.extend(more);
    }
    Ok(Report {
        human: format!(
            "drip: {} of {drips} drips open in {open_s:.1} s ({open_at_start} open at the start of the drip phase, \
             {open_at_end} at its end); legitimate {measured}/{requests} ok, p50 {} µs, p99 {} µs, max {} µs \
             (baseline p50 {} µs, p99 {} µs); drips: {} answered 408, {} answered otherwise, {} closed, {} held, \
             ended at {}/{}/{} s (min/median/max); write lag max {max_lag_ms:.1} ms, generator CPU {phase_cpu:.0}% \
             in the drip phase, {load_cpu:.0}% overall; {} errors{}",
            t.opened,
            s.p50,
            s.p99,
            s.max,
            b.p50,
            b.p99,
            t.answered_408,
            t.answered_other,
            t.closed,
            t.held,
            seconds_or_dash(ended_min),
            seconds_or_dash(ended_median),
            seconds_or_dash(ended_max),
            errors.count,
            error_suffix(&first_errors)
        ),
        json,
        errors: errors.count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::parse(&list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn settings_have_defaults_and_bounds() {
        let s = Settings::parse(args(&["--url", "http://127.0.0.1:1/mcp", "--drips", "12000"])).unwrap();
        assert_eq!(
            s,
            Settings {
                url: "http://127.0.0.1:1/mcp".into(),
                drips: 12_000,
                requests: 200,
                interval: Duration::from_millis(20),
                wait: Duration::from_secs(20),
                open_rate: DEFAULT_OPEN_RATE,
                pid: None,
            }
        );
        let s = Settings::parse(args(&[
            "--url",
            "u",
            "--drips",
            "5",
            "--requests",
            "7",
            "--interval-ms",
            "0",
            "--wait-secs",
            "2.5",
            "--pid",
            "42",
        ]))
        .unwrap();
        assert_eq!(
            (s.requests, s.interval, s.wait, s.pid),
            (7, Duration::ZERO, Duration::from_millis(2500), Some(42))
        );
        for bad in [
            &["--url", "u"][..],
            &["--drips", "5"],
            &["--url", "u", "--drips", "0"],
            &["--url", "u", "--drips", "30001"],
            &["--url", "u", "--drips", "5", "--requests", "0"],
            &["--url", "u", "--drips", "5", "--wait-secs", "0"],
            &["--url", "u", "--drips", "5", "--open-rate", "0"],
            &["--url", "u", "--drips", "5", "--pid", "x"],
            &["--url", "u", "--drips", "5", "--other", "1"],
        ] {
            assert!(Settings::parse(args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_soft_limit_is_raised_only_when_needed() {
        assert_eq!(raised_soft_limit(Some(20_000), Some(20_000), 12_064), Ok(None));
        assert_eq!(raised_soft_limit(None, None, 12_064), Ok(None));
        assert_eq!(raised_soft_limit(Some(1024), Some(524_288), 12_064), Ok(Some(524_288)));
        assert_eq!(raised_soft_limit(Some(1024), None, 12_064), Ok(Some(12_064)));
        assert!(raised_soft_limit(Some(1024), Some(4096), 12_064).is_err());
    }

    #[test]
    fn statuses_are_read() {
        assert_eq!(status_of(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n"), 408);
        assert_eq!(status_of(b"HTTP/1.0 400 Bad"), 400);
        assert_eq!(status_of(b"HTTP/1.1 4"), 4);
        assert_eq!(status_of(b"garbage"), 0);
        assert_eq!(status_of(b""), 0);
    }

    #[test]
    fn outcomes_are_tallied() {
        let t = tally(&[
            Outcome::Answered { status: 408, after_s: 15.2 },
            Outcome::Answered { status: 408, after_s: 15.0 },
            Outcome::Closed { after_s: 16.0 },
            Outcome::Answered { status: 503, after_s: 0.1 },
            Outcome::Held,
            Outcome::Failed("connect: refused".into()),
            Outcome::Failed("connect: refused".into()),
        ]);
        assert_eq!(
            (t.opened, t.failed, t.answered_408, t.answered_other, t.closed, t.held),
            (5, 2, 2, 1, 1, 1)
        );
        assert_eq!(t.other_status, Some(503));
        assert_eq!(t.ended_s, Some([0.1, 15.1, 16.0]));
        assert_eq!((t.failures.count, t.failures.kept.len()), (2, 1));
        let held = tally(&[Outcome::Held, Outcome::Held]);
        assert_eq!((held.opened, held.held, held.ended_s), (2, 2, None));
        assert_eq!(tally(&[]).ended_s, None);
    }

    #[test]
    fn the_drip_body_is_the_ordinary_request() {
        // The head announces the length of an ordinary call; the drip never finishes it in time.
        let body = request_body(0);
        assert!(body.len() > 100, "{} bytes: a drip would finish within its wait", body.len());
        assert!(serde_json::from_str::<serde_json::Value>(&body).is_ok());
    }
}
