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
    let manifest_path = dir.join("Cargo.toml");
    ours(dir)?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let root_manifest = workspace.root().join("Cargo.toml");
    let root_text = std::fs::read_to_string(&root_manifest).map_err(io(&root_manifest))?;
    let root = Root::read(&root_text).map_err(|what| ExtractError::Path {
        path: root_manifest.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, what),
    })?;
    if root.patches {
        return Err(ExtractError::PatchWithoutLock { root: workspace.root().to_owned() });
    }
    let text = manifest(packages, &root)?;
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

/// The first line of every scratch manifest: what this program wrote, and may write again.
const MARKER: &str = "# Written by connectome-facts";

/// What the scratch package takes from the workspace root's manifest.
#[derive(Debug, Default, PartialEq)]
struct Root {
    /// Its `[profile]` table, written out as TOML (empty when it has none).
    profiles: String,
    /// Its `workspace.resolver`, when it names one.
    resolver: Option<String>,
    /// Whether it has `[patch]` or `[replace]`, which the scratch package cannot carry (their paths
    /// are relative to the root).
    patches: bool,
}

impl Root {
    /// Reads a root manifest as TOML (a string that merely looks like a table header is a string);
    /// what is wrong with it, when it is not TOML.
    fn read(text: &str) -> Result<Root, String> {
        let document: toml_edit::DocumentMut =
            text.parse().map_err(|_| "the workspace manifest is not valid TOML".to_owned())?;
        let profiles = match document.get("profile") {
            Some(profile) => {
                let mut only = toml_edit::DocumentMut::new();
                only.insert("profile", profile.clone());
                only.to_string()
            }
            None => String::new(),
        };
        let resolver = document
            .get("workspace")
            .and_then(|workspace| workspace.get("resolver"))
            .and_then(toml_edit::Item::as_str)
            .map(str::to_owned);
        let patches = document.contains_key("patch") || document.contains_key("replace");
        Ok(Root { profiles, resolver, patches })
    }
}

/// Refuses a `dir` whose `Cargo.toml` this program did not write (a package of the workspace, with
/// `--target-dir` pointing into the tree): it is never written into.
fn ours(dir: &Path) -> Result<(), ExtractError> {
    match std::fs::read_to_string(dir.join("Cargo.toml")) {
        Ok(existing) if !existing.starts_with(MARKER) => {
            Err(ExtractError::ForeignLockDir { dir: dir.to_owned() })
        }
        _ => Ok(()),
    }
}

/// The scratch package's manifest: a library (never built) depending by path on each package, alone
/// in its workspace, with the workspace's profiles and resolver (so the builds compile and resolve as
/// in the workspace).
fn manifest(packages: &[(&str, &Path)], root: &Root) -> Result<String, ExtractError> {
    let mut text = format!(
        "{MARKER}: the lock of this workspace is the one its builds use.\n\
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
    if let Some(resolver) = &root.resolver {
        text.push_str(&format!("resolver = {}\n", toml_string(resolver)));
    }
    if !root.profiles.is_empty() {
        text.push_str("\n# The [profile] tables of the workspace's root manifest.\n");
        text.push_str(&root.profiles);
    }
    Ok(text)
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

    use super::{LockSource, Root, manifest, ours, toml_string};

    #[test]
    fn ck13_a_workspace_without_a_lock_gets_one_under_the_ir_directory() {
        let root = std::env::temp_dir().join("connectome-facts-no-such-workspace");
        let ir = Path::new("/t/connectome-ir");
        assert_eq!(LockSource::choose(true, &root, ir), LockSource::Own(ir.join("lock")));
        assert_eq!(LockSource::choose(false, &root, ir), LockSource::Unlocked);
        let with_lock = crate::scratch_root_with_lock("lock-choose");
        assert_eq!(LockSource::choose(true, &with_lock, ir), LockSource::Workspace);
        let _ = std::fs::remove_dir_all(with_lock);
    }

    #[test]
    fn ck13_the_scratch_manifest_depends_on_each_package_by_path_alone_in_its_workspace() {
        let packages = [("my-lib", Path::new("/w/my \"lib\"")), ("b", Path::new("C:\\w\\b"))];
        let text = manifest(&packages, &Root::default()).expect("UTF-8 paths");
        assert!(text.starts_with("# Written by connectome-facts"), "{text}");
        assert!(text.contains("\n[dependencies]\n\"my-lib\" = { path = \"/w/my \\\"lib\\\"\" }\n"), "{text}");
        assert!(text.contains("\n\"b\" = { path = \"C:\\\\w\\\\b\" }\n"), "{text}");
        assert!(text.ends_with("\n[workspace]\n"), "{text}");
        assert_eq!(toml_string("a\nb"), "\"a\\u000Ab\"");
    }

    #[test]
    fn ck13_the_scratch_manifest_keeps_the_workspaces_profiles_and_resolver() {
        let root = "[workspace]\nmembers = [\"a\"]\nresolver = \"3\"\n\n[profile.dev]\npanic = \"abort\"\n\n\
                    [workspace.dependencies]\nserde = \"1\"\n  [ profile.release.package.\"*\" ]\nopt-level = 3\n";
        let root = Root::read(root).expect("TOML");
        assert!(!root.patches);
        assert_eq!(root.resolver.as_deref(), Some("3"));
        let text = manifest(&[("a", Path::new("/w/a"))], &root).expect("a manifest");
        let scratch: toml_edit::DocumentMut = text.parse().expect("the scratch manifest is TOML");
        assert_eq!(scratch["workspace"]["resolver"].as_str(), Some("3"));
        assert_eq!(scratch["profile"]["dev"]["panic"].as_str(), Some("abort"));
        assert_eq!(scratch["profile"]["release"]["package"]["*"]["opt-level"].as_integer(), Some(3));
        // Dotted keys are profiles too.
        let dotted = Root::read("profile.dev.opt-level = 1\n").expect("TOML");
        assert!(dotted.profiles.contains("opt-level = 1"), "{}", dotted.profiles);
    }

    #[test]
    fn ck13_a_directory_holding_a_manifest_of_someone_elses_is_never_written_into() {
        let dir = std::env::temp_dir().join(format!("connectome-facts-ours-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        assert!(ours(&dir).is_ok(), "an empty directory is ours to write");
        let theirs = "[package]\nname = \"mine\"\n";
        std::fs::write(dir.join("Cargo.toml"), theirs).expect("written");
        assert!(matches!(ours(&dir), Err(crate::ExtractError::ForeignLockDir { .. })));
        assert_eq!(std::fs::read_to_string(dir.join("Cargo.toml")).expect("kept"), theirs);
        let text = manifest(&[("a", Path::new("/w/a"))], &Root::default()).expect("a manifest");
        std::fs::write(dir.join("Cargo.toml"), text).expect("written");
        assert!(ours(&dir).is_ok(), "what this program wrote it may write again");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ck13_a_header_inside_a_string_is_a_string_not_a_profile() {
        let root = "[workspace.metadata.notes]\ntext = \"\"\"\n[profile.dev]\ninjected = 1\n\"\"\"\n\n\
                    [profile.release]\ndebug = 1\n";
        let root = Root::read(root).expect("TOML");
        assert!(!root.profiles.contains("injected"), "{}", root.profiles);
        assert!(root.profiles.contains("[profile.release]"), "{}", root.profiles);
    }

    #[test]
    fn ck13_a_workspace_that_patches_is_told_to_commit_a_lock() {
        assert!(Root::read("[patch.crates-io]\nfoo = { path = \"foo\" }\n").expect("TOML").patches);
        assert!(Root::read("[replace]\n\"foo:0.1.0\" = { path = \"foo\" }\n").expect("TOML").patches);
        assert!(Root::read("not = [toml").is_err());
    }
}
