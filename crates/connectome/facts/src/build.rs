//! The toolchain runs: one package's library built with IR, the `.ll` its artifact message leads to,
//! and the rustc version recorded.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::ExtractError;
use crate::lock::{self, LockSource};
use crate::workspace::{Workspace, is_lib_kind};

/// The rustc flags of a scope crate's build (after `cargo rustc … --`).
/// `link-dead-code` makes rustc emit every non-generic item, async bodies included: without it, a
/// library's `async fn` bodies are emitted only if the library itself polls them.
const IR_FLAGS: &[&str] = &[
    "--emit=llvm-ir,link",
    "-C",
    "codegen-units=1",
    "-C",
    "opt-level=0",
    "-C",
    "debuginfo=0",
    "-C",
    "link-dead-code",
];

/// The flags every crate of an IR build gets (through `CARGO_ENCODED_RUSTFLAGS`, which replaces any
/// `RUSTFLAGS` of the environment): v0 mangling, so the symbols demangle into full paths.
const ALL_CRATES_FLAGS: &str = "-Csymbol-mangling-version=v0";

/// The `cargo rustc` command that builds `package`'s library with IR, run in the workspace root (so
/// its toolchain file and cargo configuration count), against the lock its `LockSource` names.
fn command(workspace: &Workspace, package: &str) -> Command {
    let mut command = Command::new(workspace.cargo());
    command.current_dir(workspace.root()).arg("rustc");
    match workspace.lock() {
        LockSource::Workspace => _ = command.arg("--locked"),
        LockSource::Own(dir) => {
            _ = command.arg("--locked").arg("--manifest-path").arg(dir.join("Cargo.toml"))
        }
        LockSource::Unlocked => {}
    }
    command
        .args(["--lib", "--message-format=json-render-diagnostics", "-p", package])
        .arg("--target-dir")
        .arg(workspace.ir_directory())
        .arg("--")
        .args(IR_FLAGS)
        .env("CARGO_ENCODED_RUSTFLAGS", ALL_CRATES_FLAGS)
        .env("CARGO_INCREMENTAL", "0");
    command
}

/// Builds one package's library with IR; the `.ll` derived from its artifact message, if it exists.
pub(crate) fn library(
    workspace: &Workspace,
    package: &str,
    id: &str,
) -> Result<Option<PathBuf>, ExtractError> {
    let out =
        command(workspace, package).output().map_err(|source| ExtractError::spawn("cargo rustc", source))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if let Some(outdated) = lock::outdated(workspace, &stderr) {
            return Err(outdated);
        }
        return Err(ExtractError::Build { package: package.to_owned(), status: out.status, stderr });
    }
    Ok(ll_of(&String::from_utf8_lossy(&out.stdout), id))
}

/// The `.ll` beside the library artifact of package `id` that cargo's JSON messages name, if it exists.
fn ll_of(messages: &str, id: &str) -> Option<PathBuf> {
    for line in messages.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else { continue };
        if message["reason"] != "compiler-artifact" || message["package_id"] != id {
            continue;
        }
        if !message["target"]["kind"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(is_lib_kind)
        {
            continue;
        }
        for file in message["filenames"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if let Some(ll) = ll_beside(Path::new(file)).filter(|ll| ll.is_file()) {
                return Some(ll);
            }
        }
    }
    None
}

/// `deps/libfoo-1234.rmeta` → `deps/foo-1234.ll` (only artifacts in `deps/` carry the hash rustc uses).
fn ll_beside(artifact: &Path) -> Option<PathBuf> {
    let dir = artifact.parent().filter(|d| d.file_name().is_some_and(|n| n == "deps"))?;
    let stem = artifact.file_stem()?.to_str()?;
    Some(dir.join(format!("{}.ll", stem.strip_prefix("lib").unwrap_or(stem))))
}

/// `rustc --version` of the toolchain the workspace pins (run in the workspace root).
pub(crate) fn rustc_version(workspace: &Workspace) -> Result<String, ExtractError> {
    let out = Command::new(workspace.request().rustc_program())
        .current_dir(workspace.root())
        .arg("--version")
        .output()
        .map_err(|source| ExtractError::spawn("rustc --version", source))?;
    if !out.status.success() {
        return Err(ExtractError::RustcVersion { status: out.status });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::path::Path;

    use super::{command, ll_beside};
    use crate::{FactsRequest, Workspace};

    /// The workspace at `dir` as metadata with no packages would describe it.
    fn read_at(request: &FactsRequest, dir: &Path) -> Workspace {
        let meta = serde_json::json!({
            "workspace_root": dir,
            "target_directory": dir.join("target"),
            "packages": [],
        });
        Workspace::from_metadata(request, "cargo".into(), &meta).expect("metadata reads")
    }

    /// A workspace that has a `Cargo.lock`.
    fn read(request: &FactsRequest) -> Workspace {
        read_at(request, &crate::scratch_root_with_lock("build-command"))
    }

    #[test]
    fn ck6_the_build_is_cargo_rustc_of_the_library_alone_with_the_ir_flags() {
        let workspace = read(&FactsRequest::new(["my-lib"]));
        let built = command(&workspace, "my-lib");
        let args: Vec<&OsStr> = built.get_args().collect();
        let ir = workspace.ir_directory().as_os_str();
        let mut want: Vec<&OsStr> = [
            "rustc",
            "--locked",
            "--lib",
            "--message-format=json-render-diagnostics",
            "-p",
            "my-lib",
            "--target-dir",
        ]
        .map(OsStr::new)
        .to_vec();
        want.push(ir);
        want.extend(
            [
                "--",
                "--emit=llvm-ir,link",
                "-C",
                "codegen-units=1",
                "-C",
                "opt-level=0",
                "-C",
                "debuginfo=0",
                "-C",
                "link-dead-code",
            ]
            .map(OsStr::new),
        );
        assert_eq!(args, want);
        assert_eq!(built.get_current_dir(), Some(workspace.root()));
        let envs: Vec<_> = built.get_envs().collect();
        assert_eq!(
            envs,
            [
                (OsStr::new("CARGO_ENCODED_RUSTFLAGS"), Some(OsStr::new("-Csymbol-mangling-version=v0"))),
                (OsStr::new("CARGO_INCREMENTAL"), Some(OsStr::new("0"))),
            ]
        );
        let unlocked = read(&FactsRequest::new(["my-lib"]).locked(false));
        assert!(!command(&unlocked, "my-lib").get_args().any(|a| a == "--locked"));
    }

    #[test]
    fn ck13_without_a_lock_the_build_runs_locked_against_the_one_under_the_ir_directory() {
        let no_lock = std::env::temp_dir().join("connectome-facts-no-such-workspace");
        let workspace = read_at(&FactsRequest::new(["my-lib"]), &no_lock);
        let built = command(&workspace, "my-lib");
        let args: Vec<&OsStr> = built.get_args().take(4).collect();
        let manifest = workspace.ir_directory().join("lock/Cargo.toml");
        assert_eq!(
            args,
            [
                OsStr::new("rustc"),
                OsStr::new("--locked"),
                OsStr::new("--manifest-path"),
                manifest.as_os_str()
            ]
        );
        assert_eq!(
            built.get_current_dir(),
            Some(no_lock.as_path()),
            "the workspace's toolchain and config count"
        );
    }

    #[test]
    fn cd4_the_ir_is_the_ll_beside_the_artifact_in_deps() {
        let ll = |artifact: &str| ll_beside(Path::new(artifact)).map(|p| p.to_string_lossy().into_owned());
        assert_eq!(ll("/t/debug/deps/libmy_lib-0a1b.rmeta").as_deref(), Some("/t/debug/deps/my_lib-0a1b.ll"));
        assert_eq!(ll("/t/debug/deps/libmy_lib-0a1b.rlib").as_deref(), Some("/t/debug/deps/my_lib-0a1b.ll"));
        assert_eq!(ll("/t/debug/libmy_lib.rlib"), None, "an uplifted copy carries no hash");
    }
}
