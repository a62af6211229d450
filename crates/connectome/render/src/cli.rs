//! The command line: `connectome render --declared D.json [--observed O.json] [--sidecar S.json]
//! [--diff F.json] --format mermaid|dot|html [--view declared|observed|diff] [--out FILE]`, or
//! `connectome render --effective E.json --format svg|dot [--view effective] [--out FILE]`.
//!
//! The `connectome` program itself is the `connectome-cli` crate; its `render` subcommand is [`main`].

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::diff::DiffRecord;
use crate::effective::EffectiveOptions;
use crate::error::{Error, Role};
pub use crate::error::{io_reason, shown};
use crate::escape::excerpt;
use crate::model::{Graph, Sidecar};
use crate::view::{Inputs, ViewName};
use crate::{dot, html, mermaid};

/// The help text.
pub const USAGE: &str = "\
connectome render --declared D.json [--observed O.json] [--sidecar S.json] [--diff F.json]
                  --format mermaid|dot|html [--view declared|observed|diff] [--out FILE]
connectome render --effective E.json --format svg|dot [--view effective] [--out FILE]

Renders connectome JSON exports (schema_version 3). Output goes to stdout unless --out is given.
  mermaid  Markdown with one ```mermaid block per view; with --view, that bare `graph LR` diagram
  dot      one Graphviz `digraph` per view; with --view, only that one
  html     one self-contained page (inline CSS, SVG and script, nothing fetched); --view does not apply
The sidecar weighs the observed export if given, else the declared one.
The effective export (observed counts on the declared graph) is drawn alone, weighted, as SVG or DOT.
Exit codes: 0 rendered, 2 refused (usage, unreadable or malformed input), 1 output not written.
";

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Mermaid `graph LR`.
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// One self-contained HTML page.
    Html,
}

/// A parsed `render` invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// `--declared`.
    pub declared: PathBuf,
    /// `--observed`.
    pub observed: Option<PathBuf>,
    /// `--sidecar`.
    pub sidecar: Option<PathBuf>,
    /// `--diff`.
    pub diff: Option<PathBuf>,
    /// `--format`.
    pub format: Format,
    /// `--view` (Mermaid and DOT only).
    pub view: Option<ViewName>,
    /// `--out`; stdout when absent.
    pub out: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Print [`USAGE`].
    Help,
    /// Render.
    Render(Options),
    /// Render the weighted view of an effective export.
    Effective(EffectiveOptions),
}

fn usage(m: impl Into<String>) -> Error {
    Error::Usage(m.into())
}

/// Parses the arguments after the program name.
pub fn parse(args: &[OsString]) -> Result<Command, Error> {
    let mut it = args.iter();
    match it.next().map(|a| a.to_str()) {
        Some(Some("render")) => {}
        Some(Some("-h" | "--help" | "help")) => return Ok(Command::Help),
        None => return Err(usage("missing command `render`")),
        Some(other) => {
            let shown = other.map_or_else(|| "a non-UTF-8 argument".to_owned(), excerpt);
            return Err(usage(format!("unknown command {shown}")));
        }
    }
    let mut values: [Option<OsString>; 8] = Default::default();
    const FLAGS: [&str; 8] =
        ["--declared", "--observed", "--sidecar", "--diff", "--format", "--view", "--out", "--effective"];
    while let Some(arg) = it.next() {
        let Some(text) = arg.to_str() else { return Err(usage("a non-UTF-8 flag")) };
        if text == "-h" || text == "--help" {
            return Ok(Command::Help);
        }
        let (flag, inline) = match text.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(OsString::from(v))),
            _ => (text, None),
        };
        let Some(slot) = FLAGS.iter().position(|f| *f == flag) else {
            return Err(usage(format!("unknown argument {}", excerpt(text))));
        };
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| usage(format!("{flag} needs a value")))?,
        };
        if values[slot].replace(value).is_some() {
            return Err(usage(format!("{flag} given twice")));
        }
    }
    let [declared, observed, sidecar, diff, format, view, out, effective] = values;
    let word = |flag: &str, v: OsString| -> Result<String, Error> {
        v.into_string().map_err(|_| usage(format!("{flag} needs a UTF-8 value")))
    };
    let view = view.map(|v| word("--view", v)).transpose()?;
    if effective.is_some() || view.as_deref() == Some("effective") {
        let others = declared.is_some() || observed.is_some() || sidecar.is_some() || diff.is_some();
        let format = format.map(|v| word("--format", v)).transpose()?;
        let effective = effective.map(Into::into);
        return crate::effective::options(effective, others, format.as_deref(), out.map(Into::into))
            .map(Command::Effective);
    }
    let format = match format.map(|v| word("--format", v)).transpose()?.as_deref() {
        Some("mermaid") => Format::Mermaid,
        Some("dot") => Format::Dot,
        Some("html") => Format::Html,
        Some(other) => {
            return Err(usage(format!("--format must be mermaid, dot or html, not {}", excerpt(other))));
        }
        None => return Err(usage("--format is required")),
    };
    let view = match view.as_deref() {
        None => None,
        Some("declared") => Some(ViewName::Declared),
        Some("observed") => Some(ViewName::Observed),
        Some("diff") => Some(ViewName::Diff),
        Some(other) => {
            return Err(usage(format!("--view must be declared, observed or diff, not {}", excerpt(other))));
        }
    };
    if view.is_some() && format == Format::Html {
        return Err(usage("--view applies to mermaid and dot; the html page shows every view"));
    }
    let Some(declared) = declared else { return Err(usage("--declared is required")) };
    Ok(Command::Render(Options {
        declared: declared.into(),
        observed: observed.map(Into::into),
        sidecar: sidecar.map(Into::into),
        diff: diff.map(Into::into),
        format,
        view,
        out: out.map(Into::into),
    }))
}

fn read(role: Role, path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| Error::Read { role, path: shown(path), reason: io_reason(&e) })
}

/// Reads every input the options name and joins them.
pub fn load(o: &Options) -> Result<Inputs, Error> {
    let declared = Graph::from_json(Role::Declared, &read(Role::Declared, &o.declared)?)?;
    let observed = match &o.observed {
        Some(p) => Some(Graph::from_json(Role::Observed, &read(Role::Observed, p)?)?),
        None => None,
    };
    let sidecar = match &o.sidecar {
        Some(p) => Some(Sidecar::from_json(&read(Role::Sidecar, p)?)?),
        None => None,
    };
    let diff = match &o.diff {
        Some(p) => Some(DiffRecord::from_json(&read(Role::Diff, p)?)?),
        None => None,
    };
    Inputs::new(declared, observed, sidecar, diff)
}

/// Renders loaded inputs in a format, for one view or for all of them.
pub fn render(inputs: &Inputs, format: Format, view: Option<ViewName>) -> Result<String, Error> {
    if format == Format::Html {
        return Ok(html::render(inputs));
    }
    if let Some(name) = view {
        let v = inputs
            .view(name)
            .ok_or_else(|| usage(format!("--view {} needs --{} input", name.name(), name.name())))?;
        return Ok(match format {
            Format::Dot => dot::render(&v),
            _ => mermaid::render(&v),
        });
    }
    let views: Vec<_> = inputs.available().into_iter().filter_map(|n| inputs.view(n)).collect();
    Ok(match format {
        Format::Dot => dot::document(&views),
        _ => mermaid::document(&views),
    })
}

/// Runs one `render` invocation (`args` start with `render`): the output goes to `--out`, else to
/// `stdout`.
pub fn run(args: &[OsString], stdout: &mut dyn Write) -> Result<(), Error> {
    let (text, out) = match parse(args)? {
        Command::Help => {
            return stdout
                .write_all(USAGE.as_bytes())
                .map_err(|e| Error::Write { path: "stdout".to_owned(), reason: io_reason(&e) });
        }
        Command::Render(o) => (render(&load(&o)?, o.format, o.view)?, o.out),
        Command::Effective(o) => (crate::effective::run(&o)?, o.out),
    };
    match &out {
        Some(path) => std::fs::write(path, text.as_bytes())
            .map_err(|e| Error::Write { path: shown(path), reason: io_reason(&e) }),
        None => stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|e| Error::Write { path: "stdout".to_owned(), reason: io_reason(&e) }),
    }
}

/// [`run`] as a program runs it: a refusal is one line `connectome: <reason>` on `stderr`, and the
/// answer is the exit code (0 rendered, 2 refused, 1 output not written).
pub fn main(args: &[OsString], stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    match run(args, stdout) {
        Ok(()) => 0,
        Err(e) => {
            // Nothing more can be said if stderr itself cannot be written.
            let _ = writeln!(stderr, "connectome: {e}");
            e.exit_code()
        }
    }
}
