//! The `http` mode: C connections in a closed loop against a loopback URL, each sending the echo
//! `tools/call` and checking its answer (JSON or SSE), for a warmup and then a measured window.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

use crate::args::{Args, seconds};
use crate::report::{Errors, Report, cpu_percent, error_suffix, own_cpu_seconds, summarize};
use crate::{MAX_CONNECTIONS, PROTOCOL, check_response, request_body};

/// `http://HOST:PORT/PATH` with a loopback host: (authority, path).
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

/// What one connection measured.
#[derive(Default)]
struct ConnectionStats {
    micros: Vec<u32>,
    warmup_ok: u64,
    /// Answered correctly but finished after the window closed: neither counted nor an error.
    late: u64,
    connects: u64,
    errors: Errors,
}

pub(crate) async fn http(mut args: Args) -> Result<Report, String> {
    let url = args.take("url").ok_or("--url is required")?;
    let connections: usize = args.number("connections", Some(32))?;
    let warmup = seconds("warmup", args.number("warmup", Some(2.0))?)?;
    let duration = seconds("duration", args.number("duration", Some(5.0))?)?;
    args.finish(false)?;
    if connections == 0 || connections > MAX_CONNECTIONS {
        return Err(format!("--connections must be between 1 and {MAX_CONNECTIONS}"));
    }
    if duration.is_zero() {
        return Err("--duration must be positive".into());
    }
    let (authority, path) = parse_url(&url)?;
    let cpu0 = own_cpu_seconds();
    let start = Instant::now();
    let window = (start + warmup, start + warmup + duration);
    let tasks: Vec<_> = (0..connections)
        .map(|index| tokio::spawn(connection_loop(index as u64, authority.clone(), path.clone(), window)))
        .collect();
    let mut all = ConnectionStats::default();
    for task in tasks {
        let stats = task.await.map_err(|e| format!("connection task: {e}"))?;
        all.micros.extend(stats.micros);
        all.warmup_ok += stats.warmup_ok;
        all.late += stats.late;
        all.connects += stats.connects;
        all.errors.merge(stats.errors);
    }
    let load_cpu = cpu_percent(cpu0, start.elapsed().as_secs_f64());
    let measured = all.micros.len();
    let rps = measured as f64 / duration.as_secs_f64();
    let s = summarize(all.micros);
    let first_errors = all.errors.kept.clone();
    Ok(Report {
        human: format!(
            "http: {connections} connections, {measured} ok in {:.1} s = {rps:.0} req/s, {} errors, p50 {} µs, p99 {} µs, mean {:.1} µs, max {} µs ({} warm-up, {} connects), generator CPU {load_cpu:.0}%{}",
            duration.as_secs_f64(),
            all.errors.count,
            s.p50,
            s.p99,
            s.mean,
            s.max,
            all.warmup_ok,
            all.connects,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "http",
            "url": url,
            "connections": connections,
            "warmup_s": warmup.as_secs_f64(),
            "duration_s": duration.as_secs_f64(),
            "requests": measured,
            "warmup_requests": all.warmup_ok,
            "late_requests": all.late,
            "connects": all.connects,
            "errors": all.errors.count,
            "first_errors": first_errors,
            "rps": rps,
            "p50_us": s.p50,
            "p99_us": s.p99,
            "mean_us": s.mean,
            "max_us": s.max,
            "load_cpu_pct": load_cpu,
        }),
        errors: all.errors.count,
    })
}

/// One keep-alive connection, closed loop: the next request leaves when the last one is answered.
/// A broken connection is counted as an error and opened again while the window lasts.
async fn connection_loop(
    index: u64,
    authority: String,
    path: String,
    (measure_from, end): (Instant, Instant),
) -> ConnectionStats {
    let mut stats = ConnectionStats::default();
    let mut next_id = (index + 1) * 1_000_000_000;
    // A request still out when the window closes gets this long before it counts as an error.
    let grace = Duration::from_secs(5);
    while Instant::now() < end {
        let stream = match timeout_at(end, TcpStream::connect(&authority)).await {
            Err(_) => break,
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                stats.errors.add(format!("connect {authority}: {e}"));
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        stats.connects += 1;
        let (mut sender, connection) =
            match hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream)).await {
                Ok(pair) => pair,
                Err(e) => {
                    stats.errors.add(format!("HTTP/1.1 handshake: {e}"));
                    continue;
                }
            };
        let driver = tokio::spawn(connection);
        while Instant::now() < end {
            if let Err(e) = sender.ready().await {
                stats.errors.add(format!("connection closed: {e}"));
                break;
            }
            next_id += 1;
            let id = next_id;
            let request = echo_request(&authority, &path, id);
            let sent = Instant::now();
            let outcome = timeout_at(end + grace, exchange(&mut sender, request, id)).await;
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
        drop(sender);
        driver.abort();
    }
    stats
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

/// Sends one request and checks its answer; an error says whether the connection is broken.
pub(crate) async fn exchange(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
    id: u64,
) -> Result<(), (String, bool)> {
    let response = sender.send_request(request).await.map_err(|e| (format!("request: {e}"), true))?;
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
    let Some(message) = message else {
        return Err((
            format!(
                "body is no JSON-RPC response: {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            ),
            false,
        ));
    };
    match check_response(&message) {
        (Some(got), Ok(())) if got == id => Ok(()),
        (Some(got), Ok(())) => Err((format!("answer for id {got} to request {id}"), false)),
        (_, verdict) => Err((verdict.err().unwrap_or_else(|| "no id".into()), false)),
    }
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
