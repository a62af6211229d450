//! The curves of what the kernel holds between requests: `live-tasks` (a `tasks/get`'s CPU and p99
//! with 32, 1,000 and 10,000 live tasks in the store, in process and over Redis, beside a `tools/call`
//! of `echo` with as many held) and `sessions` (a `2025-11-25` session's call with 32, 1,000 and
//! 10,000 open sessions, in process, beside the same call without a session). Each point is a closed
//! loop of `bench-load http` on `CONNECTIONS` connections against a fresh kernel, with the server's
//! CPU per request over the window (`--pid`). Only the kernel serves tasks and sessions.

use std::path::PathBuf;

use super::run::{SPARE_FDS, arg, load_http, measured, pid, start};
use super::table::cell;
use super::{Curve, Env, Measured, Metric, Outcome, Run, Server, Spec, kept, listed, shown};
use crate::servers::http_loop_args;
use crate::sessions::{MAX_SESSIONS_ENV, SESSIONS_ENV};
use crate::shared::server::{RedisServer, redis_binary};

/// The closed loop's connections.
const CONNECTIONS: u64 = 32;
/// The points: live tasks, or open sessions, in all (the first is one per connection).
const HELD: [u64; 3] = [32, 1_000, 10_000];
/// Sessions beyond the ones a run opens that the kernel admits.
const SPARE_SESSIONS: u64 = 64;
/// The variables through which `bench-kernel` reaches Redis.
const REDIS_ENV: &str = "BENCH_KERNEL_REDIS";
const PREFIX_ENV: &str = "BENCH_KERNEL_REDIS_PREFIX";
const KERNEL: &[&str] = &["kernel"];

/// One closed loop of a curve's point: what it sends and holds, and where its values go.
#[derive(Clone)]
struct Loop {
    /// `bench-load http --method`.
    method: &'static str,
    /// `--live-tasks N` or `--open-sessions N`, if it holds any.
    held: Option<(&'static str, u64)>,
    /// `bench-kernel`'s environment.
    vars: Vec<(&'static str, String)>,
    /// A Redis of its own (this `redis-server`) for the kernel's tasks and notifications.
    redis: Option<PathBuf>,
    /// The metric keys: the CPU per request, p99, p50, throughput, the generator's CPU, the time
    /// the run took to make what it holds, and Redis's CPU per request.
    keys: [&'static str; 7],
}

/// The sources of `Loop::keys` in a `bench-load http` result.
const SOURCES: [&str; 7] = [
    "server_cpu_us_per_request",
    "p99_us",
    "p50_us",
    "rps",
    "load_cpu_pct",
    "prepare_s",
    "store_cpu_us_per_request",
];

/// Runs `spec` at `point` against a fresh kernel (over a fresh Redis when it has one).
fn closed_loop(env: &Env, server: Server, point: usize, spec: &Loop) -> Result<Measured, String> {
    let scratch = mcp_kernel_workspace::root().join("target/bench");
    let redis = match &spec.redis {
        Some(binary) => Some(RedisServer::start(&env.pinning, binary, &scratch)?),
        None => None,
    };
    let mut vars = spec.vars.clone();
    if let Some(redis) = &redis {
        vars.push((REDIS_ENV, redis.url()));
        vars.push((PREFIX_ENV, format!("bench-curve-{point}")));
    }
    let started = start(env, server, &vars, CONNECTIONS + SPARE_FDS * 2)?;
    let (url, pid) = (started.url.clone(), pid(&started));
    let (warmup, duration) = (arg(env.warmup_s), arg(env.duration_s));
    let connections = arg(CONNECTIONS);
    let held = spec.held.map(|(name, n)| (format!("--{name}"), arg(n)));
    let mut args = http_loop_args(&url, &pid, &connections, (&warmup, &duration), spec.method);
    if let Some((flag, n)) = &held {
        args.extend([flag.as_str(), n.as_str()]);
    }
    let store_pid = redis.as_ref().map(|r| r.pid().to_string());
    if let Some(store_pid) = &store_pid {
        args.extend(["--store-pid", store_pid]);
    }
    let result = load_http(env, started, &args);
    drop(redis);
    let (v, warnings) = result?;
    let mut m = measured(&v, warnings);
    let pairs: Vec<(&'static str, &str)> = spec.keys.iter().copied().zip(SOURCES).collect();
    m.copy(&v, point, &pairs);
    Ok(m)
}

/// The seven keys of a loop whose metrics start with `prefix` (`get`, `call`, …).
macro_rules! keys {
    ($prefix:literal) => {
        [
            concat!($prefix, "_cpu_us"),
            concat!($prefix, "_p99_us"),
            concat!($prefix, "_p50_us"),
            concat!($prefix, "_rps"),
            concat!($prefix, "_load_cpu_pct"),
            concat!($prefix, "_prepare_s"),
            concat!($prefix, "_store_cpu_us"),
        ]
    };
}

/// What the kept metrics of a loop are, in words: its p50, throughput, generator CPU, and the making
/// of what it holds.
type Kept = [&'static str; 4];

/// The kept metrics of a loop's keys beyond its CPU and p99 and Redis's CPU.
fn kept_metrics(keys: [&'static str; 7], what: &Kept) -> Vec<Metric> {
    keys[2..6].iter().zip(what).map(|(key, label)| kept(key, label)).collect()
}

/// `first / second` of the medians at `point`, as text.
fn ratio(outcome: &Outcome, point: usize, first: &str, second: &str) -> Option<String> {
    let (a, b) = (outcome.median(point, first, "kernel")?, outcome.median(point, second, "kernel")?);
    (b > 0.0).then(|| format!("{:.2}", a / b))
}

/// A note of `first / second` at every point, when there are medians to divide.
fn ratio_note(spec: &Spec, outcome: &Outcome, first: &str, second: &str, what: &str) -> Option<String> {
    let parts: Vec<String> = (0..spec.points.len())
        .filter_map(|p| ratio(outcome, p, first, second).map(|r| format!("{r} at {}", spec.points[p].1)))
        .collect();
    (!parts.is_empty()).then(|| format!("{what}: {}.", parts.join(", ")))
}

fn tasks_summary(spec: &Spec, outcome: &Outcome, _names: &[&'static str]) -> Vec<String> {
    [
        ratio_note(
            spec,
            outcome,
            "get_cpu_us",
            "call_cpu_us",
            "Server CPU per request, tasks/get / tools/call",
        ),
        ratio_note(spec, outcome, "get_p99_us", "call_p99_us", "p99, tasks/get / tools/call"),
        ratio_note(
            spec,
            outcome,
            "redis_cpu_us",
            "get_cpu_us",
            "Server CPU per tasks/get, over Redis / in process",
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `live-tasks`.
pub(super) fn live_tasks(env: &Env) -> Curve {
    let redis = redis_binary().ok();
    let (get, call, over) = (keys!("get"), keys!("call"), keys!("redis"));
    let mut metrics = vec![
        shown(get[0], "tasks/get: server CPU per request (µs)"),
        shown(call[0], "tools/call: server CPU per request (µs)"),
        shown(get[1], "tasks/get: p99 (µs)"),
        shown(call[1], "tools/call: p99 (µs)"),
        listed(over[0], "tasks/get over Redis: server CPU per request (µs)"),
        listed(over[6], "tasks/get over Redis: Redis CPU per request (µs)"),
        listed(over[1], "tasks/get over Redis: p99 (µs)"),
    ];
    const WHAT: Kept = ["p50 (µs)", "throughput (req/s)", "generator CPU (%)", "making the tasks (s)"];
    for keys in [get, call, over] {
        metrics.extend(kept_metrics(keys, &WHAT));
    }
    let mut notes = vec![
        format!(
            "`bench-load http --connections {CONNECTIONS} --method task-get|call --live-tasks N --pid PID` against a fresh \
             kernel per run ({} s warm-up, {} s measured): before the clock starts, N calls of `wait` (600 s, declaring \
             the tasks extension) over 32 connections at once, each answered with a `working` task, held to the end; \
             for `tasks/get`, connection i then reads task i (the first 32), for `tools/call` it calls `echo`.",
            env.warmup_s, env.duration_s
        ),
        "Server CPU per request: the kernel's CPU over the window (every thread's `schedstat`) divided by the requests \
         answered in it. Each call to `wait` first waits the kernel's 5 ms task threshold, so the tasks are made a few \
         thousand a second."
            .to_owned(),
    ];
    let mut runs = Vec::new();
    for (point, &n) in HELD.iter().enumerate() {
        let base =
            Loop { method: "call", held: Some(("live-tasks", n)), vars: Vec::new(), redis: None, keys: call };
        let mut loops = vec![
            ("tools/call", base.clone()),
            ("tasks/get", Loop { method: "task-get", keys: get, ..base.clone() }),
        ];
        if let Some(binary) = &redis {
            let over = Loop { method: "task-get", redis: Some(binary.clone()), keys: over, ..base };
            loops.push(("tasks/get over Redis", over));
        }
        for (what, spec) in loops {
            runs.push(Run {
                label: format!("{what} with {} live tasks", cell(n as f64)),
                servers: KERNEL,
                measure: Box::new(move |env, server| closed_loop(env, server, point, &spec)),
            });
        }
    }
    match &redis {
        Some(binary) => notes.push(format!(
            "Over Redis: the kernel with `{REDIS_ENV}` set (its tasks and notifications in Redis), a fresh `{}` per run on \
             CPU 0 with the kernel (no persistence), Redis's CPU per request read as the kernel's (`--store-pid`).",
            binary.display()
        )),
        None => notes.push(
            "Over Redis: not measured (no `redis-server`; set `MCP_KERNEL_REDIS_SERVER` or install Debian's \
             `redis-server`)."
                .to_owned(),
        ),
    }
    let spec = Spec {
        name: "live-tasks",
        title: "tasks/get beside tools/call: server CPU per request and p99 by live tasks held",
        x_label: "live tasks in the store",
        points: HELD.iter().map(|&n| (n as f64, cell(n as f64))).collect(),
        categorical: false,
        metrics,
        notes,
    };
    Curve { spec, runs, summary: tasks_summary }
}

fn sessions_summary(spec: &Spec, outcome: &Outcome, _names: &[&'static str]) -> Vec<String> {
    [
        ratio_note(
            spec,
            outcome,
            "session_cpu_us",
            "stateless_cpu_us",
            "Server CPU per request, session / stateless",
        ),
        ratio_note(spec, outcome, "session_p99_us", "stateless_p99_us", "p99, session / stateless"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `sessions`.
pub(super) fn sessions(env: &Env) -> Curve {
    let (session, stateless) = (keys!("session"), keys!("stateless"));
    let mut metrics = vec![
        shown(session[0], "session: server CPU per request (µs)"),
        shown(stateless[0], "stateless legacy: server CPU per request (µs)"),
        shown(session[1], "session: p99 (µs)"),
        shown(stateless[1], "stateless legacy: p99 (µs)"),
    ];
    const WHAT: Kept = ["p50 (µs)", "throughput (req/s)", "generator CPU (%)", "opening the sessions (s)"];
    metrics.extend(kept_metrics(session, &WHAT));
    metrics.extend(kept_metrics(stateless, &WHAT).into_iter().take(3));
    let mut runs = Vec::new();
    for (point, &n) in HELD.iter().enumerate() {
        let vars = vec![(SESSIONS_ENV, "on".to_owned()), (MAX_SESSIONS_ENV, arg(n + SPARE_SESSIONS))];
        let open = Loop {
            method: "legacy-session",
            held: Some(("open-sessions", n)),
            vars,
            redis: None,
            keys: session,
        };
        let plain = Loop { method: "legacy", held: None, vars: Vec::new(), redis: None, keys: stateless };
        for (what, spec) in [("session", open), ("stateless legacy", plain)] {
            runs.push(Run {
                label: format!("{what} with {} open sessions", cell(n as f64)),
                servers: KERNEL,
                measure: Box::new(move |env, server| closed_loop(env, server, point, &spec)),
            });
        }
    }
    let spec = Spec {
        name: "sessions",
        title: "A 2025-11-25 session's tools/call: server CPU per request and p99 by open sessions",
        x_label: "open sessions (in process)",
        points: HELD.iter().map(|&n| (n as f64, cell(n as f64))).collect(),
        categorical: false,
        metrics,
        notes: vec![
            format!(
                "`bench-load http --connections {CONNECTIONS} --method legacy-session --open-sessions N --pid PID` against a \
                 fresh kernel with `{SESSIONS_ENV}=on` (sessions in process) per run ({} s warm-up, {} s measured): before \
                 the clock starts, N sessions opened over 32 connections at once, each by `initialize` (its \
                 `Mcp-Session-Id` checked) and `notifications/initialized` (202); connection i then calls `echo` in \
                 session i (the `2025-11-25` call: its version header and the session's, no `_meta`), the other sessions \
                 idle. The baseline is the same call without a session (`--method legacy`) against the kernel's default \
                 (stateless legacy clients), measured at every point in the same round.",
                env.warmup_s, env.duration_s
            ),
            format!(
                "All sessions come from 127.0.0.1, one client, which holds at most 16 sessions by default: the kernel \
                 is started with `{MAX_SESSIONS_ENV}` at N + {SPARE_SESSIONS} (sessions per client and in all; the \
                 default total is 10,000)."
            ),
        ],
    };
    Curve { spec, runs, summary: sessions_summary }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loops_keys_follow_its_prefix_in_the_order_of_the_sources() {
        let get = keys!("get");
        assert_eq!(get[0], "get_cpu_us");
        assert_eq!(get[6], "get_store_cpu_us");
        assert_eq!(SOURCES[0], "server_cpu_us_per_request");
        assert_eq!(SOURCES[6], "store_cpu_us_per_request");
        assert_eq!(get.len(), SOURCES.len());
    }

    #[test]
    fn kept_metrics_skip_the_shown_cpu_and_p99() {
        let kept = kept_metrics(keys!("call"), &["a", "b", "c", "d"]);
        assert_eq!(
            kept.iter().map(|m| m.key).collect::<Vec<_>>(),
            ["call_p50_us", "call_rps", "call_load_cpu_pct", "call_prepare_s"]
        );
        assert!(kept.iter().all(|m| !m.plot && !m.table));
    }
}
