//! The federation record ([CM-5]): written with the label grammar and hashed like the diff record, and
//! read back strictly.
//!
//! `{"algorithm","edges":[{"from","instances","kind","to"}],"graph","instances","schema_version","system"}`:
//! `graph` is the hex digest of the federation's graph export under `algorithm`; `instances` the
//! instance names; each entry of `edges` one edge of the graph with the instances that observed it.
//! Every array is sorted by UTF-16 code units ([CB-7]'s order): `edges` by from, to, kind; names as strings.
//!
//! [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use connectome_canonical::{Algorithm, EdgeKind, Labels, Value, utf16_cmp};

use super::FederationError;
use crate::graph::Graph;
use crate::read::json::Json;
use crate::read::shape::Obj;
use crate::read::{Document, ReadError, ReadFault, parse};

/// The federation record's `schema_version` ([CM-5]): 3, so the [CC-13] verifier reads it with its digest.
///
/// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const FEDERATION_SCHEMA_VERSION: u64 = 3;

/// The record order of two edges ([CB-7]): from, to, then the kind name, as UTF-16 code units.
///
/// [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub(crate) fn record_order(a: (&str, &str, EdgeKind), b: (&str, &str, EdgeKind)) -> Ordering {
    utf16_cmp(a.0, b.0).then_with(|| utf16_cmp(a.1, b.1)).then_with(|| utf16_cmp(a.2.as_str(), b.2.as_str()))
}

/// The record of a federation whose graph export hashes to `graph_hex`; `seen_by[i]` indexes
/// `instances` for edge `i` of `graph`, ascending.
pub(crate) fn to_record(
    system: &str,
    algorithm: Algorithm,
    instances: &[String],
    graph: &Graph,
    seen_by: &[Vec<u32>],
    graph_hex: &str,
) -> Labels {
    let edges = graph.edges();
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by(|&a, &b| {
        record_order(
            (&edges[a].from, &edges[a].to, edges[a].kind),
            (&edges[b].from, &edges[b].to, edges[b].kind),
        )
    });
    let names = |seen: &[u32]| {
        Value::Array(seen.iter().map(|&i| Value::from(instances[i as usize].as_str())).collect())
    };
    let entries = order
        .into_iter()
        .map(|i| {
            let e = &edges[i];
            Value::Object(BTreeMap::from([
                ("from".to_owned(), Value::from(e.from.as_str())),
                ("instances".to_owned(), names(&seen_by[i])),
                ("kind".to_owned(), Value::from(e.kind.as_str())),
                ("to".to_owned(), Value::from(e.to.as_str())),
            ]))
        })
        .collect();
    BTreeMap::from([
        ("algorithm".to_owned(), Value::from(algorithm.name())),
        ("edges".to_owned(), Value::Array(entries)),
        ("graph".to_owned(), Value::from(graph_hex)),
        ("instances".to_owned(), Value::Array(instances.iter().map(|n| Value::from(n.as_str())).collect())),
        ("schema_version".to_owned(), Value::from(FEDERATION_SCHEMA_VERSION)),
        ("system".to_owned(), Value::from(system)),
    ])
}

/// A federation record as read: its members, not yet checked against the graph.
pub(crate) struct Read {
    /// The algorithm it names.
    pub(crate) algorithm: Algorithm,
    /// The graph digest it names.
    pub(crate) graph: String,
    /// The instance names, as listed.
    pub(crate) instances: Vec<String>,
    /// The system name.
    pub(crate) system: String,
    /// Each listed edge `(from, to, kind)` with its instance names, in record order.
    pub(crate) edges: Vec<((String, String, EdgeKind), Vec<String>)>,
}

/// An array member of strings.
fn strings(o: &Obj<'_>, name: &'static str) -> Result<Vec<String>, ReadError> {
    o.array(name)?
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Json::Str(s) => Ok(s.clone()),
            other => Err(ReadError::new(
                Document::FederationRecord,
                o.item(name, i),
                ReadFault::Type { expected: "a string", found: other.what() },
            )),
        })
        .collect()
}

/// Reads a federation record's members strictly (its canonical bytes are checked by re-assembly).
pub(crate) fn read(bytes: &[u8]) -> Result<Read, ReadError> {
    let doc = Document::FederationRecord;
    let json = parse(doc, bytes)?;
    let top = Obj::new(doc, "", &json)?;
    top.schema_version_3()?;
    top.exact(&["algorithm", "edges", "graph", "instances", "schema_version", "system"])?;
    let algorithm = top.vocab("algorithm", "algorithm", |n| Algorithm::from_name(n).ok())?;
    let mut edges = Vec::new();
    for (i, item) in top.array("edges")?.iter().enumerate() {
        let o = Obj::new(doc, top.item("edges", i), item)?;
        o.exact(&["from", "instances", "kind", "to"])?;
        let from = o.str("from")?.to_owned();
        let names = strings(&o, "instances")?;
        let kind = o.vocab("kind", "edge kind", EdgeKind::from_name)?;
        let to = o.str("to")?.to_owned();
        edges.push(((from, to, kind), names));
    }
    let graph = top.str("graph")?.to_owned();
    let instances = strings(&top, "instances")?;
    let system = top.str("system")?.to_owned();
    Ok(Read { algorithm, graph, instances, system, edges })
}

/// The `seen_by` lists of `graph`'s edges from a read record, checking that the record lists every
/// edge once and only edges of the graph, each with at least one instance, all of them in
/// `instances` (sorted, unique).
pub(crate) fn seen_by(
    graph: &Graph,
    instances: &[String],
    edges: Vec<((String, String, EdgeKind), Vec<String>)>,
) -> Result<Vec<Vec<u32>>, FederationError> {
    let mismatch = |what| FederationError::Record { what };
    let index: HashMap<&str, u32> = instances.iter().zip(0u32..).map(|(n, i)| (n.as_str(), i)).collect();
    let mut listed: HashMap<(String, String, EdgeKind), Vec<u32>> = HashMap::with_capacity(edges.len());
    for (label, names) in edges {
        let mut seen = Vec::with_capacity(names.len());
        for name in &names {
            seen.push(*index.get(name.as_str()).ok_or(mismatch("edges"))?);
        }
        if seen.is_empty() || listed.insert(label, seen).is_some() {
            return Err(mismatch("edges"));
        }
    }
    let mut out = Vec::with_capacity(graph.edges().len());
    for edge in graph.edges() {
        let label = (edge.from.clone(), edge.to.clone(), edge.kind);
        out.push(listed.remove(&label).ok_or(mismatch("edges"))?);
    }
    if !listed.is_empty() {
        return Err(mismatch("edges"));
    }
    Ok(out)
}
