//! `bench-load hold`: the server's memory per in-flight request whose body is half sent. N raw
//! connections each send a full request head with `Content-Length: B` and the first half of a valid
//! B-byte `tools/call` body, then stop; the server's `VmRSS` is sampled before and ~1 s after.

use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

use crate::{Args, Errors, MAX_CONNECTIONS, PROTOCOL, Report, error_suffix, parse_url, seconds};

/// Upper bound on `--body-bytes`: 64 MiB.
const MAX_BODY_BYTES: usize = 64 << 20;

/// A `tools/call` of `echo` that is exactly `size` bytes long: the message is padded with `x`.
fn sized_body(size: usize) -> Result<Vec<u8>, String> {
    let prefix = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{"#,
            r#""io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}},"#,
            r#""name":"echo","arguments":{{"message":""#
        ),
        PROTOCOL
    );
    let suffix = r#""}}}"#;
    let overhead = prefix.len() + suffix.len();
    if size < overhead || size > MAX_BODY_BYTES {
        return Err(format!("--body-bytes must be between {overhead} and {MAX_BODY_BYTES}"));
    }
    let mut body = Vec::with_capacity(size);
    body.extend_from_slice(prefix.as_bytes());
    body.resize(size - suffix.len(), b'x');
    body.extend_from_slice(suffix.as_bytes());
    Ok(body)
}

/// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`).
pub(crate) fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Opens one connection and sends the head and the first half of the body; the open stream, or why not.
async fn half_send(
    authority: &str,
    head: &[u8],
    half: &[u8],
    deadline: Instant,
) -> Result<TcpStream, String> {
    let mut stream = timeout_at(deadline, TcpStream::connect(authority))
        .await
        .map_err(|_| "connect timed out".to_owned())?
        .map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    timeout_at(deadline, async {
        stream.write_all(head).await?;
        stream.write_all(half).await?;
        stream.flush().await
    })
    .await
    .map_err(|_| "sending the half body timed out (the server stopped reading)".to_owned())?
    .map_err(|e| format!("sending: {e}"))?;
    Ok(stream)
}

pub(crate) async fn hold(mut args: Args) -> Result<Report, String> {
    let url = args.take("url").ok_or("--url is required")?;
    let pid: u32 = args.number("pid", None)?;
    let clients: usize = args.number("clients", Some(200))?;
    let body_bytes: usize = args.number("body-bytes", Some(1 << 20))?;
    let hold_for = seconds("hold-secs", args.number("hold-secs", Some(3.0))?)?;
    args.finish(false)?;
    if clients == 0 || clients > MAX_CONNECTIONS {
        return Err(format!("--clients must be between 1 and {MAX_CONNECTIONS}"));
    }
    let (authority, path) = parse_url(&url)?;
    let body = sized_body(body_bytes)?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {body_bytes}\r\n\r\n"
    );
    let head = Bytes::from(head);
    let half = Bytes::from(body).slice(..body_bytes / 2);
    let rss_before = proc_status_kib(pid, "VmRSS").ok_or_else(|| format!("no /proc/{pid}/status"))?;
    let hwm_before = proc_status_kib(pid, "VmHWM").unwrap_or(0);

    // All clients send at once; the whole sending phase is bounded to 30 s.
    let started = Instant::now();
    let send_deadline = started + Duration::from_secs(30);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (authority, head, half) = (authority.clone(), head.clone(), half.clone());
            tokio::spawn(async move { half_send(&authority, &head, &half, send_deadline).await })
        })
        .collect();
    let mut streams = Vec::with_capacity(clients);
    let mut errors = Errors::default();
    for task in tasks {
        match task.await.map_err(|e| format!("client task: {e}"))? {
            Ok(stream) => streams.push(stream),
            Err(e) => errors.add(e),
        }
    }
    let sent_s = started.elapsed().as_secs_f64();
    // Let the server take in what was sent, then sample it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_during = proc_status_kib(pid, "VmRSS").unwrap_or(0);
    let hwm_during = proc_status_kib(pid, "VmHWM").unwrap_or(0);
    // Which connections the server already answered or closed (it must do neither: the body is not complete).
    let (mut open, mut answered, mut closed) = (0u64, 0u64, 0u64);
    let mut first_answer = None;
    let mut buf = [0u8; 256];
    for stream in &streams {
        match stream.try_read(&mut buf) {
            Ok(0) => closed += 1,
            Ok(n) => {
                answered += 1;
                first_answer.get_or_insert_with(|| {
                    String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or_default().to_owned()
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => open += 1,
            Err(_) => closed += 1,
        }
    }
    // Hold the rest of --hold-secs, then close everything.
    tokio::time::sleep(hold_for.saturating_sub(started.elapsed())).await;
    let rss_end = proc_status_kib(pid, "VmRSS").unwrap_or(0);
    drop(streams);
    let per_client = (rss_during as f64 - rss_before as f64) / clients as f64;
    let first_errors = errors.kept.clone();
    Ok(Report {
        human: format!(
            "hold: {clients} clients × {body_bytes} B body, half sent in {sent_s:.2} s; server RSS {rss_before} → {rss_during} KiB \
             = {per_client:.1} KiB per client (VmHWM {hwm_during} KiB); {open} still open, {answered} answered early \
             ({}), {closed} closed, {} errors{}",
            first_answer.as_deref().unwrap_or("-"),
            errors.count,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "hold",
            "url": url,
            "pid": pid,
            "clients": clients,
            "body_bytes": body_bytes,
            "sent_bytes_per_client": half.len(),
            "rss_before_kib": rss_before,
            "rss_during_kib": rss_during,
            "rss_end_kib": rss_end,
            "hwm_before_kib": hwm_before,
            "hwm_during_kib": hwm_during,
            "per_client_kib": per_client,
            "open": open,
            "answered_early": answered,
            "first_answer": first_answer,
            "closed": closed,
            "send_s": sent_s,
            "errors": errors.count,
            "first_errors": first_errors,
        }),
        errors: errors.count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn sized_bodies_are_exact_json() {
        for size in [300, 1000, 1 << 20] {
            let body = sized_body(size).unwrap();
            assert_eq!(body.len(), size);
            let v: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(v["params"]["name"], "echo");
        }
        assert!(sized_body(10).is_err());
    }
}
