//! `extract` on a Cargo workspace outside this repository (docs/connectome.md CK-13): a scratch workspace
//! under the system's temporary directory, two library crates, one calling the other, built into a
//! target directory of their own.
//!
//! Offline and bounded: the scratch crates have no dependencies (the lock file is generated
//! `--offline`), and the whole directory is removed when the test ends, however it ends.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use connectome_facts::{CallEdge, ExtractError, FactsRequest, Progress, extract};

/// A directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `text` to `dir/rel`, creating its directories.
fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("scratch directories");
    std::fs::write(&path, text).expect("a scratch file");
}

/// A workspace with `scratch-leaf` (no dependencies) and `scratch-caller` (depends on it by path).
fn scratch_workspace() -> Scratch {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("connectome-facts-any-{}-{nanos}", std::process::id()));
    let scratch = Scratch(dir);
    let dir = &scratch.0;
    write(dir, "Cargo.toml", "[workspace]\nresolver = \"3\"\nmembers = [\"leaf\", \"caller\"]\n");
    let package =
        |name: &str| format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n");
    write(dir, "leaf/Cargo.toml", &package("scratch-leaf"));
    write(
        dir,
        "leaf/src/lib.rs",
        "pub mod math {\n    pub fn twice(x: u32) -> u32 {\n        x.wrapping_mul(2)\n    }\n}\n\n\
         pub fn leaf(x: u32) -> u32 {\n    math::twice(x)\n}\n",
    );
    let caller = package("scratch-caller") + "\n[dependencies]\nscratch-leaf = { path = \"../leaf\" }\n";
    write(dir, "caller/Cargo.toml", &caller);
    write(
        dir,
        "caller/src/lib.rs",
        "pub fn run(x: u32) -> u32 {\n    \
         scratch_leaf::leaf(x).wrapping_add(scratch_leaf::math::twice(x))\n}\n",
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(dir)
        .args(["generate-lockfile", "--offline", "--quiet"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo generate-lockfile: {status}");
    scratch
}

fn edge(caller: &str, callee: &str) -> CallEdge {
    CallEdge { caller: caller.to_owned(), callee: callee.to_owned() }
}

#[test]
fn ck13_facts_of_a_workspace_outside_the_repository() {
    let scratch = scratch_workspace();
    let request = FactsRequest::new(["scratch-leaf", "scratch-caller"])
        .manifest_path(scratch.0.join("Cargo.toml"))
        .target_dir(scratch.0.join("ir"));
    let mut progress = Vec::new();
    let started = Instant::now();
    let facts = extract(&request, &mut |p| progress.push(p)).unwrap_or_else(|e| panic!("extract: {e}"));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(120), "two tiny crates took {took:?}");

    assert_eq!(facts.crates, ["scratch_caller", "scratch_leaf"]);
    assert_eq!(
        facts.edges,
        [
            edge("scratch_caller::run", "scratch_leaf::leaf"),
            edge("scratch_caller::run", "scratch_leaf::math::twice"),
            edge("scratch_leaf::leaf", "scratch_leaf::math::twice"),
        ]
    );
    assert!(facts.bound.dynamic_dispatch_sites.is_empty(), "{:?}", facts.bound.dynamic_dispatch_sites);
    assert!(facts.bound.crates_without_ir.is_empty());
    assert_eq!(facts.bound.sources_used, ["crate_map", "llvm_ir"]);
    assert!(facts.rustc_version.starts_with("rustc "), "{}", facts.rustc_version);
    let building = |package: &str, index| Progress::Building { package: package.to_owned(), index, total: 2 };
    assert_eq!(progress, [building("scratch-caller", 1), building("scratch-leaf", 2)]);
    assert!(scratch.0.join("ir").is_dir(), "the builds went to the request's target directory");

    let ghost = FactsRequest::new(["scratch-ghost"]).manifest_path(scratch.0.join("Cargo.toml"));
    let refused = extract(&ghost, &mut |_| {}).expect_err("no such package");
    assert!(matches!(&refused, ExtractError::UnknownPackage { package } if package == "scratch-ghost"));
}
