//! `cargo xtask census`: line censuses over the library code that keep the package's promises true as
//! the code changes (see `docs/census.md`).
//!
//! Library code is every `crates/<name>/src/**/*.rs` file of a crate the boundary lists as a library
//! ([`boundary::LIBRARIES`]; test-support crates, in [`boundary::NOT_LIBRARIES`], play the host's part),
//! with comments and `#[cfg(test)]` modules removed ([`lines`]). A directory under `crates/` in neither
//! list, or a library without `crates/<name>/src`, fails the census. Each check is a pure function over file paths and texts,
//! so its tests can plant a violation; [`run`] reads the real files. One check, `citations`, reads more
//! than the library: every source and document of the workspace ([`CITED_DIRS`], [`CITED_FILES`]), for
//! the rule identifiers and document paths they cite.

mod authority;
mod citations;
mod client;
mod enforced;
mod hidden;
mod items;
mod lines;
mod named_tests;
mod readme_split;
mod sign;
mod sites;

use std::fmt;
use std::path::{Path, PathBuf};

use mcp_kernel_workspace::root;

use crate::boundary;
use lines::CodeLine;

/// One violation: where it is, which rule it breaks, and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The 1-based line, or 0 when the finding is about the file as a whole.
    pub line: usize,
    /// The rule's short name, as `docs/census.md` lists it.
    pub rule: &'static str,
    /// What was found.
    pub message: String,
}

impl Finding {
    /// A finding at `path:line` against `rule`.
    pub fn new(path: &str, line: usize, rule: &'static str, message: impl Into<String>) -> Finding {
        Finding { path: path.to_owned(), line, rule, message: message.into() }
    }
}

impl fmt::Display for Finding {
    /// `path:line: [rule] message`, or `path: [rule] message` for a whole file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}: [{}] {}", self.path, self.rule, self.message),
            n => write!(f, "{}:{n}: [{}] {}", self.path, self.rule, self.message),
        }
    }
}

/// The package a crate folder under `crates/` holds: the folder is the package's name without its
/// wing's prefix (`crates/kernel/router` is `mcp-kernel-router`, `crates/connectome/graph` is
/// `connectome-graph`), and the facade, `mcp-kernel`, is `crates/kernel/facade`.
pub fn package_of(wing: &str, folder: &str) -> String {
    match (wing, folder) {
        ("kernel", "facade") => "mcp-kernel".to_owned(),
        ("kernel", folder) => format!("mcp-kernel-{folder}"),
        ("connectome", folder) => format!("connectome-{folder}"),
        (_, folder) => folder.to_owned(),
    }
}

/// A library source file: its path, its crate (named from its folder, [`package_of`]) and its code
/// lines.
#[derive(Debug, Clone)]
pub struct Library {
    /// The path relative to the workspace root, with `/` separators.
    pub path: String,
    /// The crate directory name, e.g. `connectome-graph` (the package name in this workspace).
    pub krate: String,
    /// The code lines (comments and test modules removed).
    pub lines: Vec<CodeLine>,
}

impl Library {
    /// Parses `text` as the file at `path` (`crates/<wing>/<crate>/src/…`, or `crates/<crate>/src/…`).
    pub fn parse(path: &str, text: &str) -> Library {
        let folder = path.strip_prefix("crates/").and_then(|rest| rest.split_once("/src/")).map(|(f, _)| f);
        let krate = match folder.map(|f| f.split_once('/')) {
            Some(Some((wing, folder))) => package_of(wing, folder),
            Some(None) => folder.unwrap_or_default().to_owned(),
            None => String::new(),
        };
        Library { path: path.to_owned(), krate, lines: lines::code_lines(text) }
    }
}

/// The outcome of one check: its name, a one-line summary of what it covered, and its findings.
#[derive(Debug)]
pub struct Outcome {
    /// The check's name, e.g. `sign`.
    pub check: &'static str,
    /// What was counted, for the one-line summary.
    pub summary: String,
    /// The violations; empty when the check holds.
    pub findings: Vec<Finding>,
}

impl Outcome {
    /// The outcome of the line rule `rule` over `library`: a finding at every code line `matched`
    /// finds something on, with the message `message` makes of what it found; the summary counts the
    /// files and code lines read.
    pub fn per_line(
        library: &[Library],
        rule: &'static str,
        matched: impl Fn(&CodeLine) -> Option<String>,
        message: impl Fn(&str) -> String,
    ) -> Outcome {
        let mut findings = Vec::new();
        let mut lines = 0;
        for file in library {
            for line in &file.lines {
                lines += 1;
                if let Some(found) = matched(line) {
                    findings.push(Finding::new(&file.path, line.number, rule, message(&found)));
                }
            }
        }
        let summary = format!("{} files, {lines} code lines", library.len());
        Outcome { check: rule, summary, findings }
    }
}

/// Everything the census reads, in memory.
pub struct Inputs {
    /// The library sources.
    pub library: Vec<Library>,
    /// `README.md`.
    pub readme: String,
    /// `docs/threat-model.md`.
    pub threat_model: String,
    /// `docs/will-not-implement.md`.
    pub will_not_implement: String,
    /// Every source and document read for citations ([`CITED_DIRS`], [`CITED_FILES`]): path and text.
    pub cited: Vec<(String, String)>,
}

/// The directories whose sources and documents are read for citations (the `citations` check).
pub const CITED_DIRS: &[&str] = &["benches", "crates", "docs", "tools"];
/// The files at the root read for citations.
pub const CITED_FILES: &[&str] = &["CHANGELOG.md", "README.md"];
/// The extensions of the files read for citations.
const CITED_EXTENSIONS: &[&str] = &["md", "rs", "toml", "yaml", "yml"];
/// Directories never read for citations: build output, installed packages, hidden folders.
const NOT_CITED: &[&str] = &["node_modules", "target"];

/// Runs every check over `inputs`; `file` reads a workspace-relative file for the named-test check.
pub fn census(inputs: &Inputs, file: &dyn Fn(&str) -> Option<String>) -> Vec<Outcome> {
    vec![
        sign::check(&inputs.library, sign::NAMED, sign::PERMITTED),
        authority::check(&inputs.library),
        client::check(&inputs.library),
        hidden::check(&inputs.library),
        sites::check(&inputs.library, sites::CRYPTO_SITES),
        named_tests::check(&inputs.threat_model, &inputs.will_not_implement, file),
        readme_split::check(&inputs.readme, &items::Index::build(&inputs.library)),
        citations::check(&inputs.cited, file),
        enforced::check(&inputs.cited, file),
    ]
}

/// Every `.rs` file under `dir`, recursively (`src/bin` and `src/main.rs` included).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Every file under `dir` with one of [`CITED_EXTENSIONS`], recursively, skipping [`NOT_CITED`],
/// hidden directories and links: a link (`crates/kernel/facade/manual/*.md`, a crate's `tests/data/`) is
/// a second name for a file the census reads where it lives, and its relative links resolve there.
fn cited_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_symlink() {
            continue;
        }
        let path = entry.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && !NOT_CITED.contains(&name.as_str()) {
                cited_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| CITED_EXTENSIONS.iter().any(|x| e == *x)) {
            out.push(path);
        }
    }
    Ok(())
}

/// The library crates among the crate folders `dirs` under `crates/<wing>/`, named by their package
/// (each with whether it has `src/`):
/// every one of `libraries` must be there with a `src`, and every directory must be in `libraries` or
/// `others`, so no code falls outside the census unseen.
fn library_crates(
    dirs: &[(String, bool)],
    libraries: &[&str],
    others: &[&str],
) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    for (dir, _) in
        dirs.iter().filter(|(d, _)| !libraries.contains(&d.as_str()) && !others.contains(&d.as_str()))
    {
        problems.push(format!(
            "the crate {dir} under crates/ is neither a library nor classified as not one in \
             tools/xtask/src/boundary.rs"
        ));
    }
    for library in libraries {
        if !dirs.iter().any(|(d, src)| d == library && *src) {
            problems.push(format!("the library {library} has no src/ under crates/ for the census to read"));
        }
    }
    if problems.is_empty() {
        let mut found: Vec<String> =
            dirs.iter().map(|(d, _)| d.clone()).filter(|d| libraries.contains(&d.as_str())).collect();
        found.sort();
        Ok(found)
    } else {
        Err(problems.join("\n"))
    }
}

/// Reads the census inputs from the workspace at `root`.
fn read_inputs(root: &Path) -> Result<Inputs, String> {
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).map_err(|e| format!("{rel}: {e}"));
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let mut folders = std::collections::BTreeMap::new();
    for wing in std::fs::read_dir(root.join("crates")).map_err(|e| format!("crates/: {e}"))? {
        let wing = wing.map_err(|e| e.to_string())?.path();
        if !wing.is_dir() {
            continue;
        }
        let wing_name = wing.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for entry in std::fs::read_dir(&wing).map_err(|e| format!("{}: {e}", wing.display()))? {
            let dir = entry.map_err(|e| e.to_string())?.path();
            if dir.is_dir() {
                let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let name = package_of(&wing_name, &folder);
                dirs.push((name.clone(), dir.join("src").is_dir()));
                folders.insert(name, dir);
            }
        }
    }
    for krate in library_crates(&dirs, boundary::LIBRARIES, boundary::NOT_LIBRARIES)? {
        let src = folders[&krate].join("src");
        rust_files(&src, &mut files).map_err(|e| format!("{}: {e}", src.display()))?;
    }
    files.sort();
    let mut library = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        library.push(Library::parse(&rel, &read(&rel)?));
    }
    let mut paths: Vec<PathBuf> = CITED_FILES.iter().map(|f| root.join(f)).collect();
    for dir in CITED_DIRS {
        cited_files(&root.join(dir), &mut paths).map_err(|e| format!("{dir}/: {e}"))?;
    }
    paths.sort();
    let mut cited = Vec::new();
    for path in paths {
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        cited.push((rel.clone(), read(&rel)?));
    }
    Ok(Inputs {
        library,
        readme: read("README.md")?,
        threat_model: read("docs/threat-model.md")?,
        will_not_implement: read("docs/will-not-implement.md")?,
        cited,
    })
}

/// Runs the census on this workspace, printing one summary line per check.
pub fn run() -> Result<(), String> {
    let root = root();
    let inputs = read_inputs(&root)?;
    let file = |rel: &str| std::fs::read_to_string(root.join(rel)).ok();
    let mut failed = Vec::new();
    for outcome in census(&inputs, &file) {
        let verdict = if outcome.findings.is_empty() { "holds" } else { "FAILS" };
        eprintln!("xtask: census {}: {verdict} ({})", outcome.check, outcome.summary);
        failed.extend(outcome.findings);
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The census holds on this repository.
    #[test]
    fn the_census_holds_on_this_repository() {
        let root = root();
        let inputs = read_inputs(&root).unwrap_or_else(|e| panic!("{e}"));
        assert!(inputs.library.len() > 50, "the library sources were found");
        let file = |rel: &str| std::fs::read_to_string(root.join(rel)).ok();
        let findings: Vec<String> =
            census(&inputs, &file).into_iter().flat_map(|o| o.findings).map(|f| f.to_string()).collect();
        assert!(findings.is_empty(), "census findings:\n{}", findings.join("\n"));
    }

    /// A finding names file line and rule.
    #[test]
    fn a_finding_names_file_line_and_rule() {
        let f = Finding::new("crates/a/src/b.rs", 7, "no-authority", "`approv`");
        assert_eq!(f.to_string(), "crates/a/src/b.rs:7: [no-authority] `approv`");
        assert_eq!(
            Finding::new("README.md", 0, "readme-split", "x").to_string(),
            "README.md: [readme-split] x"
        );
    }

    /// A crate directory outside both lists, or a library the census cannot read, is found.
    #[test]
    fn a_library_crate_outside_the_census_is_found() {
        let dirs =
            |names: &[(&str, bool)]| names.iter().map(|(n, s)| ((*n).to_owned(), *s)).collect::<Vec<_>>();
        let ok = library_crates(&dirs(&[("b", true), ("a", true), ("t", true)]), &["a", "b"], &["t"]);
        assert_eq!(ok, Ok(vec!["a".to_owned(), "b".to_owned()]));
        let stray = library_crates(&dirs(&[("a", true), ("b", true), ("new", true)]), &["a", "b"], &["t"]);
        assert!(stray.is_err_and(|e| e.contains("the crate new under crates/ is neither")));
        let unread = library_crates(&dirs(&[("a", true), ("b", false)]), &["a", "b"], &[]);
        assert!(unread.is_err_and(|e| e.contains("the library b has no src/ under crates/")));
    }

    /// Odd input does not panic any check: every prefix of a tricky source, as every kind of file.
    #[test]
    fn odd_input_does_not_panic_in_any_check() {
        let tricky = "#[cfg(any())] mod m { #[test] #[ignore fn id<(é: u8) { x.filter(|e| { e.sign }) ]]) }\n\
                      match (\n s.sign, cr#\"\\\"# '\\u{1F600}' } } ) ) if Sign::r#Deny <Sign>::\n#[path include ! \n\
                      let Sign::Unset = e.sign else { fn id<T>() -> Node { digest::Digest } }; pub enum Sign { #[default] Deny";
        for (end, _) in tricky.char_indices() {
            let text = &tricky[..end];
            let library: Vec<Library> = [
                "crates/connectome/canonical/src/model.rs",
                "crates/connectome/canonical/src/digest.rs",
                "crates/connectome/graph/src/identity.rs",
                "crates/connectome/render/src/vocab.rs",
            ]
            .iter()
            .map(|p| Library::parse(p, text))
            .collect();
            let inputs = Inputs {
                library,
                readme: text.to_owned(),
                threat_model: format!("| G-1 | `a.rs::id` {text}"),
                will_not_implement: format!("| H-1 | `a.rs::id` {text}"),
                cited: vec![
                    (["docs/a", ".md"].concat(), text.to_owned()),
                    ("crates/a/src/b.rs".to_owned(), text.to_owned()),
                ],
            };
            let _ = census(&inputs, &|_| Some(text.to_owned()));
        }
    }

    /// The crate is read from the path.
    #[test]
    fn the_crate_is_read_from_the_path() {
        assert_eq!(Library::parse("crates/connectome/graph/src/diff.rs", "").krate, "connectome-graph");
        assert_eq!(Library::parse("odd", "").krate, "");
    }
}
