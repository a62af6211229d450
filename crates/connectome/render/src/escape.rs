//! Escapers, one per output language, and the short excerpt an error may quote.
//!
//! Every string that comes from an export passes through one of these before it is written.

use std::fmt::Write as _;

/// Text for HTML element content and double- or single-quoted attribute values.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Text inside a Mermaid `"…"` label: `"` becomes `#quot;`, and every character Mermaid or the
/// browser could read as markup (`#`, `&`, `<`, `>`, a backtick, controls) becomes an entity code, as
/// do `%`, `{`, `}` and `'`: Mermaid strips `%%{…}%%` directives anywhere in the text before parsing, so
/// an id holding one could cut the diagram short or reconfigure it.
pub fn mermaid(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' | '&' | '<' | '>' | '`' | '%' | '{' | '}' | '\'' => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Text inside a DOT `"…"` string: `\` and `"` are escaped, controls are written as visible
/// `\uXXXX` text so that no label escape (`\n`, `\l`, …) comes from the input.
pub fn dot(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => {
                let _ = write!(out, "\\\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// JSON text for the body of a `<script type="application/json">` element: `<`, `>`, `&`, U+2028 and
/// U+2029 become `\u` escapes, so no `</script>` or `<!--` can appear and the text still parses to the
/// same value. Those characters only ever occur inside JSON strings, where the escape means the same.
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// The longest excerpt of input an error message quotes, in characters.
pub const EXCERPT_CHARS: usize = 32;

/// A short, quoted, ASCII-only excerpt of `s` for an error message: at most [`EXCERPT_CHARS`]
/// characters, everything outside printable ASCII (and `"`, `\`) written as `\u{…}`, `...` when cut.
pub fn excerpt(s: &str) -> String {
    excerpt_max(s, EXCERPT_CHARS)
}

/// [`excerpt`] with a chosen length limit (paths in messages use a longer one).
pub fn excerpt_max(s: &str, max: usize) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push_str("...");
            break;
        }
        match c {
            '"' | '\\' => {
                let _ = write!(out, "\\{c}");
            }
            ' '..='~' => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_markup_and_quotes() {
        assert_eq!(html("</svg><b a='x\"'>&"), "&lt;/svg&gt;&lt;b a=&#39;x&quot;&#39;&gt;&amp;");
    }

    #[test]
    fn mermaid_quote_becomes_quot_entity() {
        assert_eq!(mermaid("a\"b#c<d>"), "a#quot;b#35;c#60;d#62;");
    }

    #[test]
    fn dot_escapes_backslash_quote_and_controls() {
        assert_eq!(dot("a\\b\"c\nd"), "a\\\\b\\\"c\\\\u000ad");
    }

    #[test]
    fn script_json_hides_markup_and_line_separators() {
        let json = serde_json::json!(["</script><!--&\u{2028}\u{2029}"]).to_string();
        let safe = script_json(&json);
        assert_eq!(safe, "[\"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029\"]");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).unwrap().to_string(), json);
    }

    #[test]
    fn excerpt_is_short_quoted_and_ascii() {
        let long = "é\u{202e}".repeat(40);
        let e = excerpt(&long);
        assert!(e.is_ascii());
        assert!(e.ends_with("...\""));
        assert_eq!(e.matches("\\u{").count(), EXCERPT_CHARS);
    }
}
