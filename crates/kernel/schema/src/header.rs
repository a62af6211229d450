//! `x-mcp-header`: schema properties the client mirrors into `Mcp-Param-*` HTTP headers.
//!
//! Rules checked at compile time (MCP 2026-07-28):
//!
//! * the annotation value is a non-empty RFC 9110 `token` (`1*tchar`);
//! * names are unique within the schema, compared case-insensitively (header names are);
//! * the annotated property declares `"type"` as exactly one of `"string"`, `"integer"`,
//!   `"boolean"`. A `"number"`, an array of types, or **no `type` at all** is a fault: the
//!   spec only allows the annotation on properties of those three types, and an untyped
//!   property may carry any value, which no header can represent faithfully;
//! * the property is reached from the root through a chain of `properties` keys only.
//!   An `x-mcp-header` anywhere else (`items`, `prefixItems`, `allOf`/`anyOf`/`oneOf`, `not`,
//!   `if`/`then`/`else`, `$defs`, `additionalProperties`, `patternProperties`, an unknown
//!   keyword, the root itself, …) is a fault, because the client cannot map it to one value.
//!
//! The search is schema-aware (see `walk.rs`): a *property named* `x-mcp-header` inside
//! `properties` is a property, not an annotation, and instance data under `const`, `enum`,
//! `default` and `examples` is not searched.

use std::sync::Arc;

use serde_json::{Map, Value};

/// The annotation keyword.
pub(crate) const KEYWORD: &str = "x-mcp-header";

/// Prefix of the HTTP header carrying an annotated parameter.
const HEADER_PREFIX: &str = "mcp-param-";

/// The fault for an annotation outside a `properties`-only chain from the root.
pub(crate) const MISPLACED: &str = "x-mcp-header may only annotate a property reached from \
                                    the root through a chain of \"properties\" keys";

/// The fault for an annotation on the root schema.
pub(crate) const ON_ROOT: &str = "x-mcp-header must annotate a property, not the root schema";

/// One schema property a client sends as an `Mcp-Param-<name>` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The annotation value exactly as written in the schema.
    pub name: String,
    /// The HTTP header name: `"mcp-param-"` followed by the lowercased name.
    pub header: String,
    /// Property keys from the root schema down to the annotated property.
    pub path: Vec<Arc<str>>,
    /// The property's declared JSON type.
    pub kind: HeaderParamKind,
}

/// The JSON type an `x-mcp-header` property may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeaderParamKind {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

impl HeaderParamKind {
    /// The JSON Schema type name (`"string"`, `"integer"` or `"boolean"`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
        }
    }
}

/// Checks one well-placed annotation on the property schema `object`, reached via `keys`.
///
/// Returns the parameter, or the rule it breaks. Uniqueness is the caller's (it sees them all).
/// `declared` are the root's property keys: a top-level parameter's `path[0]` shares its `Arc`.
pub(crate) fn parameter(
    object: &Map<String, Value>,
    annotation: &Value,
    keys: &[&str],
    declared: &[Arc<str>],
) -> Result<HeaderParam, String> {
    let Some(name) = annotation.as_str() else {
        return Err("the x-mcp-header value must be a string".to_owned());
    };
    if name.is_empty() {
        return Err("the x-mcp-header value must not be empty".to_owned());
    }
    if let Some(bad) = name.chars().find(|c| !is_tchar(*c)) {
        return Err(format!(
            "the x-mcp-header value {name:?} is not an HTTP token (RFC 9110): \
             character {bad:?} is not allowed"
        ));
    }
    let kind = match object.get("type") {
        Some(Value::String(ty)) => match ty.as_str() {
            "string" => HeaderParamKind::String,
            "integer" => HeaderParamKind::Integer,
            "boolean" => HeaderParamKind::Boolean,
            other => {
                return Err(format!(
                    "an x-mcp-header property must have type string, integer or boolean, \
                     not {other:?}"
                ));
            }
        },
        Some(_) => {
            return Err("an x-mcp-header property must have exactly one type \
                        (string, integer or boolean), not a list"
                .to_owned());
        }
        None => {
            return Err("an x-mcp-header property must declare \"type\" as string, \
                        integer or boolean; it declares none"
                .to_owned());
        }
    };
    let path = keys
        .iter()
        .enumerate()
        .map(|(depth, key)| {
            let shared =
                if depth == 0 { declared.iter().find(|declared| &***declared == *key) } else { None };
            shared.map_or_else(|| Arc::from(*key), Arc::clone)
        })
        .collect();
    Ok(HeaderParam {
        name: name.to_owned(),
        header: format!("{HEADER_PREFIX}{}", name.to_ascii_lowercase()),
        path,
        kind,
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '!' | '#' | '$' | '%' | '&' | '\'' | '*' | '+' | '-' | '.' | '^' | '_' | '`' | '|' | '~'
        )
}

#[cfg(test)]
mod tests {
    use super::is_tchar;

    #[test]
    fn tchar_matches_rfc_9110() {
        for c in "!#$%&'*+-.^_`|~azAZ09".chars() {
            assert!(is_tchar(c), "{c:?}");
        }
        for c in " \t\"(),/:;<=>?@[\\]{}é\u{7f}".chars() {
            assert!(!is_tchar(c), "{c:?}");
        }
    }
}
