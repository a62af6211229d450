//! [`Violation`]: why a call's arguments do not satisfy the tool's input schema.
//!
//! The reason names *where* (the instance path, written from `arguments`) and *which rule*;
//! it never quotes the caller's values, which may be huge or secret. Property names on the
//! path come from the caller too, so each is clipped, the path is clipped from the front,
//! and the whole reason is at most [`MAX_REASON_LEN`] bytes.

use std::fmt::{self, Write as _};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, paths::Location};
use serde_json::Value;

use crate::error::clip;

/// Upper bound, in bytes, of [`Violation::reason`].
pub const MAX_REASON_LEN: usize = 200;

/// Longest rendering of one caller-supplied property name on a path.
const SEGMENT_LIMIT: usize = 32;

/// Longest rendering of the instance path before it is clipped from the front.
const PATH_LIMIT: usize = 110;

/// Longest rendering of a schema-supplied value (a limit, a pattern, an enum) in a reason.
const SCHEMA_VALUE_LIMIT: usize = 60;

/// Arguments that do not satisfy a tool's input schema, with a short, bounded reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    reason: String,
}

impl Violation {
    /// The reason, e.g. `arguments.place must be of type string` (at most 200 bytes).
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The reason, by value.
    #[must_use]
    pub fn into_reason(self) -> String {
        self.reason
    }

    /// The violation for `arguments` that are not a JSON object.
    pub(crate) fn not_an_object() -> Self {
        Self { reason: "arguments must be an object".to_owned() }
    }

    /// Renders the first error the validator reported.
    pub(crate) fn from_error(error: &ValidationError<'_>) -> Self {
        let path = render_path(error.instance_path());
        let mut reason = String::with_capacity(64);
        describe(error.kind(), &path, &mut reason);
        let reason = clip(&reason, MAX_REASON_LEN).into_owned();
        Self { reason }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Violation {}

/// `arguments` followed by the instance path, e.g. `arguments.items[3]["odd key"]`.
fn render_path(location: &Location) -> String {
    let segments: Vec<String> = location
        .segments()
        .map(|segment| match segment {
            LocationSegment::Property(name) => property_segment(&name),
            LocationSegment::Index(index) => format!("[{index}]"),
        })
        .collect();
    let mut kept = 0;
    let mut length = 0;
    for segment in segments.iter().rev() {
        if length + segment.len() > PATH_LIMIT {
            break;
        }
        length += segment.len();
        kept += 1;
    }
    let mut path = String::with_capacity("arguments…".len() + length);
    path.push_str("arguments");
    if kept < segments.len() {
        path.push('…');
    }
    for segment in &segments[segments.len() - kept..] {
        path.push_str(segment);
    }
    path
}

/// `.name` for a plain identifier, `["name"]` (JSON-escaped) otherwise; clipped either way.
fn property_segment(name: &str) -> String {
    let plain = !name.is_empty()
        && name.len() <= SEGMENT_LIMIT
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!(".{name}")
    } else {
        let clipped = clip(name, SEGMENT_LIMIT);
        let quoted = serde_json::to_string(&*clipped).unwrap_or_else(|_| "\"…\"".to_owned());
        format!("[{quoted}]")
    }
}

/// A schema-supplied value, rendered compactly and clipped.
fn schema_value(value: &Value) -> String {
    clip(&value.to_string(), SCHEMA_VALUE_LIMIT).into_owned()
}

fn type_list(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(ty) => ty.as_str().to_owned(),
        TypeKind::Multiple(types) => {
            let names: Vec<&str> = types.iter().map(|ty| ty.as_str()).collect();
            names.join(" or ")
        }
    }
}

fn unexpected(path: &str, names: &[String], what: &str, out: &mut String) {
    match names.split_first() {
        Some((first, rest)) => {
            let _ = write!(out, "{path}{} is not allowed ({what})", property_segment(first));
            if !rest.is_empty() {
                let _ = write!(out, ", and {} more", rest.len());
            }
        }
        None => {
            let _ = write!(out, "{path} has {what}s that are not allowed");
        }
    }
}

#[allow(clippy::too_many_lines)]
fn describe(kind: &ValidationErrorKind, path: &str, out: &mut String) {
    use ValidationErrorKind as K;
    let _ = match kind {
        K::Type { kind } => write!(out, "{path} must be of type {}", type_list(kind)),
        K::Required { property } => match property.as_str() {
            Some(name) => write!(out, "{path}{} is required", property_segment(name)),
            None => write!(out, "{path} is missing a required property"),
        },
        K::AdditionalProperties { unexpected: names } => {
            unexpected(path, names, "additional property", out);
            Ok(())
        }
        K::UnevaluatedProperties { unexpected: names } => {
            unexpected(path, names, "unevaluated property", out);
            Ok(())
        }
        K::AdditionalItems { limit } => write!(out, "{path} must have at most {limit} items"),
        K::UnevaluatedItems { .. } => write!(out, "{path} has unevaluated items that are not allowed"),
        K::AnyOf { .. } => write!(out, "{path} must match at least one schema in anyOf"),
        K::OneOfNotValid { .. } => {
            write!(out, "{path} must match exactly one schema in oneOf, but matches none")
        }
        K::OneOfMultipleValid { .. } => {
            write!(out, "{path} must match exactly one schema in oneOf, but matches several")
        }
        K::Not { .. } => write!(out, "{path} must not match the schema in not"),
        K::FalseSchema => write!(out, "{path} is not allowed"),
        K::Constant { expected_value } => {
            write!(out, "{path} must be equal to {}", schema_value(expected_value))
        }
        K::Enum { options } => write!(out, "{path} must be one of {}", schema_value(options)),
        K::Minimum { limit } => write!(out, "{path} must be >= {}", schema_value(limit)),
        K::Maximum { limit } => write!(out, "{path} must be <= {}", schema_value(limit)),
        K::ExclusiveMinimum { limit } => write!(out, "{path} must be > {}", schema_value(limit)),
        K::ExclusiveMaximum { limit } => write!(out, "{path} must be < {}", schema_value(limit)),
        K::MultipleOf { multiple_of } => write!(out, "{path} must be a multiple of {multiple_of}"),
        K::MinLength { limit } => write!(out, "{path} must be at least {limit} characters long"),
        K::MaxLength { limit } => write!(out, "{path} must be at most {limit} characters long"),
        K::MinItems { limit } => write!(out, "{path} must have at least {limit} items"),
        K::MaxItems { limit } => write!(out, "{path} must have at most {limit} items"),
        K::MinProperties { limit } => write!(out, "{path} must have at least {limit} properties"),
        K::MaxProperties { limit } => write!(out, "{path} must have at most {limit} properties"),
        K::UniqueItems => write!(out, "{path} must not contain duplicate items"),
        K::Contains => write!(out, "{path} does not contain enough items matching the schema in contains"),
        K::Pattern { pattern } => {
            write!(out, "{path} must match the pattern {}", clip(pattern, SCHEMA_VALUE_LIMIT))
        }
        K::BacktrackLimitExceeded { .. } | K::RegexEngineFailure { .. } => {
            write!(out, "{path} could not be matched against its pattern")
        }
        K::PropertyNames { .. } => write!(out, "{path} has a property name that is not allowed"),
        K::Format { format } => write!(out, "{path} must be a valid {}", clip(format, SCHEMA_VALUE_LIMIT)),
        K::ContentEncoding { content_encoding } => {
            write!(out, "{path} must be {}-encoded", clip(content_encoding, SCHEMA_VALUE_LIMIT))
        }
        K::FromUtf8 { .. } => write!(out, "{path} must decode to UTF-8 text"),
        K::ContentMediaType { content_media_type } => {
            write!(out, "{path} must be valid {}", clip(content_media_type, SCHEMA_VALUE_LIMIT))
        }
        K::Custom { keyword, .. } => {
            write!(out, "{path} does not satisfy {}", clip(keyword, SCHEMA_VALUE_LIMIT))
        }
        K::Referencing(_) => write!(out, "{path} could not be checked: unresolvable reference"),
    };
}

#[cfg(test)]
mod tests {
    use super::{PATH_LIMIT, property_segment, render_path};
    use jsonschema::paths::{Location, LocationSegment};

    #[test]
    fn plain_and_quoted_segments() {
        assert_eq!(property_segment("place"), ".place");
        assert_eq!(property_segment("odd key"), "[\"odd key\"]");
        assert_eq!(property_segment("9lives"), "[\"9lives\"]");
    }

    #[test]
    fn long_paths_are_clipped_from_the_front() {
        let location: Location =
            (0..200).map(|i| LocationSegment::Property(format!("k{i}").into())).collect();
        let path = render_path(&location);
        assert!(path.starts_with("arguments…"), "{path}");
        assert!(path.ends_with(".k199"), "{path}");
        assert!(path.len() <= "arguments…".len() + PATH_LIMIT);
    }
}
