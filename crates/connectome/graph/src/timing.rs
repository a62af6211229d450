//! The timing sidecar (docs/connectome.md [CM-2]): each observed edge's total and longest call time, the
//! measurements the collector keeps beside the call count.
//!
//! It is unsigned and never hashed, like the weight sidecar ([CB-5], [CA-7]): the graph's hash says which
//! edges ran, never how long they took. Its bytes are
//! `{"schema_version":3,"timings":[{"from","kind","max_ns","provenance","sum_ns","to"}]}`, one entry per
//! edge in the canonical edge order ([CC-3]), written with the label grammar (so ids and keys in NFC).
//! It holds no count: the count is the weight sidecar's.
//!
//! [CA-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::BTreeMap;

use connectome_canonical::{GraphReason, Uncanonical, Value, nfc};

use crate::graph::EdgeKey;

/// The timing sidecar's `schema_version` ([CM-2]): 3, like the weight sidecar's.
///
/// [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const TIMING_SCHEMA_VERSION: u64 = 3;

/// One edge's call times, in nanoseconds (a measurement: never hashed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timing {
    /// The total time of the edge's calls.
    pub sum_ns: u64,
    /// The longest call.
    pub max_ns: u64,
}

impl Timing {
    /// Two measurements of one edge as one ([CM-4]): the sums added (saturating at `u64::MAX`, as the
    /// collector's do), the longest of the two longest calls.
    ///
    /// [CM-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn merge(self, other: Timing) -> Timing {
        Timing { sum_ns: self.sum_ns.saturating_add(other.sum_ns), max_ns: self.max_ns.max(other.max_ns) }
    }
}

/// The timings of a graph's edges, keyed by edge (endpoints in NFC), in canonical edge order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Timings {
    entries: Vec<(EdgeKey, Timing)>,
}

/// The canonical order of an edge key ([CC-3]): endpoints as bytes, then the kind and provenance names.
///
/// [CC-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn order(key: &EdgeKey) -> (&str, &str, &'static str, &'static str) {
    (&key.from, &key.to, key.kind.as_str(), key.provenance.as_str())
}

impl Timings {
    /// The timings of `entries`, their endpoints put in NFC and sorted in canonical edge order;
    /// refuses two entries for one edge (equal after NFC) as a duplicate edge.
    pub fn new(entries: impl IntoIterator<Item = (EdgeKey, Timing)>) -> Result<Timings, Uncanonical> {
        let mut entries: Vec<(EdgeKey, Timing)> = entries
            .into_iter()
            .map(|(key, timing)| {
                let key = EdgeKey {
                    from: nfc(&key.from).into_owned(),
                    to: nfc(&key.to).into_owned(),
                    kind: key.kind,
                    provenance: key.provenance,
                };
                (key, timing)
            })
            .collect();
        entries.sort_by(|a, b| order(&a.0).cmp(&order(&b.0)));
        if let Some(pair) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            let key = &pair[0].0;
            return Err(Uncanonical::InvalidGraph(GraphReason::DuplicateEdge {
                from: key.from.clone(),
                to: key.to.clone(),
                kind: key.kind,
                provenance: key.provenance,
            }));
        }
        Ok(Timings { entries })
    }

    /// The entries, in canonical edge order.
    pub fn entries(&self) -> &[(EdgeKey, Timing)] {
        &self.entries
    }

    /// The timing of the edge with this key (its endpoints compared after NFC), if there is one.
    pub fn get(&self, key: &EdgeKey) -> Option<Timing> {
        let wanted = EdgeKey {
            from: nfc(&key.from).into_owned(),
            to: nfc(&key.to).into_owned(),
            kind: key.kind,
            provenance: key.provenance,
        };
        self.entries.binary_search_by(|(k, _)| order(k).cmp(&order(&wanted))).ok().map(|i| self.entries[i].1)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The timing sidecar's bytes ([CM-2]).
    ///
    /// [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn to_bytes(&self) -> Result<Vec<u8>, Uncanonical> {
        let entries = self
            .entries
            .iter()
            .map(|(key, timing)| {
                Value::Object(BTreeMap::from([
                    ("from".to_owned(), Value::from(key.from.as_str())),
                    ("kind".to_owned(), Value::from(key.kind.as_str())),
                    ("max_ns".to_owned(), Value::from(timing.max_ns)),
                    ("provenance".to_owned(), Value::from(key.provenance.as_str())),
                    ("sum_ns".to_owned(), Value::from(timing.sum_ns)),
                    ("to".to_owned(), Value::from(key.to.as_str())),
                ]))
            })
            .collect();
        connectome_canonical::encode_value(&BTreeMap::from([
            ("schema_version".to_owned(), Value::from(TIMING_SCHEMA_VERSION)),
            ("timings".to_owned(), Value::Array(entries)),
        ]))
    }
}

/// Why an observed graph's measurements cannot be read as counts and timings ([CM-1], [CW-1]).
///
/// [CM-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CW-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeasureError {
    /// An observed edge carries no weight: its call count is unknown.
    Unweighted(EdgeKey),
    /// An observed edge's weight is a float, not a call count.
    NotACount(EdgeKey),
    /// The timings do not time exactly the graph's edges: this edge is on one side only.
    TimingEdge(EdgeKey),
}

impl std::fmt::Display for MeasureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |key: &EdgeKey| crate::read::shape::edge_name(&key.from, &key.to, key.kind.as_str());
        match self {
            MeasureError::Unweighted(key) => write!(f, "the edge {} has no call count", name(key)),
            MeasureError::NotACount(key) => {
                write!(f, "the edge {} is weighed by a float, not a call count", name(key))
            }
            MeasureError::TimingEdge(key) => {
                write!(f, "the timings and the graph disagree on the edge {}", name(key))
            }
        }
    }
}

impl std::error::Error for MeasureError {}

/// The call count of every edge of `graph`, in its edge order: each edge must weigh an integer.
pub(crate) fn counts(graph: &crate::graph::Graph) -> Result<Vec<u64>, MeasureError> {
    graph
        .edges()
        .iter()
        .map(|edge| match edge.weight {
            Some(connectome_canonical::Weight::Int(n)) => Ok(n),
            Some(connectome_canonical::Weight::Float(_)) => Err(MeasureError::NotACount(edge.key())),
            None => Err(MeasureError::Unweighted(edge.key())),
        })
        .collect()
}

/// The timing of every edge of `graph`, in its edge order: `timings` must time exactly its edges
/// (keys compared after NFC). The first edge without a timing is named, else the first entry that
/// names no edge.
pub(crate) fn timed(graph: &crate::graph::Graph, timings: &Timings) -> Result<Vec<Timing>, MeasureError> {
    let mut out = Vec::with_capacity(graph.edges().len());
    for edge in graph.edges() {
        let key = edge.key();
        match timings.get(&key) {
            Some(timing) => out.push(timing),
            None => return Err(MeasureError::TimingEdge(key)),
        }
    }
    if timings.len() != out.len() {
        let edges: std::collections::HashSet<(String, String, &str, &str)> = graph
            .edges()
            .iter()
            .map(|e| {
                (nfc(&e.from).into_owned(), nfc(&e.to).into_owned(), e.kind.as_str(), e.provenance.as_str())
            })
            .collect();
        let extra = timings.entries().iter().find(|(k, _)| {
            !edges.contains(&(k.from.clone(), k.to.clone(), k.kind.as_str(), k.provenance.as_str()))
        });
        if let Some((key, _)) = extra {
            return Err(MeasureError::TimingEdge(key.clone()));
        }
    }
    Ok(out)
}
