//! Effective connectivity (docs/connectome.md §W): the observed call counts and times laid onto the
//! declared graph, as one canonical, hashed export.
//!
//! Every declared edge is listed with its observed count and timing, a declared edge never observed at
//! zero, and every observed edge that was not declared flagged as such; the classes are the diff's
//! ([CF-3]), with `changed_sign` folded into `declared_and_observed`: this export reads and writes no
//! sign ([CW-2]). The export is a report of one window: it is the one hashed document that holds
//! measurements ([CW-4]); the graph exports' hashes still cover none. The library hands out the counts
//! and the sums; it never divides them into a mean.
//!
//! ```
//! use connectome_graph::effective::{Effective, EffectiveClass};
//! use connectome_graph::{Algorithm, Edge, EdgeKind, Graph, Identity, Labels, Node, Provenance, Weight};
//!
//! let server = Node::from_identity(Identity::Server { server: "srv".into() }, Labels::new());
//! let tool = Node::from_identity(Identity::Tool { server: "srv".into(), name: "t".into() }, Labels::new());
//! let (s, t) = (server.id().to_owned(), tool.id().to_owned());
//! let declared = Graph::new(
//!     vec![server.clone(), tool.clone()],
//!     vec![Edge::new(&s, &t, EdgeKind::Invoke, Provenance::Declared, None)?],
//! )?;
//! let observed = Graph::new(
//!     vec![server, tool],
//!     vec![Edge::new(&s, &t, EdgeKind::Invoke, Provenance::Observed, Some(Weight::Int(5)))?],
//! )?;
//! let window = serde_json::json!({"started_at": "2026-09-14T00:00:00Z"});
//! let effective = Effective::build(&declared, &observed, None, &window, Algorithm::Sha256)?;
//! assert_eq!(effective.edges()[0].class, EffectiveClass::DeclaredAndObserved);
//! assert_eq!(effective.edges()[0].count, 5);
//! assert_eq!(effective.hash_hex().len(), 64);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [CF-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CW-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CW-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use connectome_canonical::{
    Algorithm, EdgeKind, Labels, Level, NodeKind, Provenance, Uncanonical, Value, digest, nfc, to_hex,
    utf16_cmp,
};

use crate::diff::SideError;
use crate::federation::record_order;
use crate::graph::Graph;
use crate::read::excerpt;
use crate::timing::{MeasureError, Timing, Timings, counts, timed};

/// The effective export's `schema_version` ([CW-3]): 3, like the diff record's, so the [CC-13] verifier reads
/// it with the digest it names.
///
/// [CC-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CW-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const EFFECTIVE_SCHEMA_VERSION: u64 = 3;

/// The class of an effective edge ([CW-2]): the diff's classes ([CF-3]), `changed_sign` folded into
/// `declared_and_observed`.
///
/// [CF-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CW-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffectiveClass {
    /// Declared, and observed in the window.
    DeclaredAndObserved,
    /// Declared and never observed in the window (dead authority): count 0.
    DeclaredNeverObserved,
    /// Observed and not declared (drift): flagged.
    ObservedButUndeclared,
}

impl EffectiveClass {
    /// The name written in the export (the diff's class name).
    pub fn as_str(self) -> &'static str {
        match self {
            EffectiveClass::DeclaredAndObserved => "declared_and_observed",
            EffectiveClass::DeclaredNeverObserved => "declared_never_observed",
            EffectiveClass::ObservedButUndeclared => "observed_but_undeclared",
        }
    }
}

/// One edge of the effective export: its label (endpoints in NFC), its class and its measurements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveEdge {
    /// The source node id, NFC.
    pub from: String,
    /// The target node id, NFC.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
    /// Declared and observed, declared only, or observed only.
    pub class: EffectiveClass,
    /// The observed call count; 0 for a declared edge never observed.
    pub count: u64,
    /// The observed times when the observed side carried timings (zero for a declared edge never
    /// observed); `None` when it did not.
    pub timing: Option<Timing>,
}

/// One node of the effective export: a node of either graph, its id in NFC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveNode {
    /// The node id, NFC.
    pub id: String,
    /// The node kind.
    pub kind: NodeKind,
    /// The node level.
    pub level: Level,
}

/// Why an effective export could not be built ([CW-1]), in check order.
///
/// [CW-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum EffectiveError {
    /// The declared graph has no canonical form or holds an observed edge.
    Declared(SideError),
    /// The observed graph has no canonical form or holds a declared edge.
    Observed(SideError),
    /// An observed edge lacks its call count, or the timings do not time exactly the observed edges.
    Measure(MeasureError),
    /// The window has no canonical form.
    Window(Uncanonical),
    /// The two graphs hold a node with this id (NFC) at a different kind or level.
    ConflictingNode(String),
}

impl fmt::Display for EffectiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EffectiveError::Declared(e) => write!(f, "declared graph refused: {e}"),
            EffectiveError::Observed(e) => write!(f, "observed graph refused: {e}"),
            EffectiveError::Measure(e) => write!(f, "observed graph refused: {e}"),
            EffectiveError::Window(e) => write!(f, "window refused: {e}"),
            EffectiveError::ConflictingNode(id) => {
                write!(f, "the two graphs hold the node {} at a different kind or level", excerpt(id))
            }
        }
    }
}

impl std::error::Error for EffectiveError {}

/// The observed call counts and times on the declared graph over one window (§W).
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    algorithm: Algorithm,
    declared_hex: String,
    observed_hex: String,
    nodes: Vec<EffectiveNode>,
    edges: Vec<EffectiveEdge>,
    window: Labels,
    bytes: Vec<u8>,
}

/// The digest of one side's canonical bytes under `algorithm`, after [CF-2]'s checks of that side: its
/// canonical form, then the provenance of every edge.
///
/// [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn side(graph: &Graph, provenance: Provenance, algorithm: Algorithm) -> Result<String, SideError> {
    let bytes = graph.to_canonical_bytes(algorithm).map_err(SideError::Uncanonical)?;
    if let Some(edge) = graph.edges().iter().find(|e| e.provenance != provenance) {
        return Err(SideError::Provenance(edge.provenance));
    }
    Ok(to_hex(&digest(algorithm, &bytes)))
}

/// An edge label with its endpoints in NFC.
type Key = (String, String, EdgeKind);

impl Effective {
    /// Lays `observed` (every edge weighed by its call count, [CB-6]) and, if given, its `timings` onto
    /// `declared` over `window` (a JSON object, copied like the diff's), writing the export under
    /// `algorithm`. Refused, first match wins ([CW-1]): the declared side, the observed side (its form, its
    /// provenance, its counts, its timings), the window, then a node the graphs describe differently.
    ///
    /// [CB-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CW-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn build(
        declared: &Graph,
        observed: &Graph,
        timings: Option<&Timings>,
        window: &serde_json::Value,
        algorithm: Algorithm,
    ) -> Result<Effective, EffectiveError> {
        Effective::checked(declared, observed, timings, algorithm, || {
            let refused = || {
                EffectiveError::Window(Uncanonical::LabelValue {
                    id: "record".to_owned(),
                    key: "window".to_owned(),
                    value: window.clone(),
                })
            };
            let Some(Value::Object(labels)) = window.is_object().then(|| Value::from_json(window)).flatten()
            else {
                return Err(refused());
            };
            connectome_canonical::encode_value(&labels).map_err(|_| refused())?;
            Ok(labels)
        })
    }

    /// [`Effective::build`] with the window as typed labels (integers of any size).
    pub fn build_with_window(
        declared: &Graph,
        observed: &Graph,
        timings: Option<&Timings>,
        window: Labels,
        algorithm: Algorithm,
    ) -> Result<Effective, EffectiveError> {
        Effective::checked(declared, observed, timings, algorithm, || {
            connectome_canonical::encode_value(&window).map_err(EffectiveError::Window)?;
            Ok(window)
        })
    }

    /// The [CW-1] checks in order, then the export.
    ///
    /// [CW-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    fn checked(
        declared: &Graph,
        observed: &Graph,
        timings: Option<&Timings>,
        algorithm: Algorithm,
        window: impl FnOnce() -> Result<Labels, EffectiveError>,
    ) -> Result<Effective, EffectiveError> {
        let declared_hex =
            side(declared, Provenance::Declared, algorithm).map_err(EffectiveError::Declared)?;
        let observed_hex =
            side(observed, Provenance::Observed, algorithm).map_err(EffectiveError::Observed)?;
        let observed_counts = counts(observed).map_err(EffectiveError::Measure)?;
        let observed_times =
            timings.map(|t| timed(observed, t)).transpose().map_err(EffectiveError::Measure)?;
        let window = window()?;
        let nodes = nodes(declared, observed)?;

        let key = |from: &str, to: &str, kind| (nfc(from).into_owned(), nfc(to).into_owned(), kind);
        let mut seen: HashMap<Key, (u64, Option<Timing>)> = HashMap::with_capacity(observed.edges().len());
        for (i, e) in observed.edges().iter().enumerate() {
            let timing = observed_times.as_ref().map(|t| t[i]);
            seen.insert(key(&e.from, &e.to, e.kind), (observed_counts[i], timing));
        }
        let never = timings.map(|_| Timing::default());
        let mut edges = Vec::with_capacity(declared.edges().len() + observed.edges().len());
        for e in declared.edges() {
            let (from, to, kind) = key(&e.from, &e.to, e.kind);
            let (class, count, timing) = match seen.remove(&(from.clone(), to.clone(), kind)) {
                Some((count, timing)) => (EffectiveClass::DeclaredAndObserved, count, timing),
                None => (EffectiveClass::DeclaredNeverObserved, 0, never),
            };
            edges.push(EffectiveEdge { from, to, kind, class, count, timing });
        }
        for ((from, to, kind), (count, timing)) in seen {
            edges.push(EffectiveEdge {
                from,
                to,
                kind,
                class: EffectiveClass::ObservedButUndeclared,
                count,
                timing,
            });
        }
        edges.sort_by(|a, b| record_order((&a.from, &a.to, a.kind), (&b.from, &b.to, b.kind)));

        let mut effective =
            Effective { algorithm, declared_hex, observed_hex, nodes, edges, window, bytes: Vec::new() };
        effective.bytes =
            connectome_canonical::encode_value(&effective.to_record()).map_err(EffectiveError::Window)?;
        Ok(effective)
    }

    /// The algorithm the export names.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The nodes of both graphs, sorted by id (UTF-16).
    pub fn nodes(&self) -> &[EffectiveNode] {
        &self.nodes
    }

    /// The edges, sorted by from, to, kind (UTF-16).
    pub fn edges(&self) -> &[EffectiveEdge] {
        &self.edges
    }

    /// The window, as the export holds it.
    pub fn window(&self) -> &Labels {
        &self.window
    }

    /// The export of [CW-3] as a plain map, for [`connectome_canonical::encode_value`].
    ///
    /// [CW-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn to_record(&self) -> Labels {
        let timing = |t: Option<Timing>, f: fn(Timing) -> u64| t.map_or(Value::Null, |t| Value::from(f(t)));
        let edges = self
            .edges
            .iter()
            .map(|e| {
                Value::Object(BTreeMap::from([
                    ("class".to_owned(), Value::from(e.class.as_str())),
                    ("count".to_owned(), Value::from(e.count)),
                    ("from".to_owned(), Value::from(e.from.as_str())),
                    ("kind".to_owned(), Value::from(e.kind.as_str())),
                    ("max_ns".to_owned(), timing(e.timing, |t| t.max_ns)),
                    ("sum_ns".to_owned(), timing(e.timing, |t| t.sum_ns)),
                    ("to".to_owned(), Value::from(e.to.as_str())),
                ]))
            })
            .collect();
        let nodes = self
            .nodes
            .iter()
            .map(|n| {
                Value::Object(BTreeMap::from([
                    ("id".to_owned(), Value::from(n.id.as_str())),
                    ("kind".to_owned(), Value::from(n.kind.as_str())),
                    ("level".to_owned(), Value::from(n.level.as_str())),
                ]))
            })
            .collect();
        BTreeMap::from([
            ("algorithm".to_owned(), Value::from(self.algorithm.name())),
            ("declared_graph".to_owned(), Value::from(self.declared_hex.as_str())),
            ("edges".to_owned(), Value::Array(edges)),
            ("nodes".to_owned(), Value::Array(nodes)),
            ("observed_graph".to_owned(), Value::from(self.observed_hex.as_str())),
            ("schema_version".to_owned(), Value::from(EFFECTIVE_SCHEMA_VERSION)),
            ("window".to_owned(), Value::Object(self.window.clone())),
        ])
    }

    /// The export's canonical bytes ([CW-3]): [`connectome_canonical::encode_value`] of
    /// [`Effective::to_record`].
    ///
    /// [CW-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn encode(&self) -> &[u8] {
        &self.bytes
    }

    /// The digest the export names over its bytes.
    pub fn hash(&self) -> Vec<u8> {
        digest(self.algorithm, &self.bytes)
    }

    /// [`Effective::hash`] as lowercase hex.
    pub fn hash_hex(&self) -> String {
        to_hex(&self.hash())
    }
}

/// The nodes of both graphs by NFC id, sorted by UTF-16; a node the two describe at a different kind
/// or level is refused (the first such id in that order).
fn nodes(declared: &Graph, observed: &Graph) -> Result<Vec<EffectiveNode>, EffectiveError> {
    let mut all: HashMap<String, (NodeKind, Level)> = HashMap::new();
    let mut conflicts = Vec::new();
    for node in declared.nodes().iter().chain(observed.nodes()) {
        let id = nfc(node.id()).into_owned();
        if let Some(held) = all.insert(id.clone(), (node.kind(), node.level()))
            && held != (node.kind(), node.level())
        {
            conflicts.push(id);
        }
    }
    if let Some(id) = conflicts.into_iter().min_by(|a, b| utf16_cmp(a, b)) {
        return Err(EffectiveError::ConflictingNode(id));
    }
    let mut nodes: Vec<EffectiveNode> =
        all.into_iter().map(|(id, (kind, level))| EffectiveNode { id, kind, level }).collect();
    nodes.sort_by(|a, b| utf16_cmp(&a.id, &b.id));
    Ok(nodes)
}
