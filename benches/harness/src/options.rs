//! The command line of `cargo xtask bench compare`: the scenario (the comparison, `--hold`,
//! `--drip N`, `--listen N[,N…]`, `--tasks N[,N…]`, `--redis` or `--sessions`), the rounds, their lengths and the
//! servers.

use super::SERVERS;

/// What `cargo xtask bench compare` was asked for.
pub(super) struct Options {
    pub(super) quick: bool,
    pub(super) rounds: u32,
    pub(super) warmup_s: f64,
    pub(super) duration_s: f64,
    pub(super) only: Vec<&'static str>,
    pub(super) build: bool,
    /// The comparison's large-payload rows (off with `--no-payload`).
    pub(super) payload: bool,
    /// Whether the large-payload rows run every server under glibc's default, moving malloc
    /// thresholds (`--payload-malloc-default`) instead of the fixed ones of [`crate::PAYLOAD_MALLOC`].
    pub(super) payload_malloc_default: bool,
    pub(super) hold: bool,
    /// `--drip N`: the number of drip connections.
    pub(super) drip: Option<u32>,
    /// `--listen N[,N…]`: the numbers of listen streams, ascending.
    pub(super) listen: Option<Vec<u32>>,
    /// `--tasks N[,N…]`: the numbers of live tasks the memory runs hold, ascending.
    pub(super) tasks: Option<Vec<u32>>,
    /// `--redis`: tasks and listens shared through Redis, beside in process.
    pub(super) redis: bool,
    /// `--sessions`: a legacy session's request against a stateless legacy request.
    pub(super) sessions: bool,
}

/// Upper bound on `--drip` (bench-load's own).
const MAX_DRIPS: u32 = 30_000;
/// Upper bound on one `--listen` count (bench-load's most connections, less the spare ones).
const MAX_LISTENS: u32 = 16_000;
/// The most counts one `--listen` or `--tasks` takes.
const MAX_LISTEN_COUNTS: usize = 4;
/// Upper bound on one `--tasks` count: the baseline holds as many calls, each on its connection.
const MAX_TASKS: u32 = 16_000;

const USAGE: &str = "usage: cargo xtask bench compare [--quick] [--rounds N] [--only kernel,rmcp,floor] [--no-build] \
                     [--no-payload] [--payload-malloc-default] [--hold | --drip N | --listen N[,N...] | --tasks N[,N...] | --redis | --sessions]";

/// Reads `compare …` (the subcommand first).
pub(super) fn parse(args: &[String]) -> Result<Options, String> {
    let mut it = args.iter();
    if it.next().map(String::as_str) != Some("compare") {
        return Err(USAGE.into());
    }
    let mut quick = false;
    let mut rounds = None;
    let mut only: Vec<&'static str> = SERVERS.iter().map(|(name, _)| *name).collect();
    let mut build = true;
    let mut payload = true;
    let mut payload_malloc_default = false;
    let mut hold = false;
    let mut drip = None;
    let mut listen = None;
    let mut tasks = None;
    let mut redis = false;
    let mut sessions = false;
    let (mut warmup_s, mut duration_s) = (None, None);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--quick" => quick = true,
            "--no-build" => build = false,
            "--no-payload" => payload = false,
            "--payload-malloc-default" => payload_malloc_default = true,
            "--hold" => hold = true,
            "--redis" => redis = true,
            "--sessions" => sessions = true,
            "--drip" => {
                let v = value()?;
                drip = Some(
                    v.parse::<u32>()
                        .ok()
                        .filter(|n| (1..=MAX_DRIPS).contains(n))
                        .ok_or_else(|| format!("--drip: 1 to {MAX_DRIPS}"))?,
                );
            }
            "--listen" => listen = Some(parse_counts("--listen", "streams", value()?, MAX_LISTENS)?),
            "--tasks" => tasks = Some(parse_counts("--tasks", "tasks", value()?, MAX_TASKS)?),
            "--rounds" => {
                let v = value()?;
                rounds =
                    Some(v.parse::<u32>().ok().filter(|r| (1..=50).contains(r)).ok_or("--rounds: 1 to 50")?);
            }
            "--warmup" => warmup_s = Some(seconds(value()?)?),
            "--duration" => duration_s = Some(seconds(value()?)?),
            "--only" => only = parse_only(value()?)?,
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    let runs = [hold, drip.is_some(), listen.is_some(), tasks.is_some(), redis, sessions];
    if runs.iter().filter(|&&given| given).count() > 1 {
        return Err(
            "--hold, --drip, --listen, --tasks, --redis and --sessions are separate runs: give one of them"
                .into(),
        );
    }
    Ok(Options {
        quick,
        rounds: rounds.unwrap_or(if quick { 3 } else { 5 }),
        warmup_s: warmup_s.unwrap_or(if quick { 1.0 } else { 2.0 }),
        duration_s: duration_s.unwrap_or(if quick { 2.0 } else { 5.0 }),
        only,
        build,
        payload,
        payload_malloc_default,
        hold,
        drip,
        listen,
        tasks,
        redis,
        sessions,
    })
}

/// The value of `--listen` or `--tasks` (`flag`): 1 to `MAX_LISTEN_COUNTS` ascending counts of
/// `what`, each 1 to `most`.
pub(super) fn parse_counts(flag: &str, what: &str, v: &str, most: u32) -> Result<Vec<u32>, String> {
    let counts: Option<Vec<u32>> = v.split(',').map(|c| c.trim().parse::<u32>().ok()).collect();
    counts
        .filter(|c| {
            (1..=MAX_LISTEN_COUNTS).contains(&c.len())
                && c.windows(2).all(|w| w[0] < w[1])
                && c.iter().all(|n| (1..=most).contains(n))
        })
        .ok_or_else(|| {
            format!("{flag}: 1 to {MAX_LISTEN_COUNTS} ascending counts of 1 to {most} {what}, not {v:?}")
        })
}

/// The value of `--only`: known server names, in the fixed interleaving order whatever the order given.
pub(super) fn parse_only(v: &str) -> Result<Vec<&'static str>, String> {
    let mut only = Vec::new();
    for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let known = SERVERS
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| format!("--only: unknown server {name:?} (kernel, rmcp, floor)"))?;
        if !only.contains(&known.0) {
            only.push(known.0);
        }
    }
    if only.is_empty() {
        return Err("--only names no server".into());
    }
    only.sort_by_key(|n| SERVERS.iter().position(|(s, _)| s == n));
    Ok(only)
}

fn seconds(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| (0.0..=120.0).contains(s))
        .ok_or_else(|| format!("{v}: 0 to 120 seconds"))
}
