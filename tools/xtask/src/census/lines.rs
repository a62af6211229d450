//! The code lines of a Rust source file: comments and `#[cfg(test)]` modules removed.
//!
//! A small lexer, not a parser: it knows line and block comments (nested), string literals (with
//! escapes), raw strings (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`), char literals and lifetimes, so a `//`
//! or a brace inside a string is not mistaken for code. It does not expand macros.

/// One line of code: its 1-based number, the text without comments (strings kept), and the same text
/// with the contents of string and char literals blanked (for brace counting). `bare` is aligned with
/// `text`: its `n`th char stands for the `n`th char of `text` (it may be shorter, never longer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLine {
    /// The 1-based line number in the file.
    pub number: usize,
    /// The line without comments, trimmed; string literals kept as written.
    pub text: String,
    /// The line without comments or literal contents, aligned with `text` and trimmed at the end.
    pub bare: String,
}

/// Where the lexer is between characters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Ordinary code.
    Code,
    /// Inside a `/* … */` comment of this nesting depth.
    Block(usize),
    /// Inside a `"…"` string.
    Str,
    /// Inside a raw string closed by `"` and this many `#`.
    Raw(usize),
}

/// Every line of `text` with comments removed and literal contents blanked, before test modules are cut.
fn lex(text: &str) -> Vec<CodeLine> {
    let mut out = Vec::new();
    let mut state = State::Code;
    for (index, line) in text.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let (mut code, mut bare) = (String::new(), String::new());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            match state {
                State::Block(depth) => {
                    if c == '*' && next == Some('/') {
                        state = if depth == 1 { State::Code } else { State::Block(depth - 1) };
                        i += 2;
                    } else if c == '/' && next == Some('*') {
                        state = State::Block(depth + 1);
                        i += 2;
                    } else {
                        i += 1;
                    }
                    continue;
                }
                State::Str => {
                    code.push(c);
                    if c == '\\' {
                        bare.push(' ');
                        if let Some(n) = next {
                            code.push(n);
                            bare.push(' ');
                        }
                        i += 2;
                        continue;
                    }
                    if c == '"' {
                        bare.push('"');
                        state = State::Code;
                    } else {
                        bare.push(' ');
                    }
                    i += 1;
                    continue;
                }
                State::Raw(hashes) => {
                    code.push(c);
                    if c == '"' && chars[i + 1..].iter().take(hashes).filter(|h| **h == '#').count() == hashes
                    {
                        code.extend(std::iter::repeat_n('#', hashes));
                        bare.push('"');
                        bare.extend(std::iter::repeat_n('#', hashes));
                        state = State::Code;
                        i += 1 + hashes;
                    } else {
                        bare.push(' ');
                        i += 1;
                    }
                    continue;
                }
                State::Code => {}
            }
            if c == '/' && next == Some('/') {
                break;
            }
            if c == '/' && next == Some('*') {
                state = State::Block(1);
                i += 2;
                continue;
            }
            let starts_word = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
            if c == '"' {
                code.push(c);
                bare.push(c);
                state = State::Str;
                i += 1;
                continue;
            }
            if (c == 'r' || ((c == 'b' || c == 'c') && next == Some('r'))) && starts_word {
                let start = if c == 'r' { i + 1 } else { i + 2 };
                let hashes = chars[start.min(chars.len())..].iter().take_while(|h| **h == '#').count();
                if chars.get(start + hashes) == Some(&'"') {
                    let opening: String = chars[i..=start + hashes].iter().collect();
                    code.push_str(&opening);
                    bare.push_str(&opening);
                    state = State::Raw(hashes);
                    i = start + hashes + 1;
                    continue;
                }
            }
            if c == '\''
                && let Some(len) = char_literal_len(&chars[i..])
            {
                let literal: String = chars[i..i + len].iter().collect();
                code.push_str(&literal);
                bare.push('\'');
                bare.extend(std::iter::repeat_n(' ', len.saturating_sub(2)));
                bare.push('\'');
                i += len;
                continue;
            }
            code.push(c);
            bare.push(c);
            i += 1;
        }
        let leading = code.chars().take_while(|c| c.is_whitespace()).count();
        let bare: String = bare.chars().skip(leading).collect();
        out.push(CodeLine {
            number: index + 1,
            text: code.trim().to_owned(),
            bare: bare.trim_end().to_owned(),
        });
    }
    out
}

/// The length in chars of the char literal starting at `chars[0] == '\''`, or `None` for a lifetime.
fn char_literal_len(chars: &[char]) -> Option<usize> {
    match chars.get(1)? {
        '\\' => chars.iter().skip(3).position(|c| *c == '\'').map(|p| p + 4),
        _ => (chars.get(2) == Some(&'\'')).then_some(3),
    }
}

/// The braces of a run of bare code lines, counted line by line: how deep they are, and whether one
/// has opened yet.
#[derive(Debug, Default)]
pub struct Braces {
    /// Opening braces counted less closing ones.
    depth: i64,
    /// Whether a `{` has been counted.
    opened: bool,
}

impl Braces {
    /// Counts the braces of one bare line (literal contents blanked, so a quoted brace is not counted).
    pub fn count(&mut self, bare: &str) {
        for c in bare.chars() {
            match c {
                '{' => {
                    self.depth += 1;
                    self.opened = true;
                }
                '}' => self.depth -= 1,
                _ => {}
            }
        }
    }

    /// Whether a brace has opened and every one opened has closed again.
    pub fn closed(&self) -> bool {
        self.opened && self.depth <= 0
    }
}

/// Whether a code line opens a module item (`mod x {`, `pub mod x {`, `pub(crate) mod x {`).
fn opens_module(bare: &str) -> bool {
    let rest = bare.strip_prefix("pub(crate) ").or_else(|| bare.strip_prefix("pub ")).unwrap_or(bare);
    rest.starts_with("mod ") && bare.contains('{')
}

/// The code lines of `text`: blank and comment-only lines dropped, and every `#[cfg(test)]` module
/// (the attribute, any attributes after it, and the module's braces) cut.
pub fn code_lines(text: &str) -> Vec<CodeLine> {
    let lexed = lex(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lexed.len() {
        let line = &lexed[i];
        if line.bare.starts_with("#[cfg(test)]") {
            let mut j = i;
            let rest = line.bare.trim_start_matches("#[cfg(test)]").trim();
            let mut opener = (!rest.is_empty()).then(|| rest.to_owned());
            while opener.is_none() && j + 1 < lexed.len() {
                j += 1;
                let candidate = &lexed[j].bare;
                if !(candidate.is_empty() || candidate.starts_with("#[")) {
                    opener = Some(candidate.clone());
                }
            }
            if opener.as_deref().is_some_and(opens_module) {
                let mut braces = Braces::default();
                while j < lexed.len() {
                    braces.count(&lexed[j].bare);
                    j += 1;
                    if braces.closed() {
                        break;
                    }
                }
                // A module whose braces do not close before the end of the file is kept, not cut.
                if braces.closed() {
                    i = j;
                    continue;
                }
            }
        }
        if !line.text.is_empty() {
            out.push(line.clone());
        }
        i += 1;
    }
    out
}

/// Every non-blank line of `text` with comments removed and literal contents blanked, test modules
/// kept (for finding test functions).
pub fn lexed_lines(text: &str) -> Vec<CodeLine> {
    lex(text).into_iter().filter(|l| !l.text.is_empty()).collect()
}

/// The identifier-like words of `text` (runs of ASCII letters, digits and `_`), with their byte offsets.
pub fn words(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept line texts of `text`.
    fn texts(text: &str) -> Vec<String> {
        code_lines(text).into_iter().map(|l| l.text).collect()
    }

    /// Comments are removed and strings kept.
    #[test]
    fn comments_are_removed_and_strings_kept() {
        let src = "//! doc\n/// item doc\nlet a = \"// not a comment\"; // trailing\n/* block\nstill */ let b = 1;\n";
        assert_eq!(texts(src), ["let a = \"// not a comment\";", "let b = 1;"]);
    }

    /// Test modules are cut and code after them kept.
    #[test]
    fn test_modules_are_cut_and_code_after_them_kept() {
        let src = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() { let s = \"}\"; }\n}\nfn c() {}\n";
        let lines = code_lines(src);
        assert_eq!(lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(), ["fn a() {}", "fn c() {}"]);
        assert_eq!(lines[1].number, 6);
    }

    /// Raw strings chars and lifetimes are told apart.
    #[test]
    fn raw_strings_chars_and_lifetimes_are_told_apart() {
        let src = "let r = r#\"a \" // b\"#; let c = '{'; fn f<'a>(x: &'a str) {}\n";
        let line = &code_lines(src)[0];
        assert!(line.text.ends_with("fn f<'a>(x: &'a str) {}"));
        assert_eq!(line.bare.matches('{').count(), 1);
    }

    /// Raw C strings are strings: `cr"\"` does not open an escape that blanks the code after it.
    #[test]
    fn raw_c_strings_are_strings() {
        let src = "let a = cr\"\\\"; let b = Sign::Deny; let c = cr#\"\"# ; let d = c\"x\";\nlet e = 1;\n";
        let lines = code_lines(src);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].bare.contains("let b = Sign::Deny;"), "{:?}", lines[0].bare);
        assert!(lines[0].bare.ends_with("let d = c\" \";"), "{:?}", lines[0].bare);
    }

    /// A test module whose braces never close is kept, not cut to the end of the file.
    #[test]
    fn an_unbalanced_test_module_is_kept() {
        let src = "#[cfg(test)]\nmod tests {\nfn a() {}\nlet s = Sign::Deny;\n";
        assert_eq!(texts(src), ["#[cfg(test)]", "mod tests {", "fn a() {}", "let s = Sign::Deny;"]);
    }

    /// The bare line is aligned with the text, char for char.
    #[test]
    fn the_bare_line_is_aligned_with_the_text() {
        let src = "    let a = \"x\\\"y\"; let c = '\\n'; let r = r#\"q\"#; f(a)\n";
        let line = &code_lines(src)[0];
        assert_eq!(line.text.chars().count(), line.bare.chars().count(), "{line:?}");
        assert!(line.bare.ends_with("f(a)"));
        assert_eq!(lexed_lines("#[cfg(test)]\nmod t {\n#[test]\nfn x() {}\n}\n").len(), 5);
    }

    /// Odd input does not panic.
    #[test]
    fn odd_input_does_not_panic() {
        for src in ["\"unterminated", "r#\"", "'", "/* /* */", "#[cfg(test)]", "#[cfg(test)]\nmod t {", "é'"]
        {
            let _ = code_lines(src);
        }
        let tricky = "let a = br##\"x\"# \"##; let c = '\\u{1F600}'; /* /* */ */ 'é' \"\\\"\" r#ident\n#[cfg(test)] mod t { '}' }";
        for (end, _) in tricky.char_indices() {
            let _ = code_lines(&tricky[..end]);
        }
    }
}
