//! The drip connections: each opens at its turn, sends a complete head and then one body byte in
//! each of its one-second write slots, and is watched until the server answers or closes it or the
//! wait ends (`Outcome`); what all of them share and count is `Shared`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::{Instant, sleep_until, timeout_at};

/// How long one drip may take to connect and send its head.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);

/// How one drip connection ended, seen from the client.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// It never connected or never got its head out.
    Failed(String),
    /// The server answered with this status (0: unreadable), `after_s` seconds after the head.
    Answered { status: u16, after_s: f64 },
    /// The server closed it (end of stream or reset) without an answer.
    Closed { after_s: f64 },
    /// Still open and unanswered when the wait ended.
    Held,
}

/// The status code of the first bytes of an HTTP/1.x response; 0 when they are none.
fn status_of(first: &[u8]) -> u16 {
    let text = String::from_utf8_lossy(&first[..first.len().min(64)]);
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(v), Some(code)) if v.starts_with("HTTP/1.") => code.parse().unwrap_or(0),
        _ => 0,
    }
}

/// What every drip task shares.
pub(crate) struct Shared {
    /// The server's `host:port`.
    pub(crate) authority: String,
    /// The request head every drip sends at once.
    pub(crate) head: Bytes,
    /// The body every drip sends a byte at a time.
    pub(crate) body: Bytes,
    /// Permits for the drips connecting at once.
    pub(crate) connecting: Semaphore,
    /// The origin of the write slots.
    pub(crate) t0: Instant,
    /// How many drips there are.
    pub(crate) drips: usize,
    /// Drips opened per second.
    pub(crate) open_rate: u32,
    /// How long a drip is watched after its head.
    pub(crate) wait: Duration,
    /// Drips whose head is out.
    pub(crate) opened: AtomicUsize,
    /// Drips whose head is out or that failed.
    pub(crate) settled: AtomicUsize,
    /// Drips answered or closed by the server.
    pub(crate) ended: AtomicUsize,
    /// The largest lateness of a byte's write against its slot, in µs.
    pub(crate) max_lag_us: AtomicU64,
    /// The longest a drip took from its first try to connect to having sent its head.
    pub(crate) max_open_us: AtomicU64,
    /// Body bytes written by all drips.
    pub(crate) bytes_sent: AtomicU64,
}

impl Shared {
    /// Drips open right now (head out, neither answered nor closed, not yet given up on).
    pub(crate) fn open_now(&self) -> usize {
        self.opened.load(Ordering::Relaxed).saturating_sub(self.ended.load(Ordering::Relaxed))
    }
}

async fn open_drip(shared: &Shared) -> Result<TcpStream, String> {
    let deadline = Instant::now() + OPEN_TIMEOUT;
    let mut stream = timeout_at(deadline, TcpStream::connect(&shared.authority))
        .await
        .map_err(|_| "connect timed out".to_owned())?
        .map_err(|e| format!("connect: {e}"))?;
    // One byte a second must leave at once, not wait for an acknowledgement.
    let _ = stream.set_nodelay(true);
    timeout_at(deadline, stream.write_all(&shared.head))
        .await
        .map_err(|_| "sending the head timed out".to_owned())?
        .map_err(|e| format!("sending the head: {e}"))?;
    Ok(stream)
}

/// One drip: connect, send the head, then a byte per slot until the server answers or closes, or
/// `wait` has passed since the head.
pub(crate) async fn run_drip(index: usize, shared: Arc<Shared>) -> Outcome {
    sleep_until(shared.t0 + Duration::from_secs_f64(index as f64 / f64::from(shared.open_rate))).await;
    let opened = {
        let _permit = shared.connecting.acquire().await;
        let started = Instant::now();
        let opened = open_drip(&shared).await;
        let took = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        shared.max_open_us.fetch_max(took, Ordering::Relaxed);
        opened
    };
    let mut stream = match opened {
        Ok(stream) => stream,
        Err(e) => {
            shared.settled.fetch_add(1, Ordering::Relaxed);
            return Outcome::Failed(e);
        }
    };
    let head_at = Instant::now();
    shared.opened.fetch_add(1, Ordering::Relaxed);
    shared.settled.fetch_add(1, Ordering::Relaxed);
    let outcome = watch(index, &shared, &mut stream, head_at).await;
    if outcome != Outcome::Held {
        shared.ended.fetch_add(1, Ordering::Relaxed);
    }
    outcome
}

async fn watch(index: usize, shared: &Shared, stream: &mut TcpStream, head_at: Instant) -> Outcome {
    let give_up = head_at + shared.wait;
    let phase = Duration::from_micros(index as u64 * 1_000_000 / shared.drips as u64);
    let mut slot = shared.t0 + phase;
    while slot <= head_at {
        slot += Duration::from_secs(1);
    }
    let mut sent = 0;
    let mut buf = [0u8; 64];
    loop {
        let wake = if sent < shared.body.len() { slot.min(give_up) } else { give_up };
        tokio::select! {
            biased;
            read = stream.read(&mut buf) => {
                let after_s = head_at.elapsed().as_secs_f64();
                return match read {
                    Ok(0) | Err(_) => Outcome::Closed { after_s },
                    Ok(n) => Outcome::Answered { status: status_of(&buf[..n]), after_s },
                };
            }
            () = sleep_until(wake) => {
                let now = Instant::now();
                if now >= give_up {
                    return Outcome::Held;
                }
                let lag = u64::try_from(now.saturating_duration_since(slot).as_micros()).unwrap_or(u64::MAX);
                shared.max_lag_us.fetch_max(lag, Ordering::Relaxed);
                if stream.write_all(&shared.body[sent..=sent]).await.is_err() {
                    // Closed by the server; an answer it sent first may still be there.
                    let after_s = head_at.elapsed().as_secs_f64();
                    return match stream.try_read(&mut buf) {
                        Ok(n) if n > 0 => Outcome::Answered { status: status_of(&buf[..n]), after_s },
                        _ => Outcome::Closed { after_s },
                    };
                }
                sent += 1;
                shared.bytes_sent.fetch_add(1, Ordering::Relaxed);
                slot += Duration::from_secs(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_read() {
        assert_eq!(status_of(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n"), 408);
        assert_eq!(status_of(b"HTTP/1.0 400 Bad"), 400);
        assert_eq!(status_of(b"HTTP/1.1 4"), 4);
        assert_eq!(status_of(b"garbage"), 0);
        assert_eq!(status_of(b""), 0);
    }
}
