//! The input model the writer takes: a graph already checked for shape, with typed vocabulary and labels
//! that cannot hold a float.
//!
//! The `connectome-graph` crate converts its `Graph` into a [`CanonicalGraph`]; nothing else in this crate
//! knows about that type. Strings are Rust `String`s, so [CC-7] holds by construction for this model; bytes
//! from elsewhere enter through [`text_from_bytes`], which applies the [CC-7] refusal.
//!
//! [CC-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::BTreeMap;
use std::fmt;

use crate::error::Uncanonical;

/// The graph `schema_version` this crate writes (docs/connectome.md [CV-1]).
///
/// [CV-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const SCHEMA_VERSION: u8 = 3;

/// Node kind ([CA-2]); written as its lowercase name ([CC-5]).
///
/// [CA-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CC-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeKind {
    /// A composed MCP server.
    Server,
    /// A catalog tool.
    Tool,
    /// A catalog resource.
    Resource,
    /// A catalog prompt.
    Prompt,
    /// A registered process (in Rust: a named task or actor).
    Process,
    /// A module, a function, or a boundary group.
    Module,
}

impl NodeKind {
    /// The name written in the canonical bytes.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Server => "server",
            NodeKind::Tool => "tool",
            NodeKind::Resource => "resource",
            NodeKind::Prompt => "prompt",
            NodeKind::Process => "process",
            NodeKind::Module => "module",
        }
    }

    /// The value a name in the canonical bytes stands for, if it is one (read back by `connectome-graph`).
    pub fn from_name(name: &str) -> Option<NodeKind> {
        match name {
            "server" => Some(NodeKind::Server),
            "tool" => Some(NodeKind::Tool),
            "resource" => Some(NodeKind::Resource),
            "prompt" => Some(NodeKind::Prompt),
            "process" => Some(NodeKind::Process),
            "module" => Some(NodeKind::Module),
            _ => None,
        }
    }
}

/// Node level ([CA-4]), finest first; written as its lowercase name ([CC-5]).
///
/// [CA-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CC-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// A single function (an MFA in BeamMCP).
    Mfa,
    /// A module.
    Module,
    /// An OTP application / crate, or a host-declared boundary.
    Boundary,
    /// Servers, catalog parts and processes.
    Server,
}

impl Level {
    /// The name written in the canonical bytes.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Mfa => "mfa",
            Level::Module => "module",
            Level::Boundary => "boundary",
            Level::Server => "server",
        }
    }

    /// The value a name in the canonical bytes stands for, if it is one (read back by `connectome-graph`).
    pub fn from_name(name: &str) -> Option<Level> {
        match name {
            "mfa" => Some(Level::Mfa),
            "module" => Some(Level::Module),
            "boundary" => Some(Level::Boundary),
            "server" => Some(Level::Server),
            _ => None,
        }
    }
}

/// Edge kind ([CA-3]); there are exactly four.
///
/// [CA-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// Any call, including server-to-tool dispatch.
    Invoke,
    /// A resource or prompt read.
    Read,
    /// A process send.
    Message,
    /// Supervision.
    Supervise,
}

impl EdgeKind {
    /// The name written in the canonical bytes.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Invoke => "invoke",
            EdgeKind::Read => "read",
            EdgeKind::Message => "message",
            EdgeKind::Supervise => "supervise",
        }
    }

    /// The value a name in the canonical bytes stands for, if it is one (read back by `connectome-graph`).
    pub fn from_name(name: &str) -> Option<EdgeKind> {
        match name {
            "invoke" => Some(EdgeKind::Invoke),
            "read" => Some(EdgeKind::Read),
            "message" => Some(EdgeKind::Message),
            "supervise" => Some(EdgeKind::Supervise),
            _ => None,
        }
    }
}

/// Edge provenance ([CA-5]), exactly one per edge.
///
/// [CA-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provenance {
    /// Built from what can happen.
    Declared,
    /// Built from what did happen over a window.
    Observed,
}

impl Provenance {
    /// The name written in the canonical bytes.
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Declared => "declared",
            Provenance::Observed => "observed",
        }
    }

    /// The value a name in the canonical bytes stands for, if it is one (read back by `connectome-graph`).
    pub fn from_name(name: &str) -> Option<Provenance> {
        match name {
            "declared" => Some(Provenance::Declared),
            "observed" => Some(Provenance::Observed),
            _ => None,
        }
    }
}

/// Edge sign slot ([CA-6], schema 2 and 3 vocabulary); the package itself only ever writes [`Sign::Unset`].
///
/// [CA-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Sign {
    /// Policy permits.
    Allow,
    /// Policy forbids.
    Deny,
    /// Advisory; defers, never an approval.
    Hold,
    /// A consumer looked and no rule applies.
    Ungoverned,
    /// Nothing was supplied.
    #[default]
    Unset,
}

impl Sign {
    /// The name written in the canonical bytes.
    pub fn as_str(self) -> &'static str {
        match self {
            Sign::Allow => "allow",
            Sign::Deny => "deny",
            Sign::Hold => "hold",
            Sign::Ungoverned => "ungoverned",
            Sign::Unset => "unset",
        }
    }

    /// The sign a name in the bytes stands for, if it is one: the parse table, with which an export is
    /// read back (reading the sign a consumer supplied is not writing one, [CA-6]).
    ///
    /// [CA-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn from_name(name: &str) -> Option<Sign> {
        match name {
            "allow" => Some(Sign::Allow),
            "deny" => Some(Sign::Deny),
            "hold" => Some(Sign::Hold),
            "ungoverned" => Some(Sign::Ungoverned),
            "unset" => Some(Sign::Unset),
            _ => None,
        }
    }
}

/// An integer of unbounded size, held as its canonical decimal text ([CC-9]).
///
/// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Integer(String);

impl Integer {
    /// Parses canonical decimal text: `-` only when negative, no leading zeros, no `+`, no exponent.
    pub fn parse(text: &str) -> Option<Integer> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && !(text.starts_with('-') && digits == "0");
        canonical.then(|| Integer(text.to_owned()))
    }

    /// The canonical decimal text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Integer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! integer_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Integer {
            fn from(n: $t) -> Integer {
                Integer(n.to_string())
            }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Int(Integer::from(n))
            }
        }
    )*};
}
integer_from!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

/// A label value ([CC-9]): there is no float variant, so [CC-9]'s float refusal holds by construction.
///
/// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// JSON `null`.
    Null,
    /// JSON `true` / `false`.
    Bool(bool),
    /// An integer of any size.
    Int(Integer),
    /// A string (NFC is applied when written).
    Str(String),
    /// An array, written in the order held.
    Array(Vec<Value>),
    /// An object; its keys are written in UTF-16 code-unit order after NFC ([CC-4], [CC-6]).
    ///
    /// [CC-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Object(BTreeMap<String, Value>),
}

/// A node's labels: keys to values; written like [`Value::Object`].
pub type Labels = BTreeMap<String, Value>;

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<Integer> for Value {
    fn from(n: Integer) -> Value {
        Value::Int(n)
    }
}

impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Value {
        Value::Array(v)
    }
}

impl From<BTreeMap<String, Value>> for Value {
    fn from(m: BTreeMap<String, Value>) -> Value {
        Value::Object(m)
    }
}

impl Value {
    /// Converts a JSON tree; `None` if it holds a float anywhere (every non-integer number is a float).
    pub fn from_json(json: &serde_json::Value) -> Option<Value> {
        Some(match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::from(i)
                } else if let Some(u) = n.as_u64() {
                    Value::from(u)
                } else {
                    return None;
                }
            }
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(items) => {
                Value::Array(items.iter().map(Value::from_json).collect::<Option<_>>()?)
            }
            serde_json::Value::Object(map) => Value::Object(
                map.iter().map(|(k, v)| Some((k.clone(), Value::from_json(v)?))).collect::<Option<_>>()?,
            ),
        })
    }
}

/// Converts JSON labels of node `id`, refusing a float at any depth as [CC-9]'s `label_value`, naming the
/// first offending top-level label in key byte order and its whole value.
///
/// `serde_json` reads integers beyond the 64-bit range, and `-0`, as floats, so they are refused here;
/// build such labels with [`Value::Int`] and [`Integer::parse`] instead.
///
/// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn labels_from_json(
    id: &str,
    labels: &serde_json::Map<String, serde_json::Value>,
) -> Result<Labels, Uncanonical> {
    let mut sorted: Vec<(&String, &serde_json::Value)> = labels.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = Labels::new();
    for (key, json) in sorted {
        match Value::from_json(json) {
            Some(value) => {
                out.insert(key.clone(), value);
            }
            None => {
                return Err(Uncanonical::LabelValue {
                    id: id.to_owned(),
                    key: key.clone(),
                    value: json.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// Accepts only well-formed UTF-8 ([CC-7]): refuses overlong forms, encoded surrogates, code points past
/// U+10FFFF and truncated sequences as `invalid_utf8` naming `id` and `field`; U+FFFE, U+FFFF and a BOM
/// pass unchanged.
///
/// [CC-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn text_from_bytes(id: &str, field: &str, bytes: &[u8]) -> Result<String, Uncanonical> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Err(Uncanonical::InvalidUtf8 { id: id.to_owned(), field: field.to_owned() }),
    }
}

/// A node as the writer takes it ([CB-1]): `id` is the [CA-13] id, not yet NFC'd.
///
/// [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct CanonicalNode {
    /// The node id ([CA-13]), compared as bytes.
    ///
    /// [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub id: String,
    /// The node kind.
    pub kind: NodeKind,
    /// The node level.
    pub level: Level,
    /// The node labels.
    pub labels: Labels,
}

/// An edge weight ([CA-7]): never hashed; written only in the sidecar ([CB-5]).
///
/// [CA-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Weight {
    /// A count, written as an integer.
    Int(u64),
    /// A measurement, written with the [CC-11] placement; must be finite and not below zero (`-0.0` is
    /// accepted).
    ///
    /// [CC-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Float(f64),
}

/// An edge as the writer takes it ([CB-2]); its identity is `(from, to, kind, provenance)`.
///
/// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct CanonicalEdge {
    /// The source node id.
    pub from: String,
    /// The target node id.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
    /// Declared or observed.
    pub provenance: Provenance,
    /// The sign slot; the package writes only [`Sign::Unset`].
    pub sign: Sign,
    /// The weight, if any; not part of the canonical bytes.
    pub weight: Option<Weight>,
}

/// A graph as the writer takes it ([CB-3]); its `schema_version` is always [`SCHEMA_VERSION`]. The order of
/// `nodes` and `edges` does not affect the bytes.
///
/// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CanonicalGraph {
    /// The nodes, in any order.
    pub nodes: Vec<CanonicalNode>,
    /// The edges, in any order.
    pub edges: Vec<CanonicalEdge>,
}
