//! Which lock the builds use: the workspace's `Cargo.lock` as it is, or, for a workspace without one,
//! a lock of the facts' own resolved under the IR directory, the workspace's tree left untouched.
//!
//! Cargo reads and writes the lock beside the workspace root's manifest, and stable cargo has no flag
//! to put it elsewhere. The own lock therefore belongs to a scratch package of its own workspace,
//! `<IR directory>/lock/Cargo.toml`, that depends by path on each package to build and carries the
//! workspace root's `[profile.…]` tables as written: cargo resolves their dependencies there
//! (`cargo update --workspace`, which writes `<IR directory>/lock/Cargo.lock` and keeps what an
//! earlier run locked), and each build runs `--locked` against that manifest.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ExtractError;
use crate::workspace::Workspace;

/// The name of the scratch package whose workspace holds the own lock.
const SCOPE_PACKAGE: &str = "connectome-facts-scope";

/// What cargo says when `--locked` stops it from writing the lock (the two wordings of recent cargo).
const LOCKED_REFUSAL: &str = "--locked was passed to prevent this";

/// Where the builds take their lock from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LockSource {
    /// The workspace's `Cargo.lock`, used as it is: every cargo run gets `--locked`.
    Workspace,
    /// The workspace has no `Cargo.lock`: a lock of the facts' own, in this directory.
    Own(PathBuf),
    /// The request turned `locked` off: cargo runs in the workspace as it would by hand.
    Unlocked,
}

impl LockSource {
    /// The source for a workspace at `root` whose IR builds go to `ir`.
    pub(crate) fn choose(locked: bool, root: &Path, ir: &Path) -> LockSource {
        if !locked {
            LockSource::Unlocked
        } else if root.join("Cargo.lock").is_file() {
            LockSource::Workspace
        } else {
            LockSource::Own(ir.join("lock"))
        }
    }
}

/// Writes the scratch package over `packages` (name, directory) into `dir` and resolves its lock
/// there; nothing is written anywhere else.
pub(crate) fn resolve(
    workspace: &Workspace,
    dir: &Path,
    packages: &[(&str, &Path)],
) -> Result<(), ExtractError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ExtractError::Path { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let manifest_path = dir.join("Cargo.toml");
    let root_manifest = workspace.root().join("Cargo.toml");
    let root_text = std::fs::read_to_string(&root_manifest).map_err(io(&root_manifest))?;
    let text = manifest(packages, &profiles(&root_text))?;
    if std::fs::read_to_string(&manifest_path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&manifest_path, text).map_err(io(&manifest_path))?;
    }
    let lib = dir.join("lib.rs");
    if !lib.is_file() {
        std::fs::write(&lib, "").map_err(io(&lib))?;
    }
    let out = Command::new(workspace.cargo())
        .current_dir(workspace.root())
        .args(["update", "--workspace", "--manifest-path"])
        .arg(&manifest_path)
        .output()
        .map_err(|source| ExtractError::spawn("cargo update", source))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        return Err(ExtractError::Resolve { root: workspace.root().to_owned(), status: out.status, stderr });
    }
    Ok(())
}

/// The scratch package's manifest: a library (never built) depending by path on each package, alone
/// in its workspace, with the workspace's `profiles` (so the builds compile as in the workspace).
fn manifest(packages: &[(&str, &Path)], profiles: &str) -> Result<String, ExtractError> {
    let mut text = format!(
        "# Written by connectome-facts: the lock of this workspace is the one its builds use.\n\
         [package]\nname = \"{SCOPE_PACKAGE}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\npath = \"lib.rs\"\n\n[dependencies]\n"
    );
    for (name, dir) in packages {
        let shown = dir.to_str().ok_or_else(|| ExtractError::Path {
            path: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"),
        })?;
        text.push_str(&format!("{} = {{ path = {} }}\n", toml_string(name), toml_string(shown)));
    }
    text.push_str("\n[workspace]\n");
    if !profiles.is_empty() {
        text.push_str("\n# The [profile] tables of the workspace's root manifest, as written there.\n");
        text.push_str(profiles);
    }
    Ok(text)
}

/// The `[profile.…]` tables of a root manifest, as written: each such header line and the lines up
/// to the next table header. (Profiles take no paths, so they read the same from the scratch package.)
fn profiles(root_manifest: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in root_manifest.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            let header = trimmed.trim_start_matches('[').trim_start();
            let rest = header.strip_prefix("profile").map(str::trim_start);
            inside = !trimmed.starts_with("[[") && rest.is_some_and(|r| r.starts_with(['.', ']']));
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The refusal for a cargo run that failed because the workspace's lock is out of date, if that is why.
pub(crate) fn outdated(workspace: &Workspace, stderr: &str) -> Option<ExtractError> {
    (workspace.lock() == &LockSource::Workspace && stderr.contains(LOCKED_REFUSAL))
        .then(|| ExtractError::LockOutdated { root: workspace.root().to_owned() })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{LockSource, manifest, profiles, toml_string};

    #[test]
    fn ck13_a_workspace_without_a_lock_gets_one_under_the_ir_directory() {
        let root = std::env::temp_dir().join("connectome-facts-no-such-workspace");
        let ir = Path::new("/t/connectome-ir");
        assert_eq!(LockSource::choose(true, &root, ir), LockSource::Own(ir.join("lock")));
        assert_eq!(LockSource::choose(false, &root, ir), LockSource::Unlocked);
        let with_lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
        assert_eq!(LockSource::choose(true, &with_lock, ir), LockSource::Workspace);
    }

    #[test]
    fn ck13_the_scratch_manifest_depends_on_each_package_by_path_alone_in_its_workspace() {
        let text = manifest(&[("my-lib", Path::new("/w/my \"lib\"")), ("b", Path::new("C:\\w\\b"))], "")
            .expect("UTF-8 paths");
        assert!(text.contains("\n[dependencies]\n\"my-lib\" = { path = \"/w/my \\\"lib\\\"\" }\n"), "{text}");
        assert!(text.contains("\n\"b\" = { path = \"C:\\\\w\\\\b\" }\n"), "{text}");
        assert!(text.ends_with("\n[workspace]\n"), "{text}");
        assert_eq!(toml_string("a\nb"), "\"a\\u000Ab\"");
    }

    #[test]
    fn ck13_the_scratch_manifest_keeps_the_workspaces_profiles_as_written() {
        let root = "[workspace]\nmembers = [\"a\"]\n\n[profile.dev]\npanic = \"abort\"\n\n\
                    [workspace.dependencies]\nserde = \"1\"\n  [ profile.release.package.\"*\" ]\nopt-level = 3\n\
                    [[bin]]\nname = \"x\"\n[patch.crates-io]\nserde = { path = \"../serde\" }\n";
        let kept = profiles(root);
        assert_eq!(
            kept,
            "[profile.dev]\npanic = \"abort\"\n\n  [ profile.release.package.\"*\" ]\nopt-level = 3\n"
        );
        let text = manifest(&[("a", Path::new("/w/a"))], &kept).expect("a manifest");
        assert!(text.ends_with(&format!("[workspace]\n\n# The [profile] tables of the workspace's root manifest, as written there.\n{kept}")), "{text}");
        assert_eq!(profiles("[workspace]\n[profiles]\n"), "");
        assert_eq!(profiles("[profile]\ndev.panic = \"abort\"\n"), "[profile]\ndev.panic = \"abort\"\n");
    }
}
