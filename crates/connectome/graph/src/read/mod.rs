//! Reading exports back (docs/connectome.md §R): a graph export's canonical bytes into a [`Graph`] and
//! the [`Algorithm`] it names, a sidecar into weights, a timing sidecar into [`Timings`] — strictly.
//!
//! Every reader refuses, in this order ([CR-1]): bytes that are not JSON (ill-formed UTF-8, a syntax
//! error, a member named twice, nesting deeper than 127 levels), a top level that is not an object, a
//! `schema_version` other than 3 (read first), a missing and then an unknown member, a value of the
//! wrong type or outside its vocabulary (in document order), the graph's own checks ([CB-3]), what has no
//! canonical form ([CC-14]), and finally bytes that are not exactly the canonical bytes of what they hold
//! ([CR-2]): the reader re-encodes what it read and refuses any difference, naming the first byte that
//! differs. Nothing is corrected. Each refusal is one [`ReadError`] ([CR-5]).
//!
//! [`verify_export`] and [`verify_record`] are the lenient side, for a `verify` command ([CR-6]): they
//! re-hash bytes as held and say whether they are canonical instead of refusing them.
//!
//! ```
//! use connectome_graph::read::{Canonicity, read_export, verify_export};
//! use connectome_graph::{Algorithm, Edge, EdgeKind, Graph, Identity, Labels, Node, Provenance};
//!
//! let server = Node::from_identity(Identity::Server { server: "s".into() }, Labels::new());
//! let tool = Node::from_identity(Identity::Tool { server: "s".into(), name: "t".into() }, Labels::new());
//! let edge = Edge::new(server.id(), tool.id(), EdgeKind::Invoke, Provenance::Declared, None)?;
//! let bytes = Graph::new(vec![server, tool], vec![edge])?.to_canonical_bytes(Algorithm::Sha384)?;
//!
//! let export = read_export(&bytes)?;
//! assert_eq!(export.algorithm, Algorithm::Sha384);
//! assert_eq!(export.graph.to_canonical_bytes(Algorithm::Sha384)?, bytes);
//! assert_eq!(verify_export(&bytes)?.canonical, Canonicity::Canonical);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CR-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CR-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CR-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CR-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

mod error;
pub(crate) mod json;
pub(crate) mod shape;

use std::collections::{BTreeSet, HashMap};

use connectome_canonical::{
    Algorithm, CanonicalEdge, CanonicalGraph, CanonicalNode, EdgeKind, Labels, Level, NodeKind, Provenance,
    Sign, Weight, digest, nfc, to_hex,
};

pub use error::{Document, EXCERPT_CHARS, ReadError, ReadFault, excerpt};

use crate::graph::{Edge, EdgeKey, Graph, Node};
use crate::timing::{Timing, Timings};
use json::Json;
use shape::{Obj, edge_name};

/// A graph export read back: the graph and the digest its bytes name.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    /// The graph, its nodes and edges exactly as the bytes hold them (weights only from a sidecar).
    pub graph: Graph,
    /// The algorithm the export names.
    pub algorithm: Algorithm,
}

/// Whether held bytes are canonical ([CR-6]).
///
/// [CR-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Canonicity {
    /// The bytes are exactly the canonical bytes of what they hold.
    Canonical,
    /// The bytes hold a valid document but are not its canonical bytes.
    Differs {
        /// The offset of the first byte that differs from the canonical form.
        offset: usize,
        /// The digest (same algorithm) of the canonical bytes, lowercase hex.
        canonical_hex: String,
    },
    /// A schema 1 or 2 export: verified as held, never re-encoded ([CC-13]), so not judged.
    ///
    /// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Held,
}

/// What [`verify_export`] and [`verify_record`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The document's `schema_version`.
    pub schema_version: u8,
    /// The digest used: the one the document names, SHA-256 below schema 3 ([CC-13]).
    ///
    /// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub algorithm: Algorithm,
    /// The digest of the bytes as held, lowercase hex.
    pub hash_hex: String,
    /// Whether the bytes are canonical.
    pub canonical: Canonicity,
}

/// Parses `bytes` as JSON for `document`.
pub(crate) fn parse(document: Document, bytes: &[u8]) -> Result<Json, ReadError> {
    json::parse(bytes)
        .map_err(|s| ReadError::new(document, "", ReadFault::Json { offset: s.offset, problem: s.problem }))
}

/// The offset of the first byte where `held` and `canonical` differ, if they do.
fn first_difference(held: &[u8], canonical: &[u8]) -> Option<usize> {
    let common = held.iter().zip(canonical).position(|(a, b)| a != b);
    match common {
        Some(at) => Some(at),
        None if held.len() == canonical.len() => None,
        None => Some(held.len().min(canonical.len())),
    }
}

/// Refuses `held` unless it is exactly `canonical` ([CR-2]).
///
/// [CR-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub(crate) fn require_canonical(document: Document, held: &[u8], canonical: &[u8]) -> Result<(), ReadError> {
    match first_difference(held, canonical) {
        None => Ok(()),
        Some(offset) => Err(ReadError::new(document, "", ReadFault::NotCanonical { offset })),
    }
}

/// The graph and algorithm of a parsed export ([CR-1] steps up to the graph's own checks).
///
/// [CR-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn graph_of(json: &Json) -> Result<Export, ReadError> {
    let doc = Document::GraphExport;
    let top = Obj::new(doc, "", json)?;
    top.schema_version_3()?;
    top.exact(&["schema_version", "algorithm", "nodes", "edges"])?;
    let algorithm = top.vocab("algorithm", "algorithm", |n| Algorithm::from_name(n).ok())?;
    let mut nodes = Vec::new();
    for (i, item) in top.array("nodes")?.iter().enumerate() {
        let o = Obj::new(doc, top.item("nodes", i), item)?;
        o.exact(&["id", "kind", "labels", "level"])?;
        let id = o.str("id")?.to_owned();
        let kind = o.vocab("kind", "node kind", NodeKind::from_name)?;
        let labels = o.object("labels")?;
        let labels: Labels =
            shape::object(doc, &format!("{}.labels", top.item("nodes", i)), labels.members())?;
        let level = o.vocab("level", "level", Level::from_name)?;
        nodes.push(Node::read_back(id, kind, level, labels));
    }
    let mut edges = Vec::new();
    for (i, item) in top.array("edges")?.iter().enumerate() {
        let o = Obj::new(doc, top.item("edges", i), item)?;
        o.exact(&["from", "kind", "provenance", "sign", "to"])?;
        let from = o.str("from")?;
        let kind = o.vocab("kind", "edge kind", EdgeKind::from_name)?;
        let provenance = o.vocab("provenance", "provenance", Provenance::from_name)?;
        let sign = o.vocab("sign", "sign", Sign::from_name)?;
        let to = o.str("to")?;
        let mut edge = Edge::new(from, to, kind, provenance, None)
            .map_err(|e| ReadError::new(doc, top.item("edges", i), ReadFault::Graph(Box::new(e))))?;
        edge.sign = sign;
        edges.push(edge);
    }
    let graph =
        Graph::new(nodes, edges).map_err(|e| ReadError::new(doc, "", ReadFault::Graph(Box::new(e))))?;
    Ok(Export { graph, algorithm })
}

/// The canonical bytes of a read export, or the [CC-14] refusal.
///
/// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn reencode(export: &Export) -> Result<Vec<u8>, ReadError> {
    export
        .graph
        .to_canonical_bytes(export.algorithm)
        .map_err(|reason| ReadError::new(Document::GraphExport, "", ReadFault::Uncanonical(Box::new(reason))))
}

/// Reads a graph export ([CB-4]) strictly ([CR-1], [CR-2]): the bytes must be exactly the canonical bytes of the
/// graph they hold under the algorithm they name.
///
/// [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CR-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CR-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn read_export(bytes: &[u8]) -> Result<Export, ReadError> {
    let export = graph_of(&parse(Document::GraphExport, bytes)?)?;
    require_canonical(Document::GraphExport, bytes, &reencode(&export)?)?;
    Ok(export)
}

/// Reads a weight sidecar ([CB-5]) strictly ([CR-4]): an integer weight is a count, one with a fraction or an
/// exponent a float (finite, not below zero); the entries in file order.
///
/// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CR-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn read_sidecar(bytes: &[u8]) -> Result<Vec<(EdgeKey, Weight)>, ReadError> {
    let doc = Document::Sidecar;
    let json = parse(doc, bytes)?;
    let top = Obj::new(doc, "", &json)?;
    top.schema_version_3()?;
    top.exact(&["schema_version", "weights"])?;
    let mut weights = Vec::new();
    for (i, item) in top.array("weights")?.iter().enumerate() {
        let o = Obj::new(doc, top.item("weights", i), item)?;
        o.exact(&["from", "kind", "provenance", "to", "weight"])?;
        let key = EdgeKey {
            from: o.str("from")?.to_owned(),
            kind: o.vocab("kind", "edge kind", EdgeKind::from_name)?,
            provenance: o.vocab("provenance", "provenance", Provenance::from_name)?,
            to: o.str("to")?.to_owned(),
        };
        let weight = match o.get("weight")? {
            Json::Number(text) => {
                number_weight(text).ok_or_else(|| o.err("weight", ReadFault::Number(text.clone())))?
            }
            other => {
                return Err(o.err("weight", ReadFault::Type { expected: "a number", found: other.what() }));
            }
        };
        weights.push((key, weight));
    }
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    for (key, _) in &weights {
        ids.insert(&key.from);
        ids.insert(&key.to);
    }
    // The sidecar of any graph with these weighted edges: nodes other than endpoints, and unweighted
    // edges, write nothing in it.
    let stand_in = CanonicalGraph {
        nodes: ids
            .iter()
            .map(|id| CanonicalNode {
                id: (*id).to_owned(),
                kind: NodeKind::Module,
                level: Level::Module,
                labels: Labels::new(),
            })
            .collect(),
        edges: weights
            .iter()
            .map(|(key, weight)| CanonicalEdge {
                from: key.from.clone(),
                to: key.to.clone(),
                kind: key.kind,
                provenance: key.provenance,
                sign: Sign::default(),
                weight: Some(*weight),
            })
            .collect(),
    };
    let canonical = connectome_canonical::encode_sidecar(&stand_in)
        .map_err(|reason| ReadError::new(doc, "", ReadFault::Uncanonical(Box::new(reason))))?;
    require_canonical(doc, bytes, &canonical)?;
    Ok(weights)
}

/// A sidecar number as a weight: an integer of at most 64 bits is a count; a number with a fraction or
/// an exponent is a float that must be finite and not below zero.
fn number_weight(text: &str) -> Option<Weight> {
    if text.contains(['.', 'e', 'E']) {
        let f: f64 = text.parse().ok()?;
        (f.is_finite() && f >= 0.0).then_some(Weight::Float(f))
    } else {
        text.parse().ok().map(Weight::Int)
    }
}

/// The key of an edge with its endpoints in NFC.
fn nfc_key(key: &EdgeKey) -> EdgeKey {
    EdgeKey {
        from: nfc(&key.from).into_owned(),
        to: nfc(&key.to).into_owned(),
        kind: key.kind,
        provenance: key.provenance,
    }
}

/// Puts `weights` on the edges of `graph` ([CR-4]), matching keys after NFC; refuses an entry naming no
/// edge of the graph, or one edge twice. Edges no entry names keep their weight.
///
/// [CR-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn weigh(graph: Graph, weights: &[(EdgeKey, Weight)]) -> Result<Graph, ReadError> {
    let doc = Document::Sidecar;
    let (nodes, mut edges) = graph.into_parts();
    let index: HashMap<EdgeKey, usize> =
        edges.iter().enumerate().map(|(i, e)| (nfc_key(&e.key()), i)).collect();
    let mut weighed = vec![false; edges.len()];
    for (i, (key, weight)) in weights.iter().enumerate() {
        let at = format!("weights[{i}]");
        let name = || edge_name(&key.from, &key.to, key.kind.as_str());
        let Some(&edge) = index.get(&nfc_key(key)) else {
            return Err(ReadError::new(doc, at, ReadFault::UnknownEdge(name())));
        };
        if std::mem::replace(&mut weighed[edge], true) {
            return Err(ReadError::new(doc, at, ReadFault::DuplicateEdge(name())));
        }
        edges[edge].weight = Some(*weight);
    }
    Graph::new(nodes, edges).map_err(|e| ReadError::new(doc, "", ReadFault::Graph(Box::new(e))))
}

/// Reads an observed export and its sidecar together: [`read_export`], [`read_sidecar`], [`weigh`].
pub fn read_observed(export: &[u8], sidecar: &[u8]) -> Result<Export, ReadError> {
    let read = read_export(export)?;
    let weights = read_sidecar(sidecar)?;
    Ok(Export { graph: weigh(read.graph, &weights)?, algorithm: read.algorithm })
}

/// Reads a timing sidecar ([CM-2]) strictly, like a sidecar ([CR-4]).
///
/// [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CR-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn read_timing(bytes: &[u8]) -> Result<Timings, ReadError> {
    let doc = Document::TimingSidecar;
    let json = parse(doc, bytes)?;
    let top = Obj::new(doc, "", &json)?;
    top.schema_version_3()?;
    top.exact(&["schema_version", "timings"])?;
    let mut entries = Vec::new();
    for (i, item) in top.array("timings")?.iter().enumerate() {
        let o = Obj::new(doc, top.item("timings", i), item)?;
        o.exact(&["from", "kind", "max_ns", "provenance", "sum_ns", "to"])?;
        let key = EdgeKey {
            from: o.str("from")?.to_owned(),
            kind: o.vocab("kind", "edge kind", EdgeKind::from_name)?,
            provenance: o.vocab("provenance", "provenance", Provenance::from_name)?,
            to: o.str("to")?.to_owned(),
        };
        let max_ns = o.count("max_ns")?;
        let sum_ns = o.count("sum_ns")?;
        entries.push((key, Timing { sum_ns, max_ns }));
    }
    let timings = Timings::new(entries)
        .map_err(|reason| ReadError::new(doc, "", ReadFault::Uncanonical(Box::new(reason))))?;
    let canonical = timings
        .to_bytes()
        .map_err(|reason| ReadError::new(doc, "", ReadFault::Uncanonical(Box::new(reason))))?;
    require_canonical(doc, bytes, &canonical)?;
    Ok(timings)
}

/// A verdict on `held` against its canonical form `canonical` under `algorithm`.
fn verdict(schema_version: u8, algorithm: Algorithm, held: &[u8], canonical: &[u8]) -> Verdict {
    let hash_hex = to_hex(&digest(algorithm, held));
    let canonical = match first_difference(held, canonical) {
        None => Canonicity::Canonical,
        Some(offset) => Canonicity::Differs { offset, canonical_hex: to_hex(&digest(algorithm, canonical)) },
    };
    Verdict { schema_version, algorithm, hash_hex, canonical }
}

/// Re-hashes a graph export as held and says whether its bytes are canonical ([CR-6]). A schema 3 export
/// must be a valid graph export (every refusal of [`read_export`] but the last applies); a schema 1 or
/// 2 export is hashed as held with SHA-256 and not judged ([CC-13]).
///
/// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CR-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn verify_export(bytes: &[u8]) -> Result<Verdict, ReadError> {
    let doc = Document::GraphExport;
    let json = parse(doc, bytes)?;
    let top = Obj::new(doc, "", &json)?;
    if let Json::Number(text) = top.get("schema_version")?
        && matches!(text.as_str(), "1" | "2")
    {
        let held = connectome_canonical::record_algorithm(bytes)
            .map_err(|e| ReadError::new(doc, "", ReadFault::Older(Box::new(e))))?;
        let hash_hex = to_hex(&digest(held.algorithm, bytes));
        return Ok(Verdict {
            schema_version: held.schema_version,
            algorithm: held.algorithm,
            hash_hex,
            canonical: Canonicity::Held,
        });
    }
    let export = graph_of(&json)?;
    Ok(verdict(3, export.algorithm, bytes, &reencode(&export)?))
}

/// Re-hashes a record written with the label grammar ([CC-10]) — the diff record, the federation record,
/// the effective export — with the digest it names, and says whether its bytes are canonical ([CR-6]). It
/// must be an object with `schema_version` 3 and a known `algorithm`, and hold no float.
///
/// [CC-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CR-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn verify_record(bytes: &[u8]) -> Result<Verdict, ReadError> {
    let doc = Document::Record;
    let json = parse(doc, bytes)?;
    let top = Obj::new(doc, "", &json)?;
    top.schema_version_3()?;
    let algorithm = top.vocab("algorithm", "algorithm", |n| Algorithm::from_name(n).ok())?;
    let record = shape::object(doc, "", top.members())?;
    let canonical = connectome_canonical::encode_value(&record)
        .map_err(|reason| ReadError::new(doc, "", ReadFault::Uncanonical(Box::new(reason))))?;
    Ok(verdict(3, algorithm, bytes, &canonical))
}
