//! A Redis's own count of the commands it ran: one `INFO all` over a fresh TCP connection to a
//! loopback address, its bulk-string reply read (RESP), and the counters taken from its text —
//! `total_commands_processed` and every `cmdstat_<command>:calls=N`. Enough to tell how many commands
//! a server under test sent to its store over a window, without a Redis client.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// The longest reply read (an `INFO all` is a few KiB).
const MAX_REPLY: usize = 1 << 20;
/// How long one exchange may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(5);
/// The command `INFO` itself: left out of what a window counts, since the counting sends it.
pub(crate) const INFO: &str = "info";

/// The counters of one `INFO`: the commands run in all, and per command (lower case, subcommands as
/// `client|setinfo`).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Commands {
    pub(crate) total: u64,
    pub(crate) calls: BTreeMap<String, u64>,
}

impl Commands {
    /// The commands run between `earlier` and this count, `INFO` left out: (in all, per command,
    /// only those that ran).
    pub(crate) fn since(&self, earlier: &Commands) -> (u64, BTreeMap<String, u64>) {
        let info = |c: &Commands| c.calls.get(INFO).copied().unwrap_or(0);
        let total =
            self.total.saturating_sub(earlier.total).saturating_sub(info(self).saturating_sub(info(earlier)));
        let calls = self
            .calls
            .iter()
            .filter(|(name, _)| *name != INFO)
            .map(|(name, n)| (name.clone(), n.saturating_sub(earlier.calls.get(name).copied().unwrap_or(0))))
            .filter(|(_, n)| *n > 0)
            .collect();
        (total, calls)
    }
}

/// The counters in the text of an `INFO` reply.
pub(crate) fn parse_info(text: &str) -> Result<Commands, String> {
    let mut commands = Commands::default();
    let mut total = None;
    for line in text.lines().map(str::trim) {
        if let Some(n) = line.strip_prefix("total_commands_processed:") {
            total = n.parse().ok();
        } else if let Some((name, stats)) = line.strip_prefix("cmdstat_").and_then(|l| l.split_once(':')) {
            let calls =
                stats.split(',').find_map(|kv| kv.strip_prefix("calls=")).and_then(|n| n.parse().ok());
            if let Some(calls) = calls {
                commands.calls.insert(name.to_ascii_lowercase(), calls);
            }
        }
    }
    commands.total = total.ok_or("the INFO reply has no total_commands_processed")?;
    Ok(commands)
}

/// The payload of a complete RESP bulk-string reply (`$LEN\r\n…\r\n`); `Ok(None)` while more bytes are
/// needed; an error reply (`-ERR …`) or anything else is an error.
pub(crate) fn bulk_reply(bytes: &[u8]) -> Result<Option<&[u8]>, String> {
    let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") else {
        return if bytes.len() > 32 { Err("no RESP header".into()) } else { Ok(None) };
    };
    let header = std::str::from_utf8(&bytes[..end]).map_err(|_| "a RESP header that is not text")?;
    if let Some(error) = header.strip_prefix('-') {
        return Err(format!("Redis answered an error: {error}"));
    }
    let len: usize = header
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .filter(|n| *n <= MAX_REPLY)
        .ok_or_else(|| format!("not a bulk reply: {header:?}"))?;
    let body = end + 2;
    if bytes.len() < body + len + 2 {
        return Ok(None);
    }
    Ok(Some(&bytes[body..body + len]))
}

/// `INFO all` from the Redis at `address` (a loopback `HOST:PORT`).
pub(crate) async fn info(address: &str) -> Result<Commands, String> {
    let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
    if !host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback()) && host != "localhost" {
        return Err(format!("{address}: only a loopback Redis is read"));
    }
    let exchange = async {
        let mut stream = TcpStream::connect(address).await.map_err(|e| format!("connect {address}: {e}"))?;
        stream.write_all(b"*2\r\n$4\r\nINFO\r\n$3\r\nall\r\n").await.map_err(|e| format!("INFO: {e}"))?;
        let mut reply = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(text) = bulk_reply(&reply)? {
                let text = std::str::from_utf8(text).map_err(|_| "an INFO reply that is not text")?;
                return parse_info(text);
            }
            let read = stream.read(&mut chunk).await.map_err(|e| format!("INFO: {e}"))?;
            if read == 0 || reply.len() > MAX_REPLY + 64 {
                return Err("the INFO reply ended early".to_owned());
            }
            reply.extend_from_slice(&chunk[..read]);
        }
    };
    timeout(EXCHANGE_TIMEOUT, exchange).await.map_err(|_| format!("{address}: no INFO reply within 5 s"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = "# Stats\r\ntotal_connections_received:3\r\ntotal_commands_processed:120\r\n\r\n\
                         # Commandstats\r\ncmdstat_evalsha:calls=40,usec=900,usec_per_call=22.50,rejected_calls=0,failed_calls=0\r\n\
                         cmdstat_info:calls=7,usec=700,usec_per_call=100.00,rejected_calls=0,failed_calls=0\r\n\
                         cmdstat_client|setinfo:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n";

    #[test]
    fn the_counters_are_read_from_the_info_text() {
        let commands = parse_info(REPLY).unwrap();
        assert_eq!(commands.total, 120);
        assert_eq!(commands.calls["evalsha"], 40);
        assert_eq!(commands.calls["client|setinfo"], 2);
        assert!(parse_info("# Stats\r\n").is_err());
    }

    #[test]
    fn a_window_counts_every_command_but_the_infos_that_measure_it() {
        let before = parse_info(REPLY).unwrap();
        let mut after = before.clone();
        after.total += 12;
        *after.calls.get_mut("evalsha").unwrap() += 10;
        *after.calls.get_mut("info").unwrap() += 1;
        after.calls.insert("get".into(), 1);
        let (total, calls) = after.since(&before);
        assert_eq!(total, 11);
        assert_eq!(calls.into_iter().collect::<Vec<_>>(), [("evalsha".into(), 10), ("get".into(), 1)]);
    }

    #[test]
    fn a_bulk_reply_is_read_once_whole() {
        assert_eq!(bulk_reply(b"$5\r\nhel").unwrap(), None);
        assert_eq!(bulk_reply(b"$5\r\nhello\r\n").unwrap(), Some(&b"hello"[..]));
        assert_eq!(bulk_reply(b"$5").unwrap(), None);
        assert!(bulk_reply(b"-NOAUTH Authentication required.\r\n").is_err());
        assert!(bulk_reply(b"+OK\r\n").is_err());
        assert!(bulk_reply(b"$99999999999\r\n").is_err());
    }
}
