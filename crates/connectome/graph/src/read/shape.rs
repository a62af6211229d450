//! Reading a parsed document strictly: exact member sets, typed members, closed vocabularies, and the
//! conversion of label values ([CR-1]). Every refusal names its document and its place.
//!
//! [CR-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::BTreeMap;

use connectome_canonical::{Integer, Value};

use super::error::{Document, ReadError, ReadFault, excerpt};
use super::json::Json;

/// A JSON object being read, with its document and its place in it.
pub(crate) struct Obj<'a> {
    document: Document,
    at: String,
    members: &'a [(String, Json)],
}

impl<'a> Obj<'a> {
    /// Reads `value` as an object at `at`, refusing anything else.
    pub(crate) fn new(
        document: Document,
        at: impl Into<String>,
        value: &'a Json,
    ) -> Result<Obj<'a>, ReadError> {
        let at = at.into();
        match value {
            Json::Object(members) => Ok(Obj { document, at, members }),
            other => Err(ReadError::new(
                document,
                at,
                ReadFault::Type { expected: "an object", found: other.what() },
            )),
        }
    }

    /// A refusal at member `member` of this object (at the object itself when `member` is empty).
    pub(crate) fn err(&self, member: &str, fault: ReadFault) -> ReadError {
        ReadError::new(self.document, self.path(member), fault)
    }

    /// The path of member `member`.
    fn path(&self, member: &str) -> String {
        match (self.at.is_empty(), member.is_empty()) {
            (_, true) => self.at.clone(),
            (true, false) => member.to_owned(),
            (false, false) => format!("{}.{member}", self.at),
        }
    }

    /// The path of element `i` of array member `member`.
    pub(crate) fn item(&self, member: &str, i: usize) -> String {
        format!("{}[{i}]", self.path(member))
    }

    /// Refuses a missing member (in `names` order), then a member not in `names` (in document order).
    pub(crate) fn exact(&self, names: &[&'static str]) -> Result<(), ReadError> {
        if let Some(missing) = names.iter().find(|n| !self.members.iter().any(|(m, _)| m == *n)) {
            return Err(self.err("", ReadFault::MissingMember(missing)));
        }
        if let Some((unknown, _)) = self.members.iter().find(|(m, _)| !names.contains(&m.as_str())) {
            return Err(self.err("", ReadFault::UnknownMember(unknown.clone())));
        }
        Ok(())
    }

    /// A member that must be present.
    pub(crate) fn get(&self, name: &'static str) -> Result<&'a Json, ReadError> {
        self.members
            .iter()
            .find(|(m, _)| m == name)
            .map(|(_, v)| v)
            .ok_or_else(|| self.err("", ReadFault::MissingMember(name)))
    }

    /// A refusal of member `name` holding `found` where `expected` belongs.
    fn wrong(&self, name: &str, expected: &'static str, found: &Json) -> ReadError {
        self.err(name, ReadFault::Type { expected, found: found.what() })
    }

    /// A string member.
    pub(crate) fn str(&self, name: &'static str) -> Result<&'a str, ReadError> {
        match self.get(name)? {
            Json::Str(s) => Ok(s),
            other => Err(self.wrong(name, "a string", other)),
        }
    }

    /// An array member.
    pub(crate) fn array(&self, name: &'static str) -> Result<&'a [Json], ReadError> {
        match self.get(name)? {
            Json::Array(items) => Ok(items),
            other => Err(self.wrong(name, "an array", other)),
        }
    }

    /// An object member.
    pub(crate) fn object(&self, name: &'static str) -> Result<Obj<'a>, ReadError> {
        Obj::new(self.document, self.path(name), self.get(name)?)
    }

    /// A count: a non-negative integer of at most 64 bits.
    pub(crate) fn count(&self, name: &'static str) -> Result<u64, ReadError> {
        match self.get(name)? {
            Json::Number(text) => {
                text.parse::<u64>().map_err(|_| self.err(name, ReadFault::Number(text.clone())))
            }
            other => Err(self.wrong(name, "a non-negative integer", other)),
        }
    }

    /// A string member in a closed vocabulary, parsed by `from_name`.
    pub(crate) fn vocab<T>(
        &self,
        name: &'static str,
        what: &'static str,
        from_name: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ReadError> {
        let text = self.str(name)?;
        from_name(text).ok_or_else(|| self.err(name, ReadFault::Vocabulary { what, found: text.to_owned() }))
    }

    /// The `schema_version`, read before anything else: it must be the integer 3 ([CC-13]).
    ///
    /// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub(crate) fn schema_version_3(&self) -> Result<(), ReadError> {
        match self.get("schema_version")? {
            Json::Number(text) if text == "3" => Ok(()),
            Json::Number(text) => Err(self.err("schema_version", ReadFault::SchemaVersion(text.clone()))),
            other => Err(self.err("schema_version", ReadFault::SchemaVersion(other.what().to_owned()))),
        }
    }

    /// The members, in document order.
    pub(crate) fn members(&self) -> &'a [(String, Json)] {
        self.members
    }
}

/// A JSON value as a label value ([CC-9]): integers of any size, no float. A refusal names `at`, the
/// place of the whole value (member names below it come from the input and are not quoted).
///
/// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub(crate) fn value(document: Document, at: &str, json: &Json) -> Result<Value, ReadError> {
    Ok(match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(text) => match Integer::parse(text) {
            Some(n) => Value::Int(n),
            None => return Err(ReadError::new(document, at, ReadFault::Number(text.clone()))),
        },
        Json::Str(s) => Value::Str(s.clone()),
        Json::Array(items) => {
            Value::Array(items.iter().map(|item| value(document, at, item)).collect::<Result<_, _>>()?)
        }
        Json::Object(members) => Value::Object(object(document, at, members)?),
    })
}

/// A JSON object's members as a label map; a refusal names `at`.
pub(crate) fn object(
    document: Document,
    at: &str,
    members: &[(String, Json)],
) -> Result<BTreeMap<String, Value>, ReadError> {
    let mut out = BTreeMap::new();
    for (name, json) in members {
        out.insert(name.clone(), value(document, at, json)?);
    }
    Ok(out)
}

/// An edge as messages name it: `"from" -> "to" kind`, each id an excerpt.
pub(crate) fn edge_name(from: &str, to: &str, kind: &str) -> String {
    format!("{} -> {} {kind}", excerpt(from), excerpt(to))
}
