//! `bench-load tasks-notify`: how long a task's completion takes to reach a listener, beside how long
//! an ordinary answer takes to reach its caller (the baseline), on the same server. HTTP/1.1,
//! 127.0.0.1; both measured from the server's clock at the handler's return (the text `wait`
//! answers) to the generator's when the message is read whole:
//!
//! 1. **Baseline.** On one keep-alive connection, `WARMUP_CALLS` and then `--calls` ordinary calls of
//!    `wait` with `ms: 0` (no extension declared), one at a time: the handler's return until the
//!    answer's body is read. The server's CPU over them (`/proc/PID/task/*/schedstat`), per call.
//! 2. **Tasks.** `--tasks K` tasks of `wait`, task `i` made to return at `T + i × --spacing-ms`, with
//!    `T` `--lead-ms` from the start (`--spacing-ms 0`: all at once, a burst); `--connections` workers each create a task (a call declaring the
//!    extension, answered with its `working` task) and open its own `subscriptions/listen` stream,
//!    on a connection of its own, with `taskIds: [its id]`, the acknowledgment checked to honour it.
//!    All K streams are open before `T` (or the run is in error). Per task, the handler's return
//!    until its stream read the `notifications/tasks` saying `completed` (with the result, and so the
//!    handler's clock). Completions are spaced so that one does not queue behind another; a
//!    completion wakes only the stream watching its task (a listen watches its tasks in the store), so
//!    the server's CPU over the completions, per completion, says whether K listeners cost a
//!    completion anything. Every
//!    stream stays open until the end, so that no stream's closing falls in that window.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout, timeout_at};

use super::{created_task, micros_between, stamp_of, unix_micros, wait_request};
use crate::drip::raise_fd_limit;
use crate::http::http_message;
use crate::listen::sse::{Item, SseReader};
use crate::listen::stream::{ACKNOWLEDGED, Driver, is_tagged, open_stream};
use crate::report::{micros_since, threads_cpu_ns};
use crate::work::tasks_meta;
use crate::{
    Args, Errors, MAX_CONNECTIONS, PROTOCOL, Report, error_suffix, parse_url, seconds, short, summarize,
};

/// Unmeasured ordinary calls before the baseline's.
const WARMUP_CALLS: u64 = 20;
/// File descriptors needed beside the streams.
const SPARE_FDS: u64 = 64;
/// How long one task and its stream may take to be made and acknowledged.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// The least a task may have left to wait when it is created (ms): well past the server's threshold.
const MIN_WAIT_MS: u64 = 100;
const TASKS_NOTIFICATION: &str = "notifications/tasks";

/// What a `tasks-notify` run was asked for.
struct Settings {
    url: String,
    pid: u32,
    tasks: usize,
    spacing_ms: u64,
    lead_ms: u64,
    calls: u64,
    connections: usize,
    wait: Duration,
}

impl Settings {
    fn parse(mut args: Args) -> Result<Settings, String> {
        let url = args.take("url").ok_or("--url is required")?;
        let pid: u32 = args.number("pid", None)?;
        let tasks: usize = args.number("tasks", None)?;
        let spacing_ms: u64 = args.number("spacing-ms", Some(5))?;
        let lead_ms: u64 = args.number("lead-ms", Some(1_000 + tasks as u64))?;
        let calls: u64 = args.number("calls", Some(1_000))?;
        let connections: usize = args.number("connections", Some(16))?;
        let wait = seconds("wait-secs", args.number("wait-secs", Some(10.0))?)?;
        args.finish(false)?;
        if tasks == 0 || tasks > MAX_CONNECTIONS / 2 {
            return Err(format!("--tasks must be between 1 and {}", MAX_CONNECTIONS / 2));
        }
        if spacing_ms > 1_000 || !(MIN_WAIT_MS..=60_000).contains(&lead_ms) {
            return Err(format!("--spacing-ms: 0 to 1000; --lead-ms: {MIN_WAIT_MS} to 60000"));
        }
        if !(1..=100_000).contains(&calls) || !(1..=256).contains(&connections) || wait.is_zero() {
            return Err("--calls: 1 to 100000; --connections: 1 to 256; --wait-secs: positive".into());
        }
        Ok(Settings { url, pid, tasks, spacing_ms, lead_ms, calls, connections, wait })
    }
}

/// The baseline: (handler's return → answer read, round trips, server CPU per call in µs).
async fn baseline(
    settings: &Settings,
    authority: &str,
    path: &str,
    errors: &mut Errors,
) -> Result<(Vec<u32>, Vec<u32>, Option<f64>), String> {
    let (mut sender, driver) = crate::http::http1_connection(authority).await?;
    let _driver = Driver::from(driver);
    let (mut delivered, mut round_trips) = (Vec::new(), Vec::new());
    let mut cpu0 = None;
    for n in 1..=WARMUP_CALLS + settings.calls {
        if n == WARMUP_CALLS + 1 {
            cpu0 = threads_cpu_ns(&settings.pid.to_string());
        }
        sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
        let sent = Instant::now();
        let answer =
            http_message(sender.send_request(wait_request(authority, path, n, 0, false)).await, n).await;
        let (read, round_trip) = (unix_micros(), micros_since(sent));
        let stamp = answer.map_err(|(e, _)| e).and_then(|message| {
            let (id, result) = crate::work::envelope(&message);
            let result = result.map_err(|e| format!("wait: {e}"))?;
            if id != Some(n) {
                return Err(format!("answer for id {id:?} to request {n}"));
            }
            stamp_of(result).ok_or_else(|| format!("wait answered no clock: {}", short(result)))
        });
        match stamp {
            Ok(stamp) if n > WARMUP_CALLS => {
                delivered.push(micros_between(stamp, read));
                round_trips.push(round_trip);
            }
            Ok(_) => {}
            Err(e) => errors.add(e),
        }
    }
    let cpu = threads_cpu_ns(&settings.pid.to_string())
        .zip(cpu0)
        .map(|(after, before)| after.saturating_sub(before));
    let per_call = cpu.map(|ns| ns as f64 / 1e3 / delivered.len().max(1) as f64);
    Ok((delivered, round_trips, per_call))
}

/// A `subscriptions/listen` with id `listen` for the status of the task `task`, declaring the extension.
fn task_listen_request(authority: &str, path: &str, listen: u64, task: &str) -> Request<Full<Bytes>> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{listen},"method":"subscriptions/listen","params":{{{},"notifications":{{"taskIds":[{}]}}}}}}"#,
        tasks_meta(),
        Value::from(task)
    );
    Request::post(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .header("mcp-method", "subscriptions/listen")
        .body(Full::new(Bytes::from(body)))
        .expect("a valid request")
}

/// An open listen stream: its body, its reader, the events read but not taken, its connection.
struct Stream {
    body: Incoming,
    reader: SseReader,
    events: std::collections::VecDeque<String>,
    _driver: Driver,
}

impl Stream {
    /// The next event's data and when it was read (this machine's clock, µs); `None` at the end.
    async fn next(&mut self) -> Result<Option<(String, u64)>, String> {
        loop {
            if let Some(data) = self.events.pop_front() {
                return Ok(Some((data, unix_micros())));
            }
            let bytes = match self.body.frame().await {
                None => return Ok(None),
                Some(Err(e)) => return Err(format!("reading the stream: {e}")),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(bytes) => bytes,
                    Err(_) => continue,
                },
            };
            for item in self.reader.push(&bytes)? {
                if let Item::Event(data) = item {
                    self.events.push_back(data);
                }
            }
        }
    }
}

/// One task's completion as its stream read it: (task index, read at, the handler's clock).
type Read = (usize, u64, u64);

/// Task `index`: created to return at `due` (µs), its stream opened and acknowledged, then read on
/// a task of its own until the completion (sent to `reads`) or an error (sent too, as `Err`).
async fn make(
    index: usize,
    due: u64,
    authority: Arc<str>,
    path: Arc<str>,
    creating: Arc<Mutex<(hyper::client::conn::http1::SendRequest<Full<Bytes>>, u64)>>,
    reads: mpsc::UnboundedSender<Result<Read, String>>,
) -> Result<JoinHandle<()>, String> {
    let task = {
        let mut guard = creating.lock().await;
        let (sender, next_id) = &mut *guard;
        *next_id += 1;
        let id = *next_id;
        let ms = due.saturating_sub(unix_micros()) / 1_000;
        if ms < MIN_WAIT_MS {
            return Err(format!("task {index} would wait only {ms} ms: raise --lead-ms"));
        }
        sender.ready().await.map_err(|e| format!("connection closed: {e}"))?;
        let message =
            http_message(sender.send_request(wait_request(&authority, &path, id, ms, true)).await, id)
                .await
                .map_err(|(e, _)| e)?;
        created_task(&message, id)?
    };
    let listen = index as u64 + 1;
    let (body, driver) =
        open_stream(&authority, task_listen_request(&authority, &path, listen, &task)).await?;
    let mut stream =
        Stream { body, reader: SseReader::default(), events: Default::default(), _driver: driver };
    let (ack, _) = stream.next().await?.ok_or("the stream ended before its acknowledgment")?;
    let ack: Value = serde_json::from_str(&ack)
        .map_err(|_| format!("an event is no JSON: {}", &ack[..ack.len().min(200)]))?;
    if !is_tagged(&ack, ACKNOWLEDGED, listen) || ack["params"]["notifications"]["taskIds"] != json!([task]) {
        return Err(format!("the acknowledgment does not honour the task: {}", short(&ack)));
    }
    if unix_micros() >= due {
        return Err(format!("task {index}'s stream was acknowledged after it was due: raise --lead-ms"));
    }
    Ok(tokio::spawn(async move {
        let outcome = loop {
            let (data, read) = match stream.next().await {
                Ok(Some(event)) => event,
                Ok(None) => break Err(format!("the stream of task {index} ended before its completion")),
                Err(e) => break Err(e),
            };
            let Ok(event) = serde_json::from_str::<Value>(&data) else {
                break Err(format!("an event is no JSON: {}", &data[..data.len().min(200)]));
            };
            if !is_tagged(&event, TASKS_NOTIFICATION, listen) || event["params"]["taskId"] != task.as_str() {
                break Err(format!("an unexpected event on the stream of task {index}: {}", short(&event)));
            }
            match event["params"]["status"].as_str() {
                Some("completed") => match stamp_of(&event["params"]["result"]) {
                    Some(stamp) => break Ok((index, read, stamp)),
                    None => {
                        break Err(format!("a completion without the handler's clock: {}", short(&event)));
                    }
                },
                Some("working") => {}
                _ => break Err(format!("task {index} did not complete: {}", short(&event))),
            }
        };
        let read = outcome.is_ok();
        let _ = reads.send(outcome);
        if read {
            // Held open until the run is over: a stream closing is no part of a completion's cost.
            std::future::pending::<()>().await;
        }
    }))
}

pub(crate) async fn run(args: Args) -> Result<Report, String> {
    let settings = Settings::parse(args)?;
    let (authority, path) = parse_url(&settings.url)?;
    let (k, pid) = (settings.tasks, settings.pid);
    let fd_limit = raise_fd_limit((k + settings.connections) as u64 + SPARE_FDS)?;
    let mut errors = Errors::default();
    let (delivered, round_trips, cpu_per_call) = baseline(&settings, &authority, &path, &mut errors).await?;

    let start = unix_micros() + settings.lead_ms * 1_000;
    let due = |index: usize| start + index as u64 * settings.spacing_ms * 1_000;
    let (reads, mut read) = mpsc::unbounded_channel();
    let (authority, path): (Arc<str>, Arc<str>) = (authority.into(), path.into());
    let setting_up = Instant::now();
    let mut creating = Vec::with_capacity(settings.connections);
    let mut drivers = Vec::with_capacity(settings.connections);
    for n in 0..settings.connections {
        let (sender, driver) = crate::http::http1_connection(&authority).await?;
        drivers.push(Driver::from(driver));
        creating.push(Arc::new(Mutex::new((sender, n as u64 * 1_000_000_000))));
    }
    let makers: Vec<_> = (0..k)
        .map(|index| {
            let (authority, path, reads) = (authority.clone(), path.clone(), reads.clone());
            let creating = creating[index % creating.len()].clone();
            tokio::spawn(timeout(OPEN_TIMEOUT, make(index, due(index), authority, path, creating, reads)))
        })
        .collect();
    let mut streams = Vec::with_capacity(k);
    for maker in makers {
        match maker.await {
            Ok(Ok(Ok(stream))) => streams.push(Open(stream)),
            Ok(Ok(Err(e))) => errors.add(e),
            Ok(Err(_)) => errors.add("a task and its stream took more than 10 s"),
            Err(e) => errors.add(format!("maker task: {e}")),
        }
    }
    drop(reads);
    let setup_s = setting_up.elapsed().as_secs_f64();
    let cpu0 = threads_cpu_ns(&pid.to_string());
    let last =
        Instant::now() + Duration::from_micros(due(k - 1).saturating_sub(unix_micros())) + settings.wait;
    let (mut notified, mut late) = (Vec::with_capacity(k), Vec::with_capacity(k));
    let mut seen = vec![false; k];
    while notified.len() < streams.len() {
        match timeout_at(last, read.recv()).await {
            Ok(Some(Ok((index, at, stamp)))) if !seen[index] => {
                seen[index] = true;
                notified.push(micros_between(stamp, at));
                late.push(micros_between(due(index), stamp));
            }
            Ok(Some(Ok((index, _, _)))) => errors.add(format!("task {index} completed twice")),
            Ok(Some(Err(e))) => errors.add(e),
            Ok(None) | Err(_) => break,
        }
    }
    let cpu = threads_cpu_ns(&pid.to_string()).zip(cpu0).map(|(after, before)| after.saturating_sub(before));
    let cpu_per_completion = cpu.map(|ns| ns as f64 / 1e3 / notified.len().max(1) as f64);
    let missed = k - notified.len();
    if missed > 0 {
        errors.add(format!("{missed} of {k} completions were not read"));
    }
    drop(streams);
    drop(drivers);
    let (b, n, l, r) = (summarize(delivered), summarize(notified), summarize(late), summarize(round_trips));
    let first_errors = errors.kept.clone();
    let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    Ok(Report {
        human: format!(
            "tasks-notify: answer read {} / {} µs after the handler returned (p50 / p99, {} calls, round trip p50 {} µs, server \
             CPU {:.1} µs a call); {k} tasks, one stream each, set up in {setup_s:.2} s: completion read {} / {} µs after \
             it (max {} µs, handler {} / {} µs late), ratio {:.2} / {:.2}, server CPU {:.1} µs a completion; {} errors{}",
            b.p50,
            b.p99,
            settings.calls,
            r.p50,
            cpu_per_call.unwrap_or(0.0),
            n.p50,
            n.p99,
            n.max,
            l.p50,
            l.p99,
            ratio(n.p50, b.p50),
            ratio(n.p99, b.p99),
            cpu_per_completion.unwrap_or(0.0),
            errors.count,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "tasks-notify",
            "url": settings.url,
            "pid": pid,
            "tasks": k,
            "spacing_ms": settings.spacing_ms,
            "lead_ms": settings.lead_ms,
            "fd_limit": fd_limit,
            "setup_s": setup_s,
            "calls": settings.calls,
            "answer_p50_us": b.p50,
            "answer_p99_us": b.p99,
            "answer_max_us": b.max,
            "call_round_trip_p50_us": r.p50,
            "server_cpu_us_per_call": cpu_per_call,
            "completions_read": k - missed,
            "notified_p50_us": n.p50,
            "notified_p99_us": n.p99,
            "notified_max_us": n.max,
            "handler_late_p50_us": l.p50,
            "handler_late_p99_us": l.p99,
            "notified_over_answer_p50": ratio(n.p50, b.p50),
            "notified_over_answer_p99": ratio(n.p99, b.p99),
            "server_cpu_us_per_completion": cpu_per_completion,
            "errors": errors.count,
            "first_errors": first_errors,
        }),
        errors: errors.count,
    })
}

/// A stream's reading task, aborted (closing its connection) when the run is over.
struct Open(JoinHandle<()>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_have_defaults_and_bounds() {
        let s = Settings::parse(Args::of(&["--url", "u", "--pid", "1", "--tasks", "1000"])).unwrap();
        assert_eq!((s.spacing_ms, s.lead_ms, s.calls, s.connections), (5, 2_000, 1_000, 16));
        for bad in [
            &["--url", "u", "--pid", "1"][..],
            &["--url", "u", "--pid", "1", "--tasks", "0"],
            &["--url", "u", "--pid", "1", "--tasks", "9000"],
            &["--url", "u", "--pid", "1", "--tasks", "5", "--spacing-ms", "1001"],
            &["--url", "u", "--pid", "1", "--tasks", "5", "--lead-ms", "10"],
            &["--url", "u", "--pid", "1", "--tasks", "5", "--calls", "0"],
        ] {
            assert!(Settings::parse(Args::of(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_listen_asks_for_the_task_and_declares_the_extension() {
        let request = task_listen_request("127.0.0.1:1", "/mcp", 7, "ab");
        assert_eq!(request.headers()["mcp-method"], "subscriptions/listen");
        let body = futures_body(request);
        assert_eq!(body["params"]["notifications"], json!({"taskIds": ["ab"]}));
        assert_eq!(body["id"], 7);
        let capabilities = &body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/tasks"], json!({}));
    }

    /// The JSON body of a request built here.
    fn futures_body(request: Request<Full<Bytes>>) -> Value {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let bytes = runtime.block_on(request.into_body().collect()).unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }
}
