//! `cargo xtask bench layout [--rounds N] [--no-build]`: what the placement of the hot code costs,
//! measured by changing only it.
//!
//! Two builds of `bench-kernel` and `bench-floor` from the same source: as `cargo build --release`
//! links them (the compare workspace's own target), and laid out by lld's `--symbol-ordering-file`
//! from a callgrind profile of each server under the benchmark's load (in
//! `target/bench/layout/target`, so that the comparison's binaries stay as a host gets them). The
//! ordered build is linked twice: symbol names may change with the flags a crate is built with, so the
//! profile that names the hot functions is taken of a build made with the ordering flags and an empty
//! file, then that build's servers are relinked with the file filled. Cargo does not track a linker's
//! input files, so each link is forced by a `cargo clean -p` of the two servers (only they are
//! rebuilt). The flags go in `CARGO_ENCODED_RUSTFLAGS`, after any the environment already gives; a
//! `build.rustflags` of cargo's configuration does not apply to the ordered build. lld is Rust's
//! default linker on x86-64 Linux; elsewhere the ordered build may fail to link.
//!
//! Then `--rounds` rounds (5 by default), each running the four servers in turn — floor, kernel,
//! ordered floor, ordered kernel, and the other way round every second round, so that a drift within
//! a round falls on both builds alike — on 32 HTTP connections, pinned as the comparison pins them, and
//! reading each server's own CPU per request (`bench-load http --pid`). Per server the median, and
//! per round the ratios kernel/floor, ordered kernel/ordered floor and ordered/plain of each server,
//! whose medians and ranges are printed: pairing the four in a round is what lets a change of a tenth
//! show through rounds that drift by more. Also the code pages of both builds (module
//! [`super`]). Written to `target/bench/layout.json`. `--no-build` reuses both builds, once a run has
//! made the ordered one (the file `ordered-build-linked` in `target/bench/layout` says it has).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use mcp_kernel_workspace as workspace;
use serde_json::{Value, json};

use super::super::report::{finish, median};
use super::super::servers::{Pinning, http_loop_args, run_load, start_http};
use super::super::{LOAD, build};
use super::{measure, ordering_file, symbols};

/// The two servers, floor first, as (name, binary).
const SERVERS: [(&str, &str); 2] = [("floor", "bench-floor"), ("kernel", "bench-kernel")];
/// Seconds of load per server and round before the measured window.
const WARMUP_S: &str = "1";
/// Seconds of the measured window per server and round.
const DURATION_S: &str = "5";
/// Seconds of load under callgrind when profiling.
const PROFILE_S: f64 = 3.0;

/// The command line, for a refused one.
const USAGE: &str = "usage: cargo xtask bench layout [--rounds N] [--no-build]";

/// The options: rounds, and whether to build (`--no-build` reuses both builds).
fn parse(args: &[String]) -> Result<(u32, bool), String> {
    let mut it = args.iter();
    if it.next().map(String::as_str) != Some("layout") {
        return Err(USAGE.into());
    }
    let (mut rounds, mut build) = (5, true);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--no-build" => build = false,
            "--rounds" => {
                let v = it.next().ok_or_else(|| format!("--rounds needs a value\n{USAGE}"))?;
                rounds = v
                    .parse::<u32>()
                    .ok()
                    .filter(|r| (1..=50).contains(r))
                    .ok_or_else(|| format!("--rounds: 1 to 50, not {v:?}"))?;
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok((rounds, build))
}

/// `cargo xtask bench layout …`.
pub(in super::super) fn run(args: &[String], root: &Path) -> Result<(), String> {
    let (rounds, build_first) = parse(args)?;
    super::require_tools(true)?;
    let manifest = root.join("benches/compare/Cargo.toml");
    let dir = root.join("target/bench/layout");
    let ordered_target = dir.join("target");
    let order_file = dir.join("hot-functions.txt");
    let linked = dir.join("ordered-build-linked");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let pinning = Pinning::detect();
    if build_first {
        build::build(&manifest, &SERVERS)?;
    }
    let plain = build::release_dir(&manifest, &SERVERS)?;
    let ordered = ordered_target.join("release");
    if build_first {
        let _ = std::fs::remove_file(&linked);
        std::fs::write(&order_file, "").map_err(|e| format!("{}: {e}", order_file.display()))?;
        ordered_build(&manifest, &ordered_target, &order_file)?;
        let mut lists = Vec::new();
        for (name, binary) in SERVERS {
            let hot =
                measure(&pinning, &ordered, binary, &dir.join(format!("{binary}.callgrind")), PROFILE_S)?;
            lists.push((name, symbols::hottest(&symbols::of(&ordered.join(binary))?, &hot.hot_in_binary)?));
        }
        std::fs::write(&order_file, ordering_file(lists))
            .map_err(|e| format!("{}: {e}", order_file.display()))?;
        ordered_build(&manifest, &ordered_target, &order_file)?;
        std::fs::write(&linked, "").map_err(|e| format!("{}: {e}", linked.display()))?;
    } else if !linked.exists() {
        return Err(format!(
            "no ordered build in {} yet: run `cargo xtask bench layout` without --no-build first",
            ordered_target.display()
        ));
    }
    let mut pages = serde_json::Map::new();
    for (release, build_name) in [(&plain, "plain"), (&ordered, "ordered")] {
        for (name, binary) in SERVERS {
            let profile_path = dir.join(format!("{binary}.{build_name}.callgrind"));
            let f = measure(&pinning, release, binary, &profile_path, PROFILE_S)?;
            eprintln!("xtask: bench: {build_name} {name}: {} code pages a request", f.hot_pages);
            pages.insert(format!("{build_name} {name}"), json!(f.hot_pages));
        }
    }
    let servers: [(&str, PathBuf); 4] = [
        ("floor", plain.join("bench-floor")),
        ("kernel", plain.join("bench-kernel")),
        ("ordered floor", ordered.join("bench-floor")),
        ("ordered kernel", ordered.join("bench-kernel")),
    ];
    let started = Instant::now();
    let mut cpu: Vec<[f64; 4]> = Vec::new();
    for round in 1..=rounds {
        let mut row = [0.0; 4];
        for i in turn(round) {
            let (name, binary) = &servers[i];
            row[i] = cpu_per_request(&pinning, binary, &plain.join(LOAD))
                .map_err(|e| format!("round {round}, {name}: {e}"))?;
        }
        eprintln!(
            "xtask: bench: round {round}: {}",
            servers
                .iter()
                .zip(row)
                .map(|((n, _), v)| format!("{n} {v:.1} µs"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        cpu.push(row);
    }
    report(root, &servers.map(|(n, _)| n), &cpu, Value::Object(pages), started.elapsed().as_secs_f64())
}

/// The order of the four servers in round `round` (from 1): as listed, then reversed every second
/// round.
fn turn(round: u32) -> [usize; 4] {
    if round % 2 == 1 { [0, 1, 2, 3] } else { [3, 2, 1, 0] }
}

/// Builds the servers and the load generator into `target` with lld ordering their functions by
/// `order_file`, the two servers cleaned there first so that they are linked again whatever the file
/// held at their last link.
fn ordered_build(manifest: &Path, target: &Path, order_file: &Path) -> Result<(), String> {
    let cargo = workspace::cargo_program();
    if target.join("release").exists() {
        let status = Command::new(&cargo)
            .args(["clean", "--release", "--manifest-path"])
            .arg(manifest)
            .arg("--target-dir")
            .arg(target)
            .args(["-p", "bench-kernel", "-p", "bench-floor"])
            .status()
            .map_err(|e| format!("cargo clean: {e}"))?;
        if !status.success() {
            return Err(format!("cargo clean of the ordered servers: {status}"));
        }
    }
    let flags = encoded_rustflags(
        std::env::var("CARGO_ENCODED_RUSTFLAGS").ok(),
        std::env::var("RUSTFLAGS").ok(),
        order_file,
    );
    eprintln!(
        "xtask: bench: building the servers with lld ordering their functions ({})",
        order_file.display()
    );
    let status = Command::new(&cargo)
        .env_remove("RUSTFLAGS")
        .env("CARGO_ENCODED_RUSTFLAGS", flags)
        .args(["build", "--release", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target)
        .args(["--bin", "bench-kernel", "--bin", "bench-floor", "--bin", LOAD])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("the ordered build failed: {status}"))
}

/// The flags of the ordered build, as `CARGO_ENCODED_RUSTFLAGS` (separated by 0x1f, so that a path
/// with a space stays one argument): the ones the environment gives (`CARGO_ENCODED_RUSTFLAGS` first,
/// as cargo reads them, else `RUSTFLAGS` split on whitespace), then lld's ordering by `order_file`.
fn encoded_rustflags(encoded: Option<String>, plain: Option<String>, order_file: &Path) -> String {
    let mut flags: Vec<String> = match (encoded, plain) {
        (Some(e), _) if !e.is_empty() => e.split('\x1f').map(str::to_owned).collect(),
        (_, Some(p)) => p.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    flags.extend([
        "-C".to_owned(),
        format!("link-arg=-Wl,--symbol-ordering-file={}", order_file.display()),
        "-C".to_owned(),
        "link-arg=-Wl,--no-warn-symbol-ordering".to_owned(),
    ]);
    flags.join("\x1f")
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

/// The ratios compared, as (label, numerator column, denominator column) of the four servers.
const RATIOS: [(&str, usize, usize); 4] = [
    ("kernel/floor", 1, 0),
    ("ordered kernel/ordered floor", 3, 2),
    ("ordered kernel/kernel", 3, 1),
    ("ordered floor/floor", 2, 0),
];

/// Each ratio's per-round values: `cpu` rows are rounds, columns the four servers.
fn ratios_by_round(cpu: &[[f64; 4]]) -> Vec<(&'static str, Vec<f64>)> {
    RATIOS.iter().map(|&(label, a, b)| (label, cpu.iter().map(|row| row[a] / row[b]).collect())).collect()
}

/// Prints the medians and the per-round ratios, and writes `target/bench/layout.json`.
fn report(
    root: &Path,
    names: &[&str; 4],
    cpu: &[[f64; 4]],
    pages: Value,
    elapsed: f64,
) -> Result<(), String> {
    let mut medians = serde_json::Map::new();
    println!("server CPU per request, HTTP/1.1, 32 connections (medians of {} rounds)", cpu.len());
    for (i, name) in names.iter().enumerate() {
        let column: Vec<f64> = cpu.iter().map(|row| row[i]).collect();
        let m = median(&column).unwrap_or(f64::NAN);
        println!("  {name:<16} {m:6.1} µs");
        medians.insert((*name).to_owned(), json!({"median_us": m, "runs": column}));
    }
    let mut ratios = serde_json::Map::new();
    println!("ratios, round by round (median, lowest–highest)");
    for (label, values) in ratios_by_round(cpu) {
        let m = median(&values).unwrap_or(f64::NAN);
        let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        println!("  {label:<30} {m:.2} ({lo:.2}–{hi:.2})");
        ratios.insert(label.to_owned(), json!({"median": m, "runs": values}));
    }
    let doc = json!({"cpu_us_per_request": medians, "ratios": ratios, "code_pages_per_request": pages});
    finish(root, "target/bench/layout.json", &doc, elapsed, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_default_to_five_rounds_with_a_build() {
        assert_eq!(parse(&args(&["layout"])).unwrap(), (5, true));
        assert_eq!(parse(&args(&["layout", "--rounds", "11", "--no-build"])).unwrap(), (11, false));
    }

    #[test]
    fn refuses_unknown_options_and_rounds_out_of_range() {
        for bad in [
            &["layout", "--rounds", "0"][..],
            &["layout", "--rounds", "51"],
            &["layout", "--rounds", "x"],
            &["layout", "--rounds"],
            &["layout", "--x"],
            &["footprint"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_second_round_runs_the_servers_the_other_way_round() {
        assert_eq!(turn(1), [0, 1, 2, 3]);
        assert_eq!(turn(2), [3, 2, 1, 0]);
        assert_eq!(turn(3), turn(1));
    }

    #[test]
    fn the_ordering_flags_follow_the_environments_and_keep_a_path_whole() {
        let file = Path::new("/a b/hot.txt");
        let order = "-C\x1flink-arg=-Wl,--symbol-ordering-file=/a b/hot.txt\x1f-C\x1flink-arg=-Wl,--no-warn-symbol-ordering";
        assert_eq!(encoded_rustflags(None, None, file), order);
        assert_eq!(
            encoded_rustflags(None, Some("-C  opt-level=2".into()), file),
            format!("-C\x1fopt-level=2\x1f{order}")
        );
        // The encoded form wins, as in cargo.
        assert_eq!(
            encoded_rustflags(Some("--cfg\x1fx y".into()), Some("-Dwarnings".into()), file),
            format!("--cfg\x1fx y\x1f{order}")
        );
    }

    #[test]
    fn each_ratio_pairs_servers_of_the_same_round() {
        // Columns: floor, kernel, ordered floor, ordered kernel.
        let cpu = [[10.0, 15.0, 10.0, 12.5], [20.0, 28.0, 16.0, 20.0]];
        let ratios = ratios_by_round(&cpu);
        assert_eq!(ratios[0], ("kernel/floor", vec![1.5, 1.4]));
        assert_eq!(ratios[1], ("ordered kernel/ordered floor", vec![1.25, 1.25]));
        assert_eq!(ratios[2].1, vec![12.5 / 15.0, 20.0 / 28.0]);
        assert_eq!(ratios[3].1, vec![1.0, 0.8]);
    }
}
