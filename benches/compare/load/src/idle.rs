//! `bench-load idle`: the server's memory per idle keep-alive HTTP/1.1 connection. The connections
//! are opened in steps (`--steps 1000,10000`: up to 1,000, then up to 10,000 in all), at
//! `--open-rate` a second, evenly spaced, `CONNECTING_AT_ONCE` at a time; each makes one checked
//! `tools/call` (so that it is a real keep-alive connection, past its first request) and then stays
//! idle. `--settle-secs` after each step the server's `VmRSS` is read and the connections the server
//! has not closed are counted; after the last step they are all held `--hold-secs` more, counted
//! again, and closed. The server's CPU over that hold (utime + stime of `/proc/PID/stat`) is
//! reported too: what idle keep-alive connections cost it while nothing is sent.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until, timeout};

use crate::drip::raise_fd_limit;
use crate::hold::proc_status_kib;
use crate::report::process_cpu_seconds;
use crate::{
    Args, Errors, MAX_CONNECTIONS, Report, echo_request, error_suffix, exchange, parse_url, seconds,
};

/// Connections being opened at once (see `http`).
const CONNECTING_AT_ONCE: usize = 32;
/// File descriptors needed beside the connections.
const SPARE_FDS: u64 = 64;
/// How long one connection may take to connect and have its first request answered.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections opened per second by default (see `drip`'s `DEFAULT_OPEN_RATE`).
const DEFAULT_OPEN_RATE: u32 = 3_000;
/// The most steps.
const MAX_STEPS: usize = 16;

/// An idle connection: its sender (closed once the server closes the connection) and its driver.
struct Idle {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    driver: JoinHandle<()>,
}

/// The `--steps` list: ascending connection counts, each between 1 and `MAX_CONNECTIONS`.
fn parse_steps(v: &str) -> Result<Vec<usize>, String> {
    let steps: Vec<usize> = v
        .split(',')
        .map(|s| s.trim().parse::<usize>().map_err(|_| format!("--steps: not a number: {s:?}")))
        .collect::<Result<_, _>>()?;
    let ascending = steps.windows(2).all(|w| w[0] < w[1]);
    if steps.is_empty()
        || steps.len() > MAX_STEPS
        || !ascending
        || steps[0] == 0
        || steps[steps.len() - 1] > MAX_CONNECTIONS
    {
        return Err(format!(
            "--steps: 1 to {MAX_STEPS} ascending counts between 1 and {MAX_CONNECTIONS}, not {v:?}"
        ));
    }
    Ok(steps)
}

/// Opens one connection and has its first request answered.
async fn open_one(authority: &str, path: &str, id: u64) -> Result<Idle, String> {
    let (mut sender, driver) = crate::http::http1_connection(authority).await?;
    let answered = async {
        sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
        exchange(&mut sender, echo_request(authority, path, id), id).await.map_err(|(e, _)| e)
    };
    match answered.await {
        Ok(()) => Ok(Idle { sender, driver }),
        Err(e) => {
            driver.abort();
            Err(e)
        }
    }
}

pub(crate) async fn idle(mut args: Args) -> Result<Report, String> {
    let url = args.take("url").ok_or("--url is required")?;
    let pid: u32 = args.number("pid", None)?;
    let steps = parse_steps(&args.take("steps").ok_or("--steps is required")?)?;
    let settle = seconds("settle-secs", args.number("settle-secs", Some(1.0))?)?;
    let hold = seconds("hold-secs", args.number("hold-secs", Some(3.0))?)?;
    let open_rate: u32 = args.number("open-rate", Some(DEFAULT_OPEN_RATE))?;
    args.finish(false)?;
    if !(1..=100_000).contains(&open_rate) {
        return Err("--open-rate must be between 1 and 100000".into());
    }
    let (authority, path) = parse_url(&url)?;
    let most = steps[steps.len() - 1];
    let fd_limit = raise_fd_limit(most as u64 + SPARE_FDS)?;
    let rss_before = proc_status_kib(pid, "VmRSS").ok_or_else(|| format!("no /proc/{pid}/status"))?;
    let connecting = Arc::new(Semaphore::new(CONNECTING_AT_ONCE));
    let mut idle: Vec<Idle> = Vec::with_capacity(most);
    let mut errors = Errors::default();
    let mut reports = Vec::new();
    let started = Instant::now();
    for &step in &steps {
        let t0 = Instant::now();
        let first = idle.len();
        let tasks: Vec<_> = (first..step)
            .map(|i| {
                let (authority, path, connecting) = (authority.clone(), path.clone(), connecting.clone());
                let at = t0 + Duration::from_secs_f64((i - first) as f64 / f64::from(open_rate));
                tokio::spawn(async move {
                    sleep_until(at).await;
                    let _permit = connecting.acquire().await.map_err(|e| e.to_string())?;
                    timeout(OPEN_TIMEOUT, open_one(&authority, &path, i as u64 + 1))
                        .await
                        .map_err(|_| "opening timed out".to_owned())?
                })
            })
            .collect();
        for task in tasks {
            match task.await.map_err(|e| format!("connection task: {e}"))? {
                Ok(connection) => idle.push(connection),
                Err(e) => errors.add(e),
            }
        }
        let open_s = t0.elapsed().as_secs_f64();
        sleep(settle).await;
        let rss = proc_status_kib(pid, "VmRSS").unwrap_or(0);
        let open = idle.iter().filter(|c| !c.sender.is_closed()).count();
        let per_connection = (rss as f64 - rss_before as f64) / step as f64;
        reports.push(json!({
            "connections": step,
            "opened": idle.len(),
            "open": open,
            "rss_kib": rss,
            "per_connection_kib": per_connection,
            "open_s": open_s,
            "at_s": started.elapsed().as_secs_f64(),
        }));
    }
    let (cpu0, hold_from) = (process_cpu_seconds(pid), Instant::now());
    sleep(hold).await;
    let hold_s = hold_from.elapsed().as_secs_f64();
    let hold_cpu_pct = process_cpu_seconds(pid)
        .zip(cpu0)
        .filter(|_| hold_s > 0.0)
        .map(|(after, before)| (after - before) / hold_s * 100.0);
    let rss_end = proc_status_kib(pid, "VmRSS").unwrap_or(0);
    let open_end = idle.iter().filter(|c| !c.sender.is_closed()).count();
    let held_s = started.elapsed().as_secs_f64();
    for connection in idle.drain(..) {
        connection.driver.abort();
    }
    let first_errors = errors.kept.clone();
    let summary: Vec<String> = reports
        .iter()
        .map(|r| {
            format!(
                "{} → {} KiB ({:.1} KiB each, {} open)",
                r["connections"],
                r["rss_kib"],
                r["per_connection_kib"].as_f64().unwrap_or(0.0),
                r["open"]
            )
        })
        .collect();
    Ok(Report {
        human: format!(
            "idle: server RSS {rss_before} KiB with none; {}; {open_end} of {most} still open after {held_s:.1} s; {} errors{}",
            summary.join("; "),
            errors.count,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "idle",
            "url": url,
            "pid": pid,
            "fd_limit": fd_limit,
            "rss_before_kib": rss_before,
            "steps": reports,
            "rss_end_kib": rss_end,
            "open_end": open_end,
            "held_s": held_s,
            "hold_cpu_pct": hold_cpu_pct,
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
    fn steps_are_ascending_and_bounded() {
        assert_eq!(parse_steps("1000,10000"), Ok(vec![1000, 10_000]));
        assert_eq!(parse_steps("5"), Ok(vec![5]));
        for bad in ["", "0", "10,5", "10,10", "x", "1,20000"] {
            assert!(parse_steps(bad).is_err(), "{bad:?}");
        }
    }
}
