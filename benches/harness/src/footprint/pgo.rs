//! `cargo xtask bench pgo [--rounds N] [--no-build]`: what profile-guided optimization changes, for
//! the floor and the kernel alike.
//!
//! Three builds of `bench-kernel` and `bench-floor` from the same source: as `cargo build --release`
//! makes them (the compare workspace's own target); instrumented (`-C profile-generate`, in
//! `target/bench/pgo/generate`); and optimized from the instrumented servers' profile (`-C
//! profile-use`, in `target/bench/pgo/target`), so that the comparison's binaries stay as a host gets
//! them. The profile is each instrumented server under `bench-load http` on 32 connections, then
//! interrupted: both servers exit at `SIGINT`, and an instrumented program writes its counts as it
//! exits. The toolchain's `llvm-profdata` (`rustup component add llvm-tools`) merges both servers'
//! counts into one file, whose name carries the time it was made: cargo, seeing the flag change,
//! rebuilds every crate with the new profile; older profiles are removed. The flags go in
//! `CARGO_ENCODED_RUSTFLAGS`, after any the environment gives (as `bench layout`'s do), so a
//! `build.rustflags` of cargo's configuration applies to the plain build only. Build scripts and
//! procedural macros are instrumented too (no `--target` is given); their counts are left out of
//! the profile.
//!
//! Then each build's cycles a request as callgrind's cache simulation estimates them (module
//! [`super`]), and `--rounds` paired rounds of the four servers (module `rounds`). Written to
//! `target/bench/pgo.json`. `--no-build` reuses the builds, once a run has made the profiled one (the
//! file `profiled-build` in `target/bench/pgo` names its profile).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_kernel_workspace as workspace;
use serde_json::{Value, json};

use super::super::LOAD;
use super::super::servers::{Pinning, http_loop_args, run_load, start_http};
use super::layout::{encoded_rustflags, parse_rounds};
use super::rounds::{self, Builds, SERVERS, Start};
use super::{Probe, estimated_cycles, measure};

/// Seconds of load on an instrumented server: a warm-up, then the counted window.
const PROFILE_LOAD: (&str, &str) = ("1", "4");
/// Seconds of load under callgrind for the estimate.
const ESTIMATE_S: f64 = 3.0;
/// The longest wait for an interrupted server to write its profile and exit.
const EXIT_WAIT: Duration = Duration::from_secs(30);

/// The command line, for a refused one.
const USAGE: &str = "usage: cargo xtask bench pgo [--rounds N] [--no-build]";

/// `cargo xtask bench pgo …`.
pub(in super::super) fn run(args: &[String], root: &Path) -> Result<(), String> {
    let (rounds, build_first) = parse_rounds(args, "pgo", USAGE)?;
    super::require_tools(false)?;
    let profdata = if build_first { Some(llvm_profdata()?) } else { None };
    let Start { manifest, dir, pinning, plain } = rounds::start(root, "pgo", build_first)?;
    let built = dir.join("profiled-build");
    let profiled = dir.join("target/release");
    if build_first {
        let _ = std::fs::remove_file(&built);
        let counts = dir.join("counts");
        let generate = dir.join("generate");
        let option = format!("profile-generate={}", counts.display());
        build_with(&manifest, &generate, &option, "instrumented", false)?;
        // The build's own scripts, instrumented too, wrote counts of their runs there: only the
        // servers' are wanted.
        let _ = std::fs::remove_dir_all(&counts);
        std::fs::create_dir_all(&counts).map_err(|e| format!("{}: {e}", counts.display()))?;
        for (_, binary) in SERVERS {
            profile(&pinning, &generate.join("release").join(binary), &plain.join(LOAD), &counts)?;
        }
        remove_old_profiles(&dir)?;
        let made = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let merged = dir.join(format!("profile-{made}.profdata"));
        merge(profdata.as_deref().unwrap_or(Path::new("llvm-profdata")), &counts, &merged)?;
        let option = format!("profile-use={}", merged.display());
        build_with(&manifest, &dir.join("target"), &option, "profiled", true)?;
        std::fs::write(&built, merged.display().to_string())
            .map_err(|e| format!("{}: {e}", built.display()))?;
    } else if !built.exists() || SERVERS.iter().any(|(_, binary)| !profiled.join(binary).exists()) {
        return Err(format!(
            "no profiled build in {} yet: run `cargo xtask bench pgo` without --no-build first",
            profiled.display()
        ));
    }
    let mut estimates = serde_json::Map::new();
    for (release, build_name) in [(&plain, "plain"), (&profiled, "profiled")] {
        for (name, binary) in SERVERS {
            let profile_path = dir.join(format!("{binary}.{build_name}.callgrind"));
            let cycles = estimated_cycles(&measure(
                &pinning,
                release,
                binary,
                &profile_path,
                &Probe::standard(ESTIMATE_S),
            )?);
            eprintln!("xtask: bench: {build_name} {name}: {cycles:.0} estimated cycles a request");
            estimates.insert(format!("{build_name} {name}"), json!(cycles));
        }
    }
    let started = Instant::now();
    let builds = Builds { plain: &plain, second: &profiled, name: "profiled" };
    let cpu = rounds::run(&pinning, &builds, rounds)?;
    let extra = ("estimated_cycles_per_request", Value::Object(estimates));
    rounds::report(root, "target/bench/pgo.json", &builds, &cpu, extra, started)
}

/// The `llvm-profdata` of the toolchain that builds the servers (its LLVM reads their counts), from
/// `rustup component add llvm-tools`.
fn llvm_profdata() -> Result<PathBuf, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let ask = |args: &[&str]| -> Result<String, String> {
        let out = Command::new(&rustc).args(args).output().map_err(|e| format!("{rustc}: {e}"))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let sysroot = ask(&["--print", "sysroot"])?;
    let version = ask(&["-vV"])?;
    let host = version.lines().find_map(|l| l.strip_prefix("host: ")).ok_or("rustc -vV names no host")?;
    let tool = Path::new(sysroot.trim()).join("lib/rustlib").join(host.trim()).join("bin/llvm-profdata");
    if tool.exists() {
        Ok(tool)
    } else {
        Err(format!("{} is missing (rustup component add llvm-tools)", tool.display()))
    }
}

/// Builds the servers (and with `load` the load generator, which the estimate runs beside them) into
/// `target` with the rustc codegen option `option` (`profile-generate=…`, `profile-use=…`) added to
/// the environment's flags.
fn build_with(manifest: &Path, target: &Path, option: &str, what: &str, load: bool) -> Result<(), String> {
    let flags = encoded_rustflags(
        std::env::var("CARGO_ENCODED_RUSTFLAGS").ok(),
        std::env::var("RUSTFLAGS").ok(),
        &["-C".to_owned(), option.to_owned()],
    );
    eprintln!("xtask: bench: building the {what} servers ({option})");
    let status = Command::new(workspace::cargo_program())
        .env_remove("RUSTFLAGS")
        .env("CARGO_ENCODED_RUSTFLAGS", flags)
        .args(["build", "--release", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target)
        .args(["--bin", "bench-kernel", "--bin", "bench-floor"])
        .args(if load { &["--bin", LOAD][..] } else { &[] })
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("the {what} build failed: {status}"))
}

/// Loads the instrumented `binary` on 32 connections, then interrupts it and waits for it to write its
/// counts into `counts` and exit 0.
fn profile(pinning: &Pinning, binary: &Path, load: &Path, counts: &Path) -> Result<(), String> {
    let name = binary.file_name().and_then(|n| n.to_str()).unwrap_or("server");
    let pattern = counts.join(format!("{name}-%p.profraw")).display().to_string();
    let mut server = start_http(pinning, binary, &[("LLVM_PROFILE_FILE", pattern)])?;
    let pid = server.child.id().to_string();
    eprintln!("xtask: bench: profiling {name}");
    let result =
        run_load(&pinning.command(1, load, &http_loop_args(&server.url, &pid, "32", PROFILE_LOAD, "call")))?;
    if result["errors"].as_u64().unwrap_or(0) > 0 {
        return Err(format!("{name}: {} errors under the profiling load", result["errors"]));
    }
    let sent = Command::new("kill").args(["-INT", &pid]).stderr(Stdio::null()).status();
    if !sent.is_ok_and(|s| s.success()) {
        return Err(format!("{name}: could not interrupt process {pid}"));
    }
    let started = Instant::now();
    let status = loop {
        match server.child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < EXIT_WAIT => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => return Err(format!("{name} did not exit within {EXIT_WAIT:?} of its interrupt")),
            Err(e) => return Err(format!("{name}: waiting for it to exit: {e}")),
        }
    };
    let written = std::fs::read_dir(counts)
        .map_err(|e| format!("{}: {e}", counts.display()))?
        .filter_map(Result::ok)
        .any(|entry| entry.file_name().to_string_lossy().starts_with(&format!("{name}-")));
    if !status.success() || !written {
        return Err(format!("{name} exited with {status} and wrote no profile in {}", counts.display()));
    }
    Ok(())
}

/// Removes the merged profiles of earlier runs (`profile-*.profdata` in `dir`).
fn remove_old_profiles(dir: &Path) -> Result<(), String> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(Result::ok)
    {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("profile-") && name.ends_with(".profdata") {
            std::fs::remove_file(entry.path()).map_err(|e| format!("{}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Merges the servers' counts in `counts` (`bench-*.profraw`) into `merged`.
fn merge(profdata: &Path, counts: &Path, merged: &Path) -> Result<(), String> {
    let mut raw: Vec<PathBuf> = std::fs::read_dir(counts)
        .map_err(|e| format!("{}: {e}", counts.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| is_server_counts(path))
        .collect();
    raw.sort();
    if raw.is_empty() {
        return Err(format!("no server wrote its counts in {}", counts.display()));
    }
    let status = Command::new(profdata)
        .arg("merge")
        .arg("-o")
        .arg(merged)
        .args(&raw)
        .status()
        .map_err(|e| format!("{}: {e}", profdata.display()))?;
    status.success().then_some(()).ok_or_else(|| format!("llvm-profdata merge: {status}"))
}

/// Whether `path` holds a benchmark server's counts (`bench-….profraw`, as [`profile`] names them).
fn is_server_counts(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("bench-") && name.ends_with(".profraw")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;

    #[test]
    fn options_are_rounds_and_no_build_under_its_own_name() {
        assert_eq!(parse_rounds(&args(&["pgo"]), "pgo", USAGE).unwrap(), (5, true));
        assert_eq!(
            parse_rounds(&args(&["pgo", "--rounds", "9", "--no-build"]), "pgo", USAGE).unwrap(),
            (9, false)
        );
        for bad in [&["layout"][..], &["pgo", "--rounds", "0"], &["pgo", "--order", "x"]] {
            assert!(parse_rounds(&args(bad), "pgo", USAGE).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn merges_only_the_servers_counts_and_reports_a_merge_that_fails() {
        assert!(is_server_counts(Path::new("/c/bench-kernel-412.profraw")));
        // A build script's counts, and anything else, are left out.
        assert!(!is_server_counts(Path::new("/c/default_1055_0.profraw")));
        assert!(!is_server_counts(Path::new("/c/bench-kernel.txt")));
        let dir = std::env::temp_dir().join(format!("mcp-kernel-pgo-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("default_1_0.profraw"), "").unwrap();
        let err = merge(Path::new("false"), &dir, &dir.join("out.profdata")).unwrap_err();
        assert!(err.contains("no server wrote"), "{err}");
        std::fs::write(dir.join("bench-floor-7.profraw"), "").unwrap();
        // `false` stands for a merge that fails: its status is reported, not ignored.
        let err = merge(Path::new("false"), &dir, &dir.join("out.profdata")).unwrap_err();
        assert!(err.contains("llvm-profdata merge"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
