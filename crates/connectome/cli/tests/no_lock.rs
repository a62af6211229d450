//! `connectome facts` on a workspace that has no `Cargo.lock` (CL-11), as most library crates are: a
//! scratch workspace under the system's temporary directory, two library crates (one calling the other
//! by a path dependency, no registry), its target directory outside it. The program resolves a lock of
//! its own under the target directory, says so, and leaves every byte of the workspace as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use connectome_graph::{CallEdge, CallFacts};

const BIN: &str = env!("CARGO_BIN_EXE_connectome");

/// A directory removed when the test ends, pass or fail.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `text` to `dir/rel`, creating its directories.
fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A package manifest, with `deps` as its `[dependencies]` lines.
fn package(name: &str, deps: &str) -> String {
    format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n{deps}")
}

/// The workspace's root manifest over `members`. Its profile turns debug assertions off, which the
/// caller's code sees: the builds must compile with the workspace's profile for the facts to match.
fn root_manifest(members: &str) -> String {
    format!(
        "[workspace]\nresolver = \"3\"\nmembers = [{members}]\n\n[profile.dev]\ndebug-assertions = false\n"
    )
}

/// `ws/` (members `leaf` and `caller`, no lock) and `target/` beside it, in a fresh directory.
fn scratch() -> (Scratch, PathBuf, PathBuf) {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("connectome-no-lock-{}-{nanos}", std::process::id()));
    let scratch = Scratch(dir.clone());
    let ws = dir.join("ws");
    write(&ws, "Cargo.toml", &root_manifest("\"leaf\", \"caller\""));
    write(&ws, "leaf/Cargo.toml", &package("nolock-leaf", ""));
    let leaf = "pub fn twice(x: u32) -> u32 {\n    x.wrapping_mul(2)\n}\n\npub fn checked(x: u32) -> u32 {\n    x\n}\n";
    write(&ws, "leaf/src/lib.rs", leaf);
    write(&ws, "caller/Cargo.toml", &package("nolock-caller", "nolock-leaf = { path = \"../leaf\" }\n"));
    let caller = "pub fn run(x: u32) -> u32 {\n    #[cfg(debug_assertions)]\n    \
                  let _ = nolock_leaf::checked(x);\n    nolock_leaf::twice(x)\n}\n";
    write(&ws, "caller/src/lib.rs", caller);
    let ws = ws.canonicalize().unwrap();
    (scratch, ws, dir.canonicalize().unwrap().join("target"))
}

/// Every file under `dir` with its bytes, by path relative to `dir`.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_owned(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// `connectome facts` over both packages of `ws`, building into `target`, facts to `out`.
fn facts(ws: &Path, target: &Path, out: &Path) -> Output {
    let manifest = ws.join("Cargo.toml");
    let mut command = Command::new(BIN);
    command
        .args(["facts", "--manifest-path"])
        .arg(manifest)
        .args(["-p", "nolock-leaf", "-p", "nolock-caller", "--out"])
        .arg(out)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_NET_OFFLINE", "true");
    command.output().unwrap()
}

/// The stderr of a run that must succeed.
fn succeeded(out: &Output) -> String {
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

#[test]
fn cl11_facts_without_a_lock_resolve_one_under_the_target_dir_and_leave_the_tree_untouched() {
    let started = Instant::now();
    let (scratch, ws, target) = scratch();
    let before = tree(&ws);
    assert!(!ws.join("Cargo.lock").exists());

    let own = scratch.0.join("own.json");
    let stderr = succeeded(&facts(&ws, &target, &own));
    let lock_dir = target.join("connectome-ir/lock");
    let said = format!(
        "connectome facts: no Cargo.lock in {}: resolved one under {} (your tree is untouched)\n",
        ws.display(),
        lock_dir.display()
    );
    assert!(stderr.starts_with(&said), "{stderr}");
    assert!(stderr.contains("connectome facts: building nolock-caller (1 of 2)\n"), "{stderr}");
    assert_eq!(tree(&ws), before, "the workspace is byte for byte as it was: no Cargo.lock, nothing else");
    assert!(lock_dir.join("Cargo.lock").is_file(), "the lock is under the target directory");
    let facts_own = std::fs::read(&own).unwrap();
    let read = CallFacts::from_json(&facts_own).unwrap();
    assert_eq!(read.crates, ["nolock_caller", "nolock_leaf"]);
    let edge = CallEdge { caller: "nolock_caller::run".to_owned(), callee: "nolock_leaf::twice".to_owned() };
    assert_eq!(read.edges, [edge], "no call to `checked`: the workspace's profile has no debug assertions");

    // Again: the lock resolved before is kept, and the facts are the same bytes.
    let again = scratch.0.join("again.json");
    assert!(succeeded(&facts(&ws, &target, &again)).starts_with(&said));
    assert_eq!(std::fs::read(&again).unwrap(), facts_own);
    assert_eq!(tree(&ws), before);

    // With a lock of the workspace's own: used as it is, nothing said about it, the same facts.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let locked = Command::new(cargo)
        .current_dir(&ws)
        .args(["generate-lockfile", "--offline", "--quiet"])
        .status()
        .unwrap();
    assert!(locked.success());
    let with_lock = scratch.0.join("with-lock.json");
    let stderr = succeeded(&facts(&ws, &target, &with_lock));
    assert!(!stderr.contains("Cargo.lock"), "{stderr}");
    assert_eq!(std::fs::read(&with_lock).unwrap(), facts_own, "the same facts as with the workspace's lock");

    // That lock out of date (a new member the caller depends on): one line that says what to do.
    let lock = std::fs::read(ws.join("Cargo.lock")).unwrap();
    write(&ws, "Cargo.toml", &root_manifest("\"leaf\", \"caller\", \"extra\""));
    write(&ws, "extra/Cargo.toml", &package("nolock-extra", ""));
    write(&ws, "extra/src/lib.rs", "");
    let deps = "nolock-leaf = { path = \"../leaf\" }\nnolock-extra = { path = \"../extra\" }\n";
    write(&ws, "caller/Cargo.toml", &package("nolock-caller", deps));
    let out = facts(&ws, &target, &scratch.0.join("stale.json"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    let want = format!(
        "connectome: facts: {} is out of date with the manifests (it is used as it is, never updated): \
         run `cargo update --workspace` in {}",
        ws.join("Cargo.lock").display(),
        ws.display()
    );
    assert_eq!(last, want, "{stderr}");
    assert!(!stderr.contains("remove the --locked flag"), "cargo's advice does not apply: {stderr}");
    assert_eq!(std::fs::read(ws.join("Cargo.lock")).unwrap(), lock, "the lock is never updated");
    assert!(!scratch.0.join("stale.json").exists());
    assert!(started.elapsed() < Duration::from_secs(300), "took {:?}", started.elapsed());
}

#[test]
fn cl11_a_lock_that_cannot_be_resolved_is_refused_saying_what_to_do() {
    let (scratch, ws, target) = scratch();
    // A dependency no registry has, resolved offline: cargo fails at once, and says why first.
    let deps = "nolock-leaf = { path = \"../leaf\" }\nnolock-no-such-crate = \"1\"\n";
    write(&ws, "caller/Cargo.toml", &package("nolock-caller", deps));
    let before = tree(&ws);
    let out = facts(&ws, &target, &scratch.0.join("facts.json"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nolock-no-such-crate"), "cargo's own output comes first: {stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!(
            "connectome: facts: no Cargo.lock in {} and cargo could not",
            ws.display()
        ))
    );
    assert!(
        last.ends_with(": fix what cargo reports, or commit a Cargo.lock there (`cargo generate-lockfile`)")
    );
    assert_eq!(tree(&ws), before, "nothing written into the workspace");
    assert!(!scratch.0.join("facts.json").exists());
}
