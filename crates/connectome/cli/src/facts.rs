//! `connectome facts`: call facts read from the LLVM IR rustc emits for the named packages of any Cargo
//! workspace (connectome [CK-13], docs/connectome-facts.md), a thin call of `connectome_facts::extract`.
//!
//! [CK-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::ffi::OsString;
use std::io::Write;
use std::time::Instant;

use connectome_facts::{CallFacts, ExtractError, FactsRequest, extract};

use crate::args::{Flag, Parsed, parse};
use crate::fail::{self, Failure};

/// The help of `connectome facts`.
pub const USAGE: &str = "\
connectome facts --package <package> [--package <package>…] [--manifest-path <Cargo.toml>]
                 [--target-dir <dir>] [--out <file>|-]

Builds the library of each named package alone with LLVM IR and reads which of its items call which
(the call facts the declared builder takes: `Declared::builder(..).facts(..)`). The packages are
named as cargo names them (`-p` is `--package`). The workspace's Cargo.lock is used as it is, never
updated; a workspace without one gets one resolved in `lock/` of the IR directory (--target-dir),
and its own tree is left untouched.
  --manifest-path  the workspace's Cargo.toml, or a member's (default: the one cargo finds here)
  --target-dir     where the IR builds go (default: connectome-ir in the workspace's target directory)
  --out            the facts file; stdout when absent or `-`
One progress line per package (`building <package> (k of n)`) and a summary go to stderr. When cargo
fails, what it printed comes first and the last line is this program's.
Exit codes: 0 written, 2 refused (usage, an unknown package, an out-of-date lock, a failed build),
1 output not written. A refusal you can fix says how.
";

/// The flags of `facts`.
const FLAGS: &[Flag] = &[
    Flag { long: "--package", short: Some("-p"), repeat: true },
    Flag::once("--manifest-path"),
    Flag::once("--target-dir"),
    Flag::once("--out"),
];

/// The refusal of an extraction; cargo's own output, when it failed, goes to stderr first.
fn refused(error: &ExtractError) -> Failure {
    if let Some(output) = error.cargo_output() {
        eprint!("{output}");
        if !output.ends_with('\n') {
            eprintln!();
        }
    }
    Failure::Input(format!("facts: {}", fail::one_line(&error.to_string())))
}

/// The call facts of `packages`, in the workspace `--manifest-path` names, built under `--target-dir`
/// (the flags of `facts`, which `declare` takes too); progress goes to stderr as `connectome
/// <command>: …`.
pub(crate) fn read_packages(
    parsed: &Parsed,
    packages: Vec<String>,
    command: &str,
) -> Result<CallFacts, Failure> {
    let mut request = FactsRequest::new(packages);
    if let Some(manifest) = parsed.path("--manifest-path") {
        request = request.manifest_path(manifest);
    }
    if let Some(dir) = parsed.path("--target-dir") {
        request = request.target_dir(dir);
    }
    // One line each, whatever the paths it names hold (a newline, an escape sequence).
    let mut report = |progress: connectome_facts::Progress| {
        eprintln!("connectome {command}: {}", fail::printable(&progress.to_string()));
    };
    extract(&request, &mut report).map_err(|e| refused(&e))
}

/// Runs `connectome facts` with the arguments after `facts`.
pub fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<(), Failure> {
    let parsed = parse("facts", FLAGS, args)?;
    if parsed.help {
        return fail::write(None, USAGE.as_bytes(), stdout);
    }
    parsed.exactly(&[])?;
    let packages = parsed.texts("--package")?;
    if packages.is_empty() {
        return Err(parsed.usage("no --package given"));
    }
    let started = Instant::now();
    let facts = read_packages(&parsed, packages, "facts")?;
    let took = started.elapsed();
    let out = parsed.path("--out");
    fail::write(out.as_deref(), &facts.to_json(), stdout)?;
    let written = match out.as_deref().filter(|p| p.as_os_str() != "-") {
        Some(path) => path.display().to_string(),
        None => "stdout".to_owned(),
    };
    let summary = connectome_facts::summary(&facts);
    eprintln!("connectome facts: {summary}, in {:.2} s → {written}", took.as_secs_f64());
    Ok(())
}
