//! Every test `docs/threat-model.md` names exists: a row cannot claim an enforcement that is not there.

use std::path::Path;

/// The `path::function` references in the threat model's table.
fn references(markdown: &str) -> Vec<(String, String)> {
    markdown
        .lines()
        .filter(|line| line.starts_with("| G-"))
        .flat_map(|line| line.split('`').skip(1).step_by(2).map(str::to_owned).collect::<Vec<_>>())
        .filter_map(|reference| {
            let (path, function) = reference.rsplit_once("::")?;
            path.ends_with(".rs").then(|| (path.to_owned(), function.to_owned()))
        })
        .collect()
}

/// The references whose file is missing or does not define the function.
fn missing(root: &Path, references: &[(String, String)]) -> Vec<String> {
    references
        .iter()
        .filter(|(path, function)| {
            let text = std::fs::read_to_string(root.join(path)).unwrap_or_default();
            !(text.contains(&format!("fn {function}(")) || text.contains(&format!("fn {function}<")))
        })
        .map(|(path, function)| format!("{path}::{function}"))
        .collect()
}

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.."))
}

#[test]
fn every_test_the_threat_model_names_exists() {
    let doc =
        std::fs::read_to_string(workspace().join("docs/threat-model.md")).expect("docs/threat-model.md");
    let refs = references(&doc);
    let numbers: Vec<String> =
        doc.lines().filter_map(|l| l.strip_prefix("| G-")?.split(' ').next().map(str::to_owned)).collect();
    let rows = numbers.len();
    let expected: Vec<String> = (1..=rows).map(|n| n.to_string()).collect();
    assert_eq!(numbers, expected, "rows are numbered G-1 to G-{rows}, in order, none skipped");
    assert!(rows >= 24, "no row was dropped");
    assert!(refs.len() >= rows, "every row names at least one test");
    for line in doc.lines().filter(|l| l.starts_with("| G-")) {
        assert!(line.contains(".rs::"), "a row without a named test: {line}");
    }
    assert_eq!(missing(workspace(), &refs), Vec::<String>::new());
}

#[test]
fn a_named_test_that_does_not_exist_is_found() {
    let doc = "| G-1 | x | y | `crates/kernel/facade/tests/threat_model.rs::no_such_test_anywhere`, `nowhere.rs::f` |";
    let refs = references(doc);
    assert_eq!(refs.len(), 2);
    assert_eq!(missing(workspace(), &refs).len(), 2);
    let real = "| G-1 | x | y | `crates/kernel/facade/tests/threat_model.rs::every_test_the_threat_model_names_exists` |";
    assert!(missing(workspace(), &references(real)).is_empty());
}
