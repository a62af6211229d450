//! `--sessions`: what a `2025-11-25` session costs a request, against the same request without a
//! session (stateless legacy, `bench-kernel`'s default), each round measuring every setting against
//! the same `bench-kernel` binary, interleaved. Only the kernel is measured (rmcp and the floor serve
//! no legacy sessions). Per round, each on a fresh server on CPU 0 with `bench-load` on CPU 1, for the
//! warm-up and window of `--quick` or not, on `HTTP_CONNECTIONS` keep-alive connections:
//!
//! 1. **stateless legacy**: `bench-load http --method legacy`, the `2025-11-25` `tools/call` of `echo`
//!    with no session (the floor of this path);
//! 2. **session, in process**: `--method legacy-session` against the server with
//!    `BENCH_KERNEL_LEGACY_SESSIONS=on`: each connection opens its session first (`initialize`,
//!    `notifications/initialized`) and calls in it;
//! 3. **session, over Redis**: the same with `BENCH_KERNEL_REDIS` set (a `redis-server` the run
//!    starts, pinned with the server, as `--redis` does), with Redis's CPU per request (`--store-pid`);
//! 4. **2026-07-28 stateless** (reference): the ordinary `tools/call` of `echo`.
//!
//! All connections come from 127.0.0.1, one client, and a client holds at most 16 sessions by
//! default: the kernel runs with `BENCH_KERNEL_MAX_SESSIONS` = connections + `SPARE`. Medians, ratios
//! to the stateless legacy request and every round's values go to `target/bench/compare-sessions.json`.

use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::listen::{Values, record};
use super::options::Options;
use super::report::{SATURATED_PCT, finish, git_commit, machine, median};
use super::servers::{Pinning, http_loop_args, run_load, start_http};
use super::shared::server::{RedisServer, redis_binary};
use super::shared::table::section;

const OUTPUT: &str = "target/bench/compare-sessions.json";
/// The closed loop's connections (as the other scenarios').
pub(crate) const HTTP_CONNECTIONS: u32 = 32;
/// Sessions beyond the connections' that the kernel must admit.
const SPARE: u32 = 64;
/// The variables through which bench-kernel serves sessions, bounds them and reaches Redis.
pub(crate) const SESSIONS_ENV: &str = "BENCH_KERNEL_LEGACY_SESSIONS";
pub(crate) const MAX_SESSIONS_ENV: &str = "BENCH_KERNEL_MAX_SESSIONS";
const REDIS_ENV: &str = "BENCH_KERNEL_REDIS";
const PREFIX_ENV: &str = "BENCH_KERNEL_REDIS_PREFIX";

/// The settings, in their running order within a round: (column, heading, `bench-load` method).
const STATELESS: u32 = 0;
const IN_PROCESS: u32 = 1;
const OVER_REDIS: u32 = 2;
const MODERN: u32 = 3;
const COLUMNS: [(u32, &str); 4] = [
    (STATELESS, "stateless legacy"),
    (IN_PROCESS, "session, in process"),
    (OVER_REDIS, "session, Redis"),
    (MODERN, "2026-07-28 call"),
];

/// The table's rows: (key, label, whether the ratio to stateless legacy is shown).
const ROWS: [(&str, &str, bool); 8] = [
    ("rps", "throughput, 32 conn (req/s)", true),
    ("p50_us", "latency p50 (µs)", true),
    ("p99_us", "latency p99 (µs)", true),
    ("server_cpu_us", "server CPU per request (µs)", true),
    ("store_cpu_us", "Redis CPU per request (µs)", false),
    ("cpu0_us", "CPU 0 per request, server + Redis (µs)", true),
    ("load_cpu_pct", "generator CPU (%)", false),
    ("prepare_s", "opening the sessions (s)", false),
];

/// The environment of a kernel for `column`: sessions on (bounded to `sessions`) and, over Redis,
/// its URL and a key prefix.
pub(crate) fn session_env(
    column: u32,
    sessions: u32,
    redis: Option<(String, String)>,
) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    if matches!(column, IN_PROCESS | OVER_REDIS) {
        env.push((SESSIONS_ENV, "on".to_owned()));
        env.push((MAX_SESSIONS_ENV, sessions.to_string()));
    }
    if let Some((url, prefix)) = redis.filter(|_| column == OVER_REDIS) {
        env.push((REDIS_ENV, url));
        env.push((PREFIX_ENV, prefix));
    }
    env
}

/// The `bench-load` method of `column`.
fn method(column: u32) -> &'static str {
    match column {
        STATELESS => "legacy",
        MODERN => "call",
        _ => "legacy-session",
    }
}

/// What every run of the scenario uses.
struct Bench<'a> {
    options: &'a Options,
    pinning: &'a Pinning,
    kernel: &'a Path,
    load: &'a Path,
    redis_binary: &'a Path,
}

/// One run of `column` in round `round`, recorded into `values`.
fn one(bench: &Bench<'_>, (round, column): (u32, u32), values: &mut Values, failures: &mut Vec<String>) {
    let Bench { options, pinning, kernel, load, redis_binary } = *bench;
    let heading = COLUMNS.iter().find(|c| c.0 == column).map_or("?", |c| c.1);
    let scratch = mcp_kernel_workspace::root().join("target/bench");
    let redis = match column {
        OVER_REDIS => match RedisServer::start(pinning, redis_binary, &scratch) {
            Ok(redis) => Some(redis),
            Err(e) => return failures.push(format!("{heading}: {e}")),
        },
        _ => None,
    };
    let env = session_env(
        column,
        HTTP_CONNECTIONS + SPARE,
        redis.as_ref().map(|r| (r.url(), format!("bench-r{round}-sessions"))),
    );
    let server = match start_http(pinning, kernel, &env) {
        Ok(server) => server,
        Err(e) => return failures.push(format!("{heading}: {e}")),
    };
    let (url, pid) = (server.url.clone(), server.child.id().to_string());
    let (warmup, duration) = (options.warmup_s.to_string(), options.duration_s.to_string());
    let connections = HTTP_CONNECTIONS.to_string();
    let mut args = http_loop_args(&url, &pid, &connections, (&warmup, &duration), method(column));
    let store_pid = redis.as_ref().map(|r| r.pid().to_string());
    if let Some(store_pid) = &store_pid {
        args.extend(["--store-pid", store_pid]);
    }
    let result = run_load(&pinning.command(1, load, &args));
    drop(server);
    drop(redis);
    let v = match result {
        Ok(v) => v,
        Err(e) => return failures.push(format!("{heading}: {e}")),
    };
    if v["errors"].as_u64().unwrap_or(0) > 0 {
        failures.push(format!(
            "{heading}, round {round}: {} errors; first: {}",
            v["errors"],
            v["first_errors"].get(0).and_then(Value::as_str).unwrap_or("?")
        ));
    }
    for (key, source) in [
        ("rps", "rps"),
        ("p50_us", "p50_us"),
        ("p99_us", "p99_us"),
        ("server_cpu_us", "server_cpu_us_per_request"),
        ("store_cpu_us", "store_cpu_us_per_request"),
        ("load_cpu_pct", "load_cpu_pct"),
    ] {
        record(values, key, column, v[source].as_f64());
    }
    if column == IN_PROCESS || column == OVER_REDIS {
        record(values, "prepare_s", column, v["prepare_s"].as_f64());
    }
    let server_cpu = v["server_cpu_us_per_request"].as_f64();
    record(values, "cpu0_us", column, cpu0(server_cpu, v["store_cpu_us_per_request"].as_f64()));
}

/// The CPU 0 spends per request: the server's and, when it ran there too, the store's.
pub(crate) fn cpu0(server: Option<f64>, store: Option<f64>) -> Option<f64> {
    server.map(|s| s + store.unwrap_or(0.0))
}

/// `--sessions`: the scenario alone, the four settings interleaved in every round.
pub(super) fn run_sessions(
    options: &Options,
    servers: &[(&'static str, &'static str)],
    pinning: &Pinning,
    release: &Path,
    load: &Path,
    root: &Path,
) -> Result<(), String> {
    let Some(&(_, binary)) = servers.iter().find(|(name, _)| *name == "kernel") else {
        return Err("--sessions measures the kernel only: keep it in --only".into());
    };
    let redis_binary = redis_binary()?;
    let kernel = release.join(binary);
    eprintln!(
        "xtask: bench: --sessions, {} rounds (kernel only, {}): the 2025-11-25 tools/call of echo on {HTTP_CONNECTIONS} \
         connections ({} s + {} s), stateless, in a session in process, in a session over Redis, and the 2026-07-28 call",
        options.rounds,
        redis_binary.display(),
        options.warmup_s,
        options.duration_s,
    );
    let bench = Bench { options, pinning, kernel: &kernel, load, redis_binary: &redis_binary };
    let (mut values, mut failures) = (Values::new(), Vec::new());
    let started = Instant::now();
    for r in 1..=options.rounds {
        for (column, heading) in COLUMNS {
            eprintln!("xtask: bench: sessions round {r}/{}: {heading}", options.rounds);
            one(&bench, (r, column), &mut values, &mut failures);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let metrics = section("median of the rounds", &COLUMNS, &ROWS, &values);
    println!(
        "(±: half the range of the rounds; (n)/(1): against the stateless legacy request; over Redis the server and \
         Redis share CPU 0)"
    );
    for (column, heading) in COLUMNS {
        let pct = values.get("load_cpu_pct").and_then(|m| m.get(&column)).and_then(|v| median(v));
        if let Some(pct) = pct.filter(|p| *p > SATURATED_PCT) {
            eprintln!(
                "xtask: bench: the generator was busy ({pct:.0}%) for {heading}: the server may be faster"
            );
        }
    }
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let report = json!({
        "commit": git_commit(root),
        "unix_time": unix,
        "machine": machine(),
        "load_average": std::fs::read_to_string("/proc/loadavg").ok().map(|l| l.trim().to_owned()),
        "pinned": pinning.enabled,
        "redis_server": redis_binary.display().to_string(),
        "settings": {
            "quick": options.quick,
            "rounds": options.rounds,
            "http_connections": HTTP_CONNECTIONS,
            "http_warmup_s": options.warmup_s,
            "http_duration_s": options.duration_s,
            "max_sessions": HTTP_CONNECTIONS + SPARE,
        },
        "measuring_s": elapsed,
        "metrics": metrics,
        "failures": failures,
    });
    finish(root, OUTPUT, &report, elapsed, &failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_session_settings_turn_sessions_on_and_only_redis_names_it() {
        let redis = || Some(("redis://127.0.0.1:7000".to_owned(), "p".to_owned()));
        assert!(session_env(STATELESS, 96, redis()).is_empty());
        assert!(session_env(MODERN, 96, redis()).is_empty());
        assert_eq!(
            session_env(IN_PROCESS, 96, redis()),
            [(SESSIONS_ENV, "on".to_owned()), (MAX_SESSIONS_ENV, "96".to_owned())]
        );
        let over = session_env(OVER_REDIS, 96, redis());
        assert_eq!(
            &over[2..],
            [(REDIS_ENV, "redis://127.0.0.1:7000".to_owned()), (PREFIX_ENV, "p".to_owned())]
        );
    }

    #[test]
    fn cpu_0_adds_the_store_where_there_is_one() {
        assert_eq!(cpu0(Some(20.0), Some(5.0)), Some(25.0));
        assert_eq!(cpu0(Some(20.0), None), Some(20.0));
        assert_eq!(cpu0(None, Some(5.0)), None);
    }

    #[test]
    fn each_setting_has_its_method() {
        assert_eq!(COLUMNS.map(|(c, _)| method(c)), ["legacy", "legacy-session", "legacy-session", "call"]);
    }
}
