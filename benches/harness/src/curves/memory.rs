//! The memory curves: `idle-memory` (the server's RSS with 0, 1,000 and 10,000 idle keep-alive
//! HTTP/1.1 connections, and its growth per connection) and `drip-10k` (legitimate latency with
//! 10,000 drip connections open, a body byte a second each, against none).

use super::run::{KERNEL_MAX_CONNECTIONS, SPARE_FDS, arg, load_http, measured, pid, start};
use super::table::cell;
use super::{Curve, Env, Measured, Outcome, Run, Server, Spec, kept, listed, shown};

/// The idle connection counts, opened in steps on one server.
const IDLE_STEPS: [u64; 2] = [1_000, 10_000];
/// How long the idle connections are held after the last step (beside the 1 s after each step).
const IDLE_HOLD_S: u32 = 3;
/// The drip connections.
const DRIPS: u64 = 10_000;
/// Legitimate requests per phase (before the drips and while they are open), this far apart.
const DRIP_REQUESTS: u32 = 200;
const DRIP_INTERVAL_MS: u32 = 10;
/// How long each drip is watched after its head: past the drip phase, short of the kernel's 15 s
/// body deadline (this curve is about the legitimate requests, not what becomes of the drips).
const DRIP_WAIT_S: u32 = 10;
const ALL: &[&str] = &["kernel", "rmcp", "floor"];

/// The kernel's connection limits raised to admit `connections` from 127.0.0.1 (the others ignore it).
fn limits_for(connections: u64) -> Vec<(&'static str, String)> {
    vec![(KERNEL_MAX_CONNECTIONS, arg(connections + SPARE_FDS))]
}

/// One `bench-load idle` run: RSS at 0 and after each step, its growth per connection, and how many
/// connections the server still held.
fn idle_run(env: &Env, server: Server) -> Result<Measured, String> {
    let most = IDLE_STEPS[IDLE_STEPS.len() - 1];
    let started = start(env, server, &limits_for(most), most + SPARE_FDS)?;
    let (url, pid) = (started.url.clone(), pid(&started));
    let steps = IDLE_STEPS.map(|s| s.to_string()).join(",");
    let hold = arg(IDLE_HOLD_S);
    let args = ["idle", "--url", &url, "--pid", &pid, "--steps", &steps, "--hold-secs", &hold];
    let (v, warnings) = load_http(env, started, &args)?;
    let mut m = measured(&v, warnings);
    if let Some(rss) = v["rss_before_kib"].as_f64() {
        m.values.push((0, "rss_mib", rss / 1024.0));
    }
    for (i, step) in v["steps"].as_array().into_iter().flatten().enumerate() {
        let point = i + 1;
        for (key, source, scale) in [
            ("rss_mib", "rss_kib", 1.0 / 1024.0),
            ("per_connection_kib", "per_connection_kib", 1.0),
            ("open", "open", 1.0),
        ] {
            if let Some(value) = step[source].as_f64() {
                m.values.push((point, key, value * scale));
            }
        }
    }
    if let Some(open) = v["open_end"].as_f64() {
        m.values.push((IDLE_STEPS.len(), "open_end", open));
    }
    Ok(m)
}

/// Who still held how many idle connections at the end, by server.
fn idle_summary(spec: &Spec, outcome: &Outcome, names: &[&'static str]) -> Vec<String> {
    let last = spec.points.len() - 1;
    let held: Vec<String> = names
        .iter()
        .filter_map(|n| outcome.median(last, "open_end", n).map(|o| format!("{n} {}", cell(o))))
        .collect();
    if held.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "Idle connections still open at the end of the hold (median of the rounds, of {}): {}.",
        cell(IDLE_STEPS[IDLE_STEPS.len() - 1] as f64),
        held.join(", ")
    )]
}

/// `idle-memory`.
pub(super) fn idle(_env: &Env) -> Curve {
    let mut points = vec![(0.0, "0".to_owned())];
    points.extend(IDLE_STEPS.iter().map(|&s| (s as f64, cell(s as f64))));
    let spec = Spec {
        name: "idle-memory",
        title: "Server memory with idle keep-alive HTTP/1.1 connections",
        x_label: "idle connections",
        points,
        categorical: true,
        metrics: vec![
            shown("rss_mib", "server RSS (MiB)"),
            shown("per_connection_kib", "RSS growth per connection (KiB)"),
            listed("open", "connections open when sampled"),
            kept("open_end", "connections open at the end of the hold"),
        ],
        notes: vec![
            format!(
                "`bench-load idle`: on one fresh server, connections are opened up to 1,000 and then up to 10,000 (3,000 \
                 a second, 32 at a time); each makes one checked `tools/call` and then stays idle. 1 s after each step \
                 the server's `VmRSS` (`/proc/PID/status`) is read and the connections it has not closed are counted; \
                 then all are held {IDLE_HOLD_S} s more and counted again. Growth per connection = (RSS with N − RSS \
                 with none) / N."
            ),
            format!(
                "The kernel is started with `{KERNEL_MAX_CONNECTIONS}={}` (its defaults admit 512 connections per peer \
                 address, and all of these come from 127.0.0.1). It closes a keep-alive connection idle for 15 s \
                 (`HEADER_READ_TIMEOUT`) or, with no open request, 60 s (`IDLE_TIMEOUT`): the whole run holds the first \
                 connections about 9 s, so none reaches either.",
                IDLE_STEPS[IDLE_STEPS.len() - 1] + SPARE_FDS
            ),
        ],
    };
    let runs = vec![Run { label: "idle connections".to_owned(), servers: ALL, measure: Box::new(idle_run) }];
    Curve { spec, runs, summary: idle_summary }
}

/// One `bench-load drip` run: the legitimate latency without drips (point 0) and with them (point 1).
fn drip_run(env: &Env, server: Server) -> Result<Measured, String> {
    let started = start(env, server, &limits_for(DRIPS), DRIPS + SPARE_FDS)?;
    let (url, pid) = (started.url.clone(), pid(&started));
    let (drips, requests, interval, wait) =
        (arg(DRIPS), arg(DRIP_REQUESTS), arg(DRIP_INTERVAL_MS), arg(DRIP_WAIT_S));
    let args = [
        "drip",
        "--url",
        &url,
        "--drips",
        &drips,
        "--requests",
        &requests,
        "--interval-ms",
        &interval,
        "--wait-secs",
        &wait,
        "--pid",
        &pid,
    ];
    let (v, warnings) = load_http(env, started, &args)?;
    let mut m = measured(&v, warnings);
    for (point, key, source) in [
        (0, "p50_us", "base_p50_us"),
        (0, "p99_us", "base_p99_us"),
        (0, "max_us", "base_max_us"),
        (1, "p50_us", "p50_us"),
        (1, "p99_us", "p99_us"),
        (1, "max_us", "max_us"),
        (1, "open_at_start", "open_at_start"),
        (1, "open_at_end", "open_at_end"),
        (1, "rss_mib", "rss_during_kib"),
        (1, "per_drip_kib", "per_drip_kib"),
        (1, "phase_cpu_pct", "phase_cpu_pct"),
    ] {
        if let Some(value) = v[source].as_f64() {
            let value = if key == "rss_mib" { value / 1024.0 } else { value };
            m.values.push((point, key, value));
        }
    }
    if let Some(rss) = v["rss_before_kib"].as_f64() {
        m.values.push((0, "rss_mib", rss / 1024.0));
    }
    Ok(m)
}

/// The drips open during the phase, and their memory, by server.
fn drip_summary(_spec: &Spec, outcome: &Outcome, names: &[&'static str]) -> Vec<String> {
    let per = |key: &str, point: usize| -> Vec<String> {
        names
            .iter()
            .filter_map(|n| outcome.median(point, key, n).map(|v| format!("{n} {}", cell(v))))
            .collect()
    };
    let mut notes = Vec::new();
    let (start, end) = (per("open_at_start", 1), per("open_at_end", 1));
    if !start.is_empty() {
        notes.push(format!(
            "Drips open at the start / end of the drip phase: {} / {}.",
            start.join(", "),
            end.join(", ")
        ));
    }
    let growth = per("per_drip_kib", 1);
    if !growth.is_empty() {
        notes.push(format!(
            "Server RSS with the drips open (MiB): {}; growth per drip (KiB): {}.",
            per("rss_mib", 1).join(", "),
            growth.join(", ")
        ));
    }
    notes
}

/// `drip-10k`.
pub(super) fn drip(_env: &Env) -> Curve {
    let spec = Spec {
        name: "drip-10k",
        title: "Legitimate tools/call latency with 10,000 drip connections open",
        x_label: "other connections",
        points: vec![(0.0, "no drips".to_owned()), (1.0, "10,000 drips open".to_owned())],
        categorical: true,
        metrics: vec![
            shown("p50_us", "legitimate p50 (µs)"),
            shown("p99_us", "legitimate p99 (µs)"),
            kept("max_us", "legitimate max (µs)"),
            kept("open_at_start", "drips open, phase start"),
            kept("open_at_end", "drips open, phase end"),
            kept("rss_mib", "server RSS (MiB)"),
            kept("per_drip_kib", "RSS growth per drip (KiB)"),
            kept("phase_cpu_pct", "generator CPU in the drip phase (%)"),
        ],
        notes: vec![
            format!(
                "`bench-load drip` on one fresh server per round: {DRIP_REQUESTS} legitimate `tools/call`s, one at a time \
                 {DRIP_INTERVAL_MS} ms apart on one keep-alive connection (after 20 unmeasured), first with no other \
                 connection, then while {} drip connections are open (opened 3,000 a second; each sent a `POST` head \
                 and then one body byte a second).",
                cell(DRIPS as f64)
            ),
            format!(
                "Each drip is watched {DRIP_WAIT_S} s after its head, less than the kernel's 15 s body deadline: this \
                 curve measures the legitimate requests while the drips are open, not what becomes of the drips \
                 (`cargo xtask bench compare --drip N` does). The kernel is started with `{KERNEL_MAX_CONNECTIONS}={}`.",
                DRIPS + SPARE_FDS
            ),
        ],
    };
    let runs = vec![Run { label: "drips".to_owned(), servers: ALL, measure: Box::new(drip_run) }];
    Curve { spec, runs, summary: drip_summary }
}
