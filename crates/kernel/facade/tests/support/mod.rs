//! Shared by the facade's tests that spawn a real example binary: where `cargo build --examples` put
//! it (refused when older than a source it is built from), a child that is killed when dropped, and a
//! reader that collects a child's output on a thread of its own.
//!
//! Every test file is its own crate and uses part of this module only.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// The example `name` as `cargo build --examples` builds it: `target/<profile>/examples/<name>`, next
/// to the `deps/` directory holding this test binary. Panics when it is missing, or when a source it is
/// built from is newer than it (a run narrowed with `--test` rebuilds no example, and `cargo test
/// --all-targets` builds examples only as test harnesses), rather than test a stale binary.
///
/// The sources are the ones cargo's dep-info (`<name>.d`, written beside the binary) lists; without
/// it, every `.rs` file under a workspace crate's `src/` and under this crate's `examples/`.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // The test binary is `target/<profile>/deps/<test>-<hash>`.
    let examples = exe.parent().and_then(Path::parent).map(|profile| profile.join("examples"));
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let Some(path) = examples.as_ref().map(|dir| dir.join(&file)).filter(|path| path.is_file()) else {
        panic!(
            "the {name} example is missing next to {}: build it with `cargo build -p mcp-kernel \
             --features connectome --examples` (`cargo xtask ci` builds the examples before the tests)",
            exe.display()
        )
    };
    let built = std::fs::metadata(&path).and_then(|m| m.modified()).expect("the example's mtime");
    let dep_info = examples.map(|dir| dir.join(format!("{name}.d")));
    let newest = match dep_info.and_then(|d| std::fs::read_to_string(d).ok()) {
        Some(dep_info) => newest_listed(&dep_info),
        None => {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            let crates = manifest.parent().expect("the crates directory");
            let mut dirs: Vec<PathBuf> = std::fs::read_dir(crates)
                .expect("the crates directory")
                .flatten()
                .map(|entry| entry.path().join("src"))
                .collect();
            dirs.push(manifest.join("examples"));
            dirs.iter().filter_map(|dir| newest_source(dir)).max()
        }
    };
    if let Some((_, newer)) = newest.filter(|(changed, _)| *changed > built) {
        panic!(
            "{} is older than {}: rebuild it with `cargo build -p mcp-kernel --features connectome --examples`",
            path.display(),
            newer.display()
        );
    }
    path
}

/// The most recently changed of the files a Makefile-style dep-info lists after its first `: `
/// (spaces inside a path are written `\ `); a listed file that is gone counts as changed now.
fn newest_listed(dep_info: &str) -> Option<(SystemTime, PathBuf)> {
    let line = dep_info.lines().next()?;
    let (_, deps) = line.split_once(": ")?;
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' if !current.is_empty() => paths.push(PathBuf::from(std::mem::take(&mut current))),
            ' ' => {}
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
        .into_iter()
        .map(|path| {
            let changed =
                std::fs::metadata(&path).and_then(|m| m.modified()).unwrap_or_else(|_| SystemTime::now());
            (changed, path)
        })
        .max()
}

/// The most recently changed `.rs` file under `dir` (a bounded walk: at most 10,000 entries).
fn newest_source(dir: &Path) -> Option<(SystemTime, PathBuf)> {
    let mut newest: Option<(SystemTime, PathBuf)> = None;
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            seen += 1;
            if seen > 10_000 {
                return newest;
            }
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs")
                && let Ok(changed) = entry.metadata().and_then(|m| m.modified())
                && newest.as_ref().is_none_or(|(time, _)| changed > *time)
            {
                newest = Some((changed, path));
            }
        }
    }
    newest
}

/// A spawned child that is killed (and reaped) when dropped, so that a failing test leaves no process
/// behind.
pub struct Killed {
    child: Child,
}

impl Killed {
    /// Takes charge of `child`.
    pub fn new(child: Child) -> Self {
        Self { child }
    }

    /// The child itself (to take its pipes).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Its exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("the child's status")
    }

    /// Waits (polling every 10 ms) until it exits or `within` has passed: `None` when it is still
    /// running then.
    pub fn wait_for(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Kills it and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Everything read so far from a child's pipe, collected by a thread of its own until end of file.
#[derive(Clone, Default)]
pub struct Collected {
    text: Arc<Mutex<String>>,
    ended: Arc<Mutex<bool>>,
}

impl Collected {
    /// Reads `from` to its end on a new thread.
    pub fn start(mut from: impl Read + Send + 'static) -> Self {
        let collected = Self::default();
        let filling = collected.clone();
        thread::spawn(move || {
            let mut chunk = [0; 4096];
            while let Ok(n @ 1..) = from.read(&mut chunk) {
                let text = String::from_utf8_lossy(&chunk[..n]);
                filling.text.lock().unwrap_or_else(PoisonError::into_inner).push_str(&text);
            }
            *filling.ended.lock().unwrap_or_else(PoisonError::into_inner) = true;
        });
        collected
    }

    /// What has been read so far.
    pub fn text(&self) -> String {
        self.text.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Waits (polling every 10 ms) until end of file or `within` has passed; the text read either way.
    pub fn until_end(&self, within: Duration) -> String {
        let deadline = Instant::now() + within;
        while !*self.ended.lock().unwrap_or_else(PoisonError::into_inner) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        self.text()
    }
}
