//! Why an extraction failed: one variant per cause, each a one-line message.

use std::path::PathBuf;
use std::process::ExitStatus;

/// Why [`extract`](crate::extract) (or [`Workspace::read`](crate::Workspace::read)) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// The request names no package.
    #[error("no package named: the scope needs at least one")]
    NoPackages,
    /// The manifest path names no file.
    #[error("{}: no such manifest", path.display())]
    NoManifest {
        /// The manifest path, as given.
        path: PathBuf,
    },
    /// A package the workspace does not have.
    #[error("{package:?} is not a package of this workspace")]
    UnknownPackage {
        /// The name, as given.
        package: String,
    },
    /// A path of the request could not be made absolute (cargo runs in another directory).
    #[error("{}: {source}", path.display())]
    Path {
        /// The path, as given.
        path: PathBuf,
        /// Why it could not be made absolute.
        source: std::io::Error,
    },
    /// A program could not be started at all.
    #[error("{program}: {source}")]
    Spawn {
        /// What was being run (`cargo metadata`, `cargo rustc`, `rustc --version`).
        program: &'static str,
        /// Why it could not start.
        source: std::io::Error,
    },
    /// `cargo metadata` failed; what cargo said is in [`ExtractError::cargo_output`].
    #[error("cargo metadata failed ({status})")]
    Metadata {
        /// Its exit status.
        status: ExitStatus,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// `cargo metadata` answered something this crate cannot read.
    #[error("cargo metadata: {what}")]
    MetadataUnreadable {
        /// What was wrong with it.
        what: String,
    },
    /// A package's IR build failed; what cargo said is in [`ExtractError::cargo_output`].
    #[error("cargo rustc -p {package} failed ({status})")]
    Build {
        /// The package, as cargo names it.
        package: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it wrote to stderr (rendered diagnostics included).
        stderr: String,
    },
    /// The `.ll` file a build named could not be read.
    #[error("{}: {source}", path.display())]
    ReadIr {
        /// The `.ll` file.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// `rustc --version` failed.
    #[error("rustc --version failed ({status})")]
    RustcVersion {
        /// Its exit status.
        status: ExitStatus,
    },
}

impl ExtractError {
    /// What cargo wrote to stderr, for the failures of a cargo run: shown after the one-line message.
    pub fn cargo_output(&self) -> Option<&str> {
        match self {
            ExtractError::Metadata { stderr, .. } | ExtractError::Build { stderr, .. } => Some(stderr),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Error, ErrorKind};
    use std::path::PathBuf;

    use super::ExtractError;

    #[test]
    fn ck13_every_error_is_one_line_and_cargo_output_is_kept_apart() {
        let status =
            std::process::Command::new(env!("CARGO")).arg("--version").output().expect("cargo runs").status;
        let stderr = "error: one\nerror: two\n".to_owned();
        let io = || Error::new(ErrorKind::NotFound, "not found");
        let errors = [
            ExtractError::NoPackages,
            ExtractError::NoManifest { path: PathBuf::from("/w/Cargo.toml") },
            ExtractError::UnknownPackage { package: "ghost".to_owned() },
            ExtractError::Path { path: PathBuf::new(), source: io() },
            ExtractError::Spawn { program: "cargo metadata", source: io() },
            ExtractError::Metadata { status, stderr: stderr.clone() },
            ExtractError::MetadataUnreadable { what: "no workspace_root".to_owned() },
            ExtractError::Build { package: "my-lib".to_owned(), status, stderr: stderr.clone() },
            ExtractError::ReadIr { path: PathBuf::from("/t/deps/my_lib-0a1b.ll"), source: io() },
            ExtractError::RustcVersion { status },
        ];
        for error in &errors {
            let line = error.to_string();
            assert!(!line.is_empty() && !line.contains('\n'), "{line:?}");
            let from_cargo = matches!(error, ExtractError::Metadata { .. } | ExtractError::Build { .. });
            assert_eq!(error.cargo_output(), from_cargo.then_some(stderr.as_str()), "{line}");
        }
        assert_eq!(errors[7].to_string(), format!("cargo rustc -p my-lib failed ({status})"));
    }
}
