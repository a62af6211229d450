//! Every citation resolves: a rule identifier (`D-11`, `B-3`, `S-14`) cited anywhere in the workspace's
//! sources and documents is defined in the rule book it is cited from, and a cited document path exists.
//!
//! **Rule books.** A rule book is a Markdown file that defines identifiers. A *definition* is a line
//! that starts, after indentation, with `- **X-n**` (a list item; the form the rule books use) or is a
//! table row whose first cell is `X-n` (`| G-4 |`, as in `docs/threat-model.md` and
//! `docs/will-not-implement.md`). An identifier is one or two capital letters, `-` and a number, as a
//! whole word: `UTF-16` and `SHA-256` are none, `B-3.2` cites `B-3` (its step 2).
//!
//! **One id, one rule.** Every identifier is defined in exactly one rule book, once (`defined-twice`
//! fails otherwise), so an identifier names its rule wherever it is cited, as it does for a reader or
//! `grep`: no book has to be guessed. The connectome's identifiers carry a `C` before their section's
//! letter (`CF-5`) to stay apart from the protocol's (`F-5`). A citation is looked up in every book
//! (`cited-rule` when none defines it); a rule book named directly before it (a path such as
//! `protocol.md` or `` `docs/connectome.md` ``, or the bare name of a rule book in `docs/`:
//! `connectome CI-4`, `tracing T-2`) must be the one that defines it. A range (`D-3 to D-20`,
//! `F-4…F-10`, `J-1..J-3`, `B-4–B-7`) cites every item in it.
//!
//! **Pinned tests.** A backticked `path.rs::function` in a rule book (other than the two whose tests
//! the `named-tests` check reads, [`NAMED_TEST_BOOKS`]) must be a test that runs, by the rules of
//! `named-tests`.
//!
//! **Paths.** A cited path is a `….md` token (an `#anchor` allowed; a URL's path is none). One with a directory must exist
//! relative to the workspace root, to the citing file's directory (a Markdown link) or to one of its
//! ancestors (`/../../docs/connectome.md` after a crate's directory); a bare name is checked when it
//! names a document as above, in the citing file's directory, `docs/` or the root. An anchor must be
//! the slug of a heading of the target. A document that does not exist has no identifiers to check:
//! the citations that rely on it are reported once, as the path.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::{Finding, Outcome};

/// The rule books whose tests the `named-tests` check reads.
pub const NAMED_TEST_BOOKS: &[&str] = &["docs/threat-model.md", "docs/will-not-implement.md"];
/// The widest range read as a range; a wider one is read as its two ends.
const WIDEST_RANGE: u32 = 100;

/// A rule identifier: one or two capital letters and a number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rule {
    /// The letters, e.g. `D`.
    pub letters: String,
    /// The number.
    pub number: u32,
}

impl fmt::Display for Rule {
    /// `D-11`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.letters, self.number)
    }
}

/// Whether `c` may be part of a path token.
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '#' | '-')
}

/// The identifier starting at byte `at` of `line`, and where it ends: `[A-Z]{1,2}-[0-9]+` as a whole
/// word (no letter, digit, `_` or `-` before it; no letter, digit or `_` after it).
fn rule_at(line: &str, at: usize) -> Option<(Rule, usize)> {
    let bytes = line.as_bytes();
    if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || matches!(bytes[at - 1], b'_' | b'-')) {
        return None;
    }
    let letters = bytes[at..].iter().take_while(|b| b.is_ascii_uppercase()).count();
    if !(1..=2).contains(&letters) || bytes.get(at + letters) != Some(&b'-') {
        return None;
    }
    let start = at + letters + 1;
    let digits = bytes[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    let end = start + digits;
    if digits == 0 || digits > 6 || bytes.get(end).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
        return None;
    }
    let number = line[start..end].parse().ok()?;
    Some((Rule { letters: line[at..at + letters].to_owned(), number }, end))
}

/// What a line holds, in order.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    /// A `….md` path, with its byte range and the anchor after `#` (empty when none).
    Path { at: usize, end: usize, path: String, anchor: String },
    /// An identifier and its byte range.
    Rule { at: usize, end: usize, rule: Rule },
    /// A `§` or the word `section`: the document before it is checked to exist.
    Section { at: usize },
}

/// The path tokens, identifiers and section marks of `line`, in order.
fn tokens(line: &str) -> Vec<Token> {
    let mut found = Vec::new();
    let mut prev: Option<char> = None;
    for (at, c) in line.char_indices() {
        let starts_run = path_char(c) && !prev.is_some_and(path_char);
        prev = Some(c);
        if c == '§' {
            found.push(Token::Section { at });
            continue;
        }
        if starts_run {
            let end = line[at..].find(|c: char| !path_char(c)).map_or(line.len(), |n| at + n);
            let run = line[at..end].trim_end_matches(['.', '#', '-', '/']);
            let (path, anchor) = run.split_once('#').unwrap_or((run, ""));
            let url = run.starts_with("//") && line[..at].ends_with(':');
            if path.len() > 3 && path.ends_with(".md") && !anchor.contains('#') && !url {
                let path = path.trim_start_matches("./").trim_start_matches('/');
                found.push(Token::Path {
                    at,
                    end: at + run.len(),
                    path: path.to_owned(),
                    anchor: anchor.to_owned(),
                });
            }
            if line[at..].starts_with("section") && !line[at + 7..].starts_with(|c: char| c.is_alphanumeric())
            {
                found.push(Token::Section { at });
            }
        }
        if c.is_ascii_uppercase()
            && let Some((rule, end)) = rule_at(line, at)
        {
            let inside_path =
                found.iter().any(|t| matches!(t, Token::Path { at: a, end: e, .. } if *a <= at && end <= *e));
            if !inside_path {
                found.push(Token::Rule { at, end, rule });
            }
        }
    }
    found
}

/// The document named directly before byte `at` of `line` (spaces and backticks between): a `….md`
/// path token, or a bare word that is the name of a rule book in `docs/` (`connectome`).
fn named_before<'a>(line: &'a str, at: usize, book_words: &BTreeSet<String>) -> Option<&'a str> {
    let before = line[..at].trim_end_matches([' ', '`']);
    if before.len() == at {
        return None;
    }
    let start = before
        .rfind(|c: char| !path_char(c))
        .map_or(0, |i| i + before[i..].chars().next().map_or(1, char::len_utf8));
    let word = before[start..].trim_end_matches(['.', '#']);
    let word = word.split_once('#').map_or(word, |(p, _)| p);
    let is_path = word.len() > 3 && word.ends_with(".md");
    (is_path || book_words.contains(word)).then_some(word)
}

/// `path` with `.` and `..` components resolved, or `None` when it climbs out of the workspace.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The directory of a workspace-relative file path (`""` at the root).
fn directory(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Joins a directory and a relative path.
fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() { rel.to_owned() } else { format!("{dir}/{rel}") }
}

/// Everything the rule knows about the workspace's documents.
struct Books<'a> {
    /// The definitions of every Markdown file: identifier → first line.
    defined: BTreeMap<&'a str, BTreeMap<Rule, usize>>,
    /// The bare names of the rule books in `docs/` (`protocol`, `connectome`).
    words: BTreeSet<String>,
    /// Reads a workspace-relative file.
    file: &'a dyn Fn(&str) -> Option<String>,
}

impl Books<'_> {
    /// Whether the workspace-relative `path` is a file.
    fn exists(&self, path: &str) -> bool {
        self.defined.contains_key(path) || (self.file)(path).is_some()
    }

    /// The file a cited path names, cited from `citing`: a path with a directory relative to the root,
    /// the citing file's directory or an ancestor of it; a bare name in the citing file's
    /// directory, `docs/` or the root; a bare rule-book word as `docs/<word>.md`.
    fn resolve(&self, citing: &str, cited: &str) -> Option<String> {
        if !cited.ends_with(".md") {
            return self.words.contains(cited).then(|| format!("docs/{cited}.md"));
        }
        let dir = directory(citing);
        let mut bases = vec![String::new()];
        if cited.contains('/') {
            let mut at = dir;
            loop {
                bases.push(at.to_owned());
                if at.is_empty() {
                    break;
                }
                at = directory(at);
            }
        } else {
            bases.extend([dir.to_owned(), "docs".to_owned()]);
        }
        bases.iter().filter_map(|base| normalise(&join(base, cited))).find(|p| self.exists(p))
    }

    /// Whether `anchor` is the slug of a heading of the Markdown file `path` (or not checkable).
    fn has_anchor(&self, path: &str, anchor: &str) -> bool {
        let Some(text) = (self.file)(path) else { return true };
        text.lines()
            .filter_map(|l| l.trim_start().strip_prefix('#'))
            .map(|h| slug(h.trim_start_matches('#')))
            .any(|s| s == anchor)
    }
}

/// The anchor a heading gets: lowercase, spaces as `-`, only letters, digits, `-` and `_` kept.
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// The definitions in `markdown`: `(line, identifier)` for each `- **X-n**` item and `| X-n |` row.
pub fn definitions(markdown: &str) -> Vec<(usize, Rule)> {
    markdown
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.trim_start();
            let (rest, close) = if let Some(rest) = line.strip_prefix("- **") {
                (rest, "**")
            } else {
                (line.strip_prefix('|')?.trim_start(), " ")
            };
            let (rule, end) = rule_at(rest, 0)?;
            rest[end..].starts_with(close).then_some((i + 1, rule))
        })
        .collect()
}

/// One citation of an identifier: where, which identifier, and the rule book named directly before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The citing file.
    pub path: String,
    /// The 1-based line.
    pub line: usize,
    /// The identifier.
    pub rule: Rule,
    /// The document named directly before it (workspace-relative), which must define it; `None` when
    /// none is named.
    pub named: Option<String>,
}

/// Whether the text between two identifiers makes them a range.
fn is_range(between: &str) -> bool {
    matches!(between, ".." | "…" | " to " | "–" | " – " | " … ")
}

/// Runs the rule over `files` (workspace-relative path and text: every source and document the census
/// reads for citations); `file` reads any workspace-relative file (for paths and anchors).
pub fn check(files: &[(String, String)], file: &dyn Fn(&str) -> Option<String>) -> Outcome {
    let books = rule_books(files);
    let (defined, mut findings) = defined_once(files);
    let (citations, path_findings, paths) = cite(files, file);
    findings.extend(path_findings);
    for c in &citations {
        let message = match (defined.get(&c.rule), &c.named) {
            (None, _) => format!("{} is defined in no rule book", c.rule),
            (Some((book, _)), Some(named)) if book != named => {
                let note =
                    if books.contains_key(named.as_str()) { "" } else { " (it defines no identifiers)" };
                format!("{} is cited from {named}, which does not define it{note}; {book} does", c.rule)
            }
            _ => continue,
        };
        findings.push(Finding::new(&c.path, c.line, "cited-rule", message));
    }
    let mut tests = 0;
    for (path, text) in files.iter().filter(|(p, _)| books.contains_key(p.as_str())) {
        if NAMED_TEST_BOOKS.contains(&path.as_str()) {
            continue; // their tests are the `named-tests` check's
        }
        for (index, line) in text.lines().enumerate() {
            for (test_path, function) in named_tests_of(line) {
                tests += 1;
                if let Some(problem) = super::named_tests::problem(test_path, function, file) {
                    findings.push(Finding::new(path, index + 1, "pinned-test", problem));
                }
            }
        }
    }
    findings.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    let summary = format!(
        "{} files, {} citations of {} rules defined once each in {} books, {paths} paths, {tests} pinned tests",
        files.len(),
        citations.len(),
        defined.len(),
        books.len()
    );
    Outcome { check: "citations", summary, findings }
}

/// Every identifier's one definition (`book`, line) across the rule books among `files`, and a
/// `defined-twice` finding at each further definition, in the same book or another.
pub fn defined_once(files: &[(String, String)]) -> (BTreeMap<Rule, (String, usize)>, Vec<Finding>) {
    let mut first: BTreeMap<Rule, (String, usize)> = BTreeMap::new();
    let mut findings = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| p.ends_with(".md")) {
        for (line, rule) in definitions(text) {
            if let Some((book, at)) = first.get(&rule) {
                let message = format!("{rule} is defined again (first at {book}:{at}): one id, one rule");
                findings.push(Finding::new(path, line, "defined-twice", message));
            } else {
                first.insert(rule, (path.clone(), line));
            }
        }
    }
    (first, findings)
}

/// The tests a line of a rule book names: each backticked `path.rs::function`.
fn named_tests_of(line: &str) -> Vec<(&str, &str)> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|span| span.rsplit_once("::").filter(|(path, _)| path.ends_with(".rs")))
        .collect()
}

/// The rule books among `files`: each Markdown file with a definition, and its definitions.
fn rule_books(files: &[(String, String)]) -> BTreeMap<&str, BTreeMap<Rule, usize>> {
    files
        .iter()
        .filter(|(p, _)| p.ends_with(".md"))
        .filter_map(|(p, text)| {
            let mut found = BTreeMap::new();
            for (line, rule) in definitions(text) {
                found.entry(rule).or_insert(line);
            }
            (!found.is_empty()).then_some((p.as_str(), found))
        })
        .collect()
}

/// Every citation of an identifier in `files` with the document named directly before it, the findings
/// about cited paths, and how many paths were checked.
pub fn cite(
    files: &[(String, String)],
    file: &dyn Fn(&str) -> Option<String>,
) -> (Vec<Citation>, Vec<Finding>, usize) {
    let defined = rule_books(files);
    let words = defined
        .keys()
        .filter_map(|p| p.strip_prefix("docs/")?.strip_suffix(".md"))
        .filter(|w| !w.contains('/'))
        .map(str::to_owned)
        .collect();
    let books = Books { defined, words, file };
    let (mut citations, mut findings, mut paths) = (Vec::new(), Vec::new(), 0);
    for (path, text) in files {
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let found = tokens(line);
            let mut last: Option<(usize, Rule, Option<String>)> = None;
            for token in &found {
                match token {
                    Token::Path { path: cited, anchor, .. } if cited.contains('/') => {
                        paths += 1;
                        match books.resolve(path, cited) {
                            None => findings.push(Finding::new(
                                path,
                                number,
                                "cited-path",
                                format!("`{cited}` does not exist"),
                            )),
                            Some(target) if !anchor.is_empty() && !books.has_anchor(&target, anchor) => {
                                findings.push(Finding::new(
                                    path,
                                    number,
                                    "cited-path",
                                    format!("`{cited}` has no heading `#{anchor}`"),
                                ));
                            }
                            Some(_) => {}
                        }
                    }
                    Token::Path { .. } => {}
                    Token::Section { at } | Token::Rule { at, .. } => {
                        let mut named = None;
                        if let Some(word) = named_before(line, *at, &books.words) {
                            named = books.resolve(path, word);
                            if named.is_none() && !word.contains('/') {
                                paths += 1;
                                findings.push(Finding::new(
                                    path,
                                    number,
                                    "cited-path",
                                    format!("`{word}` names no document"),
                                ));
                            }
                            if named.is_none() {
                                // The missing document is reported; what it would define is not looked up.
                                last = None;
                                continue;
                            }
                        }
                        let Token::Rule { at, end, rule } = token else { continue };
                        if let Some((prev_end, prev, prev_named)) = &last
                            && prev.letters == rule.letters
                            && prev.number < rule.number
                            && rule.number - prev.number <= WIDEST_RANGE
                            && line.get(*prev_end..*at).is_some_and(is_range)
                        {
                            named = named.or_else(|| prev_named.clone());
                            for n in prev.number + 1..rule.number {
                                let member = Rule { letters: rule.letters.clone(), number: n };
                                citations.push(Citation {
                                    path: path.clone(),
                                    line: number,
                                    rule: member,
                                    named: named.clone(),
                                });
                            }
                        }
                        citations.push(Citation {
                            path: path.clone(),
                            line: number,
                            rule: rule.clone(),
                            named: named.clone(),
                        });
                        last = Some((*end, rule.clone(), named));
                    }
                }
            }
        }
    }
    (citations, findings, paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample text: `~` stands for `-` and `¶` for `.md`, so that no sample stands whole in this file
    /// (the census reads it too).
    fn sample(text: &str) -> String {
        text.replace('~', "-").replace('¶', ".md")
    }

    /// A small workspace: the rule books and the files `extra` that cite them.
    fn workspace(extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let books = [
            ("docs/protocol¶", "# P\n\n- **D~1** one.\n- **D~2** two.\n- **D~3** three.\n- **B~3** b.\n"),
            ("docs/connectome¶", "## Rule identifiers\n\n- **CC~6** nfc.\n"),
            ("docs/mcp-2026-07-28¶", "- **S~14** origin.\n"),
            ("docs/threat-model¶", "| # | t |\n|---|---|\n| G~8 | slow |\n"),
        ];
        books.iter().chain(extra).map(|(p, t)| (sample(p), sample(t))).collect()
    }

    /// Reads nothing beyond the in-memory files.
    fn reader(files: &[(String, String)]) -> impl Fn(&str) -> Option<String> + '_ {
        move |p: &str| files.iter().find(|(f, _)| f == p).map(|(_, t)| t.clone())
    }

    /// An undefined identifier, one cited from a book that does not define it, and a missing path are
    /// each reported (`cited-rule`, `cited-path`).
    #[test]
    fn an_undefined_rule_and_a_missing_path_are_found() {
        let source = "//! The header rules (`protocol¶` D~1 to D~3, D~9).\n\
                      // see docs/nowhere¶ and [x](docs/protocol¶#nothing-here)\n\
                      // spec/connectome¶ CC~6 and then CC~7, unchecked\n\
                      // connectome CC~7, connectome D~1\n\
                      // `conformance-suite¶` section 6";
        let files = workspace(&[("crates/kernel/http/src/headers.rs", source)]);
        let findings = check(&files, &reader(&files)).findings;
        let got: Vec<(usize, &str, String)> =
            findings.iter().map(|f| (f.line, f.rule, f.message.clone())).collect();
        let want = [
            (1, "cited-rule", "D~9 is defined in no rule book"),
            (2, "cited-path", "`docs/nowhere¶` does not exist"),
            (2, "cited-path", "`docs/protocol¶` has no heading `#nothing-here`"),
            (3, "cited-path", "`spec/connectome¶` does not exist"),
            (3, "cited-rule", "CC~7 is defined in no rule book"),
            (4, "cited-rule", "CC~7 is defined in no rule book"),
            (
                4,
                "cited-rule",
                "D~1 is cited from docs/connectome¶, which does not define it; docs/protocol¶ does",
            ),
            (5, "cited-path", "`conformance-suite¶` names no document"),
        ];
        assert_eq!(got, want.map(|(l, r, m)| (l, r, sample(m))), "{findings:#?}");
    }

    /// A range cites its middle, and a duplicate definition in one book is found (`defined-twice`).
    #[test]
    fn a_range_cites_its_middle_and_a_duplicate_definition_is_found() {
        let mut files = workspace(&[("crates/a/src/x.rs", "// D~1…D~4 and B~3.2")]);
        files[2].1.push_str(&sample("- **S~14** twice.\n"));
        let findings = check(&files, &reader(&files)).findings;
        let got: Vec<(&str, usize, &str)> =
            findings.iter().map(|f| (f.path.as_str(), f.line, f.rule)).collect();
        let mcp = sample("docs/mcp-2026-07-28¶");
        assert_eq!(
            got,
            [("crates/a/src/x.rs", 1, "cited-rule"), (mcp.as_str(), 2, "defined-twice")],
            "{findings:#?}"
        );
        assert!(findings[0].message.starts_with(&sample("D~4 is defined in no")), "{findings:#?}");
    }

    /// One id, one rule: an identifier defined in two rule books is found at the second, whichever
    /// book it is cited from (`defined-twice`; the connectome's F~5 was the protocol's F~5 once).
    #[test]
    fn defined_twice_across_books_is_found() {
        let files = workspace(&[
            ("docs/other¶", "- **D~2** a second meaning.\n- **CC~6** and another.\n- **D~7** its own.\n"),
            ("crates/connectome/graph/src/a.rs", "// D~2 and D~7\n"),
        ]);
        let findings = check(&files, &reader(&files)).findings;
        let got: Vec<(&str, usize, &str, String)> =
            findings.iter().map(|f| (f.path.as_str(), f.line, f.rule, f.message.clone())).collect();
        let other = sample("docs/other¶");
        let want = [
            (other.as_str(), 1, "defined-twice", sample("D~2 is defined again (first at docs/protocol¶:4)")),
            (
                other.as_str(),
                2,
                "defined-twice",
                sample("CC~6 is defined again (first at docs/connectome¶:3)"),
            ),
        ];
        let want: Vec<(&str, usize, &str, String)> =
            want.into_iter().map(|(p, l, r, m)| (p, l, r, format!("{m}: one id, one rule"))).collect();
        assert_eq!(got, want, "{findings:#?}");
    }

    /// A citation is looked up by its identifier alone, in whatever file: no book in force, no home.
    #[test]
    fn a_citation_is_looked_up_by_its_identifier_alone() {
        let files = workspace(&[
            ("crates/kernel/http/src/a.rs", "// D~1, B~3.2 step 1, S~14, G~8, CC~6 (UTF-16, SHA-256)\n"),
            ("crates/connectome/graph/src/b.rs", "// CC~6; MCP S~14\n// protocol¶ D~2, G~8, then D~3\n"),
            (
                "tools/xtask/src/c.rs",
                "// connectome CC~6, then CC~6 again\n// [link](../../docs/connectome¶)\n",
            ),
            (
                "docs/http¶",
                "# HTTP\n\nSee [the rules](protocol¶) and `protocol¶` §A, D~1.\n<https://example.com/a/b¶>\n",
            ),
        ]);
        let outcome = check(&files, &reader(&files));
        assert_eq!(outcome.findings, vec![], "{:#?}", outcome.findings);
        let (citations, _, _) = cite(&files, &reader(&files));
        let of = |path: &str| {
            citations
                .iter()
                .filter(|c| c.path == path)
                .map(|c| format!("{} {}", c.rule, c.named.as_deref().unwrap_or("-")))
                .collect::<Vec<_>>()
        };
        let want = |pairs: &[&str]| pairs.iter().map(|p| sample(p)).collect::<Vec<_>>();
        assert_eq!(of("crates/kernel/http/src/a.rs"), want(&["D~1 -", "B~3 -", "S~14 -", "G~8 -", "CC~6 -"]));
        assert_eq!(
            of("crates/connectome/graph/src/b.rs"),
            want(&["CC~6 -", "S~14 -", "D~2 docs/protocol¶", "G~8 -", "D~3 -"])
        );
        assert_eq!(of("tools/xtask/src/c.rs"), want(&["CC~6 docs/connectome¶", "CC~6 -"]));
    }

    /// A rule book's named test must exist and run (`pinned-test`); the companions are not read.
    #[test]
    fn a_pinned_test_that_does_not_exist_is_found() {
        let mut files = workspace(&[("crates/a/tests/t.rs", "#[test]\nfn exists() {}\nfn helper() {}\n")]);
        files[0].1.push_str(
            "- **D~4** pinned by `crates/a/tests/t.rs::exists` and `crates/a/tests/t.rs::helper`.\n",
        );
        files[3].1.push_str("| G~9 | `crates/a/tests/t.rs::nowhere` |\n");
        let files: Vec<(String, String)> = files.into_iter().map(|(p, t)| (p, sample(&t))).collect();
        let outcome = check(&files, &reader(&files));
        let got: Vec<(&str, usize, &str)> =
            outcome.findings.iter().map(|f| (f.path.as_str(), f.line, f.rule)).collect();
        let protocol = sample("docs/protocol¶");
        assert_eq!(got, [(protocol.as_str(), 7, "pinned-test")], "{:#?}", outcome.findings);
        assert!(outcome.findings[0].message.contains("has no test `fn helper(`"), "{:#?}", outcome.findings);
    }

    /// Definitions are `- **X-n**` items and `| X-n |` rows, nothing else.
    #[test]
    fn definitions_are_bold_items_and_table_rows() {
        let text = sample(
            "- **D~1** a\n  - **D~2** nested\n| G~3 | row |\n|G~4|tight|\n**D~5** bare\n- D~6: plain\n- **D~7**: b\n- **D~8.1** sub\n",
        );
        let found: Vec<String> = definitions(&text).into_iter().map(|(_, r)| r.to_string()).collect();
        assert_eq!(found, ["D~1", "D~2", "G~3", "D~7"].map(sample));
    }

    /// Headings become the anchors a link may name.
    #[test]
    fn headings_become_anchors() {
        assert_eq!(slug(" OAuth resource server"), "oauth-resource-server");
        assert_eq!(slug(" `tools/call`"), "toolscall");
        assert_eq!(slug(&sample(" Rule identifiers (D~1 to D~30)")), "rule-identifiers-d-1-to-d-30");
    }

    /// Odd text does not panic: every prefix of a tricky line.
    #[test]
    fn odd_text_does_not_panic() {
        let tricky = sample(
            "é§ `protocol¶` D~1…D~999999 section§ spec/¶#a#b ../../../../x¶ AB~ Z~0 connectome S~ CC~",
        );
        for (end, _) in tricky.char_indices() {
            let files = workspace(&[("crates/a/src/x.rs", &tricky[..end]), ("docs/x¶", &tricky[..end])]);
            let _ = check(&files, &reader(&files));
        }
    }
}
