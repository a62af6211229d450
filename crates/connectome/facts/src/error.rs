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
    #[error("{}: no such manifest: name your workspace's Cargo.toml, or a member's", path.display())]
    NoManifest {
        /// The manifest path, as given.
        path: PathBuf,
    },
    /// A package the workspace does not have.
    #[error(
        "{package:?} is not a package of this workspace: name a member as its Cargo.toml's [package] name does"
    )]
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
    /// A program could not be started because there is no such program.
    #[error("{program}: {tool} not found: install Rust (https://rustup.rs), or set {variable} to its path")]
    NotFound {
        /// What was being run (`cargo metadata`, `cargo rustc`, `rustc --version`).
        program: &'static str,
        /// The program (`cargo`, `rustc`).
        tool: &'static str,
        /// The environment variable that names it (`CARGO`, `RUSTC`).
        variable: &'static str,
    },
    /// The workspace's `Cargo.lock` does not match its manifests; it is used as it is, never updated.
    #[error(
        "{} is out of date with the manifests (it is used as it is, never updated): run \
         `cargo update --workspace` in {}",
        root.join("Cargo.lock").display(),
        root.display()
    )]
    LockOutdated {
        /// The workspace root, where the lock is.
        root: PathBuf,
    },
    /// The workspace has no `Cargo.lock` and cargo could not resolve one under the IR directory; what
    /// cargo said is in [`ExtractError::cargo_output`].
    #[error(
        "no Cargo.lock in {} and cargo could not resolve one ({status}): fix what cargo reports, or \
         commit a Cargo.lock there (`cargo generate-lockfile`)",
        root.display()
    )]
    Resolve {
        /// The workspace root.
        root: PathBuf,
        /// The exit status of `cargo update`.
        status: ExitStatus,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// The IR directory's `lock/Cargo.toml` exists and was not written by this program: it is never
    /// written over.
    #[error(
        "{} holds a Cargo.toml this program did not write: name another --target-dir",
        dir.display()
    )]
    ForeignLockDir {
        /// The directory the own lock would go to.
        dir: PathBuf,
    },
    /// The workspace has no `Cargo.lock` and its root manifest has `[patch]` or `[replace]`, which a
    /// lock of this program's own cannot apply.
    #[error(
        "no Cargo.lock in {} and its manifest has [patch] or [replace], which only its own lock \
         applies: commit a Cargo.lock there (`cargo generate-lockfile`)",
        root.display()
    )]
    PatchWithoutLock {
        /// The workspace root.
        root: PathBuf,
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
            ExtractError::Metadata { stderr, .. }
            | ExtractError::Build { stderr, .. }
            | ExtractError::Resolve { stderr, .. } => Some(stderr),
            _ => None,
        }
    }
}

impl ExtractError {
    /// The failure to start `program`: [`ExtractError::NotFound`] when there is no such program.
    pub(crate) fn spawn(program: &'static str, source: std::io::Error) -> ExtractError {
        if source.kind() != std::io::ErrorKind::NotFound {
            return ExtractError::Spawn { program, source };
        }
        let (tool, variable) =
            if program.starts_with("rustc") { ("rustc", "RUSTC") } else { ("cargo", "CARGO") };
        ExtractError::NotFound { program, tool, variable }
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
            ExtractError::spawn("cargo metadata", io()),
            ExtractError::LockOutdated { root: PathBuf::from("/w") },
            ExtractError::Resolve { root: PathBuf::from("/w"), status, stderr: stderr.clone() },
            ExtractError::ForeignLockDir { dir: PathBuf::from("/w/lock") },
            ExtractError::PatchWithoutLock { root: PathBuf::from("/w") },
        ];
        for error in &errors {
            let line = error.to_string();
            assert!(!line.is_empty() && !line.contains('\n'), "{line:?}");
            let from_cargo = matches!(
                error,
                ExtractError::Metadata { .. } | ExtractError::Build { .. } | ExtractError::Resolve { .. }
            );
            assert_eq!(error.cargo_output(), from_cargo.then_some(stderr.as_str()), "{line}");
        }
        assert_eq!(errors[7].to_string(), format!("cargo rustc -p my-lib failed ({status})"));
    }

    #[test]
    fn ck13_each_refusal_the_user_can_fix_says_how() {
        let not_found = ExtractError::spawn("cargo metadata", Error::new(ErrorKind::NotFound, "gone"));
        assert_eq!(
            not_found.to_string(),
            "cargo metadata: cargo not found: install Rust (https://rustup.rs), or set CARGO to its path"
        );
        let rustc = ExtractError::spawn("rustc --version", Error::new(ErrorKind::NotFound, "gone"));
        assert!(rustc.to_string().ends_with("set RUSTC to its path"), "{rustc}");
        let denied = ExtractError::spawn("cargo rustc", Error::new(ErrorKind::PermissionDenied, "denied"));
        assert_eq!(denied.to_string(), "cargo rustc: denied");
        let outdated = ExtractError::LockOutdated { root: PathBuf::from("/w") };
        assert_eq!(
            outdated.to_string(),
            "/w/Cargo.lock is out of date with the manifests (it is used as it is, never updated): run \
             `cargo update --workspace` in /w"
        );
        let manifest = ExtractError::NoManifest { path: PathBuf::from("/w/Cargo.toml") };
        assert!(manifest.to_string().ends_with(": name your workspace's Cargo.toml, or a member's"));
    }
}
