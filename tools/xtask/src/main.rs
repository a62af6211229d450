//! Project tasks, run as `cargo xtask <task>`.
//!
//! - `ci`: the gate a submission must pass — `cargo fmt --check`, `cargo clippy --all-targets
//!   -D warnings`, the examples (the stdio wiring tests spawn `weather`), every test of the workspace, the
//!   docs (`cargo doc` with `RUSTDOCFLAGS="-D warnings"`), a check that the fuzz targets build, the
//!   dependency boundary, the census, then the README's and the manual's exchanges and the README's host.
//! - `conformance [--write]`: the official MCP conformance suite against the harness, and the README rows.
//! - `edge [oauth|browser|proxy|traces|redis]`: the ignored tests that need outside programs — rmcp's OAuth
//!   client against a real authorization server (Node 22, `oidc-provider`), a real browser (Chromium),
//!   stateless instances behind a real proxy (nginx), and instances sharing state through Redis.
//! - `boundary`: the dependency direction of the design, read from `cargo metadata`.
//! - `census`: line censuses over the library code — signs, no authority, no client, no hidden source,
//!   one digest and one id site,
//!   the tests the threat model and `docs/will-not-implement.md` name, the README split, and that
//!   every cited rule identifier and docs path resolves (see `docs/census.md`).
//! - `package [--no-test]`: every published crate's metadata checked, `cargo package` with verification,
//!   then each crate's tests run from its `.crate` alone, away from the repository (see `package.rs`).
//! - `readme [--print]`: runs the copy-paste exchanges of the README and the manual as written and
//!   compares the output, then builds the README's host and runs its test in a new crate.
//! - `bench …`: the benchmark harness (`benches/harness/`, package `mcp-kernel-bench`), run with the
//!   same arguments (see `docs/performance.md`):
//!   - `bench compare [--quick] [--rounds N] [--only kernel,rmcp,floor] [--hold | --drip N | --listen N[,N…] | --tasks N[,N…]]`:
//!     mcp-kernel against rmcp and a floor server, interleaved and pinned;
//!   - `bench curves [--quick] [--curve NAME,…]`: how cost grows, tables and SVG plots;
//!   - `bench features [--rounds N]`: what each feature of the facade costs a host (build time, crates,
//!     program size), clean release builds side by side;
//!   - `bench footprint [--only kernel,floor] [--no-build] [--seconds S] [--connections N] [--d1
//!     BYTES,WAYS,LINE] [--order FILE]`: how much code one HTTP request runs through in each server,
//!     and the cache misses and estimated cycles it costs, under callgrind (`--d1`: a data cache of
//!     another shape); `--order` writes its hot functions for lld;
//!   - `bench layout [--rounds N] [--no-build]`: both servers as linked and laid out by lld from a
//!     profile of their own, their CPU per request side by side;
//!   - `bench pgo [--rounds N] [--no-build]`: both servers as linked and optimized from a profile of
//!     their own (`-C profile-use`), their CPU per request side by side;
//!   - `bench touched [--only kernel,floor] [--no-build] [--seconds S]`: the distinct lines of data one
//!     HTTP request touches in each server, by mapping, beside the L1 data cache (a lackey trace).
//! - `connectome facts --crate <package>… [--out <file>|-]`, also `--manifest-path <Cargo.toml>` and
//!   `--target-dir <dir>`: call facts read from the LLVM IR of the named crates, by the
//!   `connectome-facts` library (see `docs/connectome-facts.md`).
#![forbid(unsafe_code)]

mod boundary;
mod census;
mod conformance;
mod connectome_facts;
mod edge;
mod node;
mod package;
mod readme;

use std::process::{Command, ExitCode};

use mcp_kernel_workspace as workspace;

/// One step of a task: a cargo invocation, the environment it adds, and what it is for.
struct Step {
    what: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

/// The facade's `connectome` feature, off by default (docs/packaging.md): the examples and the tests of
/// the connectome surface need it, so every step below that selects the workspace turns it on.
const OFF_BY_DEFAULT: &str = "mcp-kernel/connectome,mcp-kernel/redis";
/// The `opentelemetry` features of the router and the HTTP transport, with [`OFF_BY_DEFAULT`], as
/// `cargo --features` takes them.
const OTEL_FEATURES: &str =
    "mcp-kernel/connectome,mcp-kernel-router/opentelemetry,mcp-kernel-http/opentelemetry";
// The `opentelemetry` steps select the whole workspace (`--workspace`), as the steps before them do,
// although they lint and test two crates: cargo unifies features over the packages selected, so a
// narrower selection (`-p mcp-kernel-router -p mcp-kernel-http`) built every shared dependency (tokio,
// hyper, the JSON Schema validator, …) a second time, with other features, into `target/`.
const OTEL_CLIPPY: &[&str] = &[
    "clippy",
    "--locked",
    "--workspace",
    "--all-targets",
    "--features",
    OTEL_FEATURES,
    "--",
    "-D",
    "warnings",
];
const OTEL_TESTS: &[&str] =
    &["test", "--locked", "--workspace", "--features", OTEL_FEATURES, "--test", "trace_opentelemetry"];
// The guide's doctest selects no package, as the README's `cargo run --example notes` does: both then
// build for the default members, and share what they build.
const OTEL_DOC_TESTS: &[&str] =
    &["test", "--locked", "--features", "mcp-kernel/opentelemetry", "--doc", "manual::tracing"];

const CI: &[Step] = &[
    Step { what: "formatting", args: &["fmt", "--all", "--check"], env: &[] },
    Step {
        what: "lints",
        args: &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--features",
            OFF_BY_DEFAULT,
            "--",
            "-D",
            "warnings",
        ],
        env: &[],
    },
    // `cargo test --all-targets` builds examples with the test harness only; the stdio wiring tests
    // spawn the real `weather` binary, so the examples are built as programs first.
    Step {
        what: "examples",
        args: &["build", "--workspace", "--examples", "--locked", "--features", OFF_BY_DEFAULT],
        env: &[],
    },
    Step {
        what: "tests",
        args: &["test", "--workspace", "--all-targets", "--locked", "--features", OFF_BY_DEFAULT],
        env: &[],
    },
    Step {
        what: "doc tests",
        args: &["test", "--workspace", "--doc", "--locked", "--features", OFF_BY_DEFAULT],
        env: &[],
    },
    // The `opentelemetry` feature (docs/tracing.md) is off in the steps above: its lints, its tests and
    // the guide's doctest run here, for the crates that have it.
    Step { what: "opentelemetry lints", args: OTEL_CLIPPY, env: &[] },
    Step { what: "opentelemetry tests", args: OTEL_TESTS, env: &[] },
    Step { what: "opentelemetry doc tests", args: OTEL_DOC_TESTS, env: &[] },
    // Every doc link resolves (the workspace denies `rustdoc::broken_intra_doc_links`), and no other
    // rustdoc warning is let through (an HTML-looking `<name>` in `docs/*.md`, which the manual includes).
    Step {
        what: "docs",
        args: &["doc", "--workspace", "--no-deps", "--locked", "--features", OFF_BY_DEFAULT],
        env: &[("RUSTDOCFLAGS", "-D warnings")],
    },
    // The fuzz targets are their own workspace (`tools/fuzz/`); checking them on stable keeps them building
    // as the checks they call change, without libFuzzer's nightly flags (see docs/fuzzing.md).
    Step {
        what: "fuzz targets",
        args: &["check", "--manifest-path", "tools/fuzz/Cargo.toml", "--locked", "--bins"],
        env: &[],
    },
];

fn run(steps: &[Step]) -> ExitCode {
    let cargo = workspace::cargo_program();
    for step in steps {
        let env: String = step.env.iter().map(|(name, value)| format!("{name}={value:?} ")).collect();
        eprintln!("xtask: {} — {env}cargo {}", step.what, step.args.join(" "));
        match Command::new(&cargo).args(step.args).envs(step.env.iter().copied()).status() {
            Ok(status) if status.success() => {}
            Ok(status) => {
                eprintln!("xtask: {} failed ({status})", step.what);
                return ExitCode::FAILURE;
            }
            Err(error) => {
                eprintln!("xtask: could not run cargo: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

fn readme(print: bool) -> ExitCode {
    match readme::check(print) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: readme: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask bench …`: the benchmark harness's program (`benches/harness/`), built like this task
/// and run with the same arguments; it reports its own errors.
fn bench(args: &[String]) -> ExitCode {
    let status = Command::new(workspace::cargo_program())
        .args(["run", "--quiet", "--package", "mcp-kernel-bench", "--"])
        .args(args)
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("xtask: bench: could not run cargo: {error}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: cargo xtask <task>\n\ntasks:\n  ci                 fmt check, clippy -D warnings, all tests (and the opentelemetry feature's), fuzz targets build, boundary, census,\n                     the README exchange\n  conformance [--write]  the official conformance suite (Node 22, npm), the README rows (each revision's, the\n                     tasks extension's)\n  edge [oauth|browser|proxy|traces|redis]  the ignored edge tests: rmcp OAuth against oidc-provider (Node 22),\n                     a real browser (Chromium), three instances behind nginx, one trace across them,\n                     three instances sharing notifications and tasks through Redis (redis-server)\n  boundary           the dependency direction: sans-I/O crates, no HTTP client, transports apart,\n                     a stdio host free of HTTP, the facts reader free of HTTP\n                     and runtimes, hash/MAC crates in two crates only\n  census             signs, no authority, no client, no hidden source, one digest and id site,\n                     named tests, the README split, the cited rules and paths\n  package [--no-test]  metadata, cargo package with verification, then every crate's tests from its\n                     .crate alone, away from the repository\n  readme [--print]   run the README's and the manual's exchanges and compare (or print) their output;\n                     build the README's host and run its test in a new crate\n  bench compare [--quick] [--rounds N] [--only kernel,rmcp,floor] [--no-build] [--no-payload] [--hold | --drip N | --listen N[,N…] | --tasks N[,N…] | --redis | --sessions]\n                     kernel vs rmcp vs floor servers, interleaved, the server's CPU per request first (--listen: the kernel's listen streams; --tasks: its tasks;\n                     --redis: tasks and listens over Redis; --sessions: legacy sessions); writes target/bench/compare*.json\n  bench curves [--quick] [--curve NAME,…] [--only …] [--no-build]\n                     how cost grows (connections, h2c, payload, catalog, idle, drip, listen fan-out, live tasks, sessions); tables and SVG plots\n  bench features [--rounds N]\n                     what each facade feature costs a host: clean release builds, time, crates, size\n  bench footprint [--only kernel,floor] [--no-build] [--seconds S] [--connections N] [--d1 BYTES,WAYS,LINE] [--order FILE]\n                     how much code one HTTP request runs through, under callgrind (valgrind): instructions,\n                     distinct hot instructions, code lines and pages, simulated cache misses (--d1: a first-level\n                     data cache of that shape), estimated cycles; --order writes the hot functions for lld\n  bench layout [--rounds N] [--no-build]\n                     kernel and floor as linked and with their hot functions laid out together by lld (own profile),\n                     their CPU per request side by side, round by round; writes target/bench/layout.json\n  bench pgo [--rounds N] [--no-build]\n                     kernel and floor as linked and optimized from a profile of their own (-C profile-use, llvm-tools),\n                     estimated cycles and CPU per request side by side, round by round; writes target/bench/pgo.json\n  bench touched [--only kernel,floor] [--no-build] [--seconds S]\n                     the distinct 64-byte lines of data one HTTP request touches, by mapping, beside the L1 data cache,\n                     from a lackey trace (valgrind, nm); writes target/bench/touched.json\n  connectome facts --crate <package>… [--out <file>|-] [--manifest-path <Cargo.toml>] [--target-dir <dir>]\n                     call facts from the crates' LLVM IR; writes target/connectome/facts.json"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Every task but `connectome facts` (whose `--out` is relative to where it was started) runs from
    // the workspace root, wherever `cargo xtask` was started.
    if args.first().map(String::as_str) != Some("connectome") {
        let root = workspace::root();
        if let Err(error) = std::env::set_current_dir(&root) {
            eprintln!("xtask: cannot enter the workspace root {}: {error}", root.display());
            return ExitCode::FAILURE;
        }
    }
    match args.first().map(String::as_str) {
        Some("ci") => {
            let code = run(CI);
            if code != ExitCode::SUCCESS {
                return code;
            }
            if let Err(error) = boundary::check() {
                eprintln!("xtask: boundary: {error}");
                return ExitCode::FAILURE;
            }
            if let Err(error) = census::run() {
                eprintln!("xtask: census:\n{error}");
                return ExitCode::FAILURE;
            }
            let code = readme(false);
            if code == ExitCode::SUCCESS {
                eprintln!("xtask: all steps passed");
            }
            code
        }
        Some("conformance") => match conformance::run(args.get(1).map(String::as_str) == Some("--write")) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("xtask: {error}");
                ExitCode::FAILURE
            }
        },
        Some("edge") => match edge::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("xtask: edge: {error}");
                ExitCode::FAILURE
            }
        },
        Some("boundary") => match boundary::check() {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("xtask: boundary: {error}");
                ExitCode::FAILURE
            }
        },
        Some("census") => match census::run() {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("xtask: census:\n{error}");
                ExitCode::FAILURE
            }
        },
        Some("bench") => bench(&args[1..]),
        Some("connectome") if args.get(1).map(String::as_str) == Some("facts") => {
            match connectome_facts::run(&args[2..]) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("xtask: connectome facts: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("package") => match package::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("xtask: package: {error}");
                ExitCode::FAILURE
            }
        },
        Some("readme") => readme(args.get(1).map(String::as_str) == Some("--print")),
        _ => usage(),
    }
}
