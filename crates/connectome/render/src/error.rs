//! The one error type: every refusal is a value with a short message, never a panic.

use std::fmt;

/// Which input a message is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The `--declared` graph export.
    Declared,
    /// The `--observed` graph export.
    Observed,
    /// The `--sidecar` weight file.
    Sidecar,
    /// The `--diff` record.
    Diff,
    /// The `--effective` export.
    Effective,
}

impl Role {
    /// The input's name as messages and pages print it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Declared => "declared export",
            Role::Observed => "observed export",
            Role::Sidecar => "sidecar",
            Role::Diff => "diff record",
            Role::Effective => "effective export",
        }
    }
}

/// Why the renderer refused or failed. Messages quote input only through
/// [`crate::escape::excerpt`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The command line is not one the renderer accepts.
    Usage(String),
    /// An input file could not be read.
    Read {
        /// The input.
        role: Role,
        /// The path, as an escaped excerpt.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// An input is not JSON.
    Json {
        /// The input.
        role: Role,
        /// The parser's reason (it names a position, never the content).
        reason: String,
    },
    /// An input is JSON but not the export format ([CB-4]..[CB-7]).
    ///
    /// [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Format {
        /// The input.
        role: Role,
        /// Where in the document, e.g. `nodes[2].kind`.
        at: String,
        /// What is wrong.
        problem: String,
    },
    /// The output could not be written.
    Write {
        /// The destination, as an escaped excerpt.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
}

impl Error {
    /// The process exit code: 1 when writing the output failed, 2 for every refusal of the input.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Write { .. } => 1,
            _ => 2,
        }
    }

    /// A [`Error::Format`] refusal.
    pub fn format(role: Role, at: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::Format { role, at: at.into(), problem: problem.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) => write!(f, "usage: {m} (see `connectome render --help`)"),
            Error::Read { role, path, reason } => {
                write!(f, "{}: cannot read {path}: {reason}", role.name())
            }
            Error::Json { role, reason } => write!(f, "{}: not JSON: {reason}", role.name()),
            Error::Format { role, at, problem } if at.is_empty() => {
                write!(f, "{}: {problem}", role.name())
            }
            Error::Format { role, at, problem } => write!(f, "{}: {at}: {problem}", role.name()),
            Error::Write { path, reason } => write!(f, "cannot write {path}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

/// A path as messages print it: an escaped excerpt.
pub fn shown(path: &std::path::Path) -> String {
    crate::escape::excerpt_max(&path.to_string_lossy(), 96)
}

/// The operating system's reason, without the path or any content.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_owned(),
        kind => kind.to_string(),
    }
}
