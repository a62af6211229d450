//! Paired rounds: the floor and the kernel as linked, beside a second build of both (laid out by lld
//! for `bench layout`, optimized from a profile for `bench pgo`), their CPU per request round by round.
//!
//! Each round runs the four servers in turn — floor, kernel, then the second build's floor and kernel,
//! and the other way round every second round, so that a drift within a round falls on both builds
//! alike — on 32 closed-loop HTTP/1.1 connections, pinned as the comparison pins them, and reads each
//! server's own CPU per request (`bench-load http --pid`). The report gives each server's median, and
//! per round the ratios kernel/floor within each build and second/plain for each server, with their
//! medians and ranges: pairing the four in a round is what lets a change of a tenth show through
//! rounds that drift by more on a shared machine.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

use super::super::report::{finish, median};
use super::super::servers::{Pinning, http_loop_args, run_load, start_http};
use super::super::{LOAD, build};

/// The two servers of a pair, floor first, as (name, binary).
pub(super) const SERVERS: [(&str, &str); 2] = [("floor", "bench-floor"), ("kernel", "bench-kernel")];

/// Where a paired-build command starts from.
pub(super) struct Start {
    /// The compare workspace's manifest.
    pub(super) manifest: PathBuf,
    /// The command's own directory, `target/bench/<name>` (created).
    pub(super) dir: PathBuf,
    /// How the servers and the load are pinned.
    pub(super) pinning: Pinning,
    /// The release directory of the servers as `cargo build --release` makes them.
    pub(super) plain: PathBuf,
}

/// The start of the command `name` (`layout`, `pgo`): its directory made, and the plain build made
/// first when `build_first` (else found, or refused as missing).
pub(super) fn start(root: &Path, name: &str, build_first: bool) -> Result<Start, String> {
    let manifest = root.join("benches/compare/Cargo.toml");
    let dir = root.join("target/bench").join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let pinning = Pinning::detect();
    if build_first {
        build::build(&manifest, &SERVERS)?;
    }
    let plain = build::release_dir(&manifest, &SERVERS)?;
    Ok(Start { manifest, dir, pinning, plain })
}

/// Seconds of load per server and round before the measured window.
const WARMUP_S: &str = "1";
/// Seconds of the measured window per server and round.
const DURATION_S: &str = "5";

/// The plain build's release directory, the second build's, and the second build's name
/// (`"ordered"`, `"profiled"`).
pub(super) struct Builds<'a> {
    /// The release directory of the servers as `cargo build --release` makes them.
    pub(super) plain: &'a Path,
    /// The release directory of the second build.
    pub(super) second: &'a Path,
    /// The second build's name, which labels its servers and ratios.
    pub(super) name: &'static str,
}

impl Builds<'_> {
    /// The four servers in their columns: floor, kernel, the second build's floor and kernel.
    fn servers(&self) -> [(String, PathBuf); 4] {
        [
            ("floor".to_owned(), self.plain.join("bench-floor")),
            ("kernel".to_owned(), self.plain.join("bench-kernel")),
            (format!("{} floor", self.name), self.second.join("bench-floor")),
            (format!("{} kernel", self.name), self.second.join("bench-kernel")),
        ]
    }
}

/// Runs `rounds` rounds and returns each round's CPU per request (µs) of the four servers, in the
/// columns of [`Builds::servers`].
pub(super) fn run(pinning: &Pinning, builds: &Builds, rounds: u32) -> Result<Vec<[f64; 4]>, String> {
    let servers = builds.servers();
    let mut cpu = Vec::new();
    for round in 1..=rounds {
        let mut row = [0.0; 4];
        for i in turn(round) {
            let (name, binary) = &servers[i];
            row[i] = cpu_per_request(pinning, binary, &builds.plain.join(LOAD))
                .map_err(|e| format!("round {round}, {name}: {e}"))?;
        }
        let said: Vec<String> = servers.iter().zip(row).map(|((n, _), v)| format!("{n} {v:.1} µs")).collect();
        eprintln!("xtask: bench: round {round}: {}", said.join(", "));
        cpu.push(row);
    }
    Ok(cpu)
}

/// The order of the four servers in round `round` (from 1): as listed, then reversed every second
/// round.
fn turn(round: u32) -> [usize; 4] {
    if round % 2 == 1 { [0, 1, 2, 3] } else { [3, 2, 1, 0] }
}

/// One server's own CPU per request (µs) on 32 closed-loop HTTP connections.
fn cpu_per_request(pinning: &Pinning, binary: &Path, load: &Path) -> Result<f64, String> {
    let server = start_http(pinning, binary, &[])?;
    let pid = server.child.id().to_string();
    let args = http_loop_args(&server.url, &pid, "32", (WARMUP_S, DURATION_S), "call");
    let result = run_load(&pinning.command(1, load, &args))?;
    if result["errors"].as_u64().unwrap_or(0) > 0 {
        return Err(format!("{} errors", result["errors"]));
    }
    result["server_cpu_us_per_request"].as_f64().ok_or_else(|| "no server CPU in the result".into())
}

/// Each ratio's label and per-round values: `cpu` rows are rounds, columns the four servers of a
/// second build named `name`.
fn ratios_by_round(name: &str, cpu: &[[f64; 4]]) -> Vec<(String, Vec<f64>)> {
    let ratios = [
        ("kernel/floor".to_owned(), 1, 0),
        (format!("{name} kernel/{name} floor"), 3, 2),
        (format!("{name} kernel/kernel"), 3, 1),
        (format!("{name} floor/floor"), 2, 0),
    ];
    ratios.into_iter().map(|(label, a, b)| (label, cpu.iter().map(|row| row[a] / row[b]).collect())).collect()
}

/// Prints the medians and the per-round ratios, and writes them to `file` (under the repository's
/// root) with `extra`, the run's other figures, under `extra_key`.
pub(super) fn report(
    root: &Path,
    file: &str,
    builds: &Builds,
    cpu: &[[f64; 4]],
    (extra_key, extra): (&str, Value),
    started: Instant,
) -> Result<(), String> {
    let mut medians = serde_json::Map::new();
    println!("server CPU per request, HTTP/1.1, 32 connections (medians of {} rounds)", cpu.len());
    for (i, (name, _)) in builds.servers().iter().enumerate() {
        let column: Vec<f64> = cpu.iter().map(|row| row[i]).collect();
        let m = median(&column).unwrap_or(f64::NAN);
        println!("  {name:<17} {m:6.1} µs");
        medians.insert(name.clone(), json!({"median_us": m, "runs": column}));
    }
    let mut ratios = serde_json::Map::new();
    println!("ratios, round by round (median, lowest–highest)");
    for (label, values) in ratios_by_round(builds.name, cpu) {
        let m = median(&values).unwrap_or(f64::NAN);
        let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        println!("  {label:<32} {m:.2} ({lo:.2}–{hi:.2})");
        ratios.insert(label, json!({"median": m, "runs": values}));
    }
    let doc = json!({"cpu_us_per_request": medians, "ratios": ratios, extra_key: extra});
    finish(root, file, &doc, started.elapsed().as_secs_f64(), &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_second_round_runs_the_servers_the_other_way_round() {
        assert_eq!(turn(1), [0, 1, 2, 3]);
        assert_eq!(turn(2), [3, 2, 1, 0]);
        assert_eq!(turn(3), turn(1));
    }

    #[test]
    fn each_ratio_pairs_servers_of_the_same_round() {
        // Columns: floor, kernel, ordered floor, ordered kernel.
        let cpu = [[10.0, 15.0, 10.0, 12.5], [20.0, 28.0, 16.0, 20.0]];
        let ratios = ratios_by_round("ordered", &cpu);
        assert_eq!(ratios[0], ("kernel/floor".to_owned(), vec![1.5, 1.4]));
        assert_eq!(ratios[1], ("ordered kernel/ordered floor".to_owned(), vec![1.25, 1.25]));
        assert_eq!(ratios[2], ("ordered kernel/kernel".to_owned(), vec![12.5 / 15.0, 20.0 / 28.0]));
        assert_eq!(ratios[3], ("ordered floor/floor".to_owned(), vec![1.0, 0.8]));
    }

    #[test]
    fn the_servers_are_named_by_build() {
        let builds = Builds { plain: Path::new("/p"), second: Path::new("/s"), name: "profiled" };
        let servers = builds.servers();
        assert_eq!(servers[0], ("floor".to_owned(), PathBuf::from("/p/bench-floor")));
        assert_eq!(servers[3], ("profiled kernel".to_owned(), PathBuf::from("/s/bench-kernel")));
    }
}
