//! The `http` mode: C connections in a closed loop against a loopback URL, over HTTP/1.1 or h2c
//! (`--streams` at once on each), each sending `tools/call`s (the echo of `hello`, or of a message of
//! `--message-bytes`) and checking each answer (JSON or SSE), for a warmup and then a measured window.
//! Connections are opened `CONNECTING_AT_ONCE` at a time, and the soft limit on open files is raised
//! to what they need.
//!
//! With `--rate R` the load is paced instead: every stream sends its requests on a schedule of its own
//! (R ÷ streams a second, the streams' schedules staggered evenly), still one at a time, and a request's
//! latency is counted from when the schedule said it should leave, so a server that falls behind is
//! charged for the wait (no coordinated omission). Two servers compared at the same rate do the same
//! work in the same time: their CPU per request is then not bent by which side of the loop is the
//! bottleneck. The generator's timer ticks once a millisecond, so requests leave in small groups on
//! each tick.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout_at};

use crate::args::{Args, seconds};
use crate::drip::raise_fd_limit;
use crate::report::{
    Errors, Report, ThreadTimes, cpu_percent, error_suffix, faults_per, minor_faults, own_cpu_seconds,
    summarize,
};
use crate::work::{LEGACY_PROTOCOL, Work};
use crate::{ECHO, MAX_CONNECTIONS, PROTOCOL, check_answer, request_body};

/// `http://HOST:PORT/PATH` with a loopback host: (authority, path).
/// One HTTP/1.1 connection to `authority` (no Nagle), and the task driving it.
pub(crate) async fn http1_connection(
    authority: &str,
) -> Result<(hyper::client::conn::http1::SendRequest<Full<Bytes>>, tokio::task::JoinHandle<()>), String> {
    let stream = TcpStream::connect(authority).await.map_err(|e| format!("connect {authority}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
    Ok((sender, tokio::spawn(async move { drop(connection.await) })))
}

pub(crate) fn parse_url(url: &str) -> Result<(String, String), String> {
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let host = match authority.rfind(':') {
        Some(at) if !authority.ends_with(']') => &authority[..at],
        _ => authority,
    };
    let loopback = host == "localhost"
        || host == "[::1]"
        || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err(format!("{host} is not a loopback address: this tool only loads 127.0.0.1"));
    }
    if !authority.contains(':') || authority.ends_with(']') {
        return Err("the URL needs an explicit port".into());
    }
    Ok((authority.to_owned(), path.to_owned()))
}

/// Connections being opened at once: well below a listen backlog, which more would overflow (each
/// overflow costs a 1 s SYN retransmission).
const CONNECTING_AT_ONCE: usize = 64;
/// File descriptors needed beside the connections (stdio, the runtime).
const SPARE_FDS: u64 = 64;
/// The most `--streams` per h2c connection.
const MAX_STREAMS: usize = 1024;
/// The highest `--rate`, requests a second.
const MAX_RATE: f64 = 10_000_000.0;
/// The share of a paced run's rate it must answer within the window to have kept it.
const KEPT_RATE: f64 = 0.95;

/// The HTTP version spoken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Protocol {
    /// HTTP/1.1 keep-alive: one request at a time per connection.
    Http1,
    /// HTTP/2 with prior knowledge, over plain TCP: `--streams` requests at a time per connection.
    H2c,
}

/// A client connection's request sender, of either version.
enum Sender {
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Sender {
    async fn ready(&mut self) -> Result<(), hyper::Error> {
        match self {
            Sender::H1(s) => s.ready().await,
            Sender::H2(s) => s.ready().await,
        }
    }

    async fn send(&mut self, request: Request<Full<Bytes>>) -> Result<Response<Incoming>, hyper::Error> {
        match self {
            Sender::H1(s) => s.send_request(request).await,
            Sender::H2(s) => s.send_request(request).await,
        }
    }
}

/// What one stream of requests measured (one per HTTP/1.1 connection, `--streams` per h2c one).
#[derive(Default)]
struct ConnectionStats {
    micros: Vec<u32>,
    warmup_ok: u64,
    /// Answered correctly but finished after the window closed: neither counted nor an error.
    late: u64,
    /// Answered correctly within the measured window, whenever sent: what the server's CPU over the
    /// window is divided by (a request in flight at either end is half in the window, and the two
    /// ends even out).
    done_in_window: u64,
    connects: u64,
    errors: Errors,
}

impl ConnectionStats {
    fn merge(&mut self, other: ConnectionStats) {
        self.micros.extend(other.micros);
        self.warmup_ok += other.warmup_ok;
        self.late += other.late;
        self.done_in_window += other.done_in_window;
        self.connects += other.connects;
        self.errors.merge(other.errors);
    }
}

/// What every connection of a run shares.
struct Target {
    authority: String,
    path: String,
    protocol: Protocol,
    streams: usize,
    work: Work,
    /// The measured window: (from, to).
    window: (Instant, Instant),
    connecting: Semaphore,
    /// With `--rate`: the interval between two requests of one stream, and how many streams share the
    /// rate (their schedules are staggered by `interval ÷ streams`).
    pace: Option<(Duration, u64)>,
    /// For `--method task-get` and `legacy-session`: the tasks created, or the sessions opened,
    /// before the run; connection `i` reads the `i`-th.
    own_ids: Vec<String>,
}

impl Target {
    /// What connection `index` sends: the run's work, with its own task for `tasks/get` and its own
    /// session for a session's call.
    fn work_for(&self, index: u64) -> Work {
        let own = || self.own_ids[index as usize % self.own_ids.len()].clone();
        match (&self.work, self.own_ids.is_empty()) {
            (Work::TaskGet { .. }, false) => Work::TaskGet { id: own() },
            (Work::LegacySession { .. }, false) => Work::LegacySession { id: own() },
            (work, _) => work.clone(),
        }
    }
}

pub(crate) async fn http(mut args: Args) -> Result<Report, String> {
    let url = args.take("url").ok_or("--url is required")?;
    let connections: usize = args.number("connections", Some(32))?;
    let warmup = seconds("warmup", args.number("warmup", Some(2.0))?)?;
    let duration = seconds("duration", args.number("duration", Some(5.0))?)?;
    let protocol = match args.take("protocol").as_deref() {
        None | Some("http1") => Protocol::Http1,
        Some("h2c") => Protocol::H2c,
        Some(other) => return Err(format!("--protocol: http1 or h2c, not {other:?}")),
    };
    let streams: usize = args.number("streams", Some(1))?;
    // Paced (`--rate`, requests a second in all) rather than as fast as answers come.
    let rate: Option<f64> = args
        .take("rate")
        .map(|v| v.parse::<f64>())
        .transpose()
        .map_err(|_| "--rate: a number of requests a second")?;
    // With the server's pid, its CPU over the window is read too (every thread's schedstat).
    let pid = args
        .take("pid")
        .map(|v| v.parse::<u32>().map_err(|_| format!("--pid: not a number: {v:?}")))
        .transpose()?;
    // With a shared store's pid (`--store-pid`), its CPU over the window is read the same way.
    let store_pid = args
        .take("store-pid")
        .map(|v| v.parse::<u32>().map_err(|_| format!("--store-pid: not a number: {v:?}")))
        .transpose()?;
    // Live tasks and open sessions held on the server over the run (`held`).
    let live_tasks: Option<usize> =
        args.take("live-tasks").map(|v| v.parse()).transpose().map_err(|_| "--live-tasks: a number")?;
    let open_sessions: Option<usize> =
        args.take("open-sessions").map(|v| v.parse()).transpose().map_err(|_| "--open-sessions: a number")?;
    let work = Work::parse(&mut args)?;
    args.finish(false)?;
    if connections == 0 || connections > MAX_CONNECTIONS {
        return Err(format!("--connections must be between 1 and {MAX_CONNECTIONS}"));
    }
    if streams == 0 || streams > MAX_STREAMS || (protocol == Protocol::Http1 && streams != 1) {
        return Err(format!("--streams must be 1 over HTTP/1.1 and between 1 and {MAX_STREAMS} over h2c"));
    }
    if !matches!(work, Work::Call { .. } | Work::TaskGet { .. } | Work::Legacy | Work::LegacySession { .. }) {
        return Err(
            "http sends tools/call or tasks/get only (--method call|task-get|legacy|legacy-session)".into()
        );
    }
    if open_sessions.is_some() && !matches!(work, Work::LegacySession { .. }) {
        return Err("--open-sessions goes with --method legacy-session".into());
    }
    if duration.is_zero() {
        return Err("--duration must be positive".into());
    }
    let all_streams = (connections * streams) as u64;
    let pace = match rate {
        None => None,
        Some(r) if r.is_finite() && (1.0..=MAX_RATE).contains(&r) => {
            Some((Duration::from_secs_f64(all_streams as f64 / r), all_streams))
        }
        Some(_) => return Err(format!("--rate must be between 1 and {MAX_RATE} requests a second")),
    };
    let (authority, path) = parse_url(&url)?;
    let fd_limit = raise_fd_limit(connections as u64 + SPARE_FDS)?;
    let message_bytes = match &work {
        Work::Call { message, .. } => message.len(),
        _ => 0,
    };
    // `tasks/get` reads a working task of its connection's own, created before the clock starts, and
    // a session's call is made in a session of its connection's own, opened then; more of either may
    // be held beside them (`--live-tasks`, `--open-sessions`: how many in all).
    let own = |mine: bool| if mine { connections } else { 0 };
    let live_tasks = live_tasks.unwrap_or(0).max(own(matches!(work, Work::TaskGet { .. })));
    let open_sessions = open_sessions.unwrap_or(0).max(own(matches!(work, Work::LegacySession { .. })));
    let preparing = Instant::now();
    let tasks = crate::held::tasks(&authority, &path, live_tasks).await?;
    let sessions = crate::held::sessions(&authority, &path, open_sessions).await?;
    let prepare_s = preparing.elapsed().as_secs_f64();
    let own_ids = match &work {
        Work::TaskGet { .. } => tasks,
        _ => sessions,
    };
    let method = work.method();
    let cpu0 = own_cpu_seconds();
    let start = Instant::now();
    let target = Arc::new(Target {
        authority,
        path,
        protocol,
        streams,
        work,
        window: (start + warmup, start + warmup + duration),
        connecting: Semaphore::new(CONNECTING_AT_ONCE),
        pace,
        own_ids,
    });
    let tasks: Vec<_> =
        (0..connections).map(|index| tokio::spawn(connection_loop(index as u64, target.clone()))).collect();
    let window = target.window;
    // Every thread's schedstat at both ends of the window, thread by thread (`ThreadTimes`), and the
    // process's minor faults.
    let cpu_over_window = |pid: Option<u32>| {
        tokio::spawn(async move {
            let pid = pid?.to_string();
            tokio::time::sleep_until(window.0).await;
            let (before, faults_before) = (ThreadTimes::read(&pid)?, minor_faults(&pid));
            tokio::time::sleep_until(window.1).await;
            let (after, faults_after) = (ThreadTimes::read(&pid)?, minor_faults(&pid));
            Some((after.since(&before), faults_before.zip(faults_after)))
        })
    };
    let (server_cpu, store_cpu) = (cpu_over_window(pid), cpu_over_window(store_pid));
    let mut all = ConnectionStats::default();
    for task in tasks {
        all.merge(task.await.map_err(|e| format!("connection task: {e}"))?);
    }
    let load_cpu = cpu_percent(cpu0, start.elapsed().as_secs_f64());
    let measured = all.micros.len();
    let per_request = |ns: Option<u64>| {
        ns.filter(|_| all.done_in_window > 0).map(|ns| ns as f64 / 1e3 / all.done_in_window as f64)
    };
    let server = server_cpu.await.ok().flatten();
    let server_cpu_us = per_request(server.map(|(ns, _)| ns));
    let server_faults = server
        .and_then(|(_, faults)| faults)
        .and_then(|(before, after)| faults_per(Some(before), Some(after), all.done_in_window));
    let store_cpu_us = per_request(store_cpu.await.ok().flatten().map(|(ns, _)| ns));
    let rps = measured as f64 / duration.as_secs_f64();
    // A paced run kept its rate when at least 95 % of the requests due in the window were answered in it.
    let kept_rate = rate.map(|r| rps >= KEPT_RATE * r);
    let mib_s = rps * message_bytes as f64 / f64::from(1u32 << 20);
    let s = summarize(all.micros);
    let first_errors = all.errors.kept.clone();
    let version = match protocol {
        Protocol::Http1 => "http1",
        Protocol::H2c => "h2c",
    };
    Ok(Report {
        human: format!(
            "http ({version}, {method}): {connections} connections × {streams} streams, {message_bytes}-byte message, {measured} ok in {:.1} s = \
             {rps:.0} req/s{} ({mib_s:.1} MiB/s), {} errors, p50 {} µs, p99 {} µs, mean {:.1} µs, max {} µs ({} warm-up, {} connects), \
             generator CPU {load_cpu:.0}%{}{}{}",
            duration.as_secs_f64(),
            match (rate, kept_rate) {
                (Some(r), Some(true)) => format!(" (paced at {r:.0} req/s)"),
                (Some(r), _) => format!(" (paced at {r:.0} req/s: NOT KEPT, the server fell behind)"),
                _ => String::new(),
            },
            all.errors.count,
            s.p50,
            s.p99,
            s.mean,
            s.max,
            all.warmup_ok,
            all.connects,
            server_cpu_us.map_or(String::new(), |us| format!(", server CPU {us:.1} µs per request")),
            store_cpu_us.map_or(String::new(), |us| format!(", store CPU {us:.1} µs per request")),
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "http",
            "method": method,
            "url": url,
            "protocol": version,
            "connections": connections,
            "streams": streams,
            "message_bytes": message_bytes,
            "fd_limit": fd_limit,
            "warmup_s": warmup.as_secs_f64(),
            "duration_s": duration.as_secs_f64(),
            "requests": measured,
            "warmup_requests": all.warmup_ok,
            "late_requests": all.late,
            "done_in_window": all.done_in_window,
            "connects": all.connects,
            "errors": all.errors.count,
            "first_errors": first_errors,
            "rps": rps,
            "rate": rate,
            "kept_rate": kept_rate,
            "mib_s": mib_s,
            "p50_us": s.p50,
            "p99_us": s.p99,
            "mean_us": s.mean,
            "max_us": s.max,
            "load_cpu_pct": load_cpu,
            "server_cpu_us_per_request": server_cpu_us,
            "server_minflt_per_request": server_faults,
            "store_cpu_us_per_request": store_cpu_us,
            "live_tasks": live_tasks,
            "open_sessions": open_sessions,
            "prepare_s": prepare_s,
        }),
        errors: all.errors.count,
    })
}

/// Opens one connection of the target's protocol (holding a connecting permit meanwhile); its
/// driver runs as a task of its own, which the caller aborts when it is done with the connection.
async fn open(target: &Target) -> Result<(Sender, tokio::task::JoinHandle<()>), String> {
    let _permit = target.connecting.acquire().await.map_err(|e| e.to_string())?;
    let stream = TcpStream::connect(&target.authority)
        .await
        .map_err(|e| format!("connect {}: {e}", target.authority))?;
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(stream);
    match target.protocol {
        Protocol::Http1 => {
            let (sender, connection) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(io)
                .await
                .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
            Ok((Sender::H1(sender), tokio::spawn(async move { drop(connection.await) })))
        }
        Protocol::H2c => {
            let (sender, connection) =
                hyper::client::conn::http2::handshake::<_, _, Full<Bytes>>(TokioExecutor::new(), io)
                    .await
                    .map_err(|e| format!("h2c handshake: {e}"))?;
            Ok((Sender::H2(sender), tokio::spawn(async move { drop(connection.await) })))
        }
    }
}

/// One connection: opened (again, after it broke, while the window lasts), with its streams each in
/// a closed loop: the next request leaves when the last one is answered.
async fn connection_loop(index: u64, target: Arc<Target>) -> ConnectionStats {
    let mut stats = ConnectionStats::default();
    let end = target.window.1;
    let work = target.work_for(index);
    let mut next_id = (index + 1) * 1_000_000_000;
    while Instant::now() < end {
        let (sender, driver) = match timeout_at(end, open(&target)).await {
            Err(_) => break,
            Ok(Ok(opened)) => opened,
            Ok(Err(e)) => {
                stats.errors.add(e);
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        stats.connects += 1;
        match sender {
            Sender::H1(_) => {
                next_id = stream_loop(sender, &target, &work, next_id, index, &mut stats).await;
            }
            Sender::H2(ref h2) => {
                // One request first: once it is answered the server's SETTINGS are in, so the streams
                // that follow keep to its SETTINGS_MAX_CONCURRENT_STREAMS (before them a client may
                // open more, and a server refuses the excess).
                next_id += 1;
                let mut primer = Sender::H2(h2.clone());
                let request = call_request(&target.authority, &target.path, &work, next_id, true);
                let primed = match primer.ready().await {
                    Err(e) => Err((format!("connection closed: {e}"), true)),
                    Ok(()) => check_http_answer(primer.send(request).await, next_id, &work).await,
                };
                if let Err((e, _)) = primed {
                    stats.errors.add(e);
                    driver.abort();
                    continue;
                }
                stats.warmup_ok += 1;
                // Each stream its own task on a clone of the sender, its ids a range of their own.
                let streams: Vec<_> = (0..target.streams as u64)
                    .map(|s| {
                        let (sender, target, work) = (Sender::H2(h2.clone()), target.clone(), work.clone());
                        tokio::spawn(async move {
                            let mut stats = ConnectionStats::default();
                            let first = next_id + s * 10_000_000;
                            let stream = index * target.streams as u64 + s;
                            stream_loop(sender, &target, &work, first, stream, &mut stats).await;
                            stats
                        })
                    })
                    .collect();
                drop(sender);
                for stream in streams {
                    match stream.await {
                        Ok(s) => stats.merge(s),
                        Err(e) => stats.errors.add(format!("stream task: {e}")),
                    }
                }
                next_id += target.streams as u64 * 10_000_000;
            }
        }
        driver.abort();
    }
    stats
}

/// Requests one after another on `sender` until the window closes or the connection breaks (paced,
/// with `--rate`, on the schedule of stream number `stream`); the last id used.
async fn stream_loop(
    mut sender: Sender,
    target: &Target,
    work: &Work,
    mut next_id: u64,
    stream: u64,
    stats: &mut ConnectionStats,
) -> u64 {
    let (measure_from, end) = target.window;
    // A request still out when the window closes gets this long before it counts as an error.
    let grace = Duration::from_secs(5);
    let absolute = target.protocol == Protocol::H2c;
    // The next request's scheduled departure: this stream's share of the interval after the start.
    let mut due = target.pace.map(|(interval, streams)| {
        let offset = interval.mul_f64((stream % streams) as f64 / streams as f64);
        Instant::now() + offset
    });
    while Instant::now() < end {
        if let Some(at) = due {
            tokio::time::sleep_until(at).await;
        }
        if let Err(e) = sender.ready().await {
            stats.errors.add(format!("connection closed: {e}"));
            break;
        }
        next_id += 1;
        let id = next_id;
        let request = call_request(&target.authority, &target.path, work, id, absolute);
        // Latency runs from when the request was due, so time spent behind schedule is counted.
        let sent = due.map_or_else(Instant::now, |at| at.min(Instant::now()));
        if let (Some(at), Some((interval, _))) = (due.as_mut(), target.pace) {
            *at += interval;
        }
        let outcome =
            timeout_at(end + grace, async { check_http_answer(sender.send(request).await, id, work).await })
                .await;
        let done = Instant::now();
        match outcome {
            Err(_) => {
                stats.errors.add("no answer within 5 s after the window closed");
                break;
            }
            Ok(Err((e, broken))) => {
                stats.errors.add(e);
                if broken {
                    break;
                }
            }
            Ok(Ok(())) => {
                if done >= measure_from && done <= end {
                    stats.done_in_window += 1;
                }
                if sent < measure_from {
                    stats.warmup_ok += 1;
                } else if done <= end {
                    stats.micros.push(u32::try_from((done - sent).as_micros()).unwrap_or(u32::MAX));
                } else {
                    stats.late += 1;
                }
            }
        }
    }
    next_id
}

/// The request of `work` with id `id` and the standard MCP headers; over h2c the uri is absolute
/// (its scheme and authority become the `:scheme` and `:authority` pseudo-headers).
pub(crate) fn call_request(
    authority: &str,
    path: &str,
    work: &Work,
    id: u64,
    absolute: bool,
) -> Request<Full<Bytes>> {
    let mut builder = if absolute {
        Request::post(format!("http://{authority}{path}"))
    } else {
        Request::post(path).header("host", authority)
    };
    builder = builder
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if work.legacy() {
        // As a `2025-11-25` client sends it: its version, its session if it has one, nothing else.
        builder = builder.header("mcp-protocol-version", LEGACY_PROTOCOL);
        if let Some(session) = work.session() {
            builder = builder.header("mcp-session-id", session);
        }
    } else {
        builder = builder.header("mcp-protocol-version", PROTOCOL).header("mcp-method", work.method());
        if let Some(name) = work.name_header() {
            builder = builder.header("mcp-name", name);
        }
    }
    builder.body(Full::new(Bytes::from(work.request(id, None)))).expect("a valid request")
}

/// The `tools/call` of `echo` with id `id`, with the standard MCP headers.
pub(crate) fn echo_request(authority: &str, path: &str, id: u64) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(Full::new(Bytes::from(request_body(id))))
        .expect("a valid request")
}

/// Sends one echo request and checks its answer; an error says whether the connection is broken.
pub(crate) async fn exchange(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
    id: u64,
) -> Result<(), (String, bool)> {
    check_http_answer(sender.send_request(request).await, id, &ECHO).await
}

/// Checks the answer to the request with id `id` of `work`; an error says whether the connection is
/// broken.
pub(crate) async fn check_http_answer(
    response: Result<Response<Incoming>, hyper::Error>,
    id: u64,
    work: &Work,
) -> Result<(), (String, bool)> {
    let message = http_message(response, id).await?;
    match check_answer(&message, work) {
        (Some(got), Ok(_)) if got == id => Ok(()),
        (Some(got), Ok(_)) => Err((format!("answer for id {got} to request {id}"), false)),
        (_, verdict) => Err((verdict.err().unwrap_or_else(|| "no id".into()), false)),
    }
}

/// The JSON-RPC message answering the request with id `id` (a JSON body, or the response among the
/// events of an SSE one), once the whole body is read; status 200 or an error that says whether the
/// connection is broken.
pub(crate) async fn http_message(
    response: Result<Response<Incoming>, hyper::Error>,
    id: u64,
) -> Result<Value, (String, bool)> {
    let response = response.map_err(|e| (format!("request: {e}"), true))?;
    let status = response.status();
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| (format!("reading the body: {e}"), true))?
        .to_bytes();
    if status != hyper::StatusCode::OK {
        return Err((
            format!("HTTP {status}: {}", String::from_utf8_lossy(&body[..body.len().min(200)])),
            false,
        ));
    }
    let message = if sse { sse_response(&body, id) } else { serde_json::from_slice(&body).ok() };
    message.ok_or_else(|| {
        (
            format!(
                "body is no JSON-RPC response: {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            ),
            false,
        )
    })
}

/// The response with id `id` among the events of an SSE body.
pub(crate) fn sse_response(body: &[u8], id: u64) -> Option<Value> {
    let text = std::str::from_utf8(body).ok()?;
    let mut events: VecDeque<String> = VecDeque::new();
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.is_empty() {
            if !data.is_empty() {
                events.push_back(std::mem::take(&mut data));
            }
        } else if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    events
        .into_iter()
        .filter_map(|e| serde_json::from_str::<Value>(&e).ok())
        .find(|v| v.get("id").and_then(Value::as_u64) == Some(id) && v.get("method").is_none())
}
