//! Uri templates: the two RFC 6570 expressions this package claims, `{var}` and `{+var}`.
//!
//! `{var}` matches one non-empty path segment (no literal `/`), `{+var}` one or more of any character;
//! every other character is literal and the whole uri must match. Any other expression, a bare brace,
//! or more than [`MAX_RESERVED_EXPRESSIONS`] `{+var}` in one template is refused when the server is
//! built. Matching runs on the linear-time `regex` engine, whose cost with capture groups is the uri's
//! length times the template's size: bounded by the `{+var}` cap and by trying only uris of at most
//! [`MAX_TEMPLATE_URI_BYTES`] against templates (a longer uri matches none).
//!
//! When several listed templates match one uri, the most specific is read: the one with the fewest
//! `{+var}`, then the most literal text, then the first bytewise (`notes://note/{id}` before
//! `notes://{x}` before `notes://{+rest}`).
//!
//! Which templates a read tries is narrowed, never changed, by the template index
//! (`template_index.rs`): a uri is tried only against the templates whose literal text before the
//! first expression it starts with, so a read does not grow slower with every template listed.
//!
//! A matched uri's variables are recovered as the inverse of RFC 6570 expansion: `{var}` (simple
//! expansion percent-encodes everything outside the unreserved set) is percent-decoded, so
//! `notes://note/%34%32` gives `id = "42"`; `{+var}` (reserved expansion passes reserved characters
//! and percent-encoded triplets through) is taken verbatim, so `/` and `%2F` stay as sent. A `{var}`
//! segment that no expansion could produce (a malformed `%` triplet, bytes that are not UTF-8 once
//! decoded) does not match, and a variable repeated in the template must match the same text each time.
//!
//! **A decoded `{var}` may hold any character**, `/`, `..`, NUL and line breaks included:
//! `notes://note/..%2F..%2Fetc` gives `id = "../../etc"`, because that is the value whose expansion it
//! is. A host that turns a variable into a path, a query or a log line must check it as it would any
//! caller input (`TemplateMatch::parse` into a number or an enum does).
//!
//! The matcher takes one split of the uri (the regex engine's leftmost-first choice); with a variable
//! repeated in the template (`{x}-{x}`), a uri another split would have matched can be answered "not
//! found". Templates that repeat a variable are rare; avoid them where a value may hold the separator.

use std::str::FromStr;
use std::sync::Arc;

use regex::Regex;

use crate::request::reader_error::ReaderError;

/// The most `{+var}` expressions one template may hold: matching costs time in the uri's length times
/// their number, so the bound keeps a read linear in the uri.
pub const MAX_RESERVED_EXPRESSIONS: usize = 8;

/// The longest uri tried against the templates, in bytes: a longer one matches no template (it may
/// still name a listed resource), so that no uri costs more than this to match.
pub const MAX_TEMPLATE_URI_BYTES: usize = 64 * 1024;

/// A compiled template.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    matcher: Regex,
    variables: Vec<Arc<str>>,
    /// For each capture group, in order: the variable's index and whether it is `{+var}`.
    groups: Vec<(usize, bool)>,
    /// The bytes of literal text (outside the expressions).
    literal_bytes: usize,
    /// The literal text before the first expression (the whole template when it has none): every uri
    /// the template matches starts with it.
    prefix: Box<str>,
}

/// The listed template a `resources/read` uri matched, with the template's variables decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateMatch {
    template: Arc<str>,
    uri: String,
    variables: Vec<(Arc<str>, String)>,
}

impl TemplateMatch {
    /// A match built by hand, for testing a template reader without a server.
    pub fn new<K: Into<Arc<str>>, V: Into<String>>(
        template: impl Into<Arc<str>>,
        variables: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let variables = variables.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        Self { template: template.into(), uri: String::new(), variables }
    }

    /// The same match for the uri `uri`.
    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = uri.into();
        self
    }

    /// The template, as the catalog lists it.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// The uri that was read, as the caller sent it.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The decoded value of the variable `name`: caller input, which may hold `/`, `..` or control
    /// characters once decoded (see the module docs); check it before using it as a path.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.variables.iter().find(|(k, _)| k.as_ref() == name).map(|(_, v)| v.as_str())
    }

    /// The variable `name` parsed as `T`; a variable the template lacks or a value `T` refuses is a
    /// [`ReaderError`] naming the variable (never quoting the value), which `resources/read` answers
    /// as "resource not found" with that reason.
    pub fn parse<T: FromStr>(&self, name: &str) -> Result<T, ReaderError> {
        let Some(value) = self.get(name) else {
            return Err(ReaderError::new(format!("the template has no variable {name}")));
        };
        let expected = short_type_name::<T>();
        value.parse().map_err(|_| ReaderError::new(format!("the uri's {name} is not a valid {expected}")))
    }

    /// The (variable, decoded value) pairs, in order of first appearance in the template.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.variables.iter().map(|(k, v)| (k.as_ref(), v.as_str()))
    }
}

/// `u64` for `u64`, `NoteId` for `my_crate::NoteId`.
fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// Percent-decodes a `{var}` value; `None` for a malformed triplet or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits, nothing else (`from_str_radix` alone would take `%+1`).
            let hex = bytes.get(i + 1..i + 3).filter(|pair| pair.iter().all(u8::is_ascii_hexdigit))?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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
        let mut groups = Vec::new();
        let mut literal_bytes = 0;
        let prefix: Box<str> = template[..template.find('{').unwrap_or(template.len())].into();
        while let Some(open) = rest.find(['{', '}']) {
            pattern.push_str(&regex::escape(&rest[..open]));
            literal_bytes += open;
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
            let index = match variables.iter().position(|v| v.as_ref() == name) {
                Some(index) => index,
                None => {
                    variables.push(Arc::from(name));
                    variables.len() - 1
                }
            };
            groups.push((index, reserved));
            pattern.push_str(if reserved { "(.+)" } else { "([^/]+)" });
            rest = &after[close + 1..];
        }
        pattern.push_str(&regex::escape(rest));
        literal_bytes += rest.len();
        pattern.push_str("\\z");
        if groups.iter().filter(|(_, reserved)| *reserved).count() > MAX_RESERVED_EXPRESSIONS {
            return Err(TemplateError(format!(
                "more than {MAX_RESERVED_EXPRESSIONS} {{+var}} expressions (matching cost grows with each)"
            )));
        }
        let matcher = Regex::new(&pattern).map_err(|e| TemplateError(format!("cannot be compiled: {e}")))?;
        Ok(Self { matcher, variables, groups, literal_bytes, prefix })
    }

    /// How specific the template is, for choosing among templates that match the same uri: fewer
    /// `{+var}` first, then more literal text (a smaller key sorts first).
    pub fn specificity(&self) -> (usize, std::cmp::Reverse<usize>) {
        let reserved = self.groups.iter().filter(|(_, reserved)| *reserved).count();
        (reserved, std::cmp::Reverse(self.literal_bytes))
    }

    /// The literal text before the first expression (the whole template when it has none): a uri
    /// that does not start with it is not one of the template's uris.
    pub fn literal_prefix(&self) -> &str {
        &self.prefix
    }

    /// The regular expression the template compiles to (anchored at both ends): a set built from it
    /// matches exactly the uris the template's own matcher matches.
    pub fn pattern(&self) -> &str {
        self.matcher.as_str()
    }

    /// The template's variable names, in order of first appearance, each once.
    pub fn variables(&self) -> &[Arc<str>] {
        &self.variables
    }

    /// True when `uri` is one of the template's uris (its variables decode; see the module docs).
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn matches(&self, uri: &str) -> bool {
        self.matcher.is_match(uri) && self.captures(uri).is_some()
    }

    /// The decoded variables of `uri`, when it is one of the template's uris.
    pub fn captures(&self, uri: &str) -> Option<Vec<(Arc<str>, String)>> {
        if uri.len() > MAX_TEMPLATE_URI_BYTES {
            return None;
        }
        let found = self.matcher.captures(uri)?;
        let mut values: Vec<Option<String>> = vec![None; self.variables.len()];
        for (group, &(index, reserved)) in self.groups.iter().enumerate() {
            let text = found.get(group + 1)?.as_str();
            let value = if reserved { text.to_owned() } else { percent_decode(text)? };
            match &values[index] {
                Some(seen) if *seen != value => return None,
                Some(_) => {}
                None => values[index] = Some(value),
            }
        }
        self.variables.iter().zip(values).map(|(name, value)| Some((Arc::clone(name), value?))).collect()
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

    fn captured(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let t = UriTemplate::parse(template).unwrap();
        t.captures(uri).map(|v| v.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    #[test]
    fn simple_variables_are_percent_decoded() {
        assert_eq!(
            captured("notes://note/{id}", "notes://note/%34%32"),
            Some(vec![("id".into(), "42".into())])
        );
        assert_eq!(captured("a/{x}", "a/caf%C3%A9%20bar"), Some(vec![("x".into(), "café bar".into())]));
    }

    #[test]
    fn reserved_variables_keep_slashes_and_triplets_verbatim() {
        assert_eq!(
            captured("file:///{+path}", "file:///a/b%2Fc"),
            Some(vec![("path".into(), "a/b%2Fc".into())])
        );
    }

    #[test]
    fn a_segment_no_expansion_produces_does_not_match() {
        for uri in ["a/%zz", "a/%4", "a/%FF", "a/%", "a/%+1", "a/%-1", "a/% 1"] {
            assert_eq!(captured("a/{x}", uri), None, "{uri}");
            assert!(!UriTemplate::parse("a/{x}").unwrap().matches(uri), "{uri}");
        }
    }

    #[test]
    fn a_repeated_variable_must_match_the_same_value() {
        assert_eq!(captured("a/{x}/{x}", "a/1/%31"), Some(vec![("x".into(), "1".into())]));
        assert_eq!(captured("a/{x}/{x}", "a/1/2"), None);
    }

    #[test]
    fn template_match_parses_typed_values_without_quoting_them() {
        let found = TemplateMatch::new("notes://note/{id}", [("id", "4x2")]);
        let error = found.parse::<u64>("id").unwrap_err();
        assert_eq!(error.reason(), &serde_json::json!("the uri's id is not a valid u64"));
        assert_eq!(TemplateMatch::new("t/{id}", [("id", "42")]).parse::<u64>("id"), Ok(42));
        assert!(found.parse::<u64>("other").is_err());
    }

    #[test]
    fn more_than_eight_reserved_expressions_are_refused_and_long_uris_match_nothing() {
        let eight: String = (0..8).map(|i| format!("{{+v{i}}}/")).collect();
        assert!(UriTemplate::parse(&format!("x://{eight}")).is_ok());
        let nine = format!("x://{eight}{{+v8}}");
        assert!(UriTemplate::parse(&nine).unwrap_err().0.contains("more than 8"));
        let any = UriTemplate::parse("x://{+p}").unwrap();
        let at_cap = format!("x://{}", "a".repeat(MAX_TEMPLATE_URI_BYTES - 4));
        assert!(any.captures(&at_cap).is_some());
        assert!(any.captures(&format!("{at_cap}a")).is_none());
    }

    #[test]
    fn fewer_reserved_expressions_then_more_literal_text_is_more_specific() {
        let key = |t: &str| UriTemplate::parse(t).unwrap().specificity();
        assert!(key("a://{x}") < key("a://{+y}"));
        assert!(key("a://note/{id}") < key("a://{x}"));
        assert!(key("a://n{z}") < key("a://{x}"));
    }

    #[test]
    fn the_literal_prefix_is_the_text_before_the_first_expression() {
        let prefix = |t: &str| UriTemplate::parse(t).unwrap().literal_prefix().to_owned();
        assert_eq!(prefix("notes://note/{id}"), "notes://note/");
        assert_eq!(prefix("{+any}"), "");
        assert_eq!(prefix("a/b.json"), "a/b.json");
        assert_eq!(prefix("é/{x}/y/{+z}"), "é/");
    }

    #[test]
    fn variables_are_named_once_in_order() {
        let t = UriTemplate::parse("a/{x}/{+y}/{x}.json").unwrap();
        let names: Vec<&str> = t.variables().iter().map(|v| v.as_ref()).collect();
        assert_eq!(names, ["x", "y"]);
        assert!(UriTemplate::parse("a/b").unwrap().variables().is_empty());
    }
}
