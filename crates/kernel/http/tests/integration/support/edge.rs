//! What the edge tests measure and hold: process CPU time and resident memory read from `/proc`,
//! connections that hold part of a request, and a legitimate request timed beside them.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::{EXCHANGE_TIMEOUT, Proto, bytes, connect, headers_for, raw_head, raw_standard, request};

/// This process's CPU time (user and system), from `/proc/self/stat`.
pub fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The command name may hold spaces: the fields after it start past the last ')'.
    let after = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // USER_HZ is 100 on every Linux this runs on.
    Duration::from_millis(ticks * 10)
}

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
pub fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// Opens `count` connections to `addr` and writes `bytes` on each (bounded by a minute in all).
pub async fn hold_connections(addr: SocketAddr, count: usize, bytes: &[u8]) -> Vec<TcpStream> {
    tokio::time::timeout(Duration::from_secs(60), async {
        let mut held = Vec::with_capacity(count);
        for _ in 0..count {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream.write_all(bytes).await.expect("write the held bytes");
            held.push(stream);
        }
        held
    })
    .await
    .expect("the connections open within a minute")
}

/// The head of a `tools/list` whose body of `length` bytes will never all arrive.
pub fn dripped_head(addr: SocketAddr, length: usize) -> Vec<u8> {
    let mut fields = raw_standard("tools/list");
    fields.push(("content-length", length.to_string()));
    let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    raw_head("POST", addr, &fields)
}

/// The median time of `count` `tools/list` requests on one kept-alive HTTP/1.1 connection, each
/// checked for a 200.
pub async fn median_latency(addr: SocketAddr, count: usize) -> Duration {
    let message = request(1, "tools/list", json!({}));
    let mut conn = connect(addr, Proto::H1).await;
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let reply =
            tokio::time::timeout(EXCHANGE_TIMEOUT, conn.post(addr, headers_for(&message), bytes(&message)))
                .await
                .expect("answered in time");
        times.push(started.elapsed());
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    times.sort();
    times[times.len() / 2]
}

/// A connection to `addr` from the loopback address `source` (127.0.0.2, 127.0.0.3 …: every address
/// of 127.0.0.0/8 is this machine, so tests can stand in for several peers).
pub async fn connect_from(source: std::net::IpAddr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    assert!(source.is_loopback() && addr.ip().is_loopback(), "tests stay on the loopback");
    let socket = match source {
        std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.bind(SocketAddr::new(source, 0))?;
    let stream = socket.connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// The loopback address `127.0.0.n`.
pub fn loopback(n: u8) -> std::net::IpAddr {
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, n))
}
