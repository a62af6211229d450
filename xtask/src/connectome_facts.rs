//! `cargo xtask connectome facts --crate <name>… [--out <file>|-]`: call facts read from the LLVM IR
//! rustc emits for the crates in scope (docs/connectome.md K-6; docs/connectome-facts.md).
//!
//! Each named workspace package's library is built alone with `cargo rustc -p <pkg> --lib` into
//! `target/connectome-ir`, at opt-level 0 with `--emit=llvm-ir,link -C codegen-units=1`, every crate of
//! that build with v0 symbol mangling. Cargo's JSON `compiler-artifact` message names the artifacts, and
//! the `.ll` beside them (same stem, in `deps/`) is read right after its build: no directory is
//! globbed. Direct calls between items of the scope crates are edges, calls out of scope are external
//! callees, every indirect call is a dynamic dispatch site; the file is written with
//! [`CallFacts::to_json`], so two runs over the same sources give the same bytes.
//!
//! Compile-time code never contributes edges: a `--crate` that is a proc-macro package is not built;
//! its crate name goes to `macro_expansion_crates` (not to `crates`), and `macro_expansion_calls` stays
//! empty. Build scripts are never built with IR (the IR flags reach only the library's own rustc), so
//! their calls are never read either.

mod ir;
mod names;
mod reader;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use connectome_graph::{CallFacts, FACTS_FORMAT, FactsBound};
use serde_json::Value;

/// The usage line of the task.
pub const USAGE: &str = "connectome facts --crate <package> [--crate <package>…] [--out <file>|-]";

/// The rustc flags of a scope crate's build (after `cargo rustc … --`).
/// `link-dead-code` makes rustc emit every non-generic item, async bodies included: without it, a
/// library's `async fn` bodies are emitted only if the library itself polls them.
const IR_FLAGS: &[&str] = &[
    "--emit=llvm-ir,link",
    "-C",
    "codegen-units=1",
    "-C",
    "opt-level=0",
    "-C",
    "debuginfo=0",
    "-C",
    "link-dead-code",
];

/// Runs the task with the arguments after `facts`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut packages = Vec::new();
    let mut out = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--crate" => packages.push(args.next().ok_or("--crate needs a package name")?.clone()),
            "--out" => out = Some(args.next().ok_or("--out needs a file (or - for stdout)")?.clone()),
            other => return Err(format!("unknown argument {other:?}; usage: cargo xtask {USAGE}")),
        }
    }
    if packages.is_empty() {
        return Err(format!("no --crate given; usage: cargo xtask {USAGE}"));
    }
    let workspace = Workspace::read()?;
    let started = Instant::now();
    let facts = extract(&workspace, &packages)?;
    let bytes = facts.to_json();
    let took = started.elapsed();
    let written = match out.as_deref() {
        Some("-") => {
            use std::io::Write;
            std::io::stdout().write_all(&bytes).map_err(|e| format!("stdout: {e}"))?;
            "stdout".to_owned()
        }
        other => {
            let path =
                other.map_or_else(|| workspace.target.join("connectome").join("facts.json"), PathBuf::from);
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            path.display().to_string()
        }
    };
    let bound = &facts.bound;
    eprintln!(
        "xtask: connectome facts: {} crate(s), {} edges, {} dynamic dispatch sites, {} external callees, \
         {} crate(s) without IR, {} compile-time crate(s), in {:.2} s → {written}",
        facts.crates.len(),
        facts.edges.len(),
        bound.dynamic_dispatch_sites.len(),
        bound.external_callees.len(),
        bound.crates_without_ir.len(),
        bound.macro_expansion_crates.len(),
        took.as_secs_f64(),
    );
    Ok(())
}

/// What `cargo metadata --no-deps` says about the workspace.
struct Workspace {
    cargo: String,
    root: PathBuf,
    target: PathBuf,
    /// Package name → what it is.
    packages: BTreeMap<String, Package>,
}

/// A workspace package.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Package {
    id: String,
    /// The library target's crate name (`-` as `_`), if the package has a library.
    lib: Option<String>,
    /// The library is a proc macro: compile-time code.
    proc_macro: bool,
}

impl Workspace {
    fn read() -> Result<Workspace, String> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let out = Command::new(&cargo)
            .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
            .output()
            .map_err(|e| format!("cargo metadata: {e}"))?;
        if !out.status.success() {
            return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        Workspace::from_metadata(cargo, &meta)
    }

    /// The workspace as `cargo metadata --format-version 1` describes it.
    fn from_metadata(cargo: String, meta: &Value) -> Result<Workspace, String> {
        let path = |key: &str| meta[key].as_str().map(PathBuf::from).ok_or(format!("metadata has no {key}"));
        let mut packages = BTreeMap::new();
        for package in meta["packages"].as_array().into_iter().flatten() {
            let (Some(name), Some(id)) = (package["name"].as_str(), package["id"].as_str()) else { continue };
            let targets = package["targets"].as_array().into_iter().flatten();
            let lib = targets
                .map(|t| (t, kinds(t)))
                .find(|(_, kinds)| kinds.iter().any(|k| is_lib_kind(k) || *k == PROC_MACRO));
            let proc_macro = lib.as_ref().is_some_and(|(_, kinds)| kinds.contains(&PROC_MACRO));
            let lib = lib.and_then(|(t, _)| t["name"].as_str()).map(|n| n.replace('-', "_"));
            packages.insert(name.to_owned(), Package { id: id.to_owned(), lib, proc_macro });
        }
        Ok(Workspace { cargo, root: path("workspace_root")?, target: path("target_directory")?, packages })
    }
}

/// A target's kinds, as `cargo metadata` and artifact messages give them.
fn kinds(target: &Value) -> Vec<&str> {
    target["kind"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// The target kind of a proc-macro library.
const PROC_MACRO: &str = "proc-macro";

/// A library kind whose code runs in the program it is linked into (a proc macro's runs in rustc).
fn is_lib_kind(kind: &str) -> bool {
    matches!(kind, "lib" | "rlib" | "dylib" | "cdylib" | "staticlib")
}

/// What the named packages become.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    /// Runtime libraries to build: crate name → (package, package id).
    build: BTreeMap<String, (String, String)>,
    /// Packages with no library: in scope, without IR.
    without_ir: Vec<String>,
    /// Proc-macro crates: compile-time code, never built, never in scope.
    compile_time: Vec<String>,
}

fn plan(workspace: &Workspace, packages: &[String]) -> Result<Plan, String> {
    let mut plan = Plan::default();
    for name in packages {
        let package = workspace
            .packages
            .get(name)
            .ok_or_else(|| format!("{name:?} is not a package of this workspace"))?;
        match &package.lib {
            Some(lib) if package.proc_macro => plan.compile_time.push(lib.clone()),
            Some(lib) => _ = plan.build.insert(lib.clone(), (name.clone(), package.id.clone())),
            None => plan.without_ir.push(name.replace('-', "_")),
        }
    }
    Ok(plan)
}

/// Builds every runtime library with IR and reads the facts from it.
fn extract(workspace: &Workspace, packages: &[String]) -> Result<CallFacts, String> {
    let Plan { build: scope, mut without_ir, compile_time } = plan(workspace, packages)?;
    let crates: BTreeSet<String> = scope.keys().cloned().chain(without_ir.iter().cloned()).collect();
    let mut reader = reader::Reader::new(crates.clone());
    let mut read_any = false;
    for (lib, (package, id)) in &scope {
        match build(workspace, package, id)? {
            Some(ll) => {
                let text = std::fs::read_to_string(&ll).map_err(|e| format!("{}: {e}", ll.display()))?;
                reader.read(&text);
                read_any = true;
            }
            None => without_ir.push(lib.clone()),
        }
    }
    let mut sources = vec!["crate_map".to_owned()];
    if read_any {
        sources.push("llvm_ir".to_owned());
    }
    let mut facts = CallFacts {
        format: FACTS_FORMAT,
        rustc_version: rustc_version(workspace)?,
        crates: crates.into_iter().collect(),
        edges: reader.edges,
        bound: FactsBound {
            dynamic_dispatch_sites: reader.sites,
            macro_expansion_calls: Vec::new(),
            macro_expansion_crates: compile_time,
            external_callees: reader.external,
            crates_without_ir: without_ir,
            sources_used: sources,
        },
    };
    facts.normalize();
    Ok(facts)
}

/// Builds one package's library with IR; the `.ll` derived from its artifact message, if it exists.
fn build(workspace: &Workspace, package: &str, id: &str) -> Result<Option<PathBuf>, String> {
    let target_dir = workspace.target.join("connectome-ir");
    let out = Command::new(&workspace.cargo)
        .current_dir(&workspace.root)
        .args(["rustc", "--locked", "--lib", "--message-format=json-render-diagnostics", "-p", package])
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--")
        .args(IR_FLAGS)
        .env("CARGO_ENCODED_RUSTFLAGS", "-Csymbol-mangling-version=v0")
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .map_err(|e| format!("cargo rustc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo rustc -p {package} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else { continue };
        if message["reason"] != "compiler-artifact" || message["package_id"] != id {
            continue;
        }
        if !message["target"]["kind"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(is_lib_kind)
        {
            continue;
        }
        for file in message["filenames"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if let Some(ll) = ll_beside(Path::new(file)).filter(|ll| ll.is_file()) {
                return Ok(Some(ll));
            }
        }
    }
    Ok(None)
}

/// `deps/libfoo-1234.rmeta` → `deps/foo-1234.ll` (only artifacts in `deps/` carry the hash rustc uses).
fn ll_beside(artifact: &Path) -> Option<PathBuf> {
    let dir = artifact.parent().filter(|d| d.file_name().is_some_and(|n| n == "deps"))?;
    let stem = artifact.file_stem()?.to_str()?;
    Some(dir.join(format!("{}.ll", stem.strip_prefix("lib").unwrap_or(stem))))
}

/// `rustc --version` of the toolchain the workspace pins (run in the workspace root).
fn rustc_version(workspace: &Workspace) -> Result<String, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let out = Command::new(rustc)
        .current_dir(&workspace.root)
        .arg("--version")
        .output()
        .map_err(|e| format!("rustc --version: {e}"))?;
    if !out.status.success() {
        return Err(format!("rustc --version failed ({})", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Package, Plan, Workspace, plan};

    fn workspace() -> Workspace {
        let target = |name: &str, kind: &str| json!({"name": name, "kind": [kind]});
        let meta = json!({
            "workspace_root": "/w",
            "target_directory": "/w/target",
            "packages": [
                {
                    "name": "my-lib",
                    "id": "lib-id",
                    "targets": [target("my-lib", "lib"), target("build-script-build", "custom-build")],
                },
                {"name": "my-macros", "id": "macros-id", "targets": [target("my-macros", "proc-macro")]},
                {"name": "my-bin", "id": "bin-id", "targets": [target("my-bin", "bin")]},
            ],
        });
        Workspace::from_metadata("cargo".to_owned(), &meta).expect("metadata reads")
    }

    #[test]
    fn reads_packages_and_marks_proc_macros() {
        let packages = workspace().packages;
        let package = |lib: Option<&str>, id: &str, proc_macro| Package {
            id: id.to_owned(),
            lib: lib.map(str::to_owned),
            proc_macro,
        };
        assert_eq!(packages["my-lib"], package(Some("my_lib"), "lib-id", false));
        assert_eq!(packages["my-macros"], package(Some("my_macros"), "macros-id", true));
        assert_eq!(packages["my-bin"], package(None, "bin-id", false));
    }

    #[test]
    fn a_proc_macro_crate_is_compile_time_never_built_never_in_scope() {
        let names = ["my-macros", "my-lib", "my-bin"].map(str::to_owned);
        let got = plan(&workspace(), &names).expect("a plan");
        let want = Plan {
            build: [("my_lib".to_owned(), ("my-lib".to_owned(), "lib-id".to_owned()))].into(),
            without_ir: vec!["my_bin".to_owned()],
            compile_time: vec!["my_macros".to_owned()],
        };
        assert_eq!(got, want);
        assert!(plan(&workspace(), &["ghost".to_owned()]).is_err());
    }
}
