//! `cargo xtask package`: every published crate as a registry would see it.
//!
//! 1. **Metadata.** Each crate of [`LIBRARIES`] says what it is for, with keywords, categories, a
//!    README of its own, a licence, the minimum Rust version and (for a library) its documentation page;
//!    no URL field names a placeholder host. Read from `cargo metadata`.
//! 2. **Packages, verified.** `cargo package` for all of them in one run: cargo orders them by their
//!    dependencies and builds each from its own `.crate` against the others' packaged versions (a local
//!    registry it makes under `target/package/`). Each package must carry `LICENSE` and its `README.md`.
//! 3. **Tests from the packages alone.** The `.crate` files are unpacked into a scratch workspace under
//!    the system's temporary directory, away from this repository, so that a test reading a file outside
//!    its crate (`../../../docs/…`) finds nothing there and fails. The scratch workspace resolves the crates'
//!    dependencies on one another to the unpacked packages (`[patch.crates-io]`), resolves every other
//!    dependency against a copy of this workspace's `Cargo.lock` (cargo keeps the locked version of
//!    every package it still needs), and runs each crate's examples build, tests (every
//!    feature on) and doctests with the target directory `target/package-tests/`.
//!
//! **Fresh mtimes.** Every entry of a `.crate` carries one fixed modification time (cargo writes them
//! deterministically, in 2006), and the scratch directory's name changes with each run while the path of
//! each crate relative to it does not. Cargo names and fingerprints a workspace crate's build by that
//! relative path and judges its sources by their mtimes, so a second run unpacking files that old into a
//! new scratch directory found the first run's builds in `target/package-tests/` fresh: it ran the first
//! run's test binaries — the first run's code, and `env!("CARGO_MANIFEST_DIR")` naming the first run's
//! scratch directory, deleted since. The packages are therefore unpacked with the time of unpacking
//! (`tar -m`): cargo rebuilds the packaged crates every run, from what this run packaged, while their
//! registry dependencies stay built. (A scratch directory at a stable path would keep the paths right
//! but still run stale code after an edit; a target directory per run would rebuild every dependency.)
//!
//! **No stale unpacked copies.** To verify a package against the others, cargo unpacks each packaged
//! dependency from that local registry into `$CARGO_HOME/registry/src/-<hash>/<name>-<version>/`, the
//! hash naming the registry's path, and it reuses a directory it finds there without comparing it with
//! the `.crate`. The version changes only at a release, so a second run from the same checkout path (a
//! CI machine that keeps `~/.cargo`) verified against the sources of the *first* run: a module made public
//! since was private in the copy. Before packaging, the unpacked copies of this workspace's packages at
//! their current versions are removed from every local registry's directory (those whose name starts with
//! `-`); crates.io's directory, and every other crate, are left alone.
//!
//! `--no-test` stops after step 2.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_kernel_workspace::scratch::{Scratch, cargo_in, copy_pins};
use mcp_kernel_workspace::{self as workspace, cargo_program};
use serde_json::Value;

use crate::boundary::LIBRARIES;

/// Where the scratch workspace's builds go, under the repository's `target/`.
const TEST_TARGET_DIR: &str = "target/package-tests";
/// Hosts that stand for "no real address": a URL naming one is a placeholder, not metadata.
const PLACEHOLDER_HOSTS: &[&str] =
    &["example.invalid", "example.com", "example.org", "example.net", "localhost"];
/// The development profile of the scratch workspace: the same as this workspace's (Cargo.toml), since
/// a package carries no profile of its own.
const SCRATCH_PROFILE: &str = "[profile.dev]\ndebug = \"line-tables-only\"\nincremental = false\n\n\
                               [profile.dev.package.\"*\"]\ndebug = false\n";

/// Runs the task.
pub fn run(args: &[String]) -> Result<(), String> {
    let test = match args {
        [] => true,
        [flag] if flag == "--no-test" => false,
        _ => return Err("usage: cargo xtask package [--no-test]".into()),
    };
    let (packages, target_dir) = published_packages()?;
    let faults: Vec<String> = packages.iter().flat_map(metadata_faults).collect();
    if !faults.is_empty() {
        return Err(format!("metadata:\n  {}", faults.join("\n  ")));
    }
    eprintln!("xtask: package: metadata of {} crates checked", packages.len());
    let removed = forget_unpacked_copies(&cargo_home()?, &packages)?;
    if removed > 0 {
        eprintln!("xtask: package: {removed} stale unpacked copies of these packages removed");
    }
    let mut args = vec!["package".to_owned(), "--locked".to_owned()];
    for name in LIBRARIES {
        args.extend(["-p".to_owned(), (*name).to_owned()]);
    }
    run_cargo(Command::new(cargo_program()).args(&args), &args)?;
    let crates: Vec<PathBuf> =
        packages.iter().map(|p| crate_file(&target_dir, p)).collect::<Result<_, _>>()?;
    for (package, file) in packages.iter().zip(&crates) {
        let listed = list(file)?;
        let root = format!("{}-{}/", package.name, package.version);
        for required in ["LICENSE", "README.md", "Cargo.toml"] {
            if !listed.iter().any(|entry| entry.strip_prefix(&root) == Some(required)) {
                return Err(format!("{} does not carry {required}", file.display()));
            }
        }
    }
    eprintln!("xtask: package: {} packages built and verified", crates.len());
    if test {
        test_packages(&packages, &crates)?;
        eprintln!("xtask: package: every package's tests passed from the package alone");
    }
    Ok(())
}

/// A published crate, as `cargo metadata` describes it.
struct Package {
    name: String,
    version: String,
    meta: Value,
}

/// The crates of [`LIBRARIES`], every one of which must be a workspace member, and the workspace's
/// target directory (where `cargo package` writes).
fn published_packages() -> Result<(Vec<Package>, PathBuf), String> {
    let meta = workspace::manifest_metadata(Path::new("Cargo.toml"))?;
    let target_dir = workspace::target_directory(&meta)?;
    let members: Vec<&Value> = meta["packages"].as_array().into_iter().flatten().collect();
    LIBRARIES
        .iter()
        .map(|name| {
            let found =
                members.iter().find(|p| p["name"] == *name).ok_or(format!("{name} is not a member"))?;
            let version = found["version"].as_str().ok_or("a package without a version")?.to_owned();
            Ok(Package { name: (*name).to_owned(), version, meta: (*found).clone() })
        })
        .collect::<Result<_, String>>()
        .map(|packages| (packages, target_dir))
}

/// What a published crate's metadata lacks or gets wrong, one line each.
fn metadata_faults(package: &Package) -> Vec<String> {
    let meta = &package.meta;
    let name = &package.name;
    let mut faults = Vec::new();
    let text = |field: &str| meta[field].as_str().filter(|s| !s.trim().is_empty());
    let list_len = |field: &str| meta[field].as_array().map_or(0, Vec::len);
    match text("description") {
        None => faults.push(format!("{name}: no description")),
        Some(d) if d.split_whitespace().count() < 6 || d.starts_with("mcp-kernel:") => {
            faults.push(format!("{name}: the description must say what the crate is for, in a sentence"));
        }
        Some(_) => {}
    }
    if list_len("keywords") == 0 {
        faults.push(format!("{name}: no keywords"));
    }
    if list_len("keywords") > 5 {
        faults.push(format!("{name}: more than 5 keywords (the registry's limit)"));
    }
    if list_len("categories") == 0 {
        faults.push(format!("{name}: no categories"));
    }
    for field in ["license", "rust_version", "readme"] {
        if text(field).is_none() {
            faults.push(format!("{name}: no {field}"));
        }
    }
    let own_readme =
        |readme: &str| (readme == "README.md" || readme.ends_with("/README.md")) && !readme.contains("..");
    if text("readme").is_some_and(|readme| !own_readme(readme)) {
        faults.push(format!("{name}: the readme must be the crate's own README.md"));
    }
    let is_library = meta["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["kind"].as_array().into_iter().flatten().any(|k| k == "lib"));
    if is_library && text("documentation") != Some(&format!("https://docs.rs/{name}")) {
        faults.push(format!("{name}: documentation must be https://docs.rs/{name}"));
    }
    for field in ["documentation", "homepage", "repository"] {
        if let Some(url) = text(field) {
            let host = url.split("://").nth(1).and_then(|rest| rest.split('/').next()).unwrap_or("");
            if PLACEHOLDER_HOSTS
                .iter()
                .any(|placeholder| host == *placeholder || host.ends_with(&format!(".{placeholder}")))
            {
                faults.push(format!("{name}: {field} names a placeholder host ({host})"));
            }
        }
    }
    faults
}

/// Cargo's home: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Result<PathBuf, String> {
    match std::env::var_os("CARGO_HOME") {
        Some(home) if !home.is_empty() => Ok(PathBuf::from(home)),
        _ => std::env::var_os("HOME")
            .map(|home| Path::new(&home).join(".cargo"))
            .ok_or_else(|| "neither CARGO_HOME nor HOME is set".to_owned()),
    }
}

/// Removes `<name>-<version>` of every package from each local registry's unpacked sources under
/// `cargo_home` (module doc, "No stale unpacked copies"); returns how many it removed.
fn forget_unpacked_copies(cargo_home: &Path, packages: &[Package]) -> Result<usize, String> {
    let sources = cargo_home.join("registry").join("src");
    let Ok(registries) = std::fs::read_dir(&sources) else { return Ok(0) };
    let mut removed = 0;
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for package in packages {
            let copy = registry.path().join(format!("{}-{}", package.name, package.version));
            if copy.is_dir() {
                std::fs::remove_dir_all(&copy).map_err(|e| format!("removing {}: {e}", copy.display()))?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// The `.crate` file `cargo package` wrote for a package, under the target directory.
fn crate_file(target_dir: &Path, package: &Package) -> Result<PathBuf, String> {
    let path = target_dir.join("package").join(format!("{}-{}.crate", package.name, package.version));
    if path.is_file() { Ok(path) } else { Err(format!("{} is missing after cargo package", path.display())) }
}

/// The entries of a `.crate` (a gzipped tarball).
fn list(file: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("tar").arg("-tzf").arg(file).output().map_err(|e| format!("tar: {e}"))?;
    if !out.status.success() {
        return Err(format!("tar -tzf {} failed", file.display()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect())
}

/// Step 3: the packages unpacked away from the repository, tested as one scratch workspace.
fn test_packages(packages: &[Package], crates: &[PathBuf]) -> Result<(), String> {
    let root = std::env::current_dir().map_err(|e| e.to_string())?;
    let scratch = Scratch::new("mcp-kernel-packages")?;
    for file in crates {
        unpack(&root.join(file), &scratch.0)?;
    }
    let dirs: Vec<String> = packages.iter().map(|p| format!("{}-{}", p.name, p.version)).collect();
    std::fs::write(scratch.0.join("Cargo.toml"), scratch_manifest(packages, &dirs))
        .map_err(|e| e.to_string())?;
    // The pinned versions of every other dependency, and the toolchain, are this workspace's.
    copy_pins(&root, &scratch.0)?;
    let target = root.join(TEST_TARGET_DIR);
    let steps: [&[&str]; 3] = [
        // The facade's tests spawn its example programs, which `--all-targets` builds only as tests.
        &["build", "--workspace", "--examples", "--all-features"],
        &["test", "--workspace", "--all-targets", "--all-features", "--no-fail-fast"],
        &["test", "--workspace", "--doc", "--all-features"],
    ];
    for step in steps {
        let args: Vec<String> = step.iter().map(|s| (*s).to_owned()).collect();
        run_cargo(cargo_in(&scratch.0, &target).args(&args), &args)?;
    }
    Ok(())
}

/// Unpacks a `.crate` into `dir`, every file and directory dated now rather than with the `.crate`'s
/// fixed time, so that cargo sees the sources as newer than any earlier run's builds (module doc).
fn unpack(file: &Path, dir: &Path) -> Result<(), String> {
    let status = Command::new("tar")
        .args(["-x", "-m", "-z", "-f"])
        .arg(file)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("tar: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("tar -xzf {} failed", file.display())) }
}

/// The scratch workspace's manifest: the unpacked packages as members, each one's dependents
/// resolving it to its unpacked directory.
fn scratch_manifest(packages: &[Package], dirs: &[String]) -> String {
    let members: Vec<String> = dirs.iter().map(|d| format!("    \"{d}\",")).collect();
    let patches: Vec<String> =
        packages.iter().zip(dirs).map(|(p, d)| format!("{} = {{ path = \"{d}\" }}", p.name)).collect();
    format!(
        "# Made by `cargo xtask package`: the packages of mcp-kernel, unpacked from their .crate files.\n\
         [workspace]\nresolver = \"3\"\nmembers = [\n{}\n]\n\n[patch.crates-io]\n{}\n\n{SCRATCH_PROFILE}",
        members.join("\n"),
        patches.join("\n")
    )
}

/// Runs `command` (cargo, with `args` already given to it), failing with the command line when it fails.
fn run_cargo(command: &mut Command, args: &[String]) -> Result<(), String> {
    eprintln!("xtask: package — cargo {}", args.join(" "));
    let status = command.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("cargo {} failed ({status})", args.join(" "))) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn package(meta: Value) -> Package {
        Package { name: "demo".into(), version: "0.3.0".into(), meta }
    }

    fn complete() -> Value {
        json!({
            "description": "Demo wire types for a Model Context Protocol server, with one bounded reader.",
            "keywords": ["mcp"],
            "categories": ["encoding"],
            "license": "Apache-2.0",
            "rust_version": "1.95",
            "readme": format!("/w/crates/demo/README{}", ".md"),
            "documentation": "https://docs.rs/demo",
            "repository": null,
            "targets": [{"kind": ["lib"]}],
        })
    }

    #[test]
    fn complete_metadata_has_no_fault() {
        assert_eq!(metadata_faults(&package(complete())), Vec::<String>::new());
    }

    #[test]
    fn refuses_a_placeholder_repository_url() {
        let mut meta = complete();
        meta["repository"] = json!("https://example.invalid/mcp-kernel");
        assert_eq!(
            metadata_faults(&package(meta)),
            ["demo: repository names a placeholder host (example.invalid)"]
        );
    }

    #[test]
    fn refuses_a_description_that_only_names_the_crate() {
        let mut meta = complete();
        meta["description"] = json!("mcp-kernel: wire");
        assert_eq!(
            metadata_faults(&package(meta)),
            ["demo: the description must say what the crate is for, in a sentence"]
        );
    }

    #[test]
    fn refuses_the_workspace_readme_as_a_crate_readme() {
        let mut meta = complete();
        // Spelled in two pieces so that the census, which reads this file, sees no cited path.
        meta["readme"] = json!(format!("/w/crates/demo/../../README{}", ".md"));
        assert_eq!(metadata_faults(&package(meta)), ["demo: the readme must be the crate's own README.md"]);
    }

    #[test]
    fn a_library_needs_keywords_categories_and_its_documentation_page() {
        let mut meta = complete();
        meta["keywords"] = json!([]);
        meta["categories"] = json!([]);
        meta["documentation"] = Value::Null;
        assert_eq!(
            metadata_faults(&package(meta)),
            ["demo: no keywords", "demo: no categories", "demo: documentation must be https://docs.rs/demo"]
        );
    }

    #[test]
    fn a_program_needs_no_documentation_page() {
        let mut meta = complete();
        meta["documentation"] = Value::Null;
        meta["targets"] = json!([{"kind": ["bin"]}]);
        assert_eq!(metadata_faults(&package(meta)), Vec::<String>::new());
    }

    #[test]
    fn an_unpacked_package_is_dated_now_not_with_the_crate_files_fixed_time() {
        let scratch = Scratch::new("xtask-unpack-test").unwrap();
        let source = scratch.0.join("demo-0.3.0");
        std::fs::create_dir(&source).unwrap();
        // The time cargo gives every entry of a `.crate` (2006-07-24).
        let packaged = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_153_704_088);
        let lib = std::fs::File::create(source.join("lib.rs")).unwrap();
        lib.set_modified(packaged).unwrap();
        drop(lib);
        let status = Command::new("tar")
            .args(["-c", "-z", "-f", "demo-0.3.0.crate", "demo-0.3.0"])
            .current_dir(&scratch.0)
            .status()
            .unwrap();
        assert!(status.success());
        let into = scratch.0.join("unpacked");
        std::fs::create_dir(&into).unwrap();
        let before = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        unpack(&scratch.0.join("demo-0.3.0.crate"), &into).unwrap();
        let modified = std::fs::metadata(into.join("demo-0.3.0/lib.rs")).unwrap().modified().unwrap();
        assert!(
            modified > before,
            "unpacked with the packaged time {modified:?}, so stale builds look fresh"
        );
    }

    #[test]
    fn stale_unpacked_copies_are_removed_from_local_registries_only() {
        let home = Scratch::new("mcp-kernel-cargo-home").unwrap();
        let src = home.0.join("registry/src");
        let local = src.join("-22c3805da5a543b4");
        let crates_io = src.join("index.crates.io-1949cf8c6b5b557f");
        for dir in [
            local.join("demo-0.3.0/src"),
            local.join("demo-0.2.0/src"),
            local.join("serde-1.0.0/src"),
            crates_io.join("demo-0.3.0/src"),
        ] {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let removed = forget_unpacked_copies(&home.0, &[package(complete())]).unwrap();
        assert_eq!(removed, 1);
        assert!(!local.join("demo-0.3.0").exists(), "the stale copy of this version is gone");
        assert!(local.join("demo-0.2.0").is_dir(), "another version stays");
        assert!(local.join("serde-1.0.0").is_dir(), "another crate stays");
        assert!(crates_io.join("demo-0.3.0").is_dir(), "crates.io's copies stay");
    }

    #[test]
    fn no_registry_directory_removes_nothing() {
        let home = Scratch::new("mcp-kernel-cargo-home").unwrap();
        assert_eq!(forget_unpacked_copies(&home.0, &[package(complete())]).unwrap(), 0);
    }

    #[test]
    fn the_scratch_manifest_patches_every_package_to_its_directory() {
        let packages = [package(complete())];
        let text = scratch_manifest(&packages, &["demo-0.3.0".to_owned()]);
        assert!(text.contains("members = [\n    \"demo-0.3.0\",\n]"), "{text}");
        assert!(text.contains("[patch.crates-io]\ndemo = { path = \"demo-0.3.0\" }"), "{text}");
        assert!(text.contains("incremental = false"), "{text}");
    }
}
