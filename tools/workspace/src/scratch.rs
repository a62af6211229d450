//! What the tasks that build outside the repository share: a scratch directory under the system's
//! temporary directory, removed when dropped, and cargo started in a directory of its own.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cargo_program;

/// A scratch directory, `<temp>/<name>-<pid>`, made empty when created and removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// Makes the empty directory (removing what an earlier run of the same process id left).
    pub fn new(name: &str) -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Cargo in `dir`, building into `target`. The toolchain is the one `dir`'s own `rust-toolchain.toml`
/// names: an override this task was started with (`RUSTUP_TOOLCHAIN`) is not passed on.
pub fn cargo_in(dir: &Path, target: &Path) -> Command {
    let mut command = Command::new(cargo_program());
    command.current_dir(dir).env("CARGO_TARGET_DIR", target).env_remove("RUSTUP_TOOLCHAIN");
    command
}

/// Copies the workspace's `Cargo.lock` and `rust-toolchain.toml` from `repo` into `dir`: a project built
/// outside the workspace then resolves to the versions it was tested with, on the pinned toolchain.
pub fn copy_pins(repo: &Path, dir: &Path) -> Result<(), String> {
    for file in ["Cargo.lock", "rust-toolchain.toml"] {
        std::fs::copy(repo.join(file), dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    Ok(())
}
