//! The probe: runs of legitimate `tools/call`s, one at a time on a keep-alive connection of their
//! own, each checked and timed (`Legit`), before the drips open (the baseline) and while they are
//! open (the drip phase).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::{Instant, sleep};

use crate::{Errors, echo_request, exchange};

/// How long one legitimate request may take before it counts as an error.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Unmeasured requests at the start of each run of legitimate requests (the first included).
const LEGIT_WARMUP: u64 = 20;

/// What a run of legitimate requests measured.
#[derive(Default)]
pub(crate) struct Legit {
    /// The measured requests' latencies in µs.
    pub(crate) micros: Vec<u32>,
    /// The connection's first request (connect included), not in `micros`.
    pub(crate) first_us: Option<u32>,
    /// How many times a broken connection was opened again.
    pub(crate) reconnects: u64,
    /// What went wrong.
    pub(crate) errors: Errors,
}

/// `requests` checked calls, one at a time on one keep-alive connection, `interval` apart, after
/// `LEGIT_WARMUP` unmeasured ones; a broken connection is opened again (and counted).
pub(crate) async fn legit(
    authority: &str,
    path: &str,
    requests: u64,
    interval: Duration,
    first_id: u64,
) -> Legit {
    let mut run = Legit::default();
    let mut sender = None;
    let mut id = first_id;
    let (mut warm, mut measured) = (0, 0);
    // Each attempt is bounded; a broken connection costs an attempt, so this ends.
    let mut attempts = 0;
    while measured < requests && attempts < LEGIT_WARMUP + requests + 10 {
        attempts += 1;
        let started = Instant::now();
        if sender.is_none() {
            match connect(authority).await {
                Ok(s) => sender = Some(s),
                Err(e) => {
                    run.errors.add(e);
                    sleep(interval.max(Duration::from_millis(20))).await;
                    continue;
                }
            }
            if run.first_us.is_some() {
                run.reconnects += 1;
            }
        }
        let Some(s) = sender.as_mut() else { continue };
        if let Err(e) = s.ready().await {
            run.errors.add(format!("connection closed: {e}"));
            sender = None;
            continue;
        }
        id += 1;
        let outcome =
            tokio::time::timeout(REQUEST_TIMEOUT, exchange(s, echo_request(authority, path, id), id)).await;
        let micros = u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX);
        match outcome {
            Err(_) => {
                run.errors.add(format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()));
                sender = None;
            }
            Ok(Err((e, broken))) => {
                run.errors.add(e);
                if broken {
                    sender = None;
                }
            }
            Ok(Ok(())) if warm < LEGIT_WARMUP => {
                run.first_us.get_or_insert(micros);
                warm += 1;
            }
            Ok(Ok(())) => {
                run.micros.push(micros);
                measured += 1;
            }
        }
        sleep(interval).await;
    }
    let missing = requests - measured;
    if missing > 0 {
        run.errors.add(format!("{missing} of {requests} requests not answered"));
    }
    run
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(authority: &str) -> Result<Sender, String> {
    let stream = tokio::time::timeout(REQUEST_TIMEOUT, TcpStream::connect(authority))
        .await
        .map_err(|_| format!("connect {authority}: timed out"))?
        .map_err(|e| format!("connect {authority}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
    // The driver ends with the connection.
    tokio::spawn(connection);
    Ok(sender)
}
