//! Uri templates: the two RFC 6570 expressions this package claims, `{var}` and `{+var}`.
//!
//! `{var}` matches one non-empty path segment (no `/`), `{+var}` one or more of any character; every
//! other character is literal and the whole uri must match. Any other expression, or a bare brace, is
//! refused when the server is built. Matching runs on the linear-time `regex` engine, so a long uri
//! against a template with several `{+var}` costs time linear in the uri.

use std::sync::Arc;

use regex::Regex;

/// A compiled template.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    matcher: Regex,
    variables: Vec<Arc<str>>,
}

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub(crate) String);

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_varname(name: &str) -> bool {
    // varname = varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded
    if name.is_empty() || name.starts_with('.') || name.ends_with('.') || name.contains("..") {
        return false;
    }
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                if !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
                {
                    return false;
                }
                i += 3;
            }
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => i += 1,
            _ => return false,
        }
    }
    true
}

impl UriTemplate {
    /// Compiles a template, refusing any expression other than `{var}` / `{+var}` and any bare brace.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let mut pattern = String::from("(?s)\\A");
        let mut rest = template;
        let mut variables: Vec<Arc<str>> = Vec::new();
        while let Some(open) = rest.find(['{', '}']) {
            pattern.push_str(&regex::escape(&rest[..open]));
            if rest.as_bytes()[open] == b'}' {
                return Err(TemplateError("a closing brace with no expression".into()));
            }
            let after = &rest[open + 1..];
            let close = after.find('}').ok_or_else(|| TemplateError("an unclosed brace".into()))?;
            let expr = &after[..close];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, expr),
            };
            if !is_varname(name) {
                return Err(TemplateError(
                    "an expression other than {var} or {+var} (RFC 6570 levels beyond 2 are not claimed)"
                        .into(),
                ));
            }
            if !variables.iter().any(|v| v.as_ref() == name) {
                variables.push(Arc::from(name));
            }
            pattern.push_str(if reserved { ".+" } else { "[^/]+" });
            rest = &after[close + 1..];
        }
        pattern.push_str(&regex::escape(rest));
        pattern.push_str("\\z");
        let matcher = Regex::new(&pattern).map_err(|e| TemplateError(format!("cannot be compiled: {e}")))?;
        Ok(Self { matcher, variables })
    }

    /// The template's variable names, in order of first appearance, each once.
    pub fn variables(&self) -> &[Arc<str>] {
        &self.variables
    }

    /// True when `uri` is one of the template's uris.
    pub fn matches(&self, uri: &str) -> bool {
        self.matcher.is_match(uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_matches_one_non_empty_segment() {
        let t = UriTemplate::parse("weather://place/{name}").unwrap();
        assert!(t.matches("weather://place/Oslo"));
        assert!(!t.matches("weather://place/"));
        assert!(!t.matches("weather://place/a/b"));
        assert!(!t.matches("xweather://place/Oslo"));
    }

    #[test]
    fn reserved_var_spans_segments_and_newlines() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert!(t.matches("file:///a/b/c"));
        assert!(t.matches("file:///a\nb"));
        assert!(!t.matches("file:///"));
    }

    #[test]
    fn literals_are_literal() {
        let t = UriTemplate::parse("a.b://{x}.json").unwrap();
        assert!(t.matches("a.b://y.json"));
        assert!(!t.matches("aXb://y.json"));
        assert!(!t.matches("a.b://yXjson"));
    }

    #[test]
    fn refuses_unclaimed_expressions_and_bare_braces() {
        for bad in [
            "a/{?q}", "a/{#f}", "a/{x,y}", "a/{x*}", "a/{}", "a/{x", "a/}x", "a/{x:3}", "a/{.x}", "a/{x..y}",
            "a/{%zz}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        assert!(UriTemplate::parse("a/{x.y}/{%41}/{+z_1}").is_ok());
    }

    #[test]
    fn variables_are_named_once_in_order() {
        let t = UriTemplate::parse("a/{x}/{+y}/{x}.json").unwrap();
        let names: Vec<&str> = t.variables().iter().map(|v| v.as_ref()).collect();
        assert_eq!(names, ["x", "y"]);
        assert!(UriTemplate::parse("a/b").unwrap().variables().is_empty());
    }
}
