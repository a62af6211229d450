//! Project tasks, run as `cargo xtask <task>`.
//!
//! - `ci`: the gate a submission must pass — `cargo fmt --check`, `cargo clippy --all-targets
//!   -D warnings`, then every test of the workspace.
#![forbid(unsafe_code)]

use std::process::{Command, ExitCode};

/// One step of a task: a cargo invocation and what it is for.
struct Step {
    what: &'static str,
    args: &'static [&'static str],
}

const CI: &[Step] = &[
    Step { what: "formatting", args: &["fmt", "--all", "--check"] },
    Step { what: "lints", args: &["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"] },
    Step { what: "tests", args: &["test", "--workspace", "--all-targets", "--locked"] },
    Step { what: "doc tests", args: &["test", "--workspace", "--doc", "--locked"] },
];

fn run(steps: &[Step]) -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    for step in steps {
        eprintln!("xtask: {} — cargo {}", step.what, step.args.join(" "));
        match Command::new(&cargo).args(step.args).status() {
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
    eprintln!("xtask: all steps passed");
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: cargo xtask <task>\n\ntasks:\n  ci    fmt check, clippy -D warnings, all tests");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => run(CI),
        _ => usage(),
    }
}
