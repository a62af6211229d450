//! Strict reading of JSON objects: exact member sets, typed members, vocabulary values. Every
//! refusal names where it is (`nodes[2].kind`) and quotes input only as a short excerpt.

use serde_json::{Map, Value};

use crate::error::{Error, Role};
use crate::escape::excerpt;
use crate::vocab::Vocabulary;

/// Parses bytes as JSON, refusing with the parser's position-only message.
pub fn parse(role: Role, bytes: &[u8]) -> Result<Value, Error> {
    serde_json::from_slice(bytes).map_err(|e| Error::Json { role, reason: e.to_string() })
}

/// A short description of a JSON value for a message: its type and an excerpt of its text.
pub fn describe(v: &Value) -> String {
    let kind = match v {
        Value::Null => return "null".to_owned(),
        Value::Bool(b) => return b.to_string(),
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!("{kind} {}", excerpt(&text))
}

/// A JSON object being read, with its place in the document.
pub struct Obj<'a> {
    role: Role,
    at: String,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    /// Reads `v` as an object at `at`, refusing anything else.
    pub fn new(role: Role, at: impl Into<String>, v: &'a Value) -> Result<Self, Error> {
        let at = at.into();
        match v {
            Value::Object(map) => Ok(Obj { role, at, map }),
            other => Err(Error::format(role, at, format!("expected an object, found {}", describe(other)))),
        }
    }

    /// A refusal at this object, or at one of its members when `member` is not empty.
    pub fn err(&self, member: &str, problem: impl Into<String>) -> Error {
        Error::format(self.role, self.path(member), problem)
    }

    fn path(&self, member: &str) -> String {
        match (self.at.is_empty(), member.is_empty()) {
            (_, true) => self.at.clone(),
            (true, false) => member.to_owned(),
            (false, false) => format!("{}.{member}", self.at),
        }
    }

    /// The path of element `i` of array member `member`, for nested objects.
    pub fn item_path(&self, member: &str, i: usize) -> String {
        format!("{}[{i}]", self.path(member))
    }

    /// Refuses a missing member or one not in `allowed`; members are checked in `allowed` order.
    pub fn exact(&self, allowed: &[&str]) -> Result<(), Error> {
        for key in allowed {
            if !self.map.contains_key(*key) {
                return Err(self.err("", format!("missing member \"{key}\"")));
            }
        }
        if let Some(extra) = self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(self.err("", format!("unexpected member {}", excerpt(extra))));
        }
        Ok(())
    }

    /// A present member.
    pub fn get(&self, key: &str) -> Result<&'a Value, Error> {
        self.map.get(key).ok_or_else(|| self.err("", format!("missing member \"{key}\"")))
    }

    /// A string member.
    pub fn str(&self, key: &str) -> Result<&'a str, Error> {
        match self.get(key)? {
            Value::String(s) => Ok(s),
            other => Err(self.err(key, format!("expected a string, found {}", describe(other)))),
        }
    }

    /// An array member.
    pub fn array(&self, key: &str) -> Result<&'a [Value], Error> {
        match self.get(key)? {
            Value::Array(a) => Ok(a),
            other => Err(self.err(key, format!("expected an array, found {}", describe(other)))),
        }
    }

    /// An object member, kept as the export wrote it.
    pub fn map(&self, key: &str) -> Result<&'a Map<String, Value>, Error> {
        match self.get(key)? {
            Value::Object(m) => Ok(m),
            other => Err(self.err(key, format!("expected an object, found {}", describe(other)))),
        }
    }

    /// A non-negative integer member.
    pub fn count(&self, key: &str) -> Result<u64, Error> {
        let v = self.get(key)?;
        v.as_u64()
            .ok_or_else(|| self.err(key, format!("expected a non-negative integer, found {}", describe(v))))
    }

    /// A member whose string value must be in a vocabulary.
    pub fn vocab<T: Vocabulary>(&self, key: &str) -> Result<T, Error> {
        let s = self.str(key)?;
        T::from_name(s).ok_or_else(|| self.err(key, format!("unknown {} {}", T::WHAT, excerpt(s))))
    }

    /// Refuses a `schema_version` other than 3, before anything else is read ([CC-13]).
    ///
    /// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn schema_version_3(&self) -> Result<(), Error> {
        let v = self.get("schema_version")?;
        if v.as_u64() == Some(3) && !v.is_f64() {
            Ok(())
        } else {
            Err(self.err("schema_version", format!("must be 3, found {}", describe(v))))
        }
    }
}
