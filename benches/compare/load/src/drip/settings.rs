//! The `drip` command line (`Settings`, every number bounded) and the limit on open files that the
//! drips need.

use std::time::Duration;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

use crate::{Args, seconds};

/// Upper bound on `--drips`.
const MAX_DRIPS: usize = 30_000;
/// Upper bound on `--requests`.
const MAX_LEGIT_REQUESTS: u64 = 100_000;
/// Upper bound on `--interval-ms`.
const MAX_INTERVAL_MS: u64 = 10_000;
/// Drips opened per second by default, evenly spaced. A connection is established by the kernel
/// before the server accepts it, so a client that opens them as fast as it can fills the listen
/// backlog (128 for tokio's listeners) faster than a busy server on one core drains it, and each
/// connection over the backlog costs a 1 s SYN retransmission. 3,000 a second opens 12,000 drips
/// in 4 s, well inside a 15 s body deadline.
const DEFAULT_OPEN_RATE: u32 = 3_000;
/// Upper bound on `--open-rate`.
const MAX_OPEN_RATE: u32 = 100_000;

/// What a `drip` run was asked for.
#[derive(Debug, PartialEq)]
pub(crate) struct Settings {
    /// The loopback URL of the server.
    pub(crate) url: String,
    /// How many drip connections to open.
    pub(crate) drips: usize,
    /// Measured legitimate requests per phase (baseline and drip phase).
    pub(crate) requests: u64,
    /// The time between two legitimate requests.
    pub(crate) interval: Duration,
    /// How long a drip is watched after its head.
    pub(crate) wait: Duration,
    /// Drips opened per second.
    pub(crate) open_rate: u32,
    /// The server's process id, to sample its memory.
    pub(crate) pid: Option<u32>,
}

impl Settings {
    /// Reads the `drip` flags, with their defaults and bounds.
    pub(crate) fn parse(mut args: Args) -> Result<Settings, String> {
        let url = args.take("url").ok_or("--url is required")?;
        let drips: usize = args.number("drips", None)?;
        let requests: u64 = args.number("requests", Some(200))?;
        let interval_ms: u64 = args.number("interval-ms", Some(20))?;
        let wait = seconds("wait-secs", args.number("wait-secs", Some(20.0))?)?;
        let open_rate: u32 = args.number("open-rate", Some(DEFAULT_OPEN_RATE))?;
        let pid = match args.take("pid") {
            Some(p) => Some(p.parse().map_err(|_| format!("--pid: not a number: {p:?}"))?),
            None => None,
        };
        args.finish(false)?;
        if drips == 0 || drips > MAX_DRIPS {
            return Err(format!("--drips must be between 1 and {MAX_DRIPS}"));
        }
        if requests == 0 || requests > MAX_LEGIT_REQUESTS {
            return Err(format!("--requests must be between 1 and {MAX_LEGIT_REQUESTS}"));
        }
        if interval_ms > MAX_INTERVAL_MS {
            return Err(format!("--interval-ms must be at most {MAX_INTERVAL_MS}"));
        }
        if wait.is_zero() {
            return Err("--wait-secs must be positive".into());
        }
        if !(1..=MAX_OPEN_RATE).contains(&open_rate) {
            return Err(format!("--open-rate must be between 1 and {MAX_OPEN_RATE}"));
        }
        Ok(Settings {
            url,
            drips,
            requests,
            interval: Duration::from_millis(interval_ms),
            wait,
            open_rate,
            pid,
        })
    }
}

/// The new soft limit on open files when `needed` exceed the current one (`None` is unlimited):
/// `Ok(None)` when it suffices, `Ok(Some(soft))` to raise it (to the hard limit), an error when
/// even the hard limit is too low.
fn raised_soft_limit(current: Option<u64>, maximum: Option<u64>, needed: u64) -> Result<Option<u64>, String> {
    if current.is_none_or(|c| c >= needed) {
        return Ok(None);
    }
    match maximum {
        None => Ok(Some(needed)),
        Some(max) if max >= needed => Ok(Some(max)),
        Some(max) => Err(format!(
            "the drips need {needed} open files and the hard limit is {max} (raise it: ulimit -Hn)"
        )),
    }
}

/// Raises the soft limit on open files if `needed` exceed it; the limit now in force.
pub(crate) fn raise_fd_limit(needed: u64) -> Result<u64, String> {
    let limit = getrlimit(Resource::Nofile);
    let Some(soft) = raised_soft_limit(limit.current, limit.maximum, needed)? else {
        return Ok(limit.current.unwrap_or(u64::MAX));
    };
    setrlimit(Resource::Nofile, Rlimit { current: Some(soft), maximum: limit.maximum })
        .map_err(|e| format!("raising the open-file limit to {soft}: {e}"))?;
    Ok(soft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_have_defaults_and_bounds() {
        let s = Settings::parse(Args::of(&["--url", "http://127.0.0.1:1/mcp", "--drips", "12000"])).unwrap();
        assert_eq!(
            s,
            Settings {
                url: "http://127.0.0.1:1/mcp".into(),
                drips: 12_000,
                requests: 200,
                interval: Duration::from_millis(20),
                wait: Duration::from_secs(20),
                open_rate: DEFAULT_OPEN_RATE,
                pid: None,
            }
        );
        let s = Settings::parse(Args::of(&[
            "--url",
            "u",
            "--drips",
            "5",
            "--requests",
            "7",
            "--interval-ms",
            "0",
            "--wait-secs",
            "2.5",
            "--pid",
            "42",
        ]))
        .unwrap();
        assert_eq!(
            (s.requests, s.interval, s.wait, s.pid),
            (7, Duration::ZERO, Duration::from_millis(2500), Some(42))
        );
        for bad in [
            &["--url", "u"][..],
            &["--drips", "5"],
            &["--url", "u", "--drips", "0"],
            &["--url", "u", "--drips", "30001"],
            &["--url", "u", "--drips", "5", "--requests", "0"],
            &["--url", "u", "--drips", "5", "--wait-secs", "0"],
            &["--url", "u", "--drips", "5", "--open-rate", "0"],
            &["--url", "u", "--drips", "5", "--pid", "x"],
            &["--url", "u", "--drips", "5", "--other", "1"],
        ] {
            assert!(Settings::parse(Args::of(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_soft_limit_is_raised_only_when_needed() {
        assert_eq!(raised_soft_limit(Some(20_000), Some(20_000), 12_064), Ok(None));
        assert_eq!(raised_soft_limit(None, None, 12_064), Ok(None));
        assert_eq!(raised_soft_limit(Some(1024), Some(524_288), 12_064), Ok(Some(524_288)));
        assert_eq!(raised_soft_limit(Some(1024), None, 12_064), Ok(Some(12_064)));
        assert!(raised_soft_limit(Some(1024), Some(4096), 12_064).is_err());
    }
}
