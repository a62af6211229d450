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
//!
//! `settings` reads the command line (its bounds, `DEFAULT_OPEN_RATE`) and raises the limit on open
//! files, `drips` holds the drip connections, `legit` the legitimate requests that measure the
//! latency (`LEGIT_WARMUP`), and `tally` counts what the drips came to; this module runs the phases
//! and makes the report.

mod drips;
mod legit;
mod settings;
mod tally;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::time::{Instant, sleep};

use crate::hold::proc_status_kib;
use crate::{
    Args, Errors, PROTOCOL, Report, cpu_percent, error_suffix, own_cpu_seconds, parse_url, request_body,
    summarize,
};
use drips::{Shared, run_drip};
use legit::legit;
use settings::Settings;
pub(crate) use settings::raise_fd_limit;
use tally::tally;

/// Drips connecting at once: well below the servers' listen backlog (128), which more would overflow
/// (each overflow costs a 1 s SYN retransmission).
const CONNECTING_AT_ONCE: usize = 32;
/// File descriptors needed beside the drips (the legitimate connections, stdio, the runtime).
const SPARE_FDS: u64 = 64;
/// How long opening all drips may take before the drip phase starts anyway.
const OPEN_ALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The time between the last drip's head and the drip phase: every drip has then sent a byte.
const SETTLE: Duration = Duration::from_secs(1);
/// Ids of the drip phase's requests start above this (the baseline's start at 1).
const DRIP_PHASE_IDS: u64 = 1_000_000;

/// `bench-load drip`: the baseline, the drips and the drip phase, and their report.
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

    #[test]
    fn the_drip_body_is_the_ordinary_request() {
        // The head announces the length of an ordinary call; the drip never finishes it in time.
        let body = request_body(0);
        assert!(body.len() > 100, "{} bytes: a drip would finish within its wait", body.len());
        assert!(serde_json::from_str::<serde_json::Value>(&body).is_ok());
    }
}
