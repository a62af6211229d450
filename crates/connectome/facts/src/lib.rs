//! Call facts of any Cargo workspace, read from the LLVM IR rustc emits for it (docs/connectome.md
//! [CD-4], [CK-6], [CK-13]; docs/connectome-facts.md).
//!
//! A [`FactsRequest`] names a workspace (its `Cargo.toml`) and the packages in scope, as cargo names
//! them. [`extract`] builds each package's library alone with `cargo rustc -p <package> --lib` into a
//! target directory of its own (default `<the workspace's target directory>/connectome-ir`), at
//! opt-level 0 with `--emit=llvm-ir,link -C codegen-units=1`, every crate of that build with v0 symbol
//! mangling. Cargo's JSON `compiler-artifact` message names the artifacts, and the `.ll` beside them
//! (same stem, in `deps/`) is read right after its build: no directory is globbed. Direct calls between
//! items of the scope crates are edges, calls out of scope are external callees, every indirect call is
//! a dynamic dispatch site. The result is a [`CallFacts`] (the model lives in `connectome-graph`), whose
//! [`CallFacts::to_json`] gives the same bytes for the same sources, run after run.
//!
//! Compile-time code never contributes edges: a package that is a proc macro is not built; its crate
//! name goes to `macro_expansion_crates` (not to `crates`), and `macro_expansion_calls` stays empty.
//! Build scripts are never built with IR (the IR flags reach only the library's own rustc), so their
//! calls are never read either.
//!
//! ```no_run
//! use connectome_facts::{FactsRequest, extract};
//!
//! let request = FactsRequest::new(["my-server", "my-tools"]).manifest_path("path/to/Cargo.toml");
//! let facts = extract(&request, &mut |progress| eprintln!("{progress}"))?;
//! std::fs::write("facts.json", facts.to_json())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The builds run the workspace's own toolchain: cargo and rustc are started in the workspace root,
//! where rustup reads its `rust-toolchain.toml`, and `rustc_version` is what `rustc --version` says
//! there.
//!
//! The workspace's `Cargo.lock` is used as it is (`--locked`). A workspace without one gets a lock of
//! the facts' own, resolved in `lock/` of the IR directory, and its tree is left untouched: the caller
//! hears of it as [`Progress::OwnLock`].
//!
//! [CD-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#![forbid(unsafe_code)]

mod build;
mod error;
mod ir;
mod lock;
mod names;
mod reader;
mod workspace;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

pub use connectome_graph::{CallEdge, CallFacts, DynamicSite, FACTS_FORMAT, FactsBound};
pub use error::ExtractError;
pub use workspace::Workspace;

use lock::LockSource;
use workspace::Plan;

/// What to read: the workspace, the packages in scope, where to build and with which toolchain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactsRequest {
    packages: Vec<String>,
    manifest_path: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    cargo: Option<OsString>,
    rustc: Option<OsString>,
    locked: bool,
}

impl FactsRequest {
    /// A request for the named packages (package names, as `cargo -p` takes them), with every default.
    pub fn new<I, S>(packages: I) -> FactsRequest
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        FactsRequest {
            packages: packages.into_iter().map(Into::into).collect(),
            manifest_path: None,
            target_dir: None,
            cargo: None,
            rustc: None,
            locked: true,
        }
    }

    /// The workspace's (or a package's) `Cargo.toml`; default: the one cargo finds from the current
    /// directory (`./Cargo.toml`, or the nearest parent's).
    pub fn manifest_path(mut self, path: impl Into<PathBuf>) -> FactsRequest {
        self.manifest_path = Some(path.into());
        self
    }

    /// Where the IR builds go; default: `connectome-ir` in the workspace's target directory.
    pub fn target_dir(mut self, path: impl Into<PathBuf>) -> FactsRequest {
        self.target_dir = Some(path.into());
        self
    }

    /// The cargo to run; default: the `CARGO` environment variable if set, else `cargo` on `PATH`.
    pub fn cargo(mut self, program: impl Into<OsString>) -> FactsRequest {
        self.cargo = Some(program.into());
        self
    }

    /// The rustc whose `--version` is recorded; default: the `RUSTC` environment variable if set,
    /// else `rustc` on `PATH`.
    pub fn rustc(mut self, program: impl Into<OsString>) -> FactsRequest {
        self.rustc = Some(program.into());
        self
    }

    /// Whether cargo runs with `--locked` (the default): the workspace's lock file is used as it is,
    /// never updated, and a workspace without one gets one resolved under the IR directory. With
    /// `false`, cargo runs in the workspace as it would by hand (and may write its `Cargo.lock`).
    pub fn locked(mut self, locked: bool) -> FactsRequest {
        self.locked = locked;
        self
    }

    /// The packages in scope, as given.
    pub fn packages(&self) -> &[String] {
        &self.packages
    }

    /// The cargo program this request runs.
    fn cargo_program(&self) -> OsString {
        self.cargo.clone().or_else(|| std::env::var_os("CARGO")).unwrap_or_else(|| "cargo".into())
    }

    /// The rustc program whose version is recorded.
    fn rustc_program(&self) -> OsString {
        self.rustc.clone().or_else(|| std::env::var_os("RUSTC")).unwrap_or_else(|| "rustc".into())
    }
}

/// How far an extraction has come, reported to the caller's callback as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// The library of `package` is being built with IR: the `index`-th (from 1) of `total` builds.
    Building {
        /// The package, as cargo names it.
        package: String,
        /// Which build this is, from 1.
        index: usize,
        /// How many builds there are in all.
        total: usize,
    },
    /// The workspace has no `Cargo.lock`: one was resolved in `lock_dir`, and the workspace's tree was
    /// left as it was.
    OwnLock {
        /// The workspace root, where cargo would have written its lock.
        root: PathBuf,
        /// The directory of the lock resolved instead (under the IR directory).
        lock_dir: PathBuf,
    },
}

impl fmt::Display for Progress {
    /// `building mcp-kernel-router (2 of 5)`; `no Cargo.lock in /w: resolved one under
    /// /w/target/connectome-ir/lock (your tree is untouched)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Progress::Building { package, index, total } => {
                write!(f, "building {package} ({index} of {total})")
            }
            Progress::OwnLock { root, lock_dir } => write!(
                f,
                "no Cargo.lock in {}: resolved one under {} (your tree is untouched)",
                root.display(),
                lock_dir.display()
            ),
        }
    }
}

/// The one-line summary of a facts file a command prints: crates, edges, dynamic dispatch sites,
/// external callees, crates without IR and compile-time crates.
pub fn summary(facts: &CallFacts) -> String {
    let bound = &facts.bound;
    format!(
        "{} crate(s), {} edges, {} dynamic dispatch sites, {} external callees, {} crate(s) without IR, \
         {} compile-time crate(s)",
        facts.crates.len(),
        facts.edges.len(),
        bound.dynamic_dispatch_sites.len(),
        bound.external_callees.len(),
        bound.crates_without_ir.len(),
        bound.macro_expansion_crates.len(),
    )
}

/// Reads the workspace the request names, builds its scope and reads the facts from the IR.
pub fn extract(
    request: &FactsRequest,
    progress: &mut dyn FnMut(Progress),
) -> Result<CallFacts, ExtractError> {
    Workspace::read(request)?.extract(progress)
}

impl Workspace {
    /// Builds every runtime library of the request's scope with IR and reads the facts from it.
    pub fn extract(&self, progress: &mut dyn FnMut(Progress)) -> Result<CallFacts, ExtractError> {
        let Plan { build: scope, mut without_ir, compile_time } = self.plan()?;
        let crates: BTreeSet<String> = scope.keys().cloned().chain(without_ir.iter().cloned()).collect();
        let mut reader = reader::Reader::new(crates.clone());
        let mut read_any = false;
        let total = scope.len();
        if let (LockSource::Own(lock_dir), false) = (self.lock(), scope.is_empty()) {
            let packages = scope
                .values()
                .map(|(package, _)| Ok((package.as_str(), self.package_dir(package)?)))
                .collect::<Result<Vec<_>, ExtractError>>()?;
            lock::resolve(self, lock_dir, &packages)?;
            progress(Progress::OwnLock { root: self.root().to_owned(), lock_dir: lock_dir.clone() });
        }
        for (index, (lib, (package, id))) in scope.iter().enumerate() {
            progress(Progress::Building { package: package.clone(), index: index + 1, total });
            match build::library(self, package, id)? {
                Some(ll) => {
                    let text = std::fs::read_to_string(&ll)
                        .map_err(|source| ExtractError::ReadIr { path: ll.clone(), source })?;
                    reader.read(&text);
                    read_any = true;
                }
                None => without_ir.push(lib.clone()),
            }
        }
        let mut sources = vec!["crate_map".to_owned()];
        if read_any {
            sources.push("llvm_ir".to_owned());
        }
        let mut facts = CallFacts {
            format: FACTS_FORMAT,
            rustc_version: build::rustc_version(self)?,
            crates: crates.into_iter().collect(),
            edges: reader.edges,
            bound: FactsBound {
                dynamic_dispatch_sites: reader.sites,
                macro_expansion_calls: Vec::new(),
                macro_expansion_crates: compile_time,
                external_callees: reader.external,
                crates_without_ir: without_ir,
                sources_used: sources,
            },
        };
        facts.normalize();
        Ok(facts)
    }
}

/// A scratch workspace root holding an empty `Cargo.lock`, for tests that must not depend on the
/// tree the crate is built in (a packaged crate has no workspace around it).
#[cfg(test)]
pub(crate) fn scratch_root_with_lock(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("connectome-facts-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    std::fs::write(dir.join("Cargo.lock"), "version = 4\n").expect("a scratch lock");
    dir
}

#[cfg(test)]
mod tests {
    use super::{FactsRequest, Progress};

    #[test]
    fn ck13_progress_says_which_package_and_how_many() {
        let progress = Progress::Building { package: "mcp-kernel-router".to_owned(), index: 2, total: 5 };
        assert_eq!(progress.to_string(), "building mcp-kernel-router (2 of 5)");
        let own = Progress::OwnLock { root: "/w".into(), lock_dir: "/w/target/connectome-ir/lock".into() };
        assert_eq!(
            own.to_string(),
            "no Cargo.lock in /w: resolved one under /w/target/connectome-ir/lock (your tree is untouched)"
        );
    }

    #[test]
    fn ck13_a_request_defaults_to_the_locked_workspace_cargo_finds() {
        let request = FactsRequest::new(["a", "b"]);
        assert_eq!(request.packages(), ["a", "b"]);
        assert_eq!(request.manifest_path, None);
        assert_eq!(request.target_dir, None);
        assert!(request.locked);
        let request = request.cargo("/opt/cargo").rustc("/opt/rustc").locked(false);
        assert_eq!(request.cargo_program(), "/opt/cargo");
        assert_eq!(request.rustc_program(), "/opt/rustc");
        assert!(!request.locked);
    }
}

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
