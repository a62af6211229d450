//! `bench-load tasks-memory`: the server's memory per live task, or per held call of the same tool
//! (the baseline: what a client without the extension holds open instead). HTTP/1.1, 127.0.0.1.
//!
//! - `--as tasks`: `--connections` keep-alive connections, each past one checked `tools/call` of
//!   `echo`; `--settle-secs` later the server's `VmRSS` is read. Then `--count` calls of `wait`
//!   (declaring the extension, waiting `LONG_WAIT_MS`) in a closed loop on those connections, each
//!   answered with a `working` task; `--settle-secs` later `VmRSS` again. The growth over the count is
//!   the memory per live task: its record in the store, its run and the handler's future, waiting.
//!   One `tasks/get` of the first and of the last task checks both are still `working`.
//! - `--as calls`: `VmRSS` before anything, then `--count` connections opened at `--open-rate` a
//!   second, each sending one `wait` call that does not declare the extension (an ordinary call, held
//!   open until the handler returns); `--settle-secs` after the last is sent, `VmRSS` again: the
//!   memory per held call, its connection included (`bench-load idle` gives the connection alone).
//!   A held call answered before the reading is an error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until, timeout};

use super::{LONG_WAIT_MS, MAX_TASKS, created_task, wait_request};
use crate::drip::raise_fd_limit;
use crate::hold::proc_status_kib;
use crate::http::{call_request, check_http_answer, http_message};
use crate::report::micros_since;
use crate::work::Work;
use crate::{
    Args, ECHO, Errors, MAX_CONNECTIONS, Report, error_suffix, exchange, parse_url, seconds, summarize,
};

/// Connections being opened at once (see `idle`).
const CONNECTING_AT_ONCE: usize = 32;
/// File descriptors needed beside the connections.
const SPARE_FDS: u64 = 64;
/// How long one connection may take to connect (and, for tasks, to have its first call answered).
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one task may take to be created.
const CREATE_TIMEOUT: Duration = Duration::from_secs(10);
/// Held calls opened per second by default (see `drip`'s `DEFAULT_OPEN_RATE`).
const DEFAULT_OPEN_RATE: u32 = 3_000;
/// The most connections tasks are created on.
const MAX_CREATING: usize = 1_024;

/// What a `tasks-memory` run was asked for.
struct Settings {
    url: String,
    pid: u32,
    count: usize,
    tasks: bool,
    connections: usize,
    settle: Duration,
    open_rate: u32,
}

impl Settings {
    fn parse(mut args: Args) -> Result<Settings, String> {
        let url = args.take("url").ok_or("--url is required")?;
        let pid: u32 = args.number("pid", None)?;
        let count: usize = args.number("count", None)?;
        let tasks = match args.take("as").as_deref() {
            None | Some("tasks") => true,
            Some("calls") => false,
            Some(other) => return Err(format!("--as: tasks or calls, not {other:?}")),
        };
        let connections: usize = args.number("connections", Some(32))?;
        let settle = seconds("settle-secs", args.number("settle-secs", Some(1.0))?)?;
        let open_rate: u32 = args.number("open-rate", Some(DEFAULT_OPEN_RATE))?;
        args.finish(false)?;
        let most = if tasks { MAX_TASKS } else { MAX_CONNECTIONS };
        if count == 0 || count > most {
            return Err(format!("--count must be between 1 and {most}"));
        }
        if connections == 0 || connections > MAX_CREATING {
            return Err(format!("--connections must be between 1 and {MAX_CREATING}"));
        }
        if !(1..=100_000).contains(&open_rate) {
            return Err("--open-rate must be between 1 and 100000".into());
        }
        Ok(Settings { url, pid, count, tasks, connections, settle, open_rate })
    }
}

/// One keep-alive connection: its sender and its driver (aborted when dropped).
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    driver: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// A connection past one checked call of `echo`.
async fn warm_connection(authority: &str, path: &str, id: u64) -> Result<Connection, String> {
    let (sender, driver) = crate::http::http1_connection(authority).await?;
    let mut connection = Connection { sender, driver };
    connection.sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let request = call_request(authority, path, &ECHO, id, false);
    exchange(&mut connection.sender, request, id).await.map_err(|(e, _)| e)?;
    Ok(connection)
}

/// What the creating connections made: the task ids, each creation's round trip, the errors.
#[derive(Default)]
struct Made {
    ids: Vec<String>,
    micros: Vec<u32>,
    errors: Errors,
}

/// Creates tasks on `connection` until `left` runs out.
async fn create_on(
    mut connection: Connection,
    authority: String,
    path: String,
    first_id: u64,
    left: Arc<AtomicUsize>,
    made: Arc<Mutex<Made>>,
) -> Connection {
    let mut id = first_id;
    while left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok() {
        id += 1;
        let sent = Instant::now();
        let created = timeout(CREATE_TIMEOUT, async {
            connection.sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
            let request = wait_request(&authority, &path, id, LONG_WAIT_MS, true);
            let message =
                http_message(connection.sender.send_request(request).await, id).await.map_err(|(e, _)| e)?;
            created_task(&message, id)
        })
        .await
        .unwrap_or_else(|_| Err("no task within 10 s".to_owned()));
        let micros = micros_since(sent);
        let mut made = made.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match created {
            Ok(task) => {
                made.ids.push(task);
                made.micros.push(micros);
            }
            Err(e) => made.errors.add(e),
        }
    }
    connection
}

/// `--as tasks`: (RSS before, tasks created, the creation round trips, the seconds they took,
/// connections still held), with errors into `errors`.
async fn live_tasks(
    settings: &Settings,
    authority: &str,
    path: &str,
    errors: &mut Errors,
) -> Result<(u64, Made, f64, Vec<Connection>), String> {
    let mut connections = Vec::with_capacity(settings.connections);
    for n in 0..settings.connections {
        connections.push(
            timeout(OPEN_TIMEOUT, warm_connection(authority, path, n as u64 + 1))
                .await
                .map_err(|_| "a creating connection timed out".to_owned())??,
        );
    }
    sleep(settings.settle).await;
    let pid = settings.pid;
    let rss_before = proc_status_kib(pid, "VmRSS").ok_or_else(|| format!("no /proc/{pid}/status"))?;
    let left = Arc::new(AtomicUsize::new(settings.count));
    let made = Arc::new(Mutex::new(Made::default()));
    let started = Instant::now();
    let workers: Vec<_> = connections
        .into_iter()
        .enumerate()
        .map(|(n, connection)| {
            let first_id = (n as u64 + 1) * 1_000_000_000;
            let (left, made) = (left.clone(), made.clone());
            tokio::spawn(create_on(connection, authority.to_owned(), path.to_owned(), first_id, left, made))
        })
        .collect();
    let mut held = Vec::with_capacity(workers.len());
    for worker in workers {
        match worker.await {
            Ok(connection) => held.push(connection),
            Err(e) => errors.add(format!("creating task: {e}")),
        }
    }
    let create_s = started.elapsed().as_secs_f64();
    let made = std::mem::take(&mut *made.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    Ok((rss_before, made, create_s, held))
}

/// One `tasks/get` of `task` on `connection`: still `working`.
async fn still_working(
    connection: &mut Connection,
    authority: &str,
    path: &str,
    task: &str,
) -> Result<(), String> {
    let work = Work::TaskGet { id: task.to_owned() };
    let id = 1;
    connection.sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
    let request = call_request(authority, path, &work, id, false);
    check_http_answer(connection.sender.send_request(request).await, id, &work)
        .await
        .map_err(|(e, _)| format!("tasks/get of a live task: {e}"))
}

/// `--as calls`: one held call per connection, opened at the open rate; their tasks (each ends when
/// its call is answered or fails) and the errors of those that did not open.
async fn held_calls(
    settings: &Settings,
    authority: &str,
    path: &str,
    errors: &mut Errors,
) -> Vec<JoinHandle<String>> {
    let connecting = Arc::new(Semaphore::new(CONNECTING_AT_ONCE));
    let t0 = Instant::now();
    let openers: Vec<_> = (0..settings.count)
        .map(|n| {
            let (authority, path, connecting) = (authority.to_owned(), path.to_owned(), connecting.clone());
            let at = t0 + Duration::from_secs_f64(n as f64 / f64::from(settings.open_rate));
            tokio::spawn(async move {
                sleep_until(at).await;
                let _permit = connecting.acquire().await.map_err(|e| e.to_string())?;
                let (mut sender, driver) = timeout(OPEN_TIMEOUT, crate::http::http1_connection(&authority))
                    .await
                    .map_err(|_| "connecting timed out".to_owned())??;
                sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
                let id = n as u64 + 1;
                let response = sender.send_request(wait_request(&authority, &path, id, LONG_WAIT_MS, false));
                // The call is held until it is answered: an answer (or a failure) ends the task early.
                Ok::<_, String>(tokio::spawn(async move {
                    let _connection = Connection { sender, driver };
                    match http_message(response.await, id).await {
                        Ok(message) => format!("a held call was answered: {}", crate::short(&message)),
                        Err((e, _)) => format!("a held call failed: {e}"),
                    }
                }))
            })
        })
        .collect();
    let mut held = Vec::with_capacity(settings.count);
    for opener in openers {
        match opener.await {
            Ok(Ok(call)) => held.push(call),
            Ok(Err(e)) => errors.add(e),
            Err(e) => errors.add(format!("opener task: {e}")),
        }
    }
    held
}

pub(crate) async fn run(args: Args) -> Result<Report, String> {
    let settings = Settings::parse(args)?;
    let (authority, path) = parse_url(&settings.url)?;
    let (n, pid) = (settings.count, settings.pid);
    let needed = if settings.tasks { settings.connections } else { n };
    let fd_limit = raise_fd_limit(needed as u64 + SPARE_FDS)?;
    let mut errors = Errors::default();
    let opening = Instant::now();
    let (rss_before, live, made, create_s, mut creating, held) = if settings.tasks {
        let (before, made, create_s, creating) =
            live_tasks(&settings, &authority, &path, &mut errors).await?;
        (before, made.ids.len(), Some(made), create_s, creating, Vec::new())
    } else {
        let before = proc_status_kib(pid, "VmRSS").ok_or_else(|| format!("no /proc/{pid}/status"))?;
        let held = held_calls(&settings, &authority, &path, &mut errors).await;
        (before, held.len(), None, opening.elapsed().as_secs_f64(), Vec::new(), held)
    };
    sleep(settings.settle).await;
    let rss_after = proc_status_kib(pid, "VmRSS").unwrap_or(0);
    let hwm = proc_status_kib(pid, "VmHWM").unwrap_or(0);
    let per_item_kib = (rss_after as f64 - rss_before as f64) / n as f64;
    let (ended, held): (Vec<_>, Vec<_>) = held.into_iter().partition(JoinHandle::is_finished);
    let ended_early = ended.len();
    for call in ended {
        errors.add(call.await.unwrap_or_else(|e| format!("held call task: {e}")));
    }
    let mut creation = summarize(Vec::new());
    if let Some(made) = made {
        errors.merge(made.errors);
        if let (Some(first), Some(last), Some(connection)) =
            (made.ids.first(), made.ids.last(), creating.first_mut())
        {
            for task in [first, last] {
                if let Err(e) = still_working(connection, &authority, &path, task).await {
                    errors.add(e);
                }
            }
        }
        creation = summarize(made.micros);
    }
    if live < n {
        errors.add(format!("{} of {n} were not made", n - live));
    }
    for call in &held {
        call.abort();
    }
    drop(creating);
    let what = if settings.tasks { "tasks" } else { "calls" };
    let first_errors = errors.kept.clone();
    Ok(Report {
        human: format!(
            "tasks-memory ({what}): {live} of {n} live in {create_s:.2} s; server RSS {rss_before} → {rss_after} KiB = \
             {per_item_kib:.2} KiB each (VmHWM {hwm} KiB); creation p50 {} µs, p99 {} µs; {} errors{}",
            creation.p50,
            creation.p99,
            errors.count,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "tasks-memory",
            "as": what,
            "url": settings.url,
            "pid": pid,
            "count": n,
            "live": live,
            "connections": if settings.tasks { settings.connections } else { n },
            "fd_limit": fd_limit,
            "make_s": create_s,
            "made_per_s": if create_s > 0.0 { live as f64 / create_s } else { 0.0 },
            "rss_before_kib": rss_before,
            "rss_after_kib": rss_after,
            "hwm_after_kib": hwm,
            "per_item_kib": per_item_kib,
            "per_item_bytes": per_item_kib * 1024.0,
            "creation_p50_us": creation.p50,
            "creation_p99_us": creation.p99,
            "ended_early": ended_early,
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
        let s = Settings::parse(Args::of(&["--url", "u", "--pid", "1", "--count", "10000"])).unwrap();
        assert_eq!((s.count, s.tasks, s.connections, s.open_rate), (10_000, true, 32, DEFAULT_OPEN_RATE));
        let calls = Settings::parse(Args::of(&["--url", "u", "--pid", "1", "--count", "5", "--as", "calls"]))
            .unwrap();
        assert!(!calls.tasks);
        for bad in [
            &["--url", "u", "--pid", "1"][..],
            &["--url", "u", "--pid", "1", "--count", "0"],
            &["--url", "u", "--pid", "1", "--count", "100001"],
            &["--url", "u", "--pid", "1", "--count", "20000", "--as", "calls"],
            &["--url", "u", "--pid", "1", "--count", "5", "--as", "other"],
            &["--url", "u", "--pid", "1", "--count", "5", "--connections", "0"],
        ] {
            assert!(Settings::parse(Args::of(bad)).is_err(), "{bad:?}");
        }
    }
}
