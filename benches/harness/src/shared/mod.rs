//! `--redis`: tasks and listen streams shared through Redis, beside the same in process, each round
//! measuring both against the same `bench-kernel` binary (`BENCH_KERNEL_REDIS` set or not). The run
//! starts a Redis of its own (module `server`) for each measurement over Redis, pinned with the
//! servers on CPU 0; `bench-load` runs on CPU 1. Per round:
//!
//! 1. **`tasks/get` under load.** `bench-load http --method task-get` on `HTTP_CONNECTIONS`
//!    connections for the warm-up and window of `--quick` or not: throughput, latency, the server's
//!    CPU per request, and over Redis the Redis's CPU per request (`--store-pid`).
//! 2. **A change to every listener.** `bench-load fanout`: `STREAMS` listen streams, in process on one
//!    server, over Redis spread over `INSTANCES` servers sharing one Redis (one key prefix); repeated
//!    `announce` calls, each through the next server in turn; per change and server, the time until
//!    the last stream on that server read it (p50, p99 over the changes); then the same servers with
//!    one stream each, the way from the call to a listener without the fan-out. Over Redis on one
//!    server too, so that the Redis hop shows apart from spreading the streams.
//! 3. **Trips.** `bench-load tasks-trips`: one request at a time, the Redis round trips per `tasks/get`
//!    and per task lifecycle (created, working, completed, read) by the server's count (`GET /stats`)
//!    and by Redis's (`INFO`), with the lone `tasks/get`'s latency; in process, the latencies only.
//!
//! Medians of the rounds, every round's values and the Redis commands per operation go to
//! `target/bench/compare-redis.json`.

pub(crate) mod server;
pub(crate) mod table;

use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::drip::open_files_soft_limit;
use super::listen::{Values, record};
use super::options::Options;
use super::report::{SATURATED_PCT, finish, git_commit, machine, median};
use super::servers::{HttpServer, Pinning, http_loop_args, run_load, start_http};
use server::{RedisServer, redis_binary};
use table::{by_command, section};

const OUTPUT: &str = "target/bench/compare-redis.json";
/// The closed loop's connections for `tasks/get` (as the other scenarios').
const HTTP_CONNECTIONS: u32 = 32;
/// The listen streams of the fan-out, in all.
const STREAMS: u32 = 1_000;
/// The servers sharing one Redis in the fan-out over Redis.
const INSTANCES: usize = 3;
/// Connections beyond the streams that a server must admit.
const SPARE: u32 = 64;
/// Quiet between two changes of the fan-out (ms), once every listener read the last one.
const GAP_MS: u32 = 50;
/// The window over which the trips a server makes on its own are counted (ms): longer than the
/// heartbeat of `mcp-kernel-redis` (a third of its 10 s lease), so that it holds one.
const IDLE_MS: u32 = 3_500;
/// The columns: in process; over Redis (the fan-out: over `INSTANCES` servers); the fan-out over
/// Redis on one server (the Redis hop alone, without spreading the listeners).
const IN_PROCESS: u32 = 0;
const OVER_REDIS: u32 = 1;
const ONE_OVER_REDIS: u32 = 2;
/// The columns of the `tasks/get` and trips tables, and of the fan-out's.
const TWO: [(u32, &str); 2] = [(IN_PROCESS, "in process"), (OVER_REDIS, "over Redis")];
const FANOUT_COLUMNS: [(u32, &str); 3] =
    [(IN_PROCESS, "in process"), (ONE_OVER_REDIS, "Redis, 1 server"), (OVER_REDIS, "Redis, 3 servers")];
/// The variables through which bench-kernel raises its limits and reaches Redis.
const MAX_CONNECTIONS_ENV: &str = "BENCH_KERNEL_MAX_CONNECTIONS";
const MAX_LISTENS_ENV: &str = "BENCH_KERNEL_MAX_LISTENS";
const REDIS_ENV: &str = "BENCH_KERNEL_REDIS";
const PREFIX_ENV: &str = "BENCH_KERNEL_REDIS_PREFIX";

/// How much each round does: the changes announced, the lone gets, the lifecycles.
struct Sizes {
    announcements: u32,
    gets: u32,
    lifecycles: u32,
}

impl Sizes {
    fn of(options: &Options) -> Sizes {
        if options.quick {
            Sizes { announcements: 20, gets: 500, lifecycles: 10 }
        } else {
            Sizes { announcements: 50, gets: 2_000, lifecycles: 20 }
        }
    }
}

/// The table's sections: (key, label, whether the ratio over Redis / in process is shown).
const GET_ROWS: [(&str, &str, bool); 9] = [
    ("get_rps", "tasks/get, 32 conn (req/s)", true),
    ("get_p50_us", "tasks/get p50 (µs)", true),
    ("get_p99_us", "tasks/get p99 (µs)", true),
    ("get_server_cpu_us", "server CPU per tasks/get (µs)", true),
    ("get_store_cpu_us", "Redis CPU per tasks/get (µs)", false),
    ("get_load_cpu_pct", "generator CPU (%)", false),
    ("lone_get_p50_us", "one at a time: tasks/get p50 (µs)", true),
    ("lone_get_p99_us", "one at a time: tasks/get p99 (µs)", true),
    ("create_p50_us", "one at a time: task creation p50 (µs)", true),
];
const FANOUT_ROWS: [(&str, &str, bool); 13] = [
    ("last_p50_us", "last listener per server, p50 (µs)", true),
    ("last_p99_us", "last listener per server, p99 (µs)", true),
    ("announcer_last_p50_us", "… on the server called, p50 (µs)", true),
    ("others_last_p50_us", "… on the other servers, p50 (µs)", false),
    ("others_last_p99_us", "… on the other servers, p99 (µs)", false),
    ("stream_p50_us", "every listener, p50 (µs)", true),
    ("stream_p99_us", "every listener, p99 (µs)", true),
    ("announce_call_us", "the announce call (µs)", true),
    ("fanout_server_cpu_us", "servers' CPU per listener (µs)", true),
    ("fanout_store_cpu_us", "Redis CPU per change (µs)", false),
    ("fanout_load_cpu_pct", "generator CPU, fan-out (%)", false),
    ("lone_last_p50_us", "one listener per server, p50 (µs)", true),
    ("lone_last_p99_us", "one listener per server, p99 (µs)", true),
];
const TRIPS_ROWS: [(&str, &str, bool); 8] = [
    ("trips_per_get", "round trips per tasks/get", false),
    ("commands_per_get", "Redis commands per tasks/get", false),
    ("trips_per_lifecycle", "round trips per task lifecycle", false),
    ("trips_create", "… creation (until working)", false),
    ("trips_run", "… run to completed", false),
    ("trips_read", "… the read of the result", false),
    ("commands_per_lifecycle", "Redis commands per task lifecycle", false),
    ("background_trips_per_s", "background round trips per s", false),
];

/// The environment of a kernel: its limits, and with `redis` (URL, key prefix) its Redis.
fn kernel_env(limit: u32, redis: Option<(String, &str)>) -> Vec<(&'static str, String)> {
    let mut env = vec![(MAX_CONNECTIONS_ENV, limit.to_string()), (MAX_LISTENS_ENV, limit.to_string())];
    if let Some((url, prefix)) = redis {
        env.push((REDIS_ENV, url));
        env.push((PREFIX_ENV, prefix.to_owned()));
    }
    env
}

/// The `GET /stats` URL beside a kernel's `…/mcp` URL.
fn stats_url(mcp_url: &str) -> String {
    match mcp_url.strip_suffix("/mcp") {
        Some(base) => format!("{base}/stats"),
        None => format!("{}/stats", mcp_url.trim_end_matches('/')),
    }
}

/// Everything one measurement runs against: the Redis (over Redis only) and the kernels.
struct Setup {
    redis: Option<RedisServer>,
    kernels: Vec<HttpServer>,
}

/// Context shared by every measurement of the run.
struct Run<'a> {
    options: &'a Options,
    sizes: Sizes,
    pinning: &'a Pinning,
    kernel: &'a Path,
    load: &'a Path,
    redis_binary: &'a Path,
    scratch: &'a Path,
    values: Values,
    /// The Redis commands per operation of each round: {"tasks/get": {...}, "lifecycle": {...}}.
    commands: Vec<Value>,
    failures: Vec<String>,
}

impl Run<'_> {
    /// Starts `instances` kernels, over a fresh Redis unless `column` is [`IN_PROCESS`] (their keys
    /// under `prefix`).
    fn setup(&self, column: u32, instances: usize, prefix: &str) -> Result<Setup, String> {
        let redis = match column {
            IN_PROCESS => None,
            _ => Some(RedisServer::start(self.pinning, self.redis_binary, self.scratch)?),
        };
        let env = kernel_env(STREAMS + SPARE, redis.as_ref().map(|r| (r.url(), prefix)));
        let kernels = (0..instances)
            .map(|_| start_http(self.pinning, self.kernel, &env))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Setup { redis, kernels })
    }

    /// Runs `bench-load` with `args`; its JSON if it ran, errors counted as failures.
    fn load(&mut self, args: &[&str], what: &str) -> Option<Value> {
        match run_load(&self.pinning.command(1, self.load, args)) {
            Ok(v) => {
                if v["errors"].as_u64().unwrap_or(0) > 0 {
                    self.failures.push(format!(
                        "{what}: {} errors; first: {}",
                        v["errors"],
                        v["first_errors"].get(0).and_then(Value::as_str).unwrap_or("?")
                    ));
                }
                Some(v)
            }
            Err(e) => {
                self.failures.push(format!("{what}: {e}"));
                None
            }
        }
    }

    fn record(&mut self, key: &'static str, column: u32, value: Option<f64>) {
        record(&mut self.values, key, column, value);
    }

    /// `tasks/get` under load, then one at a time with the trips counted.
    fn tasks(&mut self, round: u32, column: u32) {
        let name = column_name(column);
        let setup = match self.setup(column, 1, &format!("bench-r{round}-get")) {
            Ok(setup) => setup,
            Err(e) => return self.failures.push(format!("tasks/get {name}: {e}")),
        };
        let (url, pid) = (setup.kernels[0].url.clone(), setup.kernels[0].child.id().to_string());
        let (warmup, duration) = (self.options.warmup_s.to_string(), self.options.duration_s.to_string());
        let connections = HTTP_CONNECTIONS.to_string();
        let mut args = http_loop_args(&url, &pid, &connections, (&warmup, &duration), "task-get");
        let store_pid = setup.redis.as_ref().map(|r| r.pid().to_string());
        if let Some(store_pid) = &store_pid {
            args.extend(["--store-pid", store_pid]);
        }
        if let Some(v) = self.load(&args, &format!("tasks/get under load, {name}")) {
            self.record("get_rps", column, v["rps"].as_f64());
            self.record("get_p50_us", column, v["p50_us"].as_f64());
            self.record("get_p99_us", column, v["p99_us"].as_f64());
            self.record("get_server_cpu_us", column, v["server_cpu_us_per_request"].as_f64());
            self.record("get_store_cpu_us", column, v["store_cpu_us_per_request"].as_f64());
            self.record("get_load_cpu_pct", column, v["load_cpu_pct"].as_f64());
        }
        drop(setup);
        // A fresh server (and Redis) for the count, so that the load's tasks do not run beside it.
        let setup = match self.setup(column, 1, &format!("bench-r{round}-trips")) {
            Ok(setup) => setup,
            Err(e) => return self.failures.push(format!("trips {name}: {e}")),
        };
        let url = setup.kernels[0].url.clone();
        let (gets, lifecycles) = (self.sizes.gets.to_string(), self.sizes.lifecycles.to_string());
        let stats = stats_url(&url);
        let address = setup.redis.as_ref().map(RedisServer::address);
        // In process nothing runs in the background: no idle window.
        let idle = if column == IN_PROCESS { "0".to_owned() } else { IDLE_MS.to_string() };
        let mut args = vec![
            "tasks-trips",
            "--url",
            &url,
            "--gets",
            &gets,
            "--lifecycles",
            &lifecycles,
            "--idle-ms",
            &idle,
        ];
        if let Some(address) = &address {
            args.extend(["--stats-url", &stats, "--redis", address]);
        }
        let Some(v) = self.load(&args, &format!("trips, {name}")) else { return };
        self.record("lone_get_p50_us", column, v["get_p50_us"].as_f64());
        self.record("lone_get_p99_us", column, v["get_p99_us"].as_f64());
        self.record("create_p50_us", column, v["create_p50_us"].as_f64());
        if column == OVER_REDIS {
            for (key, pointer) in [
                ("trips_per_get", "/per_get/trips"),
                ("commands_per_get", "/per_get/commands"),
                ("trips_per_lifecycle", "/per_lifecycle/trips"),
                ("trips_create", "/per_lifecycle_create/trips"),
                ("trips_run", "/per_lifecycle_run/trips"),
                ("trips_read", "/per_lifecycle_read/trips"),
                ("commands_per_lifecycle", "/per_lifecycle/commands"),
                ("background_trips_per_s", "/background_trips_per_s"),
            ] {
                self.record(key, column, v.pointer(pointer).and_then(Value::as_f64));
            }
            self.commands.push(json!({
                "round": round,
                "tasks/get": v["per_get"]["by_command"],
                "lifecycle": v["per_lifecycle"]["by_command"],
                "lifecycle_create": v["per_lifecycle_create"]["by_command"],
                "lifecycle_run": v["per_lifecycle_run"]["by_command"],
                "lifecycle_read": v["per_lifecycle_read"]["by_command"],
            }));
        } else {
            for key in ["trips_per_get", "commands_per_get", "trips_per_lifecycle", "commands_per_lifecycle"]
            {
                self.record(key, column, Some(0.0));
            }
        }
    }

    /// One change to every listener, repeated.
    fn fanout(&mut self, round: u32, column: u32) {
        let name = column_name(column);
        let instances = if column == OVER_REDIS { INSTANCES } else { 1 };
        let setup = match self.setup(column, instances, &format!("bench-r{round}-listen")) {
            Ok(setup) => setup,
            Err(e) => return self.failures.push(format!("fan-out {name}: {e}")),
        };
        let urls = setup.kernels.iter().map(|k| k.url.as_str()).collect::<Vec<_>>().join(",");
        let pids = setup.kernels.iter().map(|k| k.child.id().to_string()).collect::<Vec<_>>().join(",");
        let (streams, announcements, gap) =
            (STREAMS.to_string(), self.sizes.announcements.to_string(), GAP_MS.to_string());
        let mut args = vec![
            "fanout",
            "--urls",
            &urls,
            "--pids",
            &pids,
            "--streams",
            &streams,
            "--announcements",
            &announcements,
            "--gap-ms",
            &gap,
        ];
        let store_pid = setup.redis.as_ref().map(|r| r.pid().to_string());
        if let Some(store_pid) = &store_pid {
            args.extend(["--store-pid", store_pid]);
        }
        if let Some(v) = self.load(&args, &format!("fan-out, {name}")) {
            for key in [
                "last_p50_us",
                "last_p99_us",
                "announcer_last_p50_us",
                "others_last_p50_us",
                "others_last_p99_us",
                "stream_p50_us",
                "stream_p99_us",
            ] {
                self.record(key, column, v[key].as_f64());
            }
            self.record("announce_call_us", column, v["announce_call_p50_us"].as_f64());
            self.record("fanout_server_cpu_us", column, v["server_cpu_us_per_stream"].as_f64());
            self.record("fanout_store_cpu_us", column, v["store_cpu_us_per_change"].as_f64());
            self.record("fanout_load_cpu_pct", column, v["load_cpu_pct"].as_f64());
        }
        // The same servers with one listener each: the way from the call to a listener, no fan-out.
        let one_each = instances.to_string();
        let at = args.iter().position(|a| *a == "--streams").map_or(0, |at| at + 1);
        args[at] = &one_each;
        if let Some(v) = self.load(&args, &format!("one listener per server, {name}")) {
            self.record("lone_last_p50_us", column, v["last_p50_us"].as_f64());
            self.record("lone_last_p99_us", column, v["last_p99_us"].as_f64());
        }
    }
}

fn column_name(column: u32) -> &'static str {
    match column {
        IN_PROCESS => "in process",
        OVER_REDIS => "over Redis",
        _ => "over Redis, one server",
    }
}

/// The machine's load average over the last minute, if it can be read.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// `--redis`: the scenario alone, in process and over Redis interleaved in every round.
pub(super) fn run_shared(
    options: &Options,
    servers: &[(&'static str, &'static str)],
    pinning: &Pinning,
    release: &Path,
    load: &Path,
    root: &Path,
) -> Result<(), String> {
    let Some(&(_, binary)) = servers.iter().find(|(name, _)| *name == "kernel") else {
        return Err("--redis measures the kernel only: keep it in --only".into());
    };
    let redis_binary = redis_binary()?;
    let needed = u64::from(STREAMS + SPARE);
    if let Some(soft) = open_files_soft_limit().filter(|&soft| soft < needed) {
        return Err(format!(
            "--redis: the servers need {needed} open files and the limit is {soft}: raise `ulimit -n`"
        ));
    }
    let scratch = root.join("target/bench");
    let kernel = release.join(binary);
    let mut run = Run {
        options,
        sizes: Sizes::of(options),
        pinning,
        kernel: &kernel,
        load,
        redis_binary: &redis_binary,
        scratch: &scratch,
        values: Values::new(),
        commands: Vec::new(),
        failures: Vec::new(),
    };
    eprintln!(
        "xtask: bench: --redis, {} rounds (kernel only, {}): tasks/get on {HTTP_CONNECTIONS} connections ({} s + {} s), \
         {} lone gets and {} task lifecycles counted, one change to {STREAMS} listeners ×{} ({GAP_MS} ms apart) on one \
         server in process and on {INSTANCES} servers over one Redis",
        options.rounds,
        redis_binary.display(),
        options.warmup_s,
        options.duration_s,
        run.sizes.gets,
        run.sizes.lifecycles,
        run.sizes.announcements
    );
    let started = Instant::now();
    let mut load_averages = Vec::new();
    for r in 1..=options.rounds {
        load_averages.push(load_average());
        for column in [IN_PROCESS, OVER_REDIS] {
            eprintln!("xtask: bench: redis round {r}/{}: tasks, {}", options.rounds, column_name(column));
            run.tasks(r, column);
        }
        for column in [IN_PROCESS, ONE_OVER_REDIS, OVER_REDIS] {
            eprintln!("xtask: bench: redis round {r}/{}: fan-out, {}", options.rounds, column_name(column));
            run.fanout(r, column);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let get_metrics = section("tasks/get (median of the rounds)", &TWO, &GET_ROWS, &run.values);
    println!();
    let fanout_title = format!("one change, {STREAMS} listeners");
    let fanout_metrics = section(&fanout_title, &FANOUT_COLUMNS, &FANOUT_ROWS, &run.values);
    println!();
    let trips_metrics = section("trips to Redis (median of the rounds)", &TWO, &TRIPS_ROWS, &run.values);
    if let Some(last) = run.commands.last() {
        println!("Redis commands per tasks/get: {}", by_command(&last["tasks/get"]));
        println!("Redis commands per task lifecycle: {}", by_command(&last["lifecycle"]));
    }
    println!(
        "(±: half the range of the rounds; over Redis the servers and Redis share CPU 0; the fan-out's last listener per \
         server is over every (change, server), each change through the next server in turn)"
    );
    for column in [IN_PROCESS, OVER_REDIS] {
        let pct = run.values.get("get_load_cpu_pct").and_then(|m| m.get(&column)).and_then(|v| median(v));
        if let Some(pct) = pct.filter(|p| *p > SATURATED_PCT) {
            eprintln!(
                "xtask: bench: the generator was busy ({pct:.0}%) for tasks/get {}: the server may be faster",
                column_name(column)
            );
        }
    }
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let report = json!({
        "commit": git_commit(root),
        "unix_time": unix,
        "machine": machine(),
        "load_average": std::fs::read_to_string("/proc/loadavg").ok().map(|l| l.trim().to_owned()),
        "load_average_at_each_round": load_averages,
        "pinned": pinning.enabled,
        "redis_server": redis_binary.display().to_string(),
        "settings": {
            "quick": options.quick,
            "rounds": options.rounds,
            "http_connections": HTTP_CONNECTIONS,
            "http_warmup_s": options.warmup_s,
            "http_duration_s": options.duration_s,
            "streams": STREAMS,
            "instances_over_redis": INSTANCES,
            "announcements": run.sizes.announcements,
            "gap_ms": GAP_MS,
            "lone_gets": run.sizes.gets,
            "lifecycles": run.sizes.lifecycles,
        },
        "measuring_s": elapsed,
        "metrics": {"tasks_get": get_metrics, "fanout": fanout_metrics, "trips": trips_metrics},
        "redis_commands": run.commands,
        "failures": run.failures,
    });
    finish(root, OUTPUT, &report, elapsed, &run.failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stats_route_sits_beside_the_mcp_path() {
        assert_eq!(stats_url("http://127.0.0.1:4000/mcp"), "http://127.0.0.1:4000/stats");
        assert_eq!(stats_url("http://127.0.0.1:4000/"), "http://127.0.0.1:4000/stats");
    }

    #[test]
    fn a_kernel_over_redis_is_told_its_url_and_prefix_and_one_in_process_is_not() {
        let local = kernel_env(1_064, None);
        assert_eq!(local, [(MAX_CONNECTIONS_ENV, "1064".to_owned()), (MAX_LISTENS_ENV, "1064".to_owned())]);
        let shared = kernel_env(1_064, Some(("redis://127.0.0.1:7000".to_owned(), "bench-r1-get")));
        assert_eq!(
            &shared[2..],
            [(REDIS_ENV, "redis://127.0.0.1:7000".to_owned()), (PREFIX_ENV, "bench-r1-get".to_owned())]
        );
    }
}
