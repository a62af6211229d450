//! `$schema`: only JSON Schema draft 2020-12 is served.
//!
//! The MCP specification makes 2020-12 the default dialect and requires an error for a
//! dialect the server does not support. Earlier drafts differ in keyword semantics (for
//! example `items` as an array, `$ref` siblings ignored), so a schema written for them
//! would be enforced differently from what its author meant: refused, not reinterpreted.
//!
//! A `$schema` that is neither 2020-12 nor a known JSON Schema draft names a *custom*
//! meta-schema. Learning its dialect means fetching that document, so it is refused as a
//! [`SchemaError::RemoteReference`], like any other reference outside the document.

use serde_json::Value;

use crate::SchemaError;

/// The draft 2020-12 meta-schema URI (also accepted with a trailing `#`).
pub(crate) const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Meta-schema URIs of published drafts other than 2020-12, without scheme or trailing `#`.
const OTHER_DRAFTS: &[&str] = &[
    "json-schema.org/draft-03/schema",
    "json-schema.org/draft-04/schema",
    "json-schema.org/draft-06/schema",
    "json-schema.org/draft-07/schema",
    "json-schema.org/draft/2019-09/schema",
    "json-schema.org/draft/next/schema",
    // `http://` spelling of 2020-12: not the meta-schema URI, but plainly a draft name.
    "json-schema.org/draft/2020-12/schema",
    "json-schema.org/schema",
];

/// Checks one `$schema` value.
pub(crate) fn check(value: &Value) -> Result<(), SchemaError> {
    let Some(uri) = value.as_str() else {
        return Err(SchemaError::Invalid {
            reason: "\"$schema\" must be a string (a meta-schema URI)".to_owned(),
        });
    };
    let bare = uri.strip_suffix('#').unwrap_or(uri);
    if bare == DRAFT_2020_12 {
        return Ok(());
    }
    let without_scheme = bare.strip_prefix("https://").or_else(|| bare.strip_prefix("http://"));
    let known_draft = without_scheme.is_some_and(|rest| OTHER_DRAFTS.contains(&rest));
    if !known_draft && is_absolute_uri(bare) {
        return Err(SchemaError::RemoteReference { reference: uri.to_owned() });
    }
    Err(SchemaError::UnsupportedDialect { dialect: uri.to_owned() })
}

/// Whether `text` starts with an RFC 3986 scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`).
fn is_absolute_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::SchemaError;
    use serde_json::json;

    #[test]
    fn draft_2020_12_with_or_without_fragment() {
        assert_eq!(check(&json!("https://json-schema.org/draft/2020-12/schema")), Ok(()));
        assert_eq!(check(&json!("https://json-schema.org/draft/2020-12/schema#")), Ok(()));
    }

    #[test]
    fn known_drafts_and_non_uris_are_unsupported_dialects() {
        for dialect in [
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
            "http://json-schema.org/draft-04/schema",
            "draft-07",
            "",
        ] {
            assert!(
                matches!(check(&json!(dialect)), Err(SchemaError::UnsupportedDialect { .. })),
                "{dialect}"
            );
        }
    }

    #[test]
    fn custom_meta_schemas_are_remote_references() {
        assert_eq!(
            check(&json!("http://localhost:1234/draft2020-12/metaschema-no-validation.json")),
            Err(SchemaError::RemoteReference {
                reference: "http://localhost:1234/draft2020-12/metaschema-no-validation.json".to_owned()
            })
        );
    }
}
