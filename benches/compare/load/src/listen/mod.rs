//! `bench-load listen`: what open `subscriptions/listen` streams cost the server, and how fast a
//! change reaches them. HTTP/1.1, one stream per connection (module `stream`), all from 127.0.0.1:
//!
//! 1. `--streams N` streams are opened at `--open-rate` a second, evenly spaced, `CONNECTING_AT_ONCE`
//!    at a time; each counts as open once its acknowledgment is read and checked.
//! 2. `--settle-secs` after the last acknowledgment the server's `VmRSS` is read and compared with a
//!    sample taken before the first connection: the growth per stream. (`bench-load idle` gives the
//!    same figure for idle keep-alive connections, the baseline.)
//! 3. For `--idle-secs` nothing is sent: the server's CPU (utime + stime of `/proc/PID/stat`) over that
//!    window, and the keep-alive comment lines the streams read meanwhile.
//! 4. One `tools/call` of `announce` on a fresh keep-alive connection; per stream, the time from just
//!    before the call is sent until that stream read its `notifications/tools/list_changed`. Every
//!    stream must read it within `--wait-secs`. The generator reads every stream on its one thread:
//!    a stream's time includes waiting for the generator to reach it, so the spread (p99, max) is
//!    partly the generator's. Both processes' CPU over the fan-out (from the send until the last
//!    stream read the change; every thread's `/proc/PID/task/*/schedstat`, nanoseconds) says which
//!    one set its pace: the server's per stream, the generator's in percent of its core.

mod fanout;
pub(crate) mod sse;
pub(crate) mod stream;

pub(crate) use fanout::run as fanout;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until, timeout, timeout_at};

use crate::drip::raise_fd_limit;
use crate::hold::proc_status_kib;
use crate::http::{call_request, check_http_answer};
use crate::report::{micros_since, process_cpu_seconds, threads_cpu_ns};
use crate::work::Work;
use crate::{
    Args, Errors, MAX_CONNECTIONS, MESSAGE, Report, cpu_percent, error_suffix, own_cpu_seconds, parse_url,
    seconds, summarize,
};
use stream::{Shared, listen};

/// Streams being opened at once (see `idle`).
const CONNECTING_AT_ONCE: usize = 32;
/// File descriptors needed beside the streams.
const SPARE_FDS: u64 = 64;
/// How long one stream may take to connect and have its acknowledgment read.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// Streams opened per second by default (see `drip`'s `DEFAULT_OPEN_RATE`).
const DEFAULT_OPEN_RATE: u32 = 3_000;
/// The tool whose call announces a change of the tools list.
const ANNOUNCE: &str = "announce";

/// A stream's reading task, aborted (closing its connection) when the run is over.
pub(crate) struct Open(JoinHandle<()>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a `listen` run was asked for.
struct Settings {
    url: String,
    pid: u32,
    streams: usize,
    open_rate: u32,
    settle: Duration,
    idle: Duration,
    wait: Duration,
}

impl Settings {
    fn parse(mut args: Args) -> Result<Settings, String> {
        let url = args.take("url").ok_or("--url is required")?;
        let pid: u32 = args.number("pid", None)?;
        let streams: usize = args.number("streams", None)?;
        let open_rate: u32 = args.number("open-rate", Some(DEFAULT_OPEN_RATE))?;
        let settle = seconds("settle-secs", args.number("settle-secs", Some(1.0))?)?;
        let idle = seconds("idle-secs", args.number("idle-secs", Some(10.0))?)?;
        let wait = seconds("wait-secs", args.number("wait-secs", Some(30.0))?)?;
        args.finish(false)?;
        if streams == 0 || streams > MAX_CONNECTIONS {
            return Err(format!("--streams must be between 1 and {MAX_CONNECTIONS}"));
        }
        if !(1..=100_000).contains(&open_rate) {
            return Err("--open-rate must be between 1 and 100000".into());
        }
        if idle.is_zero() || wait.is_zero() {
            return Err("--idle-secs and --wait-secs must be positive".into());
        }
        Ok(Settings { url, pid, streams, open_rate, settle, idle, wait })
    }
}

/// Opens `streams` streams at `open_rate` a second, stream `i` on the server `targets[i % targets.len()]`
/// (authority, path); the open ones, in index order, and the errors of the others.
pub(crate) async fn open_all(
    targets: &[(String, String)],
    streams: usize,
    open_rate: u32,
    shared: &Arc<Shared>,
) -> (Vec<Open>, Errors) {
    let connecting = Arc::new(Semaphore::new(CONNECTING_AT_ONCE));
    let t0 = Instant::now();
    let openers: Vec<_> = (0..streams)
        .map(|index| {
            let (authority, path) = targets[index % targets.len()].clone();
            let (connecting, shared) = (connecting.clone(), shared.clone());
            let at = t0 + Duration::from_secs_f64(index as f64 / f64::from(open_rate));
            tokio::spawn(async move {
                sleep_until(at).await;
                let _permit = connecting.acquire().await.map_err(|e| e.to_string())?;
                let (acked, ack) = oneshot::channel();
                let task = Open(tokio::spawn(listen(authority, path, index, acked, shared)));
                match timeout(OPEN_TIMEOUT, ack).await {
                    Err(_) => Err("no acknowledgment within 10 s".to_owned()),
                    Ok(Err(_)) => Err("the stream's task ended without a word".to_owned()),
                    Ok(Ok(Err(e))) => Err(e),
                    Ok(Ok(Ok(()))) => Ok(task),
                }
            })
        })
        .collect();
    let mut open = Vec::with_capacity(streams);
    let mut errors = Errors::default();
    for opener in openers {
        match opener.await {
            Ok(Ok(task)) => open.push(task),
            Ok(Err(e)) => errors.add(e),
            Err(e) => errors.add(format!("opener task: {e}")),
        }
    }
    (open, errors)
}

/// When the `announce` call was sent, with the CPU of the servers and of this process then, and its
/// round trip.
pub(crate) struct Announced {
    pub(crate) sent: Instant,
    /// The sum over the servers' processes, or `None` if one is gone.
    pub(crate) server_ns: Option<u64>,
    pub(crate) own_ns: Option<u64>,
    pub(crate) call_us: u32,
}

/// CPU of every thread of every process of `pids` so far (ns); `None` if one is gone.
pub(crate) fn processes_cpu_ns(pids: &[u32]) -> Option<u64> {
    pids.iter().map(|pid| threads_cpu_ns(&pid.to_string())).sum()
}

/// Calls `announce` (with id `id`) on a fresh keep-alive connection to `authority`, reading the CPU
/// of the processes `pids` just before it is sent.
pub(crate) async fn announce(
    authority: &str,
    path: &str,
    id: u64,
    pids: &[u32],
) -> Result<Announced, String> {
    let (mut sender, driver) = crate::http::http1_connection(authority).await?;
    sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let work = Work::Call { tool: ANNOUNCE.to_owned(), message: MESSAGE.to_owned() };
    let request = call_request(authority, path, &work, id, false);
    let (server_ns, own_ns) = (processes_cpu_ns(pids), threads_cpu_ns("self"));
    let sent = Instant::now();
    let answer = check_http_answer(sender.send_request(request).await, id, &work).await;
    let call_us = micros_since(sent);
    driver.abort();
    answer.map_err(|(e, _)| format!("announce: {e}"))?;
    Ok(Announced { sent, server_ns, own_ns, call_us })
}

pub(crate) async fn run(args: Args) -> Result<Report, String> {
    let settings = Settings::parse(args)?;
    let (authority, path) = parse_url(&settings.url)?;
    let (n, pid) = (settings.streams, settings.pid);
    let fd_limit = raise_fd_limit(n as u64 + SPARE_FDS)?;
    let (changes, mut changed) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        keepalives: Default::default(),
        ended: Default::default(),
        changes,
        errors: Mutex::new(Errors::default()),
    });
    let rss_before = proc_status_kib(pid, "VmRSS").ok_or_else(|| format!("no /proc/{pid}/status"))?;

    let opening = Instant::now();
    let targets = [(authority.clone(), path.clone())];
    let (open, mut errors) = open_all(&targets, settings.streams, settings.open_rate, &shared).await;
    let open_s = opening.elapsed().as_secs_f64();
    sleep(settings.settle).await;
    let rss_streams = proc_status_kib(pid, "VmRSS").unwrap_or(0);
    let hwm_streams = proc_status_kib(pid, "VmHWM").unwrap_or(0);
    let per_stream = (rss_streams as f64 - rss_before as f64) / n as f64;

    // The idle window: nothing is sent; the server writes only keep-alives.
    let (keepalives0, server0, own0) =
        (shared.keepalives.load(Ordering::Relaxed), process_cpu_seconds(pid), own_cpu_seconds());
    let idle_from = Instant::now();
    sleep(settings.idle).await;
    let idle_s = idle_from.elapsed().as_secs_f64();
    let server_idle_cpu_pct = process_cpu_seconds(pid)
        .zip(server0)
        .map(|(after, before)| (after - before) / idle_s * 100.0)
        .ok_or_else(|| format!("the server (pid {pid}) is gone"))?;
    let load_idle_cpu_pct = cpu_percent(own0, idle_s);
    let keepalives = shared.keepalives.load(Ordering::Relaxed) - keepalives0;
    let ended_before_announce = shared.ended.load(Ordering::Relaxed);

    // One change, and when each stream read it.
    let announced = announce(&authority, &path, n as u64 + 1, &[pid]).await?;
    let (sent, call_us) = (announced.sent, announced.call_us);
    let deadline = sent + settings.wait;
    let mut read = vec![false; n];
    let mut micros = Vec::with_capacity(open.len());
    while micros.len() < open.len() {
        match timeout_at(deadline, changed.recv()).await {
            Ok(Some((index, at))) if !read[index] => {
                read[index] = true;
                micros.push(u32::try_from((at - sent).as_micros()).unwrap_or(u32::MAX));
            }
            Ok(Some((index, _))) => errors.add(format!("stream {index} read the change twice")),
            Ok(None) | Err(_) => break,
        }
    }
    let fanout_s = sent.elapsed().as_secs_f64();
    let cpu_since = |pid: &str, before: Option<u64>| {
        threads_cpu_ns(pid).zip(before).map(|(after, before)| after.saturating_sub(before) as f64)
    };
    let fanout_server_us_per_stream =
        cpu_since(&pid.to_string(), announced.server_ns).map(|ns| ns / 1e3 / micros.len().max(1) as f64);
    let fanout_load_cpu_pct = cpu_since("self", announced.own_ns).map(|ns| ns / 1e9 / fanout_s * 100.0);
    let missed = open.len() - micros.len();
    if missed > 0 {
        errors.add(format!("{missed} open streams did not read the change within {:?}", settings.wait));
    }
    let ended = shared.ended.load(Ordering::Relaxed);
    if ended > 0 {
        errors.add(format!("the server ended {ended} streams ({ended_before_announce} before the change)"));
    }
    let rss_end = proc_status_kib(pid, "VmRSS").unwrap_or(0);
    let opened = open.len();
    drop(open);
    errors
        .merge(std::mem::take(&mut *shared.errors.lock().unwrap_or_else(std::sync::PoisonError::into_inner)));
    let s = summarize(micros);
    let first_errors = errors.kept.clone();
    let per_stream_s = if opened > 0 { keepalives as f64 / opened as f64 / idle_s } else { 0.0 };
    Ok(Report {
        human: format!(
            "listen: {opened} of {n} streams open in {open_s:.1} s; server RSS {rss_before} → {rss_streams} KiB = \
             {per_stream:.1} KiB per stream; {idle_s:.0} s idle: server CPU {server_idle_cpu_pct:.2}%, {keepalives} \
             keep-alives read; announce answered in {call_us} µs, change read by every stream: p50 {} µs, p99 {} µs, \
             max {} µs (server CPU {:.1} µs per stream, generator CPU {:.0}%); {} errors{}",
            s.p50,
            s.p99,
            s.max,
            fanout_server_us_per_stream.unwrap_or(0.0),
            fanout_load_cpu_pct.unwrap_or(0.0),
            errors.count,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "listen",
            "url": settings.url,
            "pid": pid,
            "protocol": "http1",
            "streams": n,
            "opened": opened,
            "fd_limit": fd_limit,
            "open_s": open_s,
            "rss_before_kib": rss_before,
            "rss_streams_kib": rss_streams,
            "hwm_streams_kib": hwm_streams,
            "per_stream_kib": per_stream,
            "idle_s": idle_s,
            "server_idle_cpu_pct": server_idle_cpu_pct,
            "load_idle_cpu_pct": load_idle_cpu_pct,
            "keepalives": keepalives,
            "keepalives_per_stream_s": per_stream_s,
            "announce_call_us": call_us,
            "changes_read": opened - missed,
            "change_p50_us": s.p50,
            "change_p99_us": s.p99,
            "change_mean_us": s.mean,
            "change_max_us": s.max,
            "fanout_s": fanout_s,
            "fanout_server_cpu_us_per_stream": fanout_server_us_per_stream,
            "fanout_load_cpu_pct": fanout_load_cpu_pct,
            "ended": ended,
            "rss_end_kib": rss_end,
            "errors": errors.count,
            "first_errors": first_errors,
        }),
        errors: errors.count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_have_defaults_and_bounds() {
        let s = Settings::parse(Args::of(&["--url", "u", "--pid", "1", "--streams", "10000"])).unwrap();
        assert_eq!((s.streams, s.open_rate), (10_000, DEFAULT_OPEN_RATE));
        assert_eq!(
            (s.settle, s.idle, s.wait),
            (Duration::from_secs(1), Duration::from_secs(10), Duration::from_secs(30))
        );
        for bad in [
            &["--url", "u", "--pid", "1"][..],
            &["--url", "u", "--streams", "5"],
            &["--url", "u", "--pid", "1", "--streams", "0"],
            &["--url", "u", "--pid", "1", "--streams", "20000"],
            &["--url", "u", "--pid", "1", "--streams", "5", "--idle-secs", "0"],
            &["--url", "u", "--pid", "1", "--streams", "5", "--open-rate", "0"],
            &["--url", "u", "--pid", "1", "--streams", "5", "--other", "1"],
        ] {
            assert!(Settings::parse(Args::of(bad)).is_err(), "{bad:?}");
        }
    }
}
