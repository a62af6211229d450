//! What every task asks of the workspace it runs in: where its root is, which cargo runs the task, and
//! what `cargo metadata` says; and, for the tasks that build outside the repository, a scratch
//! directory and cargo started in it ([`scratch`]). Shared by `xtask` and the benchmark harness
//! (`benches/harness/`), so that both find the workspace the same way.
#![forbid(unsafe_code)]

pub mod scratch;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The workspace root (two levels above this crate, `tools/workspace/`). Every `xtask` task but
/// `connectome facts`, and the benchmark harness, run from it.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).map(Path::to_path_buf).unwrap_or_default()
}

/// The cargo that runs this task (`CARGO`, which cargo sets for `cargo xtask`), or `cargo` on the path.
pub fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// `cargo metadata --format-version 1` with `args` after it, run from the current directory, parsed.
pub fn metadata<I, S>(args: I) -> Result<Value, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = Command::new(cargo_program())
        .args(["metadata", "--format-version", "1"])
        .args(args)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// `cargo metadata` of the workspace whose manifest is `manifest`, without dependencies.
pub fn manifest_metadata(manifest: &Path) -> Result<Value, String> {
    metadata([OsStr::new("--no-deps"), OsStr::new("--manifest-path"), manifest.as_os_str()])
}

/// The target directory `cargo metadata` reports.
pub fn target_directory(meta: &Value) -> Result<PathBuf, String> {
    meta["target_directory"].as_str().map(PathBuf::from).ok_or_else(|| "no target_directory".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_workspace_that_holds_xtask() {
        assert!(root().join("tools/xtask/Cargo.toml").is_file());
        assert!(root().join("Cargo.lock").is_file());
    }

    #[test]
    fn the_target_directory_is_read_from_the_metadata() {
        let meta = serde_json::json!({ "target_directory": "/w/target" });
        assert_eq!(target_directory(&meta), Ok(PathBuf::from("/w/target")));
        assert_eq!(target_directory(&serde_json::json!({})), Err("no target_directory".to_owned()));
    }
}
