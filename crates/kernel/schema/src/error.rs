//! Compile-time refusals: why a schema (a tool's input or output schema) cannot be served.

use std::fmt;

/// Longest rendering of a schema-supplied string (a reference, a pattern, a dialect) in
/// [`SchemaError`]'s `Display`; the fields themselves keep the full text.
const DISPLAY_LIMIT: usize = 160;

/// Why [`compile`](crate::compile) refused a schema; its `Display` reads well after `"tool <name>: "`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// A `$ref`/`$dynamicRef` (or a custom `$schema` meta-schema) names a document outside this one.
    RemoteReference {
        /// The reference as resolved by the validator (an absolute URI, fragment dropped).
        reference: String,
    },
    /// `$schema` names a dialect other than JSON Schema draft 2020-12.
    UnsupportedDialect {
        /// The `$schema` value as written.
        dialect: String,
    },
    /// A `pattern` or `patternProperties` regex the linear-time engine cannot run.
    UnsupportedPattern {
        /// The regex as written in the schema.
        pattern: String,
        /// Why the linear-time engine refuses it.
        reason: String,
    },
    /// An `x-mcp-header` annotation breaks the MCP header-parameter rules.
    HeaderAnnotation {
        /// JSON Pointer (RFC 6901) to the schema object carrying the annotation ("" = root).
        property_path: String,
        /// The rule it breaks.
        reason: String,
    },
    /// The document is not a valid JSON Schema draft 2020-12 schema.
    Invalid {
        /// What is wrong, bounded in length.
        reason: String,
    },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RemoteReference { reference } => write!(
                f,
                "schema references {:?}, which is not inside the schema document; \
                 remote references are refused",
                clip(reference, DISPLAY_LIMIT)
            ),
            Self::UnsupportedDialect { dialect } => write!(
                f,
                "schema declares $schema {:?}; only JSON Schema draft 2020-12 \
                 (https://json-schema.org/draft/2020-12/schema) is supported",
                clip(dialect, DISPLAY_LIMIT)
            ),
            Self::UnsupportedPattern { pattern, reason } => {
                write!(f, "schema pattern {:?} is refused: {reason}", clip(pattern, DISPLAY_LIMIT))
            }
            Self::HeaderAnnotation { property_path, reason } => {
                if property_path.is_empty() {
                    write!(f, "schema x-mcp-header at the schema root: {reason}")
                } else {
                    write!(f, "schema x-mcp-header at {:?}: {reason}", clip(property_path, DISPLAY_LIMIT))
                }
            }
            Self::Invalid { reason } => write!(f, "schema is not valid JSON Schema 2020-12: {reason}"),
        }
    }
}

impl std::error::Error for SchemaError {}

/// `text` cut to at most `limit` bytes on a character boundary, with "…" when cut.
pub(crate) fn clip(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= limit {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = limit.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}…", &text[..end]))
}

#[cfg(test)]
mod tests {
    use super::clip;

    #[test]
    fn clip_respects_limit_and_char_boundaries() {
        assert_eq!(clip("short", 10), "short");
        let long = "é".repeat(100);
        let clipped = clip(&long, 21);
        assert!(clipped.len() <= 21, "{}", clipped.len());
        assert!(clipped.ends_with('…'));
    }
}
