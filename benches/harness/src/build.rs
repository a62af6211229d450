//! Building the compare workspace (`benches/compare/`) in release, and finding its binaries.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_kernel_workspace as workspace;

use super::LOAD;

/// The compare workspace's target directory, as cargo reports it.
fn compare_target(manifest: &Path) -> Result<PathBuf, String> {
    workspace::target_directory(&workspace::manifest_metadata(manifest)?)
}

/// Builds `bench-load` and the `servers`' binaries in release, in the compare workspace `manifest`.
pub(super) fn build(manifest: &Path, servers: &[(&'static str, &'static str)]) -> Result<(), String> {
    let mut build = Command::new(workspace::cargo_program());
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
