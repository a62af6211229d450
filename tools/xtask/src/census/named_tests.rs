//! Named tests exist: every row of `docs/threat-model.md` (`| G-n |`) and every entry of
//! `docs/will-not-implement.md` (`| H-n |`) names at least one test as a backticked
//! `path/to/file.rs::function`, and each named test exists.
//!
//! A named test exists when the path is relative and stays inside the workspace, the file can be read,
//! and its code (comments and string contents removed by the lexer, test modules kept) declares
//! `fn function(` or `fn function<` (optionally `pub`, `async`) with a test attribute — exactly
//! `#[test]`, or a path ending in `::test` such as `#[tokio::test]` or `#[tokio::test(…)]` — among the
//! attributes right above it, none of them `#[ignore]` or a `#[cfg]`/`#[cfg_attr]` other than
//! `#[cfg(test)]`, and no enclosing module switched off by such a `#[cfg]` — except that an
//! `#[ignore]` counts as run in the files whose ignored tests `cargo xtask edge` runs (CI runs it). The will-not-implement document holds exactly twelve entries, `H-1` to `H-12`
//! in order.

use super::lines::{lexed_lines, words};
use super::{Finding, Outcome};

/// The threat model, for messages.
const THREAT_MODEL: &str = "docs/threat-model.md";
/// The will-not-implement document, for messages.
const WILL_NOT: &str = "docs/will-not-implement.md";
/// How many entries the will-not-implement document holds.
const WILL_NOT_ENTRIES: usize = 12;

/// A table row: its line number, its label (`G-3`) and the `(path, function)` references it names.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    /// The 1-based line number.
    pub line: usize,
    /// The row's label, e.g. `G-3`.
    pub label: String,
    /// The named tests.
    pub tests: Vec<(String, String)>,
}

/// The rows of `markdown` whose first cell starts with `prefix` (`G-`, `H-`).
pub fn rows(markdown: &str, prefix: &str) -> Vec<Row> {
    markdown
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.strip_prefix("| ")?;
            let label = rest.split(' ').next().filter(|l| l.starts_with(prefix))?;
            let tests = line
                .split('`')
                .skip(1)
                .step_by(2)
                .filter_map(|span| {
                    let (path, function) = span.rsplit_once("::")?;
                    path.ends_with(".rs").then(|| (path.to_owned(), function.to_owned()))
                })
                .collect();
            Some(Row { line: i + 1, label: label.to_owned(), tests })
        })
        .collect()
}

/// The attributes (`#[…]`, whole) at the start of `bare`, and what follows them.
fn attributes(bare: &str) -> (Vec<&str>, &str) {
    let mut found = Vec::new();
    let mut rest = bare.trim_start();
    while rest.starts_with("#[") {
        let mut depth = 0_i64;
        let end = rest.char_indices().skip(1).find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        });
        let Some(end) = end else { break };
        found.push(&rest[..=end]);
        rest = rest[end + 1..].trim_start();
    }
    (found, rest)
}

/// Whether `attribute` marks a test: exactly `#[test]`, or a path ending in `::test`, with or without
/// arguments (`#[tokio::test]`, `#[tokio::test(flavor = "multi_thread")]`).
fn is_test_attribute(attribute: &str) -> bool {
    let inner = attribute.trim_start_matches("#[").trim_end_matches(']').trim();
    let path =
        inner.split_once('(').map_or(inner, |(path, args)| if args.ends_with(')') { path } else { "" });
    let path = path.trim();
    path == "test"
        || path.strip_suffix("::test").is_some_and(|p| {
            !p.is_empty()
                && p.split("::")
                    .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        })
}

/// Whether an attribute switches the item off or keeps it from running as a test: `#[ignore]` (with or
/// without a reason) or a `#[cfg(…)]` / `#[cfg_attr(…)]` other than `#[cfg(test)]`.
fn is_disabling(attribute: &str) -> bool {
    let inner = attribute.trim_start_matches("#[").trim_end_matches(']').trim();
    let name = inner.split(['(', '=', ' ']).next().unwrap_or_default();
    name == "ignore" || ((name == "cfg" || name == "cfg_attr") && inner.replace(' ', "") != "cfg(test)")
}

/// Whether an attribute is `#[ignore]`, with or without a reason.
fn is_ignore(attribute: &str) -> bool {
    let inner = attribute.trim_start_matches("#[").trim_end_matches(']').trim();
    inner.split(['(', '=', ' ']).next() == Some("ignore")
}

/// Whether the code after the attributes declares `fn function` (`pub`, `async`, `const` allowed).
fn declares_fn(rest: &str, function: &str) -> bool {
    let found = words(rest);
    let Some(at) = found.iter().position(|(_, w)| *w == "fn") else { return false };
    let prefix_ok = found[..at]
        .iter()
        .all(|(_, w)| matches!(*w, "pub" | "crate" | "super" | "async" | "const" | "unsafe"));
    found.get(at + 1).is_some_and(|(start, w)| {
        *w == function && prefix_ok && rest[start + w.len()..].trim_start().starts_with(['(', '<'])
    })
}

/// Whether `text` declares the test `function`: a `fn function(` / `fn function<` of code (not in a
/// comment or a string) with a test attribute among the attributes right above it, no `#[ignore]` and
/// no disabling `#[cfg]` there nor on an enclosing module.
#[cfg(test)]
fn declares_test(text: &str, function: &str) -> bool {
    declares_test_in(text, function, false)
}

/// Whether `text` declares the test `function` (as `declares_test` says), with `#[ignore]` not
/// disabling when `ignored_run` (the file's ignored tests are run by `cargo xtask edge`).
fn declares_test_in(text: &str, function: &str, ignored_run: bool) -> bool {
    let lines = lexed_lines(text);
    // The brace depth at which each disabled module's body opened.
    let mut disabled: Vec<i64> = Vec::new();
    let mut depth = 0_i64;
    let mut pending: Vec<&str> = Vec::new();
    for line in &lines {
        let (attrs, rest) = attributes(&line.bare);
        pending.extend(attrs);
        if rest.is_empty() {
            continue;
        }
        let attrs = std::mem::take(&mut pending);
        let switched_off = attrs.iter().any(|a| is_disabling(a) && !(ignored_run && is_ignore(a)));
        if disabled.is_empty()
            && declares_fn(rest, function)
            && !switched_off
            && attrs.iter().any(|a| is_test_attribute(a))
        {
            return true;
        }
        let opens_mod = words(rest).iter().any(|(_, w)| *w == "mod") && rest.contains('{');
        if opens_mod && attrs.iter().any(|a| a.starts_with("#[cfg") && is_disabling(a)) {
            disabled.push(depth);
        }
        depth += rest.matches('{').count() as i64 - rest.matches('}').count() as i64;
        while disabled.last().is_some_and(|d| depth <= *d) {
            disabled.pop();
        }
    }
    false
}

/// The problem with one reference, if any (also used by the `citations` check for rule books).
pub(super) fn problem(path: &str, function: &str, file: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let valid_name = !function.is_empty() && function.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_name {
        return Some(format!("`{path}::{function}` does not name a function"));
    }
    if path.starts_with('/') || path.split('/').any(|c| c == ".." || c.is_empty()) {
        return Some(format!("`{path}` is not a workspace-relative path"));
    }
    match file(path) {
        None => Some(format!("`{path}` does not exist")),
        Some(text) if !declares_test_in(&text, function, crate::edge::runs_ignored_tests_of(path)) => {
            Some(format!("`{path}` has no test `fn {function}(`"))
        }
        Some(_) => None,
    }
}

/// The findings for the rows of one document.
fn check_rows(doc: &str, rows: &[Row], file: &dyn Fn(&str) -> Option<String>, findings: &mut Vec<Finding>) {
    for row in rows {
        if row.tests.is_empty() {
            findings.push(Finding::new(doc, row.line, "named-tests", format!("{} names no test", row.label)));
        }
        for (path, function) in &row.tests {
            if let Some(problem) = problem(path, function, file) {
                findings.push(Finding::new(
                    doc,
                    row.line,
                    "named-tests",
                    format!("{}: {problem}", row.label),
                ));
            }
        }
    }
}

/// Runs the rule over both documents; `file` reads a workspace-relative file.
pub fn check(threat_model: &str, will_not: &str, file: &dyn Fn(&str) -> Option<String>) -> Outcome {
    let mut findings = Vec::new();
    let threats = rows(threat_model, "G-");
    let entries = rows(will_not, "H-");
    if threats.is_empty() {
        findings.push(Finding::new(THREAT_MODEL, 0, "named-tests", "no `| G-n |` row found"));
    }
    let labels: Vec<String> = entries.iter().map(|r| r.label.clone()).collect();
    let expected: Vec<String> = (1..=WILL_NOT_ENTRIES).map(|n| format!("H-{n}")).collect();
    if labels != expected {
        findings.push(Finding::new(
            WILL_NOT,
            0,
            "named-tests",
            format!("the entries are {labels:?}; expected exactly H-1 to H-{WILL_NOT_ENTRIES} in order"),
        ));
    }
    check_rows(THREAT_MODEL, &threats, file, &mut findings);
    check_rows(WILL_NOT, &entries, file, &mut findings);
    let named: usize = threats.iter().chain(&entries).map(|r| r.tests.len()).sum();
    let summary = format!(
        "{} threat rows, {} will-not-implement entries, {named} named tests",
        threats.len(),
        entries.len()
    );
    Outcome { check: "named-tests", summary, findings }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test file that exists in the sample.
    const FILE: &str = "#[test]\nfn exists() {}\n\n#[tokio::test(flavor = \"multi_thread\")]\n/// doc\nasync fn also<T>() {}\n\nfn helper() {}\n// fn commented() {}\n";

    /// Reads only `crates/a/tests/t.rs`.
    fn file(path: &str) -> Option<String> {
        (path == "crates/a/tests/t.rs").then(|| FILE.to_owned())
    }

    /// Twelve entries naming `name`.
    fn will_not(name: &str) -> String {
        (1..=12).map(|n| format!("| H-{n} | rule | `crates/a/tests/t.rs::{name}` |\n")).collect()
    }

    /// Named tests that exist pass.
    #[test]
    fn named_tests_that_exist_pass() {
        let threats = "| # | a |\n|---|---|\n| G-1 | x | `crates/a/tests/t.rs::exists`, `crates/a/tests/t.rs::also` |\n";
        assert_eq!(check(threats, &will_not("exists"), &file).findings, vec![]);
    }

    /// A named test that does not exist is found.
    #[test]
    fn a_named_test_that_does_not_exist_is_found() {
        let threats = "| G-1 | x | `crates/a/tests/t.rs::missing`, `nowhere.rs::f`, `crates/a/tests/t.rs::helper`, `crates/a/tests/t.rs::commented` |\n| G-2 | no test named |\n";
        let findings = check(threats, &will_not("../t.rs::x"), &file).findings;
        let messages: Vec<String> = findings.iter().map(ToString::to_string).collect();
        assert_eq!(findings.iter().filter(|f| f.path == THREAT_MODEL).count(), 5, "{messages:#?}");
        assert!(messages[0].starts_with(
            "docs/threat-model.md:1: [named-tests] G-1: `crates/a/tests/t.rs` has no test `fn missing(`"
        ));
        assert!(messages.iter().any(|m| m.contains("G-2 names no test")));
        assert!(messages.iter().any(|m| m.starts_with("docs/will-not-implement.md:1:")));
    }

    /// Ghost tests: declared so that they never run, or not declared in code at all.
    const GHOSTS: &str = "#[cfg(not(test))]\nfn g1() {}\n#[cfg_attr(test, allow(dead_code))]\nfn g2() {}\n#[test]\n#[ignore]\nfn g3() {}\n/*\n#[test]\nfn g4() {}\n*/\nconst S: &str = \"\n#[test]\nfn g5() {}\n\";\n#[cfg(any())]\nmod off {\n    #[test]\n    fn g6() {}\n}\n#[test] #[ignore = \"slow\"] fn g7() {}\n#[attest]\nfn g8() {}\n#[test]\nfn g9_not() {}\n#[cfg(test)]\nmod on {\n    proptest! {\n        #[test]\n        fn runs(x in 0..10u8) {}\n    }\n    #[test] pub async fn runs_too() {}\n}\n";

    /// A named test that never runs is found (`named-tests`).
    #[test]
    fn a_named_test_that_never_runs_is_found() {
        for ghost in ["g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9"] {
            assert!(!declares_test(GHOSTS, ghost), "{ghost}");
        }
        assert!(declares_test(GHOSTS, "runs"));
        assert!(declares_test(GHOSTS, "runs_too"));
        assert!(declares_test(GHOSTS, "g9_not"));
        assert!(declares_test_in(GHOSTS, "g7", true), "an ignored test counts where xtask edge runs it");
        assert!(!declares_test_in(GHOSTS, "g1", true), "a cfg still switches it off");
        let file = |_: &str| Some(GHOSTS.to_owned());
        let threats = "| G-1 | `crates/a/tests/t.rs::g3`, `crates/a/tests/t.rs::runs` |\n";
        let findings = check(threats, &will_not("runs"), &file).findings;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.contains("fn g3("));
    }

    /// Test attributes are exact.
    #[test]
    fn test_attributes_are_exact() {
        for yes in ["#[test]", "#[tokio::test]", "#[tokio::test(flavor = \"multi_thread\")]", "#[a::b::test]"]
        {
            assert!(is_test_attribute(yes), "{yes}");
        }
        for no in [
            "#[attest]",
            "#[cfg(test)]",
            "#[cfg_attr(test, x)]",
            "#[::test]",
            "#[test_case(1)]",
            "#[tokio::test(",
        ] {
            assert!(!is_test_attribute(no), "{no}");
        }
    }

    /// Missing or extra entries are found.
    #[test]
    fn missing_or_extra_entries_are_found() {
        let eleven: String = will_not("exists").lines().take(11).map(|l| format!("{l}\n")).collect();
        let findings = check("| G-1 | `crates/a/tests/t.rs::exists` |", &eleven, &file).findings;
        assert_eq!(findings.len(), 1);
        assert!(findings[0].message.contains("expected exactly H-1 to H-12"));
    }
}
