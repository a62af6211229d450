//! [`compile`]: one tool's input schema, checked and compiled once at server build time.

use std::fmt;
use std::sync::Arc;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{
    Draft, PatternCache, PatternOptions, ReferencingError, Retrieve, Uri, ValidationError, ValidationOptions,
};
use serde_json::{Value, json};

use crate::error::clip;
use crate::header::HeaderParam;
use crate::{SchemaError, Violation, dialect, keys, walk};

/// Longest rendering of the validator's own message in [`SchemaError::Invalid`].
const INVALID_REASON_LIMIT: usize = 200;

/// Compiled-regex size limit handed to the `regex` engine (its own default, made explicit:
/// with a limit set, `jsonschema` compiles every pattern at build time, never lazily).
const REGEX_SIZE_LIMIT: usize = 10 * (1 << 20);

/// Lazy-DFA cache limit handed to the `regex` engine (its own default, made explicit).
const REGEX_DFA_SIZE_LIMIT: usize = 2 * (1 << 20);

/// One tool's input schema, compiled once: validator, declared keys and header parameters.
#[derive(Clone)]
pub struct CompiledSchema {
    schema: Value,
    validator: jsonschema::Validator,
    pub(crate) declared: Vec<Arc<str>>,
    headers: Vec<HeaderParam>,
    header_fault: Option<SchemaError>,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("declared", &self.declared)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// Compiles a tool's input schema, refusing any schema this server could not enforce.
///
/// The schema is JSON Schema draft 2020-12 (`$schema` absent or exactly the 2020-12
/// meta-schema URI). `pattern`/`patternProperties` run on the linear-time `regex` engine;
/// `format` is an annotation only (the 2020-12 default); nothing is ever fetched.
///
/// # Errors
///
/// * [`SchemaError::UnsupportedDialect`] — `$schema` names another dialect;
/// * [`SchemaError::RemoteReference`] — a reference (or a custom `$schema` meta-schema)
///   points outside the document;
/// * [`SchemaError::UnsupportedPattern`] — a regex the linear-time engine cannot run
///   (backreferences, look-around, invalid syntax);
/// * [`SchemaError::Invalid`] — not a valid 2020-12 schema, or an unresolvable local reference;
/// * [`SchemaError::HeaderAnnotation`] — an `x-mcp-header` annotation breaks the MCP rules.
pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
    if let Some(dialect_value) = schema.as_object().and_then(|root| root.get("$schema")) {
        dialect::check(dialect_value)?;
    }
    let cache = PatternCache::new();
    let validator = options(&cache).build(schema).map_err(|error| classify(&error))?;
    let declared = keys::declared(schema);
    let scan = walk::scan(schema, &declared)?;
    check_patterns(&scan.patterns, &cache)?;
    let headers = scan.headers;
    Ok(CompiledSchema { schema: schema.clone(), validator, declared, headers, header_fault: None })
}

/// Like [`compile`], but an `x-mcp-header` fault does not refuse the schema: it is kept in
/// [`CompiledSchema::header_fault`] and the schema mirrors no header.
///
/// For hosts that serve the same tool over stdio (where headers do not exist) and HTTP: the
/// HTTP transport then refuses every call to the tool (500) until the schema is corrected,
/// and the tool stays usable elsewhere. Every other fault still refuses the schema.
///
/// # Errors
///
/// As [`compile`], except [`SchemaError::HeaderAnnotation`].
pub fn compile_deferring_header_faults(schema: &Value) -> Result<CompiledSchema, SchemaError> {
    match compile(schema) {
        Err(fault @ SchemaError::HeaderAnnotation { .. }) => {
            let stripped = strip_header_annotations(schema);
            let mut compiled = compile(&stripped)?;
            compiled.schema = schema.clone();
            compiled.validator = options(&PatternCache::new()).build(schema).map_err(|e| classify(&e))?;
            compiled.header_fault = Some(fault);
            Ok(compiled)
        }
        other => other,
    }
}

/// A copy of `schema` without any `x-mcp-header` member, at any depth.
fn strip_header_annotations(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != crate::header::KEYWORD)
                .map(|(k, v)| (k.clone(), strip_header_annotations(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_header_annotations).collect()),
        other => other.clone(),
    }
}

impl CompiledSchema {
    /// Checks a call's `arguments`: they must be a JSON object satisfying the schema.
    ///
    /// # Errors
    ///
    /// A [`Violation`] whose reason names the first failing location and rule.
    pub fn validate(&self, arguments: &Value) -> Result<(), Violation> {
        if !arguments.is_object() {
            return Err(Violation::not_an_object());
        }
        self.validate_value(arguments)
    }

    /// Checks any JSON value against the schema, without the "arguments are an object" rule.
    ///
    /// [`validate`](Self::validate) is what a tool call needs; this is the plain JSON Schema
    /// answer (used, for one, to run the JSON-Schema-Test-Suite on non-object instances).
    ///
    /// # Errors
    ///
    /// A [`Violation`] whose reason names the first failing location and rule.
    pub fn validate_value(&self, instance: &Value) -> Result<(), Violation> {
        self.validator.validate(instance).map_err(|error| Violation::from_error(&error))
    }

    /// The `x-mcp-header` fault kept by [`compile_deferring_header_faults`], if any.
    #[must_use]
    pub fn header_fault(&self) -> Option<&SchemaError> {
        self.header_fault.as_ref()
    }

    /// The `x-mcp-header` parameters, in schema order.
    #[must_use]
    pub fn header_params(&self) -> &[HeaderParam] {
        &self.headers
    }

    /// The schema document as given to [`compile`] (what `tools/list` advertises).
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

/// The one configuration every schema is compiled with.
fn options(cache: &PatternCache) -> ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_retriever(RefuseRetrieval)
        .should_validate_formats(false)
        .with_pattern_options(
            PatternOptions::regex().size_limit(REGEX_SIZE_LIMIT).dfa_size_limit(REGEX_DFA_SIZE_LIMIT),
        )
        .with_pattern_cache(cache.clone())
}

/// Compiles every regex the document holds, reached by the validator or not.
///
/// `jsonschema` compiles only the subschemas validation can reach; a regex in an
/// unreferenced `$defs` entry would otherwise be advertised without ever being checked.
/// The shared cache makes the ones already compiled free.
fn check_patterns(patterns: &[&str], cache: &PatternCache) -> Result<(), SchemaError> {
    if patterns.is_empty() {
        return Ok(());
    }
    let all: Vec<Value> = patterns.iter().map(|pattern| json!({ "pattern": pattern })).collect();
    options(cache).build(&json!({ "allOf": all })).map(drop).map_err(|error| classify(&error))
}

/// A retriever that refuses every retrieval: no schema may cause network or file access.
struct RefuseRetrieval;

impl Retrieve for RefuseRetrieval {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("remote retrieval of {uri} is refused").into())
    }
}

/// Maps a `jsonschema` build error onto the refusal it stands for.
fn classify(error: &ValidationError<'_>) -> SchemaError {
    match error.kind() {
        ValidationErrorKind::Referencing(ReferencingError::Unretrievable { uri, .. }) => {
            SchemaError::RemoteReference { reference: uri.clone() }
        }
        ValidationErrorKind::Format { format } if format == "regex" => unsupported_pattern(error.instance()),
        ValidationErrorKind::PropertyNames { error: inner } if matches!(inner.kind(), ValidationErrorKind::Format { format } if format == "regex") => {
            unsupported_pattern(inner.instance())
        }
        _ => {
            let location = error.instance_path().as_str();
            let location = if location.is_empty() { "root" } else { location };
            SchemaError::Invalid {
                reason: clip(&format!("at {location}: {error}"), INVALID_REASON_LIMIT).into_owned(),
            }
        }
    }
}

/// The refusal for a regex the `regex` engine rejected; the reason names the likely cause.
fn unsupported_pattern(instance: &Value) -> SchemaError {
    let pattern = instance.as_str().map_or_else(|| instance.to_string(), str::to_owned);
    let reason = if ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|lookaround| pattern.contains(lookaround)) {
        "look-around is not supported by the linear-time regex engine"
    } else if has_backreference(&pattern) {
        "backreferences are not supported by the linear-time regex engine"
    } else {
        "the linear-time regex engine cannot compile it (invalid syntax, an unsupported \
         feature, or over the size limit)"
    };
    SchemaError::UnsupportedPattern { pattern, reason: reason.to_owned() }
}

/// Whether `pattern` contains an escape `\1`…`\9` or `\k<name>` (a backreference).
fn has_backreference(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('1'..='9') => return true,
                Some('k') if chars.peek() == Some(&'<') => return true,
                _ => {}
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::has_backreference;

    #[test]
    fn backreference_detection() {
        assert!(has_backreference(r"(a)\1"));
        assert!(has_backreference(r"(?<n>a)\k<n>"));
        assert!(!has_backreference(r"\\1"));
        assert!(!has_backreference(r"\d+\w"));
    }
}
