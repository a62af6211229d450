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
//! Then `--rounds` paired rounds (5 by default) of the four servers, the plain build's and the ordered
//! one's (module `rounds`), and the code pages of both builds (module [`super`]). Written to
//! `target/bench/layout.json`. `--no-build` reuses both builds, once a run has made the ordered one
//! (the file `ordered-build-linked` in `target/bench/layout` says it has).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use mcp_kernel_workspace as workspace;
use serde_json::{Value, json};

use super::super::LOAD;
use super::rounds::{self, Builds, SERVERS, Start};
use super::{Probe, measure, ordering_file, symbols};

/// Seconds of load under callgrind when profiling.
const PROFILE_S: f64 = 3.0;

/// The command line, for a refused one.
const USAGE: &str = "usage: cargo xtask bench layout [--rounds N] [--no-build]";

/// The options: rounds, and whether to build (`--no-build` reuses both builds).
fn parse(args: &[String]) -> Result<(u32, bool), String> {
    parse_rounds(args, "layout", USAGE)
}

/// The options of the subcommand `name` (`layout`, `pgo`): rounds (5 unless `--rounds N`, 1 to 50),
/// and whether to build (`--no-build`); `usage` for a refused command line.
pub(super) fn parse_rounds(args: &[String], name: &str, usage: &str) -> Result<(u32, bool), String> {
    let mut it = args.iter();
    if it.next().map(String::as_str) != Some(name) {
        return Err(usage.into());
    }
    let (mut rounds, mut build) = (5, true);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--no-build" => build = false,
            "--rounds" => {
                let v = it.next().ok_or_else(|| format!("--rounds needs a value\n{usage}"))?;
                rounds = v
                    .parse::<u32>()
                    .ok()
                    .filter(|r| (1..=50).contains(r))
                    .ok_or_else(|| format!("--rounds: 1 to 50, not {v:?}"))?;
            }
            other => return Err(format!("unknown option {other}\n{usage}")),
        }
    }
    Ok((rounds, build))
}

/// `cargo xtask bench layout …`.
pub(in super::super) fn run(args: &[String], root: &Path) -> Result<(), String> {
    let (rounds, build_first) = parse(args)?;
    super::require_tools(true)?;
    let Start { manifest, dir, pinning, plain } = rounds::start(root, "layout", build_first)?;
    let ordered_target = dir.join("target");
    let order_file = dir.join("hot-functions.txt");
    let linked = dir.join("ordered-build-linked");
    let ordered = ordered_target.join("release");
    if build_first {
        let _ = std::fs::remove_file(&linked);
        std::fs::write(&order_file, "").map_err(|e| format!("{}: {e}", order_file.display()))?;
        ordered_build(&manifest, &ordered_target, &order_file)?;
        let mut lists = Vec::new();
        for (name, binary) in SERVERS {
            let hot = measure(
                &pinning,
                &ordered,
                binary,
                &dir.join(format!("{binary}.callgrind")),
                &Probe::standard(PROFILE_S),
            )?;
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
            let f = measure(&pinning, release, binary, &profile_path, &Probe::standard(PROFILE_S))?;
            eprintln!("xtask: bench: {build_name} {name}: {} code pages a request", f.hot_pages);
            pages.insert(format!("{build_name} {name}"), json!(f.hot_pages));
        }
    }
    let started = Instant::now();
    let builds = Builds { plain: &plain, second: &ordered, name: "ordered" };
    let cpu = rounds::run(&pinning, &builds, rounds)?;
    rounds::report(
        root,
        "target/bench/layout.json",
        &builds,
        &cpu,
        ("code_pages_per_request", Value::Object(pages)),
        started,
    )
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
        &ordering_flags(order_file),
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

/// The flags of a build of the servers, as `CARGO_ENCODED_RUSTFLAGS` (separated by 0x1f, so that a
/// path with a space stays one argument): the ones the environment gives (`CARGO_ENCODED_RUSTFLAGS`
/// first, as cargo reads them, else `RUSTFLAGS` split on whitespace), then `extra`.
pub(super) fn encoded_rustflags(encoded: Option<String>, plain: Option<String>, extra: &[String]) -> String {
    let mut flags: Vec<String> = match (encoded, plain) {
        (Some(e), _) if !e.is_empty() => e.split('\x1f').map(str::to_owned).collect(),
        (_, Some(p)) => p.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    flags.extend_from_slice(extra);
    flags.join("\x1f")
}

/// lld's ordering of the functions by `order_file`, as rustc flags.
fn ordering_flags(order_file: &Path) -> [String; 4] {
    [
        "-C".to_owned(),
        format!("link-arg=-Wl,--symbol-ordering-file={}", order_file.display()),
        "-C".to_owned(),
        "link-arg=-Wl,--no-warn-symbol-ordering".to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;

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
    fn the_ordering_flags_follow_the_environments_and_keep_a_path_whole() {
        let file = Path::new("/a b/hot.txt");
        let order = "-C\x1flink-arg=-Wl,--symbol-ordering-file=/a b/hot.txt\x1f-C\x1flink-arg=-Wl,--no-warn-symbol-ordering";
        let flags = &ordering_flags(file);
        assert_eq!(encoded_rustflags(None, None, flags), order);
        assert_eq!(
            encoded_rustflags(None, Some("-C  opt-level=2".into()), flags),
            format!("-C\x1fopt-level=2\x1f{order}")
        );
        // The encoded form wins, as in cargo.
        assert_eq!(
            encoded_rustflags(Some("--cfg\x1fx y".into()), Some("-Dwarnings".into()), flags),
            format!("--cfg\x1fx y\x1f{order}")
        );
    }
}
