//! `connectome`: the connectome's command line. `facts` reads call facts from a Cargo workspace;
//! `declare` builds the declared export from a server's catalog export and those facts;
//! `diff`, `effective`, `merge`, `reach` and `verify` compute over the canonical exports; `render`
//! draws them (the `connectome-render` library). See `connectome --help` and docs/connectome.md,
//! "Your own host, step by step".

#![forbid(unsafe_code)]

mod args;
mod catalog;
mod declare;
mod facts;
mod fail;
mod graphs;
mod merge;
mod reach;
mod render;
mod verify;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use connectome_render::escape::excerpt;

use crate::fail::Failure;

/// The help of `connectome`.
const USAGE: &str = "\
connectome <command> [arguments]   (connectome <command> --help for each)

Commands:
  facts      call facts of a Cargo workspace's packages, read from the IR rustc emits
  declare    a server's catalog export and the call facts: the declared export
  render     draw exports as Mermaid, DOT or one HTML page; the effective export as SVG or DOT
  diff       a declared export against an observed one: the diff record
  effective  the observed counts laid onto the declared graph: the effective export
  merge      several instances' observed exports (or earlier merges) into one federation
  reach      reachable, reachable_without, dominates, mandatory_pass over one export
  verify     re-hash a document and say whether its bytes are canonical

Every command reads and writes the canonical bytes only (declare reads a catalog export and call
facts, strictly), and refuses bad input with one line on stderr. Exit codes: 0 done, 2 refused (usage or input), 1 output not written, 3 (verify) valid but
not canonical or not hashing to --hash.
";

/// Runs the subcommand `args` names; `Ok` carries render's own exit code.
fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<u8, Failure> {
    let Some(command) = args.first() else {
        return Err(Failure::usage(
            "",
            "missing command: facts, declare, render, diff, effective, merge, reach or verify",
        ));
    };
    let rest = &args[1..];
    let done = |r: Result<(), Failure>| r.map(|()| 0);
    match command.to_str() {
        Some("-h" | "--help" | "help") => done(fail::write(None, USAGE.as_bytes(), stdout)),
        Some("render") => render::run(args, stdout),
        Some("facts") => done(facts::run(rest, stdout)),
        Some("declare") => done(declare::run(rest, stdout)),
        Some("diff") => done(graphs::diff(rest, stdout)),
        Some("effective") => done(graphs::effective(rest, stdout)),
        Some("merge") => done(merge::run(rest, stdout)),
        Some("reach") => done(reach::run(rest, stdout)),
        Some("verify") => done(verify::run(rest, stdout)),
        other => {
            let shown = other.map_or_else(|| "a non-UTF-8 argument".to_owned(), excerpt);
            Err(Failure::usage("", format!("unknown command {shown}")))
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut stdout = std::io::stdout().lock();
    match run(&args, &mut stdout) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("connectome: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}
