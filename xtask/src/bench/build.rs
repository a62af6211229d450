//! Building the compare workspace (`benches/compare/`) in release, and finding its binaries.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::LOAD;

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The main workspace's root (the parent of `xtask/`).
pub(super) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The compare workspace's target directory, as cargo reports it.
fn compare_target(manifest: &Path) -> Result<PathBuf, String> {
    let out = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
        .arg(manifest)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    meta["target_directory"].as_str().map(PathBuf::from).ok_or_else(|| "no target_directory".into())
}

/// Builds `bench-load` and the `servers`' binaries in release, in the compare workspace `manifest`.
pub(super) fn build(manifest: &Path, servers: &[(&'static str, &'static str)]) -> Result<(), String> {
    let mut build = Command::new(cargo());
    build.args(["build", "--release", "--manifest-path"]).arg(manifest).args(["--bin", LOAD]);
    for (_, binary) in servers {
        build.args(["--bin", binary]);
    }
    eprintln!(
        "xtask: bench: building {LOAD} and {} in release",
        servers.iter().map(|s| s.1).collect::<Vec<_>>().join(", ")
    );
    let status = build.status().map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("the compare workspace does not build (try --only kernel,floor)".into());
    }
    Ok(())
}

/// The compare workspace's release directory, once `bench-load` and the `servers`' binaries are in it.
pub(super) fn release_dir(
    manifest: &Path,
    servers: &[(&'static str, &'static str)],
) -> Result<PathBuf, String> {
    let release = compare_target(manifest)?.join("release");
    for (_, binary) in std::iter::once(&("load", LOAD)).chain(servers.iter()) {
        if !release.join(binary).exists() {
            return Err(format!(
                "{} is missing (build it, or drop --no-build)",
                release.join(binary).display()
            ));
        }
    }
    Ok(release)
}
