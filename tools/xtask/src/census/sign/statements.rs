//! Statements: the code lines of a file cut where Rust cuts them, so that rustfmt's line splitting does
//! not split what the sign census judges together.
//!
//! A statement runs from one cut to the next. The cuts are `;` and `,` directly inside a block (or at the
//! top level), and every `{` and `}` that opens or closes a block. Inside `(…)` and `[…]` nothing cuts
//! (`match (\n a,\n b,\n ) {` is one statement), except a `{…}` opened there (a closure body, a struct
//! literal): its statements are separate, and the statement around it resumes after its `}`. A statement
//! inside the parentheses of a selecting call (`.filter(|e| {\n … \n})`) remembers that call.

use super::super::lines::{CodeLine, words};

/// Calls that select, drop, group, order or branch on what they are given.
pub const SELECTING_CALLS: &[&str] = &[
    "filter",
    "filter_map",
    "retain",
    "retain_mut",
    "partition",
    "partition_in_place",
    "find",
    "rfind",
    "find_map",
    "position",
    "rposition",
    "any",
    "all",
    "take_while",
    "skip_while",
    "map_while",
    "chunk_by",
    "group_by",
    "extract_if",
    "then",
    "then_some",
    "max_by_key",
    "min_by_key",
    "max_by",
    "min_by",
    "dedup_by_key",
    "dedup_by",
    "sort_by_key",
    "sort_by",
    "sort_unstable_by_key",
    "sort_unstable_by",
    "sort_by_cached_key",
    "binary_search_by_key",
    "entry",
];
/// Keywords that branch (`else` covers `let … else`).
pub const SELECTING_KEYWORDS: &[&str] = &["if", "match", "while", "else"];

/// One statement: where it starts, its text (strings kept) and its bare text, joined across lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The 1-based line its first character is on.
    pub line: usize,
    /// The statement's text, lines joined with one space, trimmed.
    pub text: String,
    /// The same with literal contents blanked.
    pub bare: String,
    /// The innermost selecting call whose parentheses hold it, if any.
    pub inside: Option<&'static str>,
}

/// A statement being collected.
#[derive(Debug, Default)]
struct Partial {
    /// The line of its first non-blank character, 0 while it has none.
    line: usize,
    /// The text so far.
    text: String,
    /// The bare text so far.
    bare: String,
    /// The innermost selecting call around it.
    inside: Option<&'static str>,
}

impl Partial {
    /// A new statement inside `inside`.
    fn new(inside: Option<&'static str>) -> Partial {
        Partial { inside, ..Partial::default() }
    }

    /// Adds one character (its text and bare forms) on `line`.
    fn push(&mut self, text: char, bare: char, line: usize) {
        if self.line == 0 && !bare.is_whitespace() {
            self.line = line;
        }
        self.text.push(text);
        self.bare.push(bare);
    }
}

/// An open bracket: its kind, the selecting call it is the argument list of, and the statement it
/// suspended (a `{` opened inside brackets).
#[derive(Debug)]
struct Frame {
    /// `(`, `[` or `{`.
    kind: char,
    /// The selecting call, for a `(`.
    call: Option<&'static str>,
    /// The statement to resume at the matching `}`.
    suspended: Option<Partial>,
}

/// The selecting call whose name ends `bare` (before an opening `(`), allowing a turbofish.
fn callee(bare: &str) -> Option<&'static str> {
    let mut end = bare.trim_end();
    if end.ends_with('>') {
        let mut depth = 0_i64;
        let mut cut = None;
        for (i, c) in end.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                cut = Some(i);
                break;
            }
        }
        end = end[..cut?].strip_suffix("::")?;
    }
    let (at, word) = *words(end).last()?;
    let called = at + word.len() == end.len() && (end[..at].ends_with('.') || end[..at].ends_with("::"));
    SELECTING_CALLS.iter().find(|c| called && **c == word).copied()
}

/// The selecting form in a statement's bare text, if any: a keyword, a selecting call or `matches!`.
pub fn selecting(bare: &str) -> Option<String> {
    let words = words(bare);
    if let Some((_, k)) = words.iter().find(|(_, w)| SELECTING_KEYWORDS.contains(w)) {
        return Some(format!("`{k}`"));
    }
    if words.iter().any(|(at, w)| *w == "matches" && bare[at + w.len()..].starts_with('!')) {
        return Some("`matches!`".to_owned());
    }
    words
        .iter()
        .find(|(at, w)| {
            let after = &bare[at + w.len()..];
            SELECTING_CALLS.contains(w)
                && (bare[..*at].ends_with('.') || bare[..*at].ends_with("::"))
                && (after.starts_with('(') || after.starts_with("::<"))
        })
        .map(|(_, w)| format!("`.{w}(`"))
}

/// The innermost selecting call among `frames`.
fn context(frames: &[Frame]) -> Option<&'static str> {
    frames.iter().rev().find_map(|f| f.call)
}

/// Moves `current` into `out` (when it holds code) and starts a new statement inside `inside`.
fn finish(current: &mut Partial, inside: Option<&'static str>, out: &mut Vec<Statement>) {
    let done = std::mem::replace(current, Partial::new(inside));
    if !done.bare.trim().is_empty() {
        out.push(Statement {
            line: done.line,
            text: done.text.trim().to_owned(),
            bare: done.bare.trim().to_owned(),
            inside: done.inside,
        });
    }
}

/// The statements of a file's code lines.
pub fn statements(lines: &[CodeLine]) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut current = Partial::new(None);
    for line in lines {
        if !current.bare.is_empty() && !current.bare.ends_with(' ') {
            current.push(' ', ' ', line.number);
        }
        let text: Vec<char> = line.text.chars().collect();
        let bare: Vec<char> = line.bare.chars().collect();
        for (i, &b) in bare.iter().enumerate() {
            let t = text.get(i).copied().unwrap_or(b);
            let in_block = frames.last().is_none_or(|f| f.kind == '{');
            match b {
                '(' | '[' => {
                    let call = if b == '(' { callee(&current.bare) } else { None };
                    current.push(t, b, line.number);
                    frames.push(Frame { kind: b, call, suspended: None });
                }
                ')' | ']' => {
                    current.push(t, b, line.number);
                    if frames.last().is_some_and(|f| f.kind != '{') {
                        frames.pop();
                    }
                }
                '{' if in_block => {
                    finish(&mut current, context(&frames), &mut out);
                    frames.push(Frame { kind: '{', call: None, suspended: None });
                    current.inside = context(&frames);
                }
                '{' => {
                    let suspended = std::mem::replace(&mut current, Partial::new(context(&frames)));
                    frames.push(Frame { kind: '{', call: None, suspended: Some(suspended) });
                }
                '}' => {
                    while frames.last().is_some_and(|f| f.kind != '{') {
                        frames.pop();
                    }
                    let frame = frames.pop();
                    finish(&mut current, context(&frames), &mut out);
                    if let Some(resumed) = frame.and_then(|f| f.suspended) {
                        current = resumed;
                    }
                }
                ';' | ',' if in_block => finish(&mut current, context(&frames), &mut out),
                _ => current.push(t, b, line.number),
            }
        }
        for &t in text.iter().skip(bare.len()) {
            current.text.push(t);
        }
    }
    finish(&mut current, None, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::super::super::lines::code_lines;
    use super::*;

    /// The statements of `src`, as (line, bare text, inside).
    fn cut(src: &str) -> Vec<(usize, String, Option<&'static str>)> {
        statements(&code_lines(src)).into_iter().map(|s| (s.line, s.text, s.inside)).collect()
    }

    /// A header split by rustfmt is one statement.
    #[test]
    fn a_header_split_by_rustfmt_is_one_statement() {
        let got = cut(
            "if e.kind == 1\n    && e.sign != Sign::Unset\n{\n    f(\"}\");\n}\nmatch (\n    e.sign,\n    e.kind,\n) {\n}\n",
        );
        assert_eq!(
            got,
            [
                (1, "if e.kind == 1 && e.sign != Sign::Unset".to_owned(), None),
                (4, "f(\"}\")".to_owned(), None),
                (6, "match ( e.sign, e.kind, )".to_owned(), None),
            ]
        );
    }

    /// A closure body inside a selecting call remembers the call.
    #[test]
    fn a_closure_body_inside_a_selecting_call_remembers_the_call() {
        let got = cut(
            "edges.retain(|e| {\n    let s = e.sign;\n    s == Sign::Unset\n});\nlet n = x.map(|e| { e });\n",
        );
        assert_eq!(
            got,
            [
                (2, "let s = e.sign".to_owned(), Some("retain")),
                (3, "s == Sign::Unset".to_owned(), Some("retain")),
                (1, "edges.retain(|e| )".to_owned(), None),
                (5, "e".to_owned(), None),
                (5, "let n = x.map(|e| )".to_owned(), None),
            ]
        );
    }

    /// Selecting calls are found after a dot, a path or with a turbofish.
    #[test]
    fn selecting_calls_are_found_with_paths_and_turbofish() {
        assert_eq!(callee("edges.iter().partition::<Vec<_>, _>"), Some("partition"));
        assert_eq!(callee("Iterator::filter"), Some("filter"));
        assert_eq!(callee("filter"), None);
        assert_eq!(callee("x.filtered"), None);
        assert_eq!(selecting("matches!(e.sign, X)").as_deref(), Some("`matches!`"));
        assert_eq!(selecting("e.sort_by_key(|e| e.sign)").as_deref(), Some("`.sort_by_key(`"));
        assert_eq!(selecting("x.map(f)"), None);
    }

    /// Odd input does not panic.
    #[test]
    fn odd_input_does_not_panic() {
        for src in ["}}}", ")))", "{{{ (", "a(<>::<", "f::<>(", ">", "é(}", "(]{)"] {
            let _ = statements(&code_lines(src));
            let _ = callee(src);
            let _ = selecting(src);
        }
    }
}
