//! Why a subcommand stopped, its exit code, and the reading and writing every subcommand shares.

use std::fmt;
use std::io::Write;
use std::path::Path;

use connectome_render::cli::{io_reason, shown};

/// Why a subcommand stopped; its `Display` is the one line printed after `connectome: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The command line is not one the subcommand takes (exit 2).
    Usage {
        /// The subcommand, for the pointer to its help.
        command: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An input was refused: unreadable, not the format, or a computation over it refused (exit 2).
    Input(String),
    /// `verify` found the document valid but not canonical, or not hashing to `--hash` (exit 3).
    Verdict(String),
    /// The output could not be written (exit 1).
    Output(String),
}

impl Failure {
    /// A usage refusal of `command`.
    pub fn usage(command: &'static str, message: impl Into<String>) -> Failure {
        Failure::Usage { command, message: message.into() }
    }

    /// An input refusal about the file at `path`.
    pub fn input(path: &Path, reason: impl fmt::Display) -> Failure {
        Failure::Input(format!("{}: {}", shown(path), one_line(&reason.to_string())))
    }

    /// The process exit code: 0 is success, so never this.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage { .. } | Failure::Input(_) => 2,
            Failure::Output(_) => 1,
            Failure::Verdict(_) => 3,
        }
    }
}

impl fmt::Display for Failure {
    /// One line, without the `connectome: ` prefix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage { command: "", message } => {
                write!(f, "usage: {message} (see `connectome --help`)")
            }
            Failure::Usage { command, message } => {
                write!(f, "usage: {message} (see `connectome {command} --help`)")
            }
            Failure::Input(m) | Failure::Verdict(m) | Failure::Output(m) => f.write_str(m),
        }
    }
}

/// `text` on one line: line breaks become spaces.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r']).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// `text` with every control character escaped (`\n`, `\u{1b}`): one line, and no escape sequence
/// reaches the terminal.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

/// The most bytes one input file may hold (1 GiB): far above any export a host writes (a 10,000-edge
/// federation record is about 4 MB), and a bound on what a mistaken path (`/dev/zero`, a pipe) costs.
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// The bytes of the regular file at `path`, at most [`MAX_INPUT_BYTES`], or a refusal naming it and
/// the reason.
pub fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    use std::io::Read as _;
    let cannot =
        |e: &std::io::Error| Failure::Input(format!("cannot read {}: {}", quoted(path), io_reason(e)));
    let file = std::fs::File::open(path).map_err(|e| cannot(&e))?;
    let metadata = file.metadata().map_err(|e| cannot(&e))?;
    if !metadata.is_file() {
        return Err(Failure::Input(format!("cannot read {}: not a regular file", quoted(path))));
    }
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| cannot(&e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Failure::Input(format!("cannot read {}: larger than 1 GiB", quoted(path))));
    }
    Ok(bytes)
}

/// A path as messages quote it: an escaped excerpt in double quotes.
pub fn quoted(path: &Path) -> String {
    shown(path)
}

/// Writes `bytes` to `out` (a file; `-` or none is `stdout`).
pub fn write(out: Option<&Path>, bytes: &[u8], stdout: &mut dyn Write) -> Result<(), Failure> {
    match out.filter(|p| p.as_os_str() != "-") {
        Some(path) => write_file(path, bytes),
        None => stdout
            .write_all(bytes)
            .and_then(|()| stdout.flush())
            .map_err(|e| Failure::Output(format!("cannot write stdout: {}", io_reason(&e)))),
    }
}

/// Writes `bytes` to the file at `path`.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes)
        .map_err(|e| Failure::Output(format!("cannot write {}: {}", quoted(path), io_reason(&e))))
}
