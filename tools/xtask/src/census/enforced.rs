//! Every "Enforced by" names something real: in a rule book's item, each backticked path after
//! `Enforced by` (up to `Pinned by`) is a workspace file (`….rs`) or directory (`…/`), and each
//! backticked name in the parentheses right after it is defined there.
//!
//! The syntax the books use: ``Enforced by `crates/x/src/a.rs` (`check`, `Type::method`) and
//! `crates/x/src/b/` (`run`)``. A name is defined when the file (or a `.rs` file under the directory)
//! has, for its last `::` segment, `fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `mod`,
//! `union` or `macro_rules!` followed by it as a whole word, or an `impl` line naming it; a `Type::`
//! before it must be a word of the same text. Textual, like the rest of the census: a name in a
//! comment counts only when one of those keywords is written before it.

use super::citations::{Rule, definitions};
use super::{Finding, Outcome};

/// The keywords that define a name when written right before it.
const DEFINING: &[&str] =
    &["fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union", "macro_rules!"];

/// One rule's item in a rule book: its identifier and its lines (1-based number, text).
struct Item {
    rule: Rule,
    lines: Vec<(usize, String)>,
}

/// The items of `markdown`: a `- **X-n**` line and the indented lines that continue it.
fn items(markdown: &str) -> Vec<Item> {
    let starts: std::collections::BTreeMap<usize, Rule> = definitions(markdown).into_iter().collect();
    let mut found: Vec<Item> = Vec::new();
    let mut open = false;
    for (index, line) in markdown.lines().enumerate() {
        let number = index + 1;
        if let Some(rule) = starts.get(&number).filter(|_| line.trim_start().starts_with("- **")) {
            found.push(Item { rule: rule.clone(), lines: vec![(number, line.to_owned())] });
            open = true;
        } else if open
            && line.starts_with(' ')
            && !line.trim().is_empty()
            && !line.trim_start().starts_with("- **")
        {
            if let Some(item) = found.last_mut() {
                item.lines.push((number, line.to_owned()));
            }
        } else {
            open = false;
        }
    }
    found
}

/// Whether `word` occurs in `text` as a whole word (no identifier character on either side).
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(ident)
            && !text[at + word.len()..].chars().next().is_some_and(ident)
    })
}

/// Whether `text` defines `name` (a last path segment), by the rules of the module doc.
pub fn defines(text: &str, name: &str) -> bool {
    let name = name.trim_end_matches("()");
    let Some((owner, last)) = name.rsplit_once("::").or(Some(("", name))) else { return false };
    if !owner.is_empty() && !owner.split("::").all(|segment| has_word(text, segment)) {
        return false;
    }
    let defined = DEFINING.iter().any(|kw| has_word(text, &format!("{kw} {last}")));
    defined
        || text.lines().map(str::trim_start).any(|l| {
            (l.starts_with("impl ") || l.starts_with("impl<") || l.contains(" impl ")) && has_word(l, last)
        })
}

/// The `(path, names)` an "Enforced by" clause cites, with the line each path is on.
fn enforcers(item: &Item) -> Vec<(usize, String, Vec<String>)> {
    let mut text = String::new();
    let mut line_at = Vec::new(); // (byte offset where a line starts, its number)
    for (number, line) in &item.lines {
        line_at.push((text.len(), *number));
        text.push_str(line.trim());
        text.push(' ');
    }
    let Some(start) = text.find("Enforced by") else { return Vec::new() };
    let end = text[start..].find("Pinned by").map_or(text.len(), |n| start + n);
    let clause = &text[start..end];
    let number_of = |at: usize| line_at.iter().rev().find(|(o, _)| *o <= start + at).map_or(0, |(_, n)| *n);
    let mut found = Vec::new();
    let mut rest = 0;
    while let Some(open) = clause[rest..].find('`').map(|n| rest + n) {
        let Some(close) = clause[open + 1..].find('`').map(|n| open + 1 + n) else { break };
        let span = &clause[open + 1..close];
        rest = close + 1;
        if !(span.contains('/') && (span.ends_with(".rs") || span.ends_with('/'))) {
            continue;
        }
        let after = clause[rest..].trim_start();
        let mut names = Vec::new();
        if after.starts_with('(') {
            let from = clause.len() - after.len();
            let mut depth = 0;
            let to = clause[from..]
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(clause.len(), |(n, _)| from + n);
            names = clause[from..to].split('`').skip(1).step_by(2).map(str::to_owned).collect();
            rest = to;
        }
        found.push((number_of(open), span.to_owned(), names));
    }
    found
}

/// Runs the rule over the rule books among `files` (workspace-relative path and text: every source and
/// document the census reads for citations); `file` reads a workspace-relative file not among them.
pub fn check(files: &[(String, String)], file: &dyn Fn(&str) -> Option<String>) -> Outcome {
    let (mut findings, mut paths, mut names) = (Vec::new(), 0, 0);
    for (book, markdown) in files.iter().filter(|(p, _)| p.ends_with(".md")) {
        for item in items(markdown) {
            for (line, path, cited) in enforcers(&item) {
                paths += 1;
                let texts: Vec<String> = if let Some(dir) = path.strip_suffix('/') {
                    let prefix = format!("{dir}/");
                    files
                        .iter()
                        .filter(|(p, _)| p.starts_with(&prefix) && p.ends_with(".rs"))
                        .map(|(_, t)| t.clone())
                        .collect()
                } else {
                    files
                        .iter()
                        .find(|(p, _)| *p == path)
                        .map(|(_, t)| t.clone())
                        .or_else(|| file(&path))
                        .into_iter()
                        .collect()
                };
                if texts.is_empty() {
                    let message = format!("{}: enforced by `{path}`, which does not exist", item.rule);
                    findings.push(Finding::new(book, line, "enforced-by", message));
                    continue;
                }
                for name in cited {
                    names += 1;
                    if !texts.iter().any(|t| defines(t, &name)) {
                        let message = format!(
                            "{}: enforced by `{path}` (`{name}`), which it does not define",
                            item.rule
                        );
                        findings.push(Finding::new(book, line, "enforced-by", message));
                    }
                }
            }
        }
    }
    let summary = format!("{paths} enforcing paths, {names} names defined there");
    Outcome { check: "enforced", summary, findings }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample text: `~` stands for `-` and `¶` for `.md`, as in the citation tests.
    fn sample(text: &str) -> String {
        text.replace('~', "-").replace('¶', ".md")
    }

    /// enforced-by: a stale name (B~5's `Server::modernise` once), a missing file and a name in a
    /// directory's files are found or passed; prose in the parentheses outside backticks is skipped.
    #[test]
    fn enforced_by_names_a_file_and_an_item_defined_there() {
        let book = sample(
            "- **B~5** Decorated. Enforced by\n  `crates/r/src/server.rs` (`Server::modernise`) and\n  \
             `crates/r/src/decoration.rs` (`Decoration::apply`, a note). Pinned by\n  \
             `crates/r/tests/t.rs::not_a_name`.\n\
             - **F~5** Listed. Enforced by `crates/r/src/methods/` (`list_tools`, `Hidden`) and\n  \
             `crates/r/src/gone.rs` (`x`).\n\n\
             Prose: Enforced by `crates/r/src/gone.rs` (`y`) outside an item.\n",
        );
        let files = vec![
            (sample("docs/protocol¶"), book),
            (
                "crates/r/src/server.rs".to_owned(),
                "pub struct Server;\nimpl Server { fn handle() {} }\n".to_owned(),
            ),
            (
                "crates/r/src/decoration.rs".to_owned(),
                "struct Decoration;\nimpl Decoration {\n    pub(crate) fn apply() {}\n}\n".to_owned(),
            ),
            ("crates/r/src/methods/tools.rs".to_owned(), "pub(crate) fn list_tools() {}\n".to_owned()),
        ];
        let outcome = check(&files, &|_| None);
        let got: Vec<(usize, String)> =
            outcome.findings.iter().map(|f| (f.line, f.message.clone())).collect();
        let want = [
            (2, "B~5: enforced by `crates/r/src/server.rs` (`Server::modernise`), which it does not define"),
            (5, "F~5: enforced by `crates/r/src/methods/` (`Hidden`), which it does not define"),
            (6, "F~5: enforced by `crates/r/src/gone.rs`, which does not exist"),
        ];
        assert_eq!(got, want.map(|(l, m)| (l, sample(m))), "{:#?}", outcome.findings);
        assert!(outcome.findings.iter().all(|f| f.rule == "enforced-by"));
    }

    /// What defines a name: a keyword before it or an `impl` line, as a whole word.
    #[test]
    fn a_name_is_defined_by_a_keyword_or_an_impl() {
        let text = "pub(crate) async fn call_tool() {}\nconst LIMIT: u8 = 1;\nimpl Serialize for ToolList {}\nfn call_tools() {}\n";
        assert!(defines(text, "call_tool"));
        assert!(defines(text, "LIMIT"));
        assert!(defines(text, "ToolList"));
        assert!(!defines(text, "call_result"));
        assert!(!defines(text, "call"));
        assert!(!defines(text, "Server::call_tool"));
    }
}
