//! The reader's one refusal type ([CR-5]): which document, where in it, and what is wrong, in one line.
//!
//! [CR-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt;

use connectome_canonical::{Uncanonical, VerifyError};

use crate::error::GraphError;

/// The longest excerpt of input a message quotes, in characters ([CR-5]).
///
/// [CR-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const EXCERPT_CHARS: usize = 32;

/// Which document a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// A graph export ([CB-4]).
    ///
    /// [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    GraphExport,
    /// A weight sidecar ([CB-5]).
    ///
    /// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Sidecar,
    /// A timing sidecar ([CM-2]).
    ///
    /// [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    TimingSidecar,
    /// A federation record ([CM-5]).
    ///
    /// [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    FederationRecord,
    /// A record written with the label grammar ([CC-10]), read by [`crate::read::verify_record`].
    ///
    /// [CC-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Record,
}

impl Document {
    /// The document's name as messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Document::GraphExport => "graph export",
            Document::Sidecar => "sidecar",
            Document::TimingSidecar => "timing sidecar",
            Document::FederationRecord => "federation record",
            Document::Record => "record",
        }
    }
}

/// What is wrong with a document ([CR-1], in the order the reader finds it).
///
/// [CR-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum ReadFault {
    /// The bytes are not JSON: ill-formed UTF-8, a syntax error, a member named twice, too deep.
    Json {
        /// The byte offset of the fault.
        offset: usize,
        /// What is wrong there.
        problem: &'static str,
    },
    /// The `schema_version` is not 3; the value as written.
    SchemaVersion(String),
    /// A schema 1 or 2 export that the [CC-13] verifier refuses.
    ///
    /// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Older(Box<VerifyError>),
    /// A member the format requires is absent.
    MissingMember(&'static str),
    /// A member the format does not have is present.
    UnknownMember(String),
    /// A value of the wrong JSON type.
    Type {
        /// What the format wants there.
        expected: &'static str,
        /// What the document holds.
        found: &'static str,
    },
    /// A string outside its closed vocabulary (a kind, a level, a provenance, a sign, an algorithm).
    Vocabulary {
        /// The vocabulary.
        what: &'static str,
        /// The string found.
        found: String,
    },
    /// A number that is not what the member holds (a count beyond 64 bits, a negative or non-finite
    /// weight, a float in a label); the number as written.
    Number(String),
    /// The graph fails its own checks ([CB-3]).
    ///
    /// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Graph(Box<GraphError>),
    /// What was read has no canonical form ([CC-14]).
    ///
    /// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Uncanonical(Box<Uncanonical>),
    /// The bytes are not the canonical bytes of what they hold ([CR-2]): the first byte that differs.
    ///
    /// [CR-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    NotCanonical {
        /// The offset of the first byte that differs from the re-encoding.
        offset: usize,
    },
    /// A sidecar entry names no edge of the graph it weighs.
    UnknownEdge(String),
    /// A sidecar names one edge twice.
    DuplicateEdge(String),
}

/// A refusal of the reader ([CR-5]): the document, the place (`edges[3].kind`, empty for the whole
/// document) and the fault; its `Display` is one line that quotes input only as a short excerpt.
///
/// [CR-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    /// The document refused.
    pub document: Document,
    /// Where in it, as a member path; empty for the document as a whole.
    pub at: String,
    /// What is wrong.
    pub fault: ReadFault,
}

impl ReadError {
    /// A refusal of `document` at `at`.
    pub(crate) fn new(document: Document, at: impl Into<String>, fault: ReadFault) -> ReadError {
        ReadError { document, at: at.into(), fault }
    }
}

/// A short, quoted, ASCII-only excerpt of `s`: at most [`EXCERPT_CHARS`] characters, everything outside
/// printable ASCII (and `"`, `\`) written `\u{…}`, `...` when cut.
pub fn excerpt(s: &str) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        if i == EXCERPT_CHARS {
            out.push_str("...");
            break;
        }
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for ReadFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFault::Json { offset, problem } => write!(f, "not JSON at byte {offset}: {problem}"),
            ReadFault::SchemaVersion(found) => {
                write!(f, "schema_version must be 3, found {}", excerpt(found))
            }
            ReadFault::Older(e) => write!(f, "not a schema 1 or 2 export: {}", one_line(&e.to_string())),
            ReadFault::MissingMember(name) => write!(f, "missing member \"{name}\""),
            ReadFault::UnknownMember(name) => write!(f, "unknown member {}", excerpt(name)),
            ReadFault::Type { expected, found } => write!(f, "expected {expected}, found {found}"),
            ReadFault::Vocabulary { what, found } => write!(f, "unknown {what} {}", excerpt(found)),
            ReadFault::Number(found) => write!(f, "not a value this member holds: {}", excerpt(found)),
            ReadFault::Graph(error) => write!(f, "not a graph: {}", one_line(&error.to_string())),
            ReadFault::Uncanonical(reason) => {
                write!(f, "no canonical form: {}", one_line(&reason.to_string()))
            }
            ReadFault::NotCanonical { offset } => {
                write!(f, "not canonical: the bytes differ from their canonical form at byte {offset}")
            }
            ReadFault::UnknownEdge(edge) => write!(f, "names an edge the graph does not have: {edge}"),
            ReadFault::DuplicateEdge(edge) => write!(f, "names one edge twice: {edge}"),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}: {}", self.document.name(), self.fault)
        } else {
            write!(f, "{}: {}: {}", self.document.name(), self.at, self.fault)
        }
    }
}

impl std::error::Error for ReadError {}

/// A message made one short line: every id it quotes becomes an excerpt-like escape of controls.
fn one_line(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for (i, c) in message.chars().enumerate() {
        if i == 4 * EXCERPT_CHARS {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}
