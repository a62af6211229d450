//! `bench-load fanout`: how long one change takes to reach the last listen stream on each of several
//! servers that share their change notifications (through a shared store), over repeated changes,
//! beside the same run against one server. HTTP/1.1, one stream per connection, all from 127.0.0.1:
//!
//! 1. `--streams N` streams (as `listen` opens them), stream `i` on the server `--urls[i % k]`;
//! 2. `--settle-secs` later, `--announcements R` calls of `announce`, one after another: call `a`
//!    through server `a % k` on a fresh connection, then per stream the time from just before the call
//!    was sent until that stream read its `notifications/tools/list_changed` (every stream must read
//!    each change within `--wait-secs`), then `--gap-ms` of quiet before the next. Per change and
//!    server, the time of the last stream on that server to read it.
//!
//! Reported: p50 and p99 over every (change, server) of that last read — split into the server that
//! took the call and the others —, of the last read over all servers per change, and of every
//! stream's read; the servers' CPU over each fan-out per stream (the sum over `--pids`), and the
//! store's per change (`--store-pid`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, timeout_at};

use super::stream::Shared;
use super::{DEFAULT_OPEN_RATE, SPARE_FDS, announce, open_all, processes_cpu_ns};
use crate::drip::raise_fd_limit;
use crate::report::threads_cpu_ns;
use crate::{Args, Errors, MAX_CONNECTIONS, Report, error_suffix, parse_url, seconds, summarize};

/// The most servers one run spreads its streams over.
const MAX_SERVERS: usize = 8;
/// The most changes one run announces.
const MAX_ANNOUNCEMENTS: usize = 10_000;

/// What a `fanout` run was asked for.
struct Settings {
    urls: Vec<String>,
    pids: Vec<u32>,
    store_pid: Option<u32>,
    streams: usize,
    announcements: usize,
    gap: Duration,
    open_rate: u32,
    settle: Duration,
    wait: Duration,
}

/// A comma-separated list of at most `most` items, each read by `item`.
fn list<T>(name: &str, v: &str, most: usize, item: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, String> {
    let items: Option<Vec<T>> = v.split(',').map(|s| item(s.trim())).collect();
    items
        .filter(|items| (1..=most).contains(&items.len()))
        .ok_or_else(|| format!("--{name}: 1 to {most} comma-separated values, not {v:?}"))
}

impl Settings {
    fn parse(mut args: Args) -> Result<Settings, String> {
        let urls = args.take("urls").ok_or("--urls is required")?;
        let urls = list("urls", &urls, MAX_SERVERS, |u| Some(u.to_owned()))?;
        let pids = match args.take("pids") {
            Some(v) => list("pids", &v, MAX_SERVERS, |p| p.parse().ok())?,
            None => Vec::new(),
        };
        let store_pid =
            args.take("store-pid").map(|v| v.parse().map_err(|_| "--store-pid: a pid")).transpose()?;
        let streams: usize = args.number("streams", None)?;
        let announcements: usize = args.number("announcements", Some(20))?;
        let gap = Duration::from_millis(args.number("gap-ms", Some(100))?);
        let open_rate: u32 = args.number("open-rate", Some(DEFAULT_OPEN_RATE))?;
        let settle = seconds("settle-secs", args.number("settle-secs", Some(1.0))?)?;
        let wait = seconds("wait-secs", args.number("wait-secs", Some(10.0))?)?;
        args.finish(false)?;
        if !pids.is_empty() && pids.len() != urls.len() {
            return Err("--pids: one per URL".into());
        }
        if streams < urls.len() || streams > MAX_CONNECTIONS {
            return Err(format!("--streams must be between the number of URLs and {MAX_CONNECTIONS}"));
        }
        if !(1..=MAX_ANNOUNCEMENTS).contains(&announcements) || gap > Duration::from_secs(10) {
            return Err(format!("--announcements: 1 to {MAX_ANNOUNCEMENTS}; --gap-ms: at most 10000"));
        }
        if !(1..=100_000).contains(&open_rate) || wait.is_zero() {
            return Err("--open-rate: 1 to 100000; --wait-secs: positive".into());
        }
        Ok(Settings { urls, pids, store_pid, streams, announcements, gap, open_rate, settle, wait })
    }
}

/// The latest read per server (stream `i` is on server `i % servers`) of the streams' reads (µs, or
/// `None` for a stream that did not read the change); `None` for a server none of whose streams read it.
fn last_per_server(reads: &[Option<u32>], servers: usize) -> Vec<Option<u32>> {
    let mut last = vec![None; servers];
    for (index, read) in reads.iter().enumerate() {
        if let Some(us) = *read {
            let slot = &mut last[index % servers];
            *slot = Some(slot.map_or(us, |old: u32| old.max(us)));
        }
    }
    last
}

/// What the announcements measured, pooled.
#[derive(Default)]
struct Pooled {
    /// The last read per (change, server), for the server that took the call and for the others.
    announcer_last: Vec<u32>,
    others_last: Vec<u32>,
    /// The last read over every server, per change.
    all_last: Vec<u32>,
    /// Every stream's read of every change.
    streams: Vec<u32>,
    call_us: Vec<u32>,
    server_us_per_stream: Vec<u32>,
    store_us: Vec<u32>,
}

impl Pooled {
    /// Adds change `a`'s reads (per stream), taken by server `announcer` of `servers`.
    fn add(&mut self, reads: &[Option<u32>], servers: usize, announcer: usize) {
        for (server, last) in last_per_server(reads, servers).into_iter().enumerate() {
            if let Some(us) = last {
                if server == announcer { &mut self.announcer_last } else { &mut self.others_last }.push(us);
            }
        }
        if let Some(us) = reads.iter().flatten().max() {
            self.all_last.push(*us);
        }
        self.streams.extend(reads.iter().flatten());
    }
}

/// `bench-load fanout`: see the module.
pub(crate) async fn run(args: Args) -> Result<Report, String> {
    let settings = Settings::parse(args)?;
    let targets = settings.urls.iter().map(|u| parse_url(u)).collect::<Result<Vec<_>, _>>()?;
    let (n, servers) = (settings.streams, targets.len());
    let fd_limit = raise_fd_limit(n as u64 + SPARE_FDS)?;
    let (changes, mut changed) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        keepalives: Default::default(),
        ended: Default::default(),
        changes,
        errors: Mutex::new(Errors::default()),
    });
    let opening = Instant::now();
    let (open, mut errors) = open_all(&targets, n, settings.open_rate, &shared).await;
    let open_s = opening.elapsed().as_secs_f64();
    if open.len() < n {
        errors.add(format!("{} of {n} streams did not open", n - open.len()));
    }
    sleep(settings.settle).await;

    let mut pooled = Pooled::default();
    let (mut load_ns, mut fanout_ns) = (0u64, 0u64);
    for a in 0..settings.announcements {
        while changed.try_recv().is_ok() {
            errors.add("a change read between two announcements");
        }
        let announcer = a % servers;
        let (authority, path) = &targets[announcer];
        let store0 = settings.store_pid.and_then(|pid| threads_cpu_ns(&pid.to_string()));
        let announced = announce(authority, path, (n + a) as u64 + 1, &settings.pids).await?;
        let sent = announced.sent;
        let deadline = sent + settings.wait;
        let mut reads: Vec<Option<u32>> = vec![None; n];
        let mut read = 0;
        while read < open.len() {
            match timeout_at(deadline, changed.recv()).await {
                Ok(Some((index, at))) if reads[index].is_none() => {
                    reads[index] = Some(u32::try_from((at - sent).as_micros()).unwrap_or(u32::MAX));
                    read += 1;
                }
                Ok(Some((index, _))) => errors.add(format!("stream {index} read change {a} twice")),
                Ok(None) | Err(_) => break,
            }
        }
        let elapsed = sent.elapsed();
        if read < open.len() {
            errors.add(format!(
                "{} open streams did not read change {a} within {:?}",
                open.len() - read,
                settings.wait
            ));
        }
        let since = |before: Option<u64>, now: Option<u64>| now.zip(before).map(|(n, b)| n.saturating_sub(b));
        if let Some(ns) = since(announced.server_ns, processes_cpu_ns(&settings.pids)).filter(|_| read > 0) {
            pooled.server_us_per_stream.push(u32::try_from(ns / 1_000 / read as u64).unwrap_or(u32::MAX));
        }
        if let Some(ns) = since(store0, settings.store_pid.and_then(|pid| threads_cpu_ns(&pid.to_string()))) {
            pooled.store_us.push(u32::try_from(ns / 1_000).unwrap_or(u32::MAX));
        }
        load_ns += since(announced.own_ns, threads_cpu_ns("self")).unwrap_or(0);
        fanout_ns += u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        pooled.call_us.push(announced.call_us);
        pooled.add(&reads, servers, announcer);
        sleep(settings.gap).await;
    }
    let ended = shared.ended.load(std::sync::atomic::Ordering::Relaxed);
    if ended > 0 {
        errors.add(format!("the servers ended {ended} streams"));
    }
    let opened = open.len();
    drop(open);
    errors
        .merge(std::mem::take(&mut *shared.errors.lock().unwrap_or_else(std::sync::PoisonError::into_inner)));
    let load_cpu_pct = if fanout_ns > 0 { load_ns as f64 / fanout_ns as f64 * 100.0 } else { 0.0 };
    let (announcer, others, all, streams) = (
        summarize(pooled.announcer_last.clone()),
        summarize(pooled.others_last.clone()),
        summarize(pooled.all_last.clone()),
        summarize(pooled.streams.clone()),
    );
    let mut each = pooled.announcer_last.clone();
    each.extend(&pooled.others_last);
    let (each, call) = (summarize(each), summarize(pooled.call_us.clone()));
    let (server_cpu, store_cpu) =
        (summarize(pooled.server_us_per_stream.clone()), summarize(pooled.store_us.clone()));
    let first_errors = errors.kept.clone();
    Ok(Report {
        human: format!(
            "fanout: {opened} of {n} streams over {servers} servers, open in {open_s:.1} s; {} changes: the last stream \
             of each server read it p50 {} µs, p99 {} µs{}; every stream: p50 {} µs, p99 {} µs; announce p50 {} µs; \
             servers' CPU p50 {} µs per stream{}; generator CPU {load_cpu_pct:.0}%; {} errors{}",
            settings.announcements,
            each.p50,
            each.p99,
            if servers > 1 {
                format!(
                    " (the server that took the call p50 {} µs, the others p50 {} µs)",
                    announcer.p50, others.p50
                )
            } else {
                String::new()
            },
            streams.p50,
            streams.p99,
            call.p50,
            server_cpu.p50,
            settings
                .store_pid
                .map_or(String::new(), |_| format!(", the store's {} µs per change", store_cpu.p50)),
            errors.count,
            error_suffix(&first_errors)
        ),
        json: json!({
            "mode": "fanout",
            "urls": settings.urls,
            "servers": servers,
            "streams": n,
            "opened": opened,
            "fd_limit": fd_limit,
            "open_s": open_s,
            "announcements": settings.announcements,
            "gap_ms": settings.gap.as_millis() as u64,
            "last_p50_us": each.p50,
            "last_p99_us": each.p99,
            "last_max_us": each.max,
            "announcer_last_p50_us": announcer.p50,
            "announcer_last_p99_us": announcer.p99,
            "others_last_p50_us": (servers > 1).then_some(others.p50),
            "others_last_p99_us": (servers > 1).then_some(others.p99),
            "all_last_p50_us": all.p50,
            "all_last_p99_us": all.p99,
            "stream_p50_us": streams.p50,
            "stream_p99_us": streams.p99,
            "announce_call_p50_us": call.p50,
            "server_cpu_us_per_stream": (!settings.pids.is_empty()).then_some(server_cpu.p50),
            "store_cpu_us_per_change": settings.store_pid.map(|_| store_cpu.p50),
            "load_cpu_pct": load_cpu_pct,
            "ended": ended,
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
    fn settings_take_one_pid_per_url_and_stay_bounded() {
        let s = Settings::parse(Args::of(&[
            "--urls",
            "http://127.0.0.1:1/mcp,http://127.0.0.1:2/mcp",
            "--pids",
            "10,11",
            "--streams",
            "1000",
        ]))
        .unwrap();
        assert_eq!((s.urls.len(), s.pids, s.streams, s.announcements), (2, vec![10, 11], 1_000, 20));
        for bad in [
            &["--streams", "10"][..],
            &["--urls", "u,v", "--pids", "1", "--streams", "10"],
            &["--urls", "u,v,w", "--streams", "2"],
            &["--urls", "u", "--streams", "10", "--announcements", "0"],
            &["--urls", "u", "--streams", "10", "--gap-ms", "20000"],
            &["--urls", "u", "--streams", "10", "--pids", "x"],
            &["--urls", "u,u,u,u,u,u,u,u,u", "--streams", "10"],
        ] {
            assert!(Settings::parse(Args::of(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_last_read_is_taken_per_server_of_the_streams_spread_round_robin() {
        // Streams 0, 3 on server 0; 1, 4 on server 1; 2 on server 2 (which missed it).
        let reads = [Some(10), Some(40), None, Some(30), Some(5)];
        assert_eq!(last_per_server(&reads, 3), [Some(30), Some(40), None]);
        assert_eq!(last_per_server(&reads, 1), [Some(40)]);
    }

    #[test]
    fn reads_are_pooled_by_the_server_that_took_the_call() {
        let mut pooled = Pooled::default();
        pooled.add(&[Some(10), Some(40), Some(20), Some(30)], 2, 1);
        assert_eq!((pooled.announcer_last.clone(), pooled.others_last.clone()), (vec![40], vec![20]));
        assert_eq!((pooled.all_last.clone(), pooled.streams.len()), (vec![40], 4));
        pooled.add(&[None, None], 2, 0);
        assert_eq!((pooled.announcer_last.len(), pooled.all_last.len(), pooled.streams.len()), (1, 1, 4));
    }
}
