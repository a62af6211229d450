//! `cargo xtask bench footprint [--only kernel,floor] [--no-build] [--seconds S] [--connections N]
//! [--d1 BYTES,WAYS,LINE] [--order FILE]`: how much code one HTTP request runs through, in each server,
//! and what it costs in the caches.
//!
//! The CPU time of a small request depends on more than its instructions: a request that runs through
//! more distinct code misses the instruction cache and its translation buffer more. Per server, this run
//! starts the HTTP server under `valgrind --tool=callgrind --dump-instr=yes`, loads it with `bench-load
//! http` on 32 connections (`--connections`) for a warm-up, zeroes the counts (`callgrind_control -z`),
//! loads it for `--seconds` (default 4), dumps the counts (`callgrind_control -d`) and divides by the
//! requests answered. It reports per request: the instructions run; and, of the code run at least
//! [`HOT_SHARE`] times a request, the distinct instructions, the 64-byte lines and the 4-KiB pages they
//! lie in — what the instruction cache and the instruction TLB must hold for one request.
//!
//! Callgrind also simulates the caches of the machine it runs on (`--cache-sim=yes`: its first-level
//! instruction and data caches and its last level), so the run reports per request the misses of
//! each, and the cycle estimate KCachegrind shows for a profile: instructions + 10 × first-level
//! misses + 100 × last-level misses ([`estimated_cycles`]). Unlike a CPU time it does not move with
//! the machine's other load. For the servers as linked its ratio kernel/floor has followed the
//! measured ratio of CPU time per request; for a pair built from a profile it came out higher than the
//! measured one (`docs/performance.md`, "Twelfth round"). Written to `target/bench/footprint.json`,
//! with each figure's ratio kernel/floor.
//!
//! `--d1 BYTES,WAYS,LINE` simulates a first-level data cache of that shape instead of the machine's
//! (callgrind's `--D1`; BYTES ÷ (WAYS × LINE) sets, a power of two): with `--connections 1`, whether a
//! request's misses come from what one request touches or from the connections taking turns
//! (`docs/performance.md`, "Thirteenth round").
//!
//! `--order FILE` also writes the functions that hold each server's hot code, hottest first, one
//! mangled name a line: a `--symbol-ordering-file` for lld, which then lays those functions out
//! together at the start of the text. A name absent from a binary is skipped by the linker, so one file
//! serves every server. Symbol names may change with the build's flags, so the file is made from a
//! build with the same `RUSTFLAGS` as the one it orders (`docs/performance.md`, "Eleventh round",
//! gives the steps).
//!
//! `cargo xtask bench layout` (module `layout`) profiles both servers the same way, lays out their hot
//! functions together, and measures what that changes in their CPU per request; `cargo xtask bench
//! pgo` (module `pgo`) builds them from a profile of their own instead (`-C profile-use`). Both run
//! their paired rounds through module `rounds`.
//!
//! `cargo xtask bench touched` (module `touched`) counts, from a lackey trace of every data access,
//! how many distinct lines of data one request touches, by mapping, against the L1 data cache.
//!
//! Needs `valgrind` (with `callgrind_control`), binutils' `nm` for `--order`, `layout` and `touched`,
//! and the toolchain's `llvm-profdata` for `pgo`; nothing here runs in CI.

mod callgrind;
mod layout;
mod pgo;
mod rounds;
mod symbols;
mod touched;

pub(super) use layout::run as run_layout;
pub(super) use pgo::run as run_pgo;
pub(super) use touched::run as run_touched;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::options::parse_only;
use super::report::finish;
use super::servers::{Pinning, run_load, start_http_argv};
use super::{LOAD, SERVERS, build};

/// Code run at least this many times per request, on average, counts as the request's own: what a
/// connection's opening or a rare timer runs falls far below it.
pub(crate) const HOT_SHARE: f64 = 0.3;
/// Connections of the load, as in the comparison's HTTP rows.
const CONNECTIONS: u32 = 32;
/// The most connections `--connections` takes: the kernel server's default limit per client address
/// (the load comes from one), which the run does not raise.
const MAX_CONNECTIONS: u32 = 512;
/// Seconds of load before the counts are zeroed.
const WARMUP_S: &str = "2";
/// The longest wait for callgrind to write its dump.
const DUMP_WAIT: Duration = Duration::from_secs(60);
/// The longest wait for `callgrind_control` to reach the server (it reaches it through valgrind's
/// gdbserver, which can be refused).
const CONTROL_WAIT: Duration = Duration::from_secs(60);

/// The command line, for a refused one.
const USAGE: &str = "usage: cargo xtask bench footprint [--only kernel,floor] [--no-build] [--seconds S] \
     [--connections N] [--d1 BYTES,WAYS,LINE] [--order FILE]";

/// What `cargo xtask bench footprint` was asked for.
struct Options {
    only: Vec<&'static str>,
    build: bool,
    probe: Probe,
    order: Option<PathBuf>,
}

/// How a server is profiled: the load it is given and the data cache simulated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Probe {
    /// Seconds of the counted load.
    pub(crate) seconds: f64,
    /// Closed-loop connections of the load.
    pub(crate) connections: u32,
    /// The first-level data cache simulated; `None`: the machine's.
    pub(crate) d1: Option<CacheShape>,
}

impl Probe {
    /// `seconds` of load on the comparison's 32 connections, the machine's caches simulated.
    pub(crate) const fn standard(seconds: f64) -> Self {
        Self { seconds, connections: CONNECTIONS, d1: None }
    }
}

/// A cache's shape as callgrind takes it: total bytes, ways, bytes a line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CacheShape {
    bytes: u32,
    ways: u32,
    line: u32,
}

impl CacheShape {
    /// Reads `BYTES,WAYS,LINE` as callgrind accepts it: a line of at least 32 bytes (its widest
    /// register), a power of two; more bytes than a line, and no more than a signed 32-bit count; a
    /// power of two of sets.
    fn parse(text: &str) -> Result<Self, String> {
        let refused =
            |rule: &str| format!("--d1: BYTES,WAYS,LINE (as 65536,16,64) with {rule}, not {text:?}");
        let numbers: Result<Vec<u32>, _> = text.split(',').map(|n| n.trim().parse::<u32>()).collect();
        let numbers = numbers.map_err(|_| refused("three whole numbers"))?;
        let [bytes, ways, line] = numbers[..] else { return Err(refused("three whole numbers")) };
        if line < 32 || !line.is_power_of_two() {
            return Err(refused("a line of 32 bytes or more, a power of two"));
        }
        if bytes <= line || i32::try_from(bytes).is_err() || ways == 0 {
            return Err(refused("more bytes than a line, at most 2^31 - 1, and one way or more"));
        }
        let sets = ways.checked_mul(line).filter(|set| bytes % set == 0).map(|set| bytes / set);
        match sets {
            Some(sets) if sets.is_power_of_two() => Ok(Self { bytes, ways, line }),
            _ => Err(refused("a power of two of sets (BYTES / (WAYS × LINE))")),
        }
    }

    /// Callgrind's option for it.
    fn callgrind_flag(self) -> String {
        format!("--D1={},{},{}", self.bytes, self.ways, self.line)
    }
}

/// Reads `footprint …` (the subcommand first).
fn parse(args: &[String]) -> Result<Options, String> {
    let mut it = args.iter();
    if it.next().map(String::as_str) != Some("footprint") {
        return Err(USAGE.into());
    }
    let mut options =
        Options { only: vec!["kernel", "floor"], build: true, probe: Probe::standard(4.0), order: None };
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--no-build" => options.build = false,
            "--only" => options.only = parse_only(value()?)?,
            "--order" => options.order = Some(PathBuf::from(value()?)),
            "--seconds" => {
                let v = value()?;
                options.probe.seconds = v
                    .parse::<f64>()
                    .ok()
                    .filter(|s| (1.0..=60.0).contains(s))
                    .ok_or_else(|| format!("--seconds: 1 to 60, not {v:?}"))?;
            }
            "--connections" => {
                let v = value()?;
                options.probe.connections = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_CONNECTIONS).contains(n))
                    .ok_or_else(|| format!("--connections: 1 to {MAX_CONNECTIONS}, not {v:?}"))?;
            }
            "--d1" => options.probe.d1 = Some(CacheShape::parse(value()?)?),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// One server's footprint per request.
#[derive(Debug, PartialEq)]
pub(crate) struct Footprint {
    /// Requests answered in the profiled window.
    pub(crate) requests: u64,
    /// Instructions run per request, all code counted.
    pub(crate) instructions: f64,
    /// Distinct instructions run at least [`HOT_SHARE`] times a request.
    pub(crate) hot_instructions: usize,
    /// The 64-byte lines those lie in.
    pub(crate) hot_lines: usize,
    /// The 4-KiB pages those lie in.
    pub(crate) hot_pages: usize,
    /// First-level instruction cache misses per request (`I1mr`).
    pub(crate) code_misses: f64,
    /// First-level data cache misses per request, reads and writes (`D1mr` + `D1mw`).
    pub(crate) data_misses: f64,
    /// Last-level misses per request, code and data (`ILmr` + `DLmr` + `DLmw`).
    pub(crate) last_level_misses: f64,
    /// The caches callgrind simulated.
    pub(crate) caches: Vec<String>,
    /// The hot (address, instructions) of the server's own binary, for its symbols.
    hot_in_binary: Vec<(u64, u64)>,
}

/// The footprint of `requests` requests in `profile`, the server's binary being `binary_name`.
pub(crate) fn footprint(profile: &callgrind::Profile, requests: u64, binary_name: &str) -> Footprint {
    let n = requests.max(1) as f64;
    let events = |names: &[&str]| names.iter().filter_map(|e| profile.totals.get(*e)).sum::<u64>() as f64 / n;
    let binary = profile.object_named(binary_name);
    let total = profile.costs.values().fold(0u64, |sum, ir| sum.saturating_add(*ir));
    let hot: Vec<(&(usize, u64), &u64)> =
        profile.costs.iter().filter(|&(_, &ir)| ir as f64 / n >= HOT_SHARE).collect();
    let lines: HashSet<(usize, u64)> = hot.iter().map(|((o, a), _)| (*o, a >> 6)).collect();
    let pages: HashSet<(usize, u64)> = hot.iter().map(|((o, a), _)| (*o, a >> 12)).collect();
    let mut hot_in_binary: Vec<(u64, u64)> =
        hot.iter().filter(|((o, _), _)| Some(*o) == binary).map(|((_, a), ir)| (*a, **ir)).collect();
    hot_in_binary.sort_unstable();
    Footprint {
        requests,
        instructions: total as f64 / n,
        hot_instructions: hot.len(),
        hot_lines: lines.len(),
        hot_pages: pages.len(),
        code_misses: events(&["I1mr"]),
        data_misses: events(&["D1mr", "D1mw"]),
        last_level_misses: events(&["ILmr", "DLmr", "DLmw"]),
        caches: profile.caches.clone(),
        hot_in_binary,
    }
}

/// Cycles per request as KCachegrind estimates them from a cache simulation: each instruction one
/// cycle, each first-level miss 10 more, each last-level miss 100 more. A model, not a measurement:
/// it leaves out branch mispredictions, the TLB and the overlap of misses with other work.
pub(crate) fn estimated_cycles(f: &Footprint) -> f64 {
    f.instructions + 10.0 * (f.code_misses + f.data_misses) + 100.0 * f.last_level_misses
}

/// `cargo xtask bench footprint …`.
pub(super) fn run(args: &[String], root: &Path) -> Result<(), String> {
    let options = parse(args)?;
    require_tools(options.order.is_some())?;
    let Setup { servers, release, dir: out_dir, pinning } =
        setup(root, &options.only, options.build, "footprint")?;
    let started = Instant::now();
    let mut results: Vec<(&str, Footprint)> = Vec::new();
    let mut order: Vec<(&str, Vec<String>)> = Vec::new();
    for (name, binary) in &servers {
        let profile_path = out_dir.join(format!("{binary}.callgrind"));
        let fp = measure(&pinning, &release, binary, &profile_path, &options.probe)?;
        if options.order.is_some() {
            let ranked = symbols::hottest(&symbols::of(&release.join(binary))?, &fp.hot_in_binary)?;
            eprintln!("xtask: bench: {binary}: {} functions hold its hot code", ranked.len());
            order.push((name, ranked));
        }
        results.push((name, fp));
    }
    print_and_write(root, &results, &options.probe, started.elapsed().as_secs_f64())?;
    if let Some(file) = &options.order {
        std::fs::write(file, ordering_file(order)).map_err(|e| format!("{}: {e}", file.display()))?;
        eprintln!("xtask: bench: hot functions written to {}", file.display());
    }
    Ok(())
}

/// What a run over some of the servers starts from.
pub(crate) struct Setup {
    /// The servers asked for: name and binary.
    pub(crate) servers: Vec<(&'static str, &'static str)>,
    /// Where their release binaries (and `bench-load`) are.
    pub(crate) release: PathBuf,
    /// `target/bench/<name>`, created, for the run's files.
    pub(crate) dir: PathBuf,
    /// How the servers and the load are pinned to CPUs.
    pub(crate) pinning: Pinning,
}

/// The servers named in `only`, built first when `build_first`, and the directory
/// `target/bench/<name>`.
pub(crate) fn setup(root: &Path, only: &[&str], build_first: bool, name: &str) -> Result<Setup, String> {
    let manifest = root.join("benches/compare/Cargo.toml");
    let servers: Vec<(&'static str, &'static str)> =
        SERVERS.iter().copied().filter(|(server, _)| only.contains(server)).collect();
    if build_first {
        build::build(&manifest, &servers)?;
    }
    let release = build::release_dir(&manifest, &servers)?;
    let dir = root.join("target/bench").join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(Setup { servers, release, dir, pinning: Pinning::detect() })
}

/// Fails at once, before any build, when a tool the run needs is missing: valgrind and
/// `callgrind_control`, and binutils' `nm` when functions are to be named.
fn require_tools(naming_functions: bool) -> Result<(), String> {
    let tools: &[&str] = if naming_functions {
        &["valgrind", "callgrind_control", "nm"]
    } else {
        &["valgrind", "callgrind_control"]
    };
    require(tools)
}

/// Fails when one of `tools` does not answer `--version`.
fn require(tools: &[&str]) -> Result<(), String> {
    for tool in tools {
        let found = Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
        if found.is_err() {
            return Err(format!("{tool} is needed (Debian: apt-get install valgrind binutils)"));
        }
    }
    Ok(())
}

/// The footprint of `binary` (in `release`, beside `bench-load`): profiled as `probe` says, the
/// profile kept at `profile_path`.
fn measure(
    pinning: &Pinning,
    release: &Path,
    binary: &str,
    profile_path: &Path,
    probe: &Probe,
) -> Result<Footprint, String> {
    let (profile, requests) =
        profile_server(pinning, &release.join(binary), &release.join(LOAD), profile_path, probe)?;
    Ok(footprint(&profile, requests, binary))
}

/// Runs `binary` under callgrind, loads it, and returns the profile of the measured window with the
/// requests answered in it.
fn profile_server(
    pinning: &Pinning,
    binary: &Path,
    load: &Path,
    profile_path: &Path,
    probe: &Probe,
) -> Result<(callgrind::Profile, u64), String> {
    let dump = PathBuf::from(format!("{}.1", profile_path.display()));
    for stale in [profile_path, dump.as_path()] {
        let _ = std::fs::remove_file(stale);
    }
    let d1 = probe.d1.map(CacheShape::callgrind_flag);
    let mut flags = vec!["-q", "--tool=callgrind", "--dump-instr=yes", "--cache-sim=yes"];
    flags.extend(d1.as_deref());
    let mut argv = pinning.command(0, Path::new("valgrind"), &flags);
    argv.push(format!("--callgrind-out-file={}", profile_path.display()));
    argv.extend([binary.display().to_string(), "http".into(), "127.0.0.1:0".into()]);
    eprintln!("xtask: bench: {} under callgrind", binary.display());
    let server = start_http_argv(&argv, binary, &[])?;
    let pid = server.child.id().to_string();
    let connections = probe.connections.to_string();
    let load_argv = |warmup: &str, duration: &str| {
        let args = [
            "http",
            "--url",
            &server.url,
            "--connections",
            &connections,
            "--warmup",
            warmup,
            "--duration",
            duration,
        ];
        pinning.command(1, load, &args)
    };
    run_load(&load_argv("0", WARMUP_S))?;
    callgrind_control("-z", &pid)?;
    let measured = run_load(&load_argv("0", &format!("{}", probe.seconds)))?;
    callgrind_control("-d", &pid)?;
    let requests = answered(&measured, binary)?;
    let started = Instant::now();
    let text = loop {
        // callgrind writes the dump, then the `totals:` line last.
        match std::fs::read_to_string(&dump) {
            Ok(text) if text.contains("\ntotals:") => break text,
            _ if started.elapsed() > DUMP_WAIT => return Err(format!("{} was not written", dump.display())),
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    drop(server);
    let profile = callgrind::parse(&text)?;
    if profile.caches.is_empty() {
        return Err(format!("{}: the profile simulated no caches", dump.display()));
    }
    Ok((profile, requests))
}

/// The requests `bench-load`'s report `measured` counts as answered (in the window, its warm-up and
/// late), refused when there are none or when any failed.
fn answered(measured: &Value, binary: &Path) -> Result<u64, String> {
    let requests = ["requests", "warmup_requests", "late_requests"]
        .iter()
        .map(|k| measured[*k].as_u64().unwrap_or(0))
        .sum();
    if requests == 0 || measured["errors"].as_u64().unwrap_or(0) > 0 {
        let errors = &measured["errors"];
        return Err(format!("{}: {requests} requests answered, {errors} errors", binary.display()));
    }
    Ok(requests)
}

/// `callgrind_control FLAG PID` (`-z` zeroes the counts, `-d` dumps them), given [`CONTROL_WAIT`] to
/// reach the server; its chatter is kept unless it fails.
fn callgrind_control(flag: &str, pid: &str) -> Result<(), String> {
    let mut child = Command::new("callgrind_control")
        .args([flag, pid])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("callgrind_control: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < CONTROL_WAIT => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("callgrind_control {flag} {pid} did not finish in {CONTROL_WAIT:?}"));
            }
        }
    }
    let out = child.wait_with_output().map_err(|e| format!("callgrind_control: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    Err(format!("callgrind_control {flag} {pid}: {} {}", out.status, said.trim()))
}

/// The symbol-ordering file of each server's hot functions: the floor's first, so that the baseline
/// is laid out exactly by its own profile, then each other server's that are not already named.
fn ordering_file(mut lists: Vec<(&str, Vec<String>)>) -> String {
    lists.sort_by_key(|(name, _)| *name != "floor");
    let mut seen = HashSet::new();
    let mut text = String::new();
    for name in lists.into_iter().flat_map(|(_, names)| names) {
        if seen.insert(name.clone()) {
            text.push_str(&name);
            text.push('\n');
        }
    }
    text
}

/// One row of the table: its JSON key, its label, and its value for a server.
type Row = (&'static str, &'static str, fn(&Footprint) -> f64);

/// Prints the table (and ratios to the floor) and writes `target/bench/footprint.json`.
fn print_and_write(
    root: &Path,
    results: &[(&str, Footprint)],
    probe: &Probe,
    elapsed: f64,
) -> Result<(), String> {
    let floor = results.iter().find(|(n, _)| *n == "floor").map(|(_, f)| f);
    let rows: [Row; 8] = [
        ("instructions", "instructions run", |f| f.instructions),
        ("hot_instructions", "distinct hot instructions", |f| f.hot_instructions as f64),
        ("hot_lines", "64-byte code lines", |f| f.hot_lines as f64),
        ("hot_pages", "4-KiB code pages", |f| f.hot_pages as f64),
        ("code_misses", "L1 instruction misses", |f| f.code_misses),
        ("data_misses", "L1 data misses", |f| f.data_misses),
        ("last_level_misses", "last-level misses", |f| f.last_level_misses),
        ("estimated_cycles", "estimated cycles", estimated_cycles),
    ];
    let caches = results.first().map(|(_, f)| f.caches.join("; ")).unwrap_or_default();
    println!("{} connections, caches simulated: {caches}", probe.connections);
    let mut header = format!("{:<28}", "per HTTP request");
    for (name, _) in results {
        header.push_str(&format!(" {name:>10}"));
    }
    if floor.is_some() {
        header.push_str("  ratios to floor");
    }
    println!("{header}");
    let mut report = serde_json::Map::new();
    for (key, label, value) in rows {
        let mut line = format!("{label:<28}");
        let mut ratios = Vec::new();
        let mut values = serde_json::Map::new();
        for (name, f) in results {
            line.push_str(&format!(" {:>10.0}", value(f)));
            values.insert((*name).to_owned(), json!(value(f)));
            if let Some(base) = floor.filter(|_| *name != "floor") {
                ratios.push(format!("{name} {:.2}", value(f) / value(base)));
            }
        }
        println!("{line}  {}", ratios.join(", "));
        report.insert(key.to_owned(), json!({"label": label, "per_request": values}));
    }
    let requests: serde_json::Map<String, Value> =
        results.iter().map(|(n, f)| ((*n).to_owned(), json!(f.requests))).collect();
    report.insert("requests".into(), Value::Object(requests));
    report.insert("hot_share".into(), json!(HOT_SHARE));
    report.insert("connections".into(), json!(probe.connections));
    if let Some((_, f)) = results.first() {
        report.insert("caches_simulated".into(), json!(f.caches));
    }
    finish(root, "target/bench/footprint.json", &Value::Object(report), elapsed, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;

    #[test]
    fn options_default_to_kernel_and_floor_for_four_seconds_on_32_connections() {
        let o = parse(&args(&["footprint"])).unwrap();
        assert_eq!(
            (o.only, o.build, o.probe, o.order),
            (vec!["kernel", "floor"], true, Probe::standard(4.0), None)
        );
        assert_eq!((o.probe.connections, o.probe.d1), (32, None));
        let o = parse(&args(&[
            "footprint",
            "--only",
            "floor",
            "--no-build",
            "--seconds",
            "2",
            "--order",
            "x",
            "--connections",
            "1",
            "--d1",
            "65536,16,64",
        ]))
        .unwrap();
        assert_eq!((o.only, o.build, o.order), (vec!["floor"], false, Some("x".into())));
        let shape = CacheShape { bytes: 65536, ways: 16, line: 64 };
        assert_eq!(o.probe, Probe { seconds: 2.0, connections: 1, d1: Some(shape) });
        assert_eq!(shape.callgrind_flag(), "--D1=65536,16,64");
    }

    #[test]
    fn a_simulated_data_cache_has_a_power_of_two_of_sets_and_a_line_callgrind_takes() {
        // The machine's own (48 KiB, 12 ways: 64 sets) is taken; so are one set and a 2 KiB line.
        for good in ["49152,12,64", "65536,16,64", "64,2,32", "49152,12,2048", "4096,1,2048"] {
            assert!(CacheShape::parse(good).is_ok(), "{good}");
        }
        // Two numbers or four; a line not a power of two (64 sets of 48 bytes), under 32 bytes, or
        // as large as the cache; no ways; more bytes than callgrind counts.
        for bad in ["49152,12", "49152,12,64,1", "3072,1,48", "64,4,16", "1024,1,1024", "49152,0,64"] {
            assert!(CacheShape::parse(bad).is_err(), "{bad}");
        }
        assert!(CacheShape::parse("2147483648,1,64").is_err(), "2 GiB overflows callgrind's count");
        assert!(CacheShape::parse("1073741824,1,64").is_ok(), "1 GiB does not");
        let said = CacheShape::parse("3072,1,48").unwrap_err();
        assert!(said.contains("a line of 32 bytes or more, a power of two"), "{said}");
        // 3 sets, a fraction of a set, no sets, not numbers.
        for bad in ["9216,3,1024", "100,1,64", "0,1,64", "a,b,c", "-1,1,64", ""] {
            assert!(CacheShape::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn refuses_unknown_options_and_values_out_of_range() {
        for bad in [
            &["footprint", "--seconds", "0"][..],
            &["footprint", "--connections", "0"],
            &["footprint", "--connections", "513"],
            &["footprint", "--d1", "48k"],
            &["footprint", "--order"],
            &["footprint", "--x"],
            &["compare"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_ordering_file_names_the_floors_functions_first_and_each_once() {
        let lists = vec![
            ("kernel", vec!["k1".to_owned(), "shared".to_owned(), "k2".to_owned()]),
            ("floor", vec!["shared".to_owned(), "f1".to_owned()]),
        ];
        assert_eq!(ordering_file(lists), "shared\nf1\nk1\nk2\n");
    }

    #[test]
    fn counts_the_lines_and_pages_of_code_run_at_least_0_3_times_a_request() {
        // 10 requests: the server's binary runs 0x1000 and 0x1004 (one line), 0x1040 (a second line)
        // and 0x2000 (a second page) every time; 0x3000 twice in all (under a third per request);
        // libc one line of its own.
        let profile = callgrind::parse(
            "positions: instr\nevents: Ir\nob=(1) /x/bench-kernel\n\
             0x1000 10\n0x1004 20\n0x1040 10\n0x2000 30\n0x3000 2\n\
             ob=(2) /lib/libc.so.6\n0x1000 40\n",
        )
        .unwrap();
        let f = footprint(&profile, 10, "bench-kernel");
        assert_eq!((f.instructions, f.hot_instructions, f.hot_lines, f.hot_pages), (11.2, 5, 4, 3));
        assert_eq!(f.hot_in_binary, [(0x1000, 10), (0x1004, 20), (0x1040, 10), (0x2000, 30)]);
    }

    #[test]
    fn estimates_cycles_from_the_simulated_misses_per_request() {
        // 4 requests: 4,000 instructions, 80 I1 misses, 40 + 20 D1 misses, 4 + 0 + 4 last-level misses.
        let profile = callgrind::parse(
            "desc: I1 cache: 32768 B, 64 B, 8-way associative\npositions: instr\n\
             events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nob=(1) /x/bench-kernel\n0x1000 4000\n\
             totals: 4000 0 0 80 40 20 4 0 4\n",
        )
        .unwrap();
        let f = footprint(&profile, 4, "bench-kernel");
        assert_eq!((f.code_misses, f.data_misses, f.last_level_misses), (20.0, 15.0, 2.0));
        assert_eq!(f.caches, ["I1 cache: 32768 B, 64 B, 8-way associative"]);
        assert_eq!(estimated_cycles(&f), 1000.0 + 10.0 * 35.0 + 100.0 * 2.0);
    }
}
