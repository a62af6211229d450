//! `bench-load tasks-trips`: what a `tasks/get` and a whole task cost in trips to a shared store, by
//! the server's own count (`--stats-url`: `bench-kernel`'s `GET /stats`, `{"redis_round_trips": N}`)
//! and by the store's (`--redis HOST:PORT`: its `INFO` counters, see `resp`), and their latency one at a
//! time. HTTP/1.1, one keep-alive connection, one request at a time. Without `--stats-url` and
//! `--redis` (a server with its tasks in process) only the latencies are measured.
//!
//! 1. **Warm-up.** One short task made and read to its end, so that the server's connections to the
//!    store are open; then a task that waits `LONG_WAIT_MS`, read by the gets below.
//! 2. **Background.** `--idle-ms` in which nothing is sent, the long task running: the trips the server
//!    makes on its own (the running task's lease), per second.
//! 3. **Gets.** `--gets N` `tasks/get` of the long task (each answer checked: that task, `working`):
//!    trips per get, and each get's round trip.
//! 4. **Lifecycles.** `--lifecycles L` times: a task made (`wait` for `--wait-ms`, its `working`
//!    `CreateTaskResult` checked), `--wait-ms` + `SETTLE_MS` left to run to its end, then one
//!    `tasks/get` reading it `completed` with its result (read again `SETTLE_MS` later while it is
//!    still `working`, counted as `extra_reads`). Trips per lifecycle, split into the creation
//!    (`create`), the run to its end (`run`) and the read (`read`).
//!
//! Every count is the difference of two readings around its window; a window of the store's count
//! leaves out the `INFO` commands that read it.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1::SendRequest;
use serde_json::{Value, json};
use tokio::time::{Instant, sleep};

use super::{LONG_WAIT_MS, created_task, stamp_of, wait_request};
use crate::http::{call_request, http_message};
use crate::listen::stream::Driver;
use crate::report::micros_since;
use crate::resp::{Commands, info};
use crate::work::{Work, envelope};
use crate::{Args, Errors, Report, error_suffix, parse_url, short, summarize};

/// The time a lifecycle's task is given beyond its wait to end (ms).
const SETTLE_MS: u64 = 50;
/// The most reads of one lifecycle's task before it counts as never ending.
const MAX_READS: u32 = 20;

/// What a `tasks-trips` run was asked for.
struct Settings {
    url: String,
    stats_url: Option<String>,
    redis: Option<String>,
    gets: u64,
    lifecycles: u64,
    wait_ms: u64,
    idle: Duration,
}

impl Settings {
    fn parse(mut args: Args) -> Result<Settings, String> {
        let url = args.take("url").ok_or("--url is required")?;
        let stats_url = args.take("stats-url");
        let redis = args.take("redis");
        let gets: u64 = args.number("gets", Some(1_000))?;
        let lifecycles: u64 = args.number("lifecycles", Some(20))?;
        let wait_ms: u64 = args.number("wait-ms", Some(50))?;
        let idle = Duration::from_millis(args.number("idle-ms", Some(1_000))?);
        args.finish(false)?;
        if !(1..=100_000).contains(&gets) || !(1..=1_000).contains(&lifecycles) {
            return Err("--gets: 1 to 100000; --lifecycles: 1 to 1000".into());
        }
        if !(20..=10_000).contains(&wait_ms) || idle > Duration::from_secs(60) {
            return Err(
                "--wait-ms: 20 to 10000 (past the server's threshold); --idle-ms: at most 60000".into()
            );
        }
        Ok(Settings { url, stats_url, redis, gets, lifecycles, wait_ms, idle })
    }
}

/// Both counts at one moment: the server's round trips, the store's commands.
#[derive(Clone, Default)]
struct Reading {
    trips: Option<u64>,
    commands: Option<Commands>,
}

/// A window's counts: the server's round trips and the store's commands (in all, and per command).
#[derive(Default)]
struct Counted {
    trips: Option<u64>,
    commands: Option<u64>,
    by_command: BTreeMap<String, u64>,
}

impl Counted {
    fn between(before: &Reading, after: &Reading) -> Counted {
        let trips = after.trips.zip(before.trips).map(|(a, b)| a.saturating_sub(b));
        let (commands, by_command) = match (&after.commands, &before.commands) {
            (Some(a), Some(b)) => {
                let (total, calls) = a.since(b);
                (Some(total), calls)
            }
            _ => (None, BTreeMap::new()),
        };
        Counted { trips, commands, by_command }
    }

    fn add(&mut self, other: &Counted) {
        self.trips = match (self.trips, other.trips) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.commands = match (self.commands, other.commands) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        for (name, n) in &other.by_command {
            *self.by_command.entry(name.clone()).or_default() += n;
        }
    }

    /// The counts divided by `units`, as JSON: `{"trips": …, "commands": …, "by_command": {…}}`.
    fn per(&self, units: u64) -> Value {
        let units = units.max(1) as f64;
        let by: serde_json::Map<String, Value> =
            self.by_command.iter().map(|(name, n)| (name.clone(), json!(*n as f64 / units))).collect();
        json!({
            "trips": self.trips.map(|n| n as f64 / units),
            "commands": self.commands.map(|n| n as f64 / units),
            "by_command": by,
        })
    }
}

/// One keep-alive connection to the server, its MCP path and its stats path.
struct Client {
    sender: SendRequest<Full<Bytes>>,
    _driver: Driver,
    authority: String,
    path: String,
    stats_path: Option<String>,
    redis: Option<String>,
    next_id: u64,
}

impl Client {
    async fn send(&mut self, request: Request<Full<Bytes>>, id: u64) -> Result<Value, String> {
        self.sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
        http_message(self.sender.send_request(request).await, id).await.map_err(|(e, _)| e)
    }

    /// Both counts now.
    async fn reading(&mut self) -> Result<Reading, String> {
        let trips = match self.stats_path.clone() {
            None => None,
            Some(path) => {
                self.sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
                let request = Request::get(path.as_str())
                    .header("host", self.authority.as_str())
                    .body(Full::new(Bytes::new()))
                    .map_err(|e| e.to_string())?;
                let response = self.sender.send_request(request).await.map_err(|e| format!("stats: {e}"))?;
                let status = response.status();
                let body =
                    response.into_body().collect().await.map_err(|e| format!("stats: {e}"))?.to_bytes();
                if status != hyper::StatusCode::OK {
                    return Err(format!("stats: HTTP {status}"));
                }
                Some(round_trips_of(&body)?)
            }
        };
        let commands = match &self.redis {
            None => None,
            Some(address) => Some(info(address).await?),
        };
        Ok(Reading { trips, commands })
    }

    /// A task of `wait` for `ms`: its id, and the creation's round trip (µs).
    async fn create(&mut self, ms: u64) -> Result<(String, u32), String> {
        self.next_id += 1;
        let id = self.next_id;
        let sent = Instant::now();
        let message = self.send(wait_request(&self.authority, &self.path, id, ms, true), id).await?;
        let us = micros_since(sent);
        Ok((created_task(&message, id).map_err(|e| format!("creating a task: {e}"))?, us))
    }

    /// `tasks/get` of `task`: its result, and the round trip (µs).
    async fn get(&mut self, task: &str) -> Result<(Value, u32), String> {
        self.next_id += 1;
        let id = self.next_id;
        let work = Work::TaskGet { id: task.to_owned() };
        let request = call_request(&self.authority, &self.path, &work, id, false);
        let sent = Instant::now();
        let message = self.send(request, id).await?;
        let us = micros_since(sent);
        let (got, result) = envelope(&message);
        let result = result?;
        if got != Some(id) || result.get("taskId").and_then(Value::as_str) != Some(task) {
            return Err(format!("not the answer about task {task}: {}", short(&message)));
        }
        Ok((result.clone(), us))
    }
}

/// A count per unit as the human line shows it: two decimals, or `—` when it was not counted.
fn shown(v: &Value) -> String {
    v.as_f64().map_or("—".to_owned(), |n| format!("{n:.2}"))
}

/// The count in a `GET /stats` body.
fn round_trips_of(body: &[u8]) -> Result<u64, String> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("redis_round_trips").and_then(Value::as_u64))
        .ok_or_else(|| format!("stats without redis_round_trips: {}", String::from_utf8_lossy(body)))
}

/// Reads `task` until it is no longer `working` (at most `MAX_READS` times, `SETTLE_MS` apart): the
/// reads it took, and the last read's round trip; an error unless it ends `completed` with a clock.
async fn read_to_end(client: &mut Client, task: &str) -> Result<(u32, u32), String> {
    for reads in 1..=MAX_READS {
        let (result, us) = client.get(task).await?;
        match result.get("status").and_then(Value::as_str) {
            Some("working") => sleep(Duration::from_millis(SETTLE_MS)).await,
            Some("completed") if result.get("result").and_then(stamp_of).is_some() => return Ok((reads, us)),
            _ => return Err(format!("task {task} did not complete with its result: {}", short(&result))),
        }
    }
    Err(format!("task {task} still working after {MAX_READS} reads"))
}

/// `bench-load tasks-trips`: see the module.
pub(crate) async fn run(args: Args) -> Result<Report, String> {
    let settings = Settings::parse(args)?;
    let (authority, path) = parse_url(&settings.url)?;
    let stats_path = match &settings.stats_url {
        Some(url) => {
            let (stats_authority, stats_path) = parse_url(url)?;
            if stats_authority != authority {
                return Err("--stats-url must name the server of --url".into());
            }
            Some(stats_path)
        }
        None => None,
    };
    let (sender, driver) = crate::http::http1_connection(&authority).await?;
    let mut client = Client {
        sender,
        _driver: Driver::from(driver),
        authority,
        path,
        stats_path,
        redis: settings.redis.clone(),
        next_id: 0,
    };
    let mut errors = Errors::default();

    // Warm-up, and the long task the gets read.
    let (warm, _) = client.create(settings.wait_ms).await?;
    sleep(Duration::from_millis(settings.wait_ms + SETTLE_MS)).await;
    read_to_end(&mut client, &warm).await?;
    let (long, _) = client.create(LONG_WAIT_MS).await?;

    let before = client.reading().await?;
    let idle_from = Instant::now();
    sleep(settings.idle).await;
    let after = client.reading().await?;
    let idle_s = idle_from.elapsed().as_secs_f64();
    let background = Counted::between(&before, &after);

    let before = client.reading().await?;
    let mut get_us = Vec::with_capacity(settings.gets as usize);
    for _ in 0..settings.gets {
        match client.get(&long).await {
            Ok((result, us)) if result.get("status").and_then(Value::as_str) == Some("working") => {
                get_us.push(us)
            }
            Ok((result, _)) => errors.add(format!("the long task is not working: {}", short(&result))),
            Err(e) => errors.add(e),
        }
    }
    let after = client.reading().await?;
    let gets = Counted::between(&before, &after);

    let (mut create, mut run, mut read) = (Counted::default(), Counted::default(), Counted::default());
    let (mut create_us, mut read_us, mut extra_reads) = (Vec::new(), Vec::new(), 0u32);
    for _ in 0..settings.lifecycles {
        let r0 = client.reading().await?;
        let (task, us) = match client.create(settings.wait_ms).await {
            Ok(made) => made,
            Err(e) => {
                errors.add(e);
                continue;
            }
        };
        create_us.push(us);
        let r1 = client.reading().await?;
        sleep(Duration::from_millis(settings.wait_ms + SETTLE_MS)).await;
        let r2 = client.reading().await?;
        match read_to_end(&mut client, &task).await {
            Ok((reads, us)) => {
                extra_reads += reads - 1;
                read_us.push(us);
            }
            Err(e) => errors.add(e),
        }
        let r3 = client.reading().await?;
        create.add(&Counted::between(&r0, &r1));
        run.add(&Counted::between(&r1, &r2));
        read.add(&Counted::between(&r2, &r3));
    }
    let mut lifecycle = Counted::default();
    for part in [&create, &run, &read] {
        lifecycle.add(part);
    }
    let lifecycles = create_us.len() as u64;
    let (get, made, done) = (summarize(get_us.clone()), summarize(create_us), summarize(read_us));
    let per_get = gets.per(get_us.len() as u64);
    let per_lifecycle = lifecycle.per(lifecycles);
    let per_s = |n: Option<u64>| n.map(|n| n as f64 / idle_s);
    let first_errors = errors.kept.clone();
    Ok(Report {
        human: format!(
            "tasks-trips: {} gets, p50 {} µs, p99 {} µs, {} trips and {} store commands per get; {lifecycles} \
             lifecycles, creation p50 {} µs, {} trips and {} store commands each ({extra_reads} extra reads); \
             background {} trips/s; {} errors{}",
            get_us.len(),
            get.p50,
            get.p99,
            shown(&per_get["trips"]),
            shown(&per_get["commands"]),
            made.p50,
            shown(&per_lifecycle["trips"]),
            shown(&per_lifecycle["commands"]),
            per_s(background.trips).map_or("—".to_owned(), |n| format!("{n:.1}")),
            errors.count,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "tasks-trips",
            "url": settings.url,
            "gets": get_us.len(),
            "get_p50_us": get.p50,
            "get_p99_us": get.p99,
            "per_get": per_get,
            "lifecycles": lifecycles,
            "wait_ms": settings.wait_ms,
            "create_p50_us": made.p50,
            "completed_read_p50_us": done.p50,
            "extra_reads": extra_reads,
            "per_lifecycle": per_lifecycle,
            "per_lifecycle_create": create.per(lifecycles),
            "per_lifecycle_run": run.per(lifecycles),
            "per_lifecycle_read": read.per(lifecycles),
            "idle_s": idle_s,
            "background_trips_per_s": per_s(background.trips),
            "background_commands_per_s": per_s(background.commands),
            "errors": errors.count,
            "first_errors": first_errors,
        }),
        errors: errors.count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::parse_info;

    #[test]
    fn settings_have_defaults_and_bounds() {
        let s = Settings::parse(Args::of(&["--url", "u"])).unwrap();
        assert_eq!((s.gets, s.lifecycles, s.wait_ms, s.stats_url, s.redis), (1_000, 20, 50, None, None));
        for bad in [
            &["--gets", "5"][..],
            &["--url", "u", "--gets", "0"],
            &["--url", "u", "--lifecycles", "1001"],
            &["--url", "u", "--wait-ms", "1"],
            &["--url", "u", "--idle-ms", "61000"],
        ] {
            assert!(Settings::parse(Args::of(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_round_trips_are_read_from_the_stats() {
        assert_eq!(round_trips_of(br#"{"redis_round_trips":42}"#), Ok(42));
        assert!(round_trips_of(b"{}").is_err());
        assert!(round_trips_of(b"not json").is_err());
    }

    #[test]
    fn windows_are_differences_and_add_up_per_unit() {
        let info = |total: u64, evalsha: u64, infos: u64| {
            parse_info(&format!(
                "total_commands_processed:{total}\ncmdstat_evalsha:calls={evalsha},usec=1\ncmdstat_info:calls={infos},usec=1\n"
            ))
            .unwrap()
        };
        let r0 = Reading { trips: Some(100), commands: Some(info(50, 10, 5)) };
        let r1 = Reading { trips: Some(103), commands: Some(info(54, 13, 6)) };
        let r2 = Reading { trips: Some(104), commands: Some(info(56, 14, 7)) };
        let mut both = Counted::between(&r0, &r1);
        assert_eq!((both.trips, both.commands, both.by_command["evalsha"]), (Some(3), Some(3), 3));
        both.add(&Counted::between(&r1, &r2));
        assert_eq!((both.trips, both.commands), (Some(4), Some(4)));
        assert_eq!(both.per(2)["trips"], 2.0);
        assert_eq!(both.per(2)["by_command"]["evalsha"], 2.0);
        let alone = Counted::between(&Reading::default(), &Reading::default());
        assert_eq!((alone.trips, alone.commands), (None, None));
        assert_eq!(alone.per(1)["trips"], Value::Null);
    }
}
