//! `cargo xtask connectome facts --crate <name>… [--out <file>|-]`, also `--manifest-path <Cargo.toml>`
//! and `--target-dir <dir>`: call facts read from the LLVM IR rustc emits for the crates in scope
//! (docs/connectome.md CK-6, CK-13; docs/connectome-facts.md), a thin call of `connectome_facts::extract`.
//!
//! The library does the work: it reads the workspace with `cargo metadata`, builds each package's
//! library alone with IR and reads the facts. This task parses the command line, prints the progress
//! and a summary on stderr, and writes the file with
//! [`CallFacts::to_json`](connectome_facts::CallFacts::to_json).

use std::path::PathBuf;
use std::time::Instant;

use connectome_facts::{ExtractError, FactsRequest, Workspace};

/// The usage line of the task.
pub const USAGE: &str = "connectome facts --crate <package> [--crate <package>…] [--out <file>|-] \
                         [--manifest-path <Cargo.toml>] [--target-dir <dir>]";

/// The command line of the task.
#[derive(Debug, Default, PartialEq, Eq)]
struct Args {
    packages: Vec<String>,
    out: Option<String>,
    manifest_path: Option<PathBuf>,
    target_dir: Option<PathBuf>,
}

/// Reads the arguments after `facts`.
fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().cloned().ok_or_else(|| format!("{arg} needs {what}"));
        match arg.as_str() {
            "--crate" => parsed.packages.push(value("a package name")?),
            "--out" => parsed.out = Some(value("a file (or - for stdout)")?),
            "--manifest-path" => parsed.manifest_path = Some(value("a Cargo.toml")?.into()),
            "--target-dir" => parsed.target_dir = Some(value("a directory")?.into()),
            other => return Err(format!("unknown argument {other:?}; usage: cargo xtask {USAGE}")),
        }
    }
    if parsed.packages.is_empty() {
        return Err(format!("no --crate given; usage: cargo xtask {USAGE}"));
    }
    Ok(parsed)
}

/// The one-line message of `error`, then what cargo said, if it was a cargo run that failed.
fn describe(error: &ExtractError) -> String {
    match error.cargo_output() {
        Some(output) => format!("{error}:\n{output}"),
        None => error.to_string(),
    }
}

/// Runs the task with the arguments after `facts`.
pub fn run(args: &[String]) -> Result<(), String> {
    let args = parse(args)?;
    let mut request = FactsRequest::new(args.packages);
    if let Some(manifest) = args.manifest_path {
        request = request.manifest_path(manifest);
    }
    if let Some(dir) = args.target_dir {
        request = request.target_dir(dir);
    }
    let workspace = Workspace::read(&request).map_err(|e| describe(&e))?;
    let started = Instant::now();
    let facts = workspace
        .extract(&mut |progress| eprintln!("xtask: connectome facts: {progress}"))
        .map_err(|e| describe(&e))?;
    let bytes = facts.to_json();
    let took = started.elapsed();
    let written = match args.out.as_deref() {
        Some("-") => {
            use std::io::Write;
            std::io::stdout().write_all(&bytes).map_err(|e| format!("stdout: {e}"))?;
            "stdout".to_owned()
        }
        other => {
            let path = other.map_or_else(
                || workspace.target_directory().join("connectome").join("facts.json"),
                PathBuf::from,
            );
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            path.display().to_string()
        }
    };
    let summary = connectome_facts::summary(&facts);
    eprintln!("xtask: connectome facts: {summary}, in {:.2} s → {written}", took.as_secs_f64());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Args, parse};

    fn args(line: &[&str]) -> Result<Args, String> {
        parse(&line.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn ck13_the_task_reads_crates_out_manifest_path_and_target_dir() {
        let line = ["--crate", "a", "--manifest-path", "w/Cargo.toml", "--crate", "b", "--target-dir", "ir"];
        let want = Args {
            packages: vec!["a".to_owned(), "b".to_owned()],
            out: Some("-".to_owned()),
            manifest_path: Some("w/Cargo.toml".into()),
            target_dir: Some("ir".into()),
        };
        assert_eq!(args(&[&line[..], &["--out", "-"]].concat()), Ok(want));
        assert!(args(&[]).is_err_and(|e| e.starts_with("no --crate given")));
        assert!(args(&["--crate"]).is_err_and(|e| e == "--crate needs a package name"));
        assert!(
            args(&["--crate", "a", "--bogus"]).is_err_and(|e| e.starts_with("unknown argument \"--bogus\""))
        );
    }
}
