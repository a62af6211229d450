//! The workspace as `cargo metadata --no-deps` describes it, and what the named packages become.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::lock::LockSource;
use crate::{ExtractError, FactsRequest};

/// A workspace read for one request: its root, its target directories and its packages.
#[derive(Debug, Clone)]
pub struct Workspace {
    request: FactsRequest,
    cargo: OsString,
    root: PathBuf,
    target: PathBuf,
    ir: PathBuf,
    /// Which lock the builds use.
    lock: LockSource,
    /// Package name → what it is.
    packages: BTreeMap<String, Package>,
}

/// A workspace package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Package {
    /// Cargo's package id, which its artifact messages carry.
    pub id: String,
    /// The library target's crate name (`-` as `_`), if the package has a library.
    pub lib: Option<String>,
    /// The library is a proc macro: compile-time code.
    pub proc_macro: bool,
    /// The package's directory (where its `Cargo.toml` is), when the metadata gives it.
    pub dir: Option<PathBuf>,
}

/// What the named packages become.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Runtime libraries to build: crate name → (package, package id).
    pub build: BTreeMap<String, (String, String)>,
    /// Packages with no library: in scope, without IR.
    pub without_ir: Vec<String>,
    /// Proc-macro crates: compile-time code, never built, never in scope.
    pub compile_time: Vec<String>,
}

impl Workspace {
    /// Runs `cargo metadata --no-deps` for the request's manifest (in its directory) and reads it.
    pub fn read(request: &FactsRequest) -> Result<Workspace, ExtractError> {
        let cargo = request.cargo_program();
        let mut command = Command::new(&cargo);
        command.args(["metadata", "--format-version", "1", "--no-deps"]);
        if request.locked {
            command.arg("--locked");
        }
        if let Some(manifest) = &request.manifest_path {
            if !manifest.is_file() {
                return Err(ExtractError::NoManifest { path: manifest.clone() });
            }
            let manifest = absolute(manifest)?;
            if let Some(dir) = manifest.parent() {
                command.current_dir(dir);
            }
            command.arg("--manifest-path").arg(manifest);
        }
        let out = command.output().map_err(|source| ExtractError::spawn("cargo metadata", source))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            return Err(ExtractError::Metadata { status: out.status, stderr });
        }
        let meta: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| ExtractError::MetadataUnreadable { what: e.to_string() })?;
        Workspace::from_metadata(request, cargo, &meta)
    }

    /// The workspace as `cargo metadata --format-version 1` describes it.
    pub(crate) fn from_metadata(
        request: &FactsRequest,
        cargo: OsString,
        meta: &Value,
    ) -> Result<Workspace, ExtractError> {
        let path = |key: &str| {
            meta[key]
                .as_str()
                .map(PathBuf::from)
                .ok_or_else(|| ExtractError::MetadataUnreadable { what: format!("no {key}") })
        };
        let mut packages = BTreeMap::new();
        for package in meta["packages"].as_array().into_iter().flatten() {
            let (Some(name), Some(id)) = (package["name"].as_str(), package["id"].as_str()) else { continue };
            let targets = package["targets"].as_array().into_iter().flatten();
            let lib = targets
                .map(|t| (t, kinds(t)))
                .find(|(_, kinds)| kinds.iter().any(|k| is_lib_kind(k) || *k == PROC_MACRO));
            let proc_macro = lib.as_ref().is_some_and(|(_, kinds)| kinds.contains(&PROC_MACRO));
            let lib = lib.and_then(|(t, _)| t["name"].as_str()).map(|n| n.replace('-', "_"));
            let dir =
                package["manifest_path"].as_str().and_then(|m| Path::new(m).parent()).map(Path::to_owned);
            packages.insert(name.to_owned(), Package { id: id.to_owned(), lib, proc_macro, dir });
        }
        let target = path("target_directory")?;
        let ir = match &request.target_dir {
            Some(dir) => absolute(dir)?,
            None => target.join("connectome-ir"),
        };
        let root = path("workspace_root")?;
        let lock = LockSource::choose(request.locked, &root, &ir);
        Ok(Workspace { request: request.clone(), cargo, root, target, ir, lock, packages })
    }

    /// The workspace root, where cargo and rustc run.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace's own target directory, as `cargo metadata` gives it.
    pub fn target_directory(&self) -> &Path {
        &self.target
    }

    /// Where the IR builds go: the request's target directory, or `connectome-ir` in the workspace's.
    pub fn ir_directory(&self) -> &Path {
        &self.ir
    }

    /// Which lock the builds use.
    pub(crate) fn lock(&self) -> &LockSource {
        &self.lock
    }

    /// The directory of the package `name`, as the metadata gives it.
    pub(crate) fn package_dir(&self, name: &str) -> Result<&Path, ExtractError> {
        self.packages.get(name).and_then(|p| p.dir.as_deref()).ok_or_else(|| {
            ExtractError::MetadataUnreadable { what: format!("no manifest_path for {name:?}") }
        })
    }

    /// The cargo program this workspace is read and built with.
    pub(crate) fn cargo(&self) -> &OsString {
        &self.cargo
    }

    /// The request this workspace was read for.
    pub(crate) fn request(&self) -> &FactsRequest {
        &self.request
    }

    /// What the request's packages become; an empty scope and a name the workspace lacks are refused.
    pub(crate) fn plan(&self) -> Result<Plan, ExtractError> {
        if self.request.packages.is_empty() {
            return Err(ExtractError::NoPackages);
        }
        let mut plan = Plan::default();
        for name in &self.request.packages {
            let package = self
                .packages
                .get(name)
                .ok_or_else(|| ExtractError::UnknownPackage { package: name.clone() })?;
            match &package.lib {
                Some(lib) if package.proc_macro => plan.compile_time.push(lib.clone()),
                Some(lib) => _ = plan.build.insert(lib.clone(), (name.clone(), package.id.clone())),
                None => plan.without_ir.push(name.replace('-', "_")),
            }
        }
        Ok(plan)
    }
}

/// `path` made absolute against the current directory (cargo runs elsewhere).
fn absolute(path: &Path) -> Result<PathBuf, ExtractError> {
    std::path::absolute(path).map_err(|source| ExtractError::Path { path: path.to_owned(), source })
}

/// A target's kinds, as `cargo metadata` and artifact messages give them.
pub(crate) fn kinds(target: &Value) -> Vec<&str> {
    target["kind"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// The target kind of a proc-macro library.
const PROC_MACRO: &str = "proc-macro";

/// A library kind whose code runs in the program it is linked into (a proc macro's runs in rustc).
pub(crate) fn is_lib_kind(kind: &str) -> bool {
    matches!(kind, "lib" | "rlib" | "dylib" | "cdylib" | "staticlib")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Package, Plan, Workspace};
    use crate::{ExtractError, FactsRequest};

    fn workspace(packages: &[&str]) -> Workspace {
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
        let request = FactsRequest::new(packages.iter().copied());
        Workspace::from_metadata(&request, "cargo".into(), &meta).expect("metadata reads")
    }

    #[test]
    fn reads_packages_and_marks_proc_macros() {
        let packages = workspace(&[]).packages;
        let package = |lib: Option<&str>, id: &str, proc_macro| Package {
            id: id.to_owned(),
            lib: lib.map(str::to_owned),
            proc_macro,
            dir: None,
        };
        assert_eq!(packages["my-lib"], package(Some("my_lib"), "lib-id", false));
        assert_eq!(packages["my-macros"], package(Some("my_macros"), "macros-id", true));
        assert_eq!(packages["my-bin"], package(None, "bin-id", false));
    }

    #[test]
    fn a_proc_macro_crate_is_compile_time_never_built_never_in_scope() {
        let got = workspace(&["my-macros", "my-lib", "my-bin"]).plan().expect("a plan");
        let want = Plan {
            build: [("my_lib".to_owned(), ("my-lib".to_owned(), "lib-id".to_owned()))].into(),
            without_ir: vec!["my_bin".to_owned()],
            compile_time: vec!["my_macros".to_owned()],
        };
        assert_eq!(got, want);
    }

    #[test]
    fn cd4_an_unknown_package_is_refused_naming_only_it() {
        let refused = workspace(&["my-lib", "ghost"]).plan().expect_err("ghost is no package");
        assert!(matches!(&refused, ExtractError::UnknownPackage { package } if package == "ghost"));
        assert_eq!(
            refused.to_string(),
            r#""ghost" is not a package of this workspace: name a member as its Cargo.toml's [package] name does"#
        );
        assert!(matches!(workspace(&[]).plan(), Err(ExtractError::NoPackages)));
    }

    #[test]
    fn ck13_the_ir_directory_is_the_requests_or_connectome_ir_in_the_workspace_target() {
        let read = workspace(&["my-lib"]);
        assert_eq!(read.root().to_str(), Some("/w"));
        assert_eq!(read.target_directory().to_str(), Some("/w/target"));
        assert_eq!(read.ir_directory().to_str(), Some("/w/target/connectome-ir"));
        let meta = json!({"workspace_root": "/w", "target_directory": "/w/target", "packages": []});
        let request = FactsRequest::new(["x"]).target_dir("/elsewhere/ir");
        let read = Workspace::from_metadata(&request, "cargo".into(), &meta).expect("metadata reads");
        assert_eq!(read.ir_directory().to_str(), Some("/elsewhere/ir"));
    }
}
