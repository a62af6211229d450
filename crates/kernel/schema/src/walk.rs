//! One schema-aware pass over the host's schema, after `jsonschema` accepted it.
//!
//! It visits every *schema position* (the root, and whatever the 2020-12 applicators hold)
//! and, at each:
//!
//! * checks an embedded `$schema` (the root's was checked before compiling);
//! * checks `x-mcp-header` placement, value, type and case-insensitive uniqueness;
//! * collects `pattern` / `patternProperties` regexes — including ones in subschemas the
//!   validator never compiles (an unreferenced `$defs` entry), so that *every* regex the
//!   document advertises is known to run on the linear-time engine.
//!
//! Values under unknown keywords are searched for misplaced `x-mcp-header` keys only;
//! instance data (`const`, `enum`, `default`, `examples`) is not searched.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::header::{self, HeaderParam};
use crate::{SchemaError, dialect};

/// Keywords whose value is an object mapping names to subschemas.
const MAP_KEYWORDS: &[&str] =
    &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/// Keywords whose value is one subschema (or, for legacy `items`, an array of them).
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "additionalItems",
];

/// Keywords whose value is an array of subschemas.
const ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value is instance data, never a schema.
const DATA_KEYWORDS: &[&str] = &["const", "enum", "default", "examples"];

/// What the pass found.
pub(crate) struct Scan<'s> {
    /// The `x-mcp-header` parameters, in document order.
    pub(crate) headers: Vec<HeaderParam>,
    /// Every regex in a `pattern` or as a `patternProperties` key, deduplicated.
    pub(crate) patterns: Vec<&'s str>,
}

/// Walks `schema`; `declared` are the root's property keys (shared into header paths).
pub(crate) fn scan<'s>(schema: &'s Value, declared: &[Arc<str>]) -> Result<Scan<'s>, SchemaError> {
    let mut walker = Walker {
        declared,
        headers: Vec::new(),
        seen: HashMap::new(),
        patterns: Vec::new(),
        pointer: Vec::new(),
    };
    walker.schema(schema, Some(&mut Vec::new()), true)?;
    Ok(Scan { headers: walker.headers, patterns: walker.patterns })
}

/// One step of a JSON Pointer into the schema.
#[derive(Clone, Copy)]
enum Segment<'s> {
    Key(&'s str),
    Index(usize),
}

struct Walker<'s, 'd> {
    declared: &'d [Arc<str>],
    headers: Vec<HeaderParam>,
    /// Lowercased header name → pointer of its first annotation.
    seen: HashMap<String, String>,
    patterns: Vec<&'s str>,
    /// JSON Pointer segments of the node being visited.
    pointer: Vec<Segment<'s>>,
}

impl<'s> Walker<'s, '_> {
    /// Renders the current location as an RFC 6901 JSON Pointer ("" is the root).
    fn pointer(&self) -> String {
        let mut out = String::new();
        for segment in &self.pointer {
            out.push('/');
            match segment {
                Segment::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
                Segment::Index(index) => out.push_str(&index.to_string()),
            }
        }
        out
    }

    fn fault(&self, reason: impl Into<String>) -> SchemaError {
        SchemaError::HeaderAnnotation { property_path: self.pointer(), reason: reason.into() }
    }

    fn pattern(&mut self, pattern: &'s str) {
        if !self.patterns.contains(&pattern) {
            self.patterns.push(pattern);
        }
    }

    /// Visits a schema position. `chain` is `Some(keys)` while the node is reached from the
    /// root through `properties` only; `root` marks the document root.
    fn schema(
        &mut self,
        node: &'s Value,
        mut chain: Option<&mut Vec<&'s str>>,
        root: bool,
    ) -> Result<(), SchemaError> {
        let Value::Object(object) = node else {
            return Ok(()); // a boolean schema carries nothing
        };
        if !root && let Some(dialect_value) = object.get("$schema") {
            dialect::check(dialect_value)?;
        }
        if let Some(annotation) = object.get(header::KEYWORD) {
            let keys = match chain.as_deref() {
                _ if root => return Err(self.fault(header::ON_ROOT)),
                None => return Err(self.fault(header::MISPLACED)),
                Some(keys) => keys,
            };
            let param = header::parameter(object, annotation, keys, self.declared)
                .map_err(|reason| self.fault(reason))?;
            let lowered = param.name.to_ascii_lowercase();
            if let Some(first) = self.seen.get(&lowered) {
                return Err(self.fault(format!(
                    "header name {:?} is already used at {first:?} \
                     (header names are case-insensitive)",
                    param.name
                )));
            }
            self.seen.insert(lowered, self.pointer());
            self.headers.push(param);
        }
        if let Some(Value::String(pattern)) = object.get("pattern") {
            self.pattern(pattern);
        }
        for (keyword, value) in object {
            let keyword = keyword.as_str();
            if keyword == header::KEYWORD || DATA_KEYWORDS.contains(&keyword) {
                continue;
            }
            self.pointer.push(Segment::Key(keyword));
            if MAP_KEYWORDS.contains(&keyword) {
                if let Value::Object(members) = value {
                    for (name, subschema) in members {
                        if keyword == "patternProperties" {
                            self.pattern(name);
                        }
                        self.pointer.push(Segment::Key(name));
                        match chain.as_deref_mut() {
                            Some(keys) if keyword == "properties" => {
                                keys.push(name);
                                let visited = self.schema(subschema, Some(keys), false);
                                keys.pop();
                                visited?;
                            }
                            _ => self.schema(subschema, None, false)?,
                        }
                        self.pointer.pop();
                    }
                }
            } else if SCHEMA_KEYWORDS.contains(&keyword) || ARRAY_KEYWORDS.contains(&keyword) {
                if let Value::Array(items) = value {
                    for (index, item) in items.iter().enumerate() {
                        self.pointer.push(Segment::Index(index));
                        self.schema(item, None, false)?;
                        self.pointer.pop();
                    }
                } else {
                    self.schema(value, None, false)?;
                }
            } else {
                self.unknown(value)?;
            }
            self.pointer.pop();
        }
        Ok(())
    }

    /// Searches a value under an unknown keyword: an `x-mcp-header` key anywhere in it is misplaced.
    fn unknown(&mut self, node: &'s Value) -> Result<(), SchemaError> {
        match node {
            Value::Object(object) => {
                if object.contains_key(header::KEYWORD) {
                    return Err(self.fault(header::MISPLACED));
                }
                for (key, value) in object {
                    self.pointer.push(Segment::Key(key));
                    self.unknown(value)?;
                    self.pointer.pop();
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.pointer.push(Segment::Index(index));
                    self.unknown(item)?;
                    self.pointer.pop();
                }
            }
            _ => {}
        }
        Ok(())
    }
}
