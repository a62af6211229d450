//! Nodes, edges and the graph ([CB-1]…[CB-3]), and the conversion to the canonical model (§C).
//!
//! [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::BTreeSet;
use std::fmt;

use connectome_canonical::{
    Algorithm, CanonicalEdge, CanonicalGraph, CanonicalNode, EdgeKind, Labels, Level, NodeKind, Provenance,
    SCHEMA_VERSION, Sign, Uncanonical, Weight,
};

use crate::error::{GraphError, IdentityFault};
use crate::identity::Identity;

/// A node `{id, kind, level, labels}` ([CB-1]); its id is derived from an [`Identity`], never supplied.
///
/// [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    id: String,
    kind: NodeKind,
    level: Level,
    labels: Labels,
}

impl Node {
    /// Builds a node, refusing an identity whose tag is not `kind`, then one whose level is not `level`
    /// ([CB-1] step 6; steps 1–5 are ruled out by the types).
    ///
    /// [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn new(kind: NodeKind, level: Level, identity: Identity, labels: Labels) -> Result<Node, GraphError> {
        let fault = if identity.kind() != kind {
            Some(IdentityFault::Kind)
        } else if identity.level() != level {
            Some(IdentityFault::Level)
        } else {
            None
        };
        match fault {
            Some(fault) => Err(GraphError::InvalidIdentity { kind, level, identity, fault }),
            None => Ok(Node { id: identity.id(), kind, level, labels }),
        }
    }

    /// Builds a node with the kind and level the identity requires; never refused.
    pub fn from_identity(identity: Identity, labels: Labels) -> Node {
        Node { id: identity.id(), kind: identity.kind(), level: identity.level(), labels }
    }

    /// A node read back from an export's bytes ([CR-3]): it keeps the id the export holds, which was
    /// derived when the export was written; no id is derived or parsed back here.
    ///
    /// [CR-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub(crate) fn read_back(id: String, kind: NodeKind, level: Level, labels: Labels) -> Node {
        Node { id, kind, level, labels }
    }

    /// The id ([CA-13]).
    ///
    /// [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The node kind.
    pub fn kind(&self) -> NodeKind {
        self.kind
    }

    /// The node level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The labels.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }
}

/// An edge's identity `(from, to, kind, provenance)` ([CB-2]); sign and weight are not part of it.
///
/// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EdgeKey {
    /// The source node id.
    pub from: String,
    /// The target node id.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
    /// Declared or observed.
    pub provenance: Provenance,
}

impl EdgeKey {
    /// The raw sort key: from and to as bytes, then the kind and provenance names ([CB-3], [CC-3]).
    ///
    /// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CC-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    fn order(&self) -> (&str, &str, &'static str, &'static str) {
        (&self.from, &self.to, self.kind.as_str(), self.provenance.as_str())
    }
}

impl fmt::Display for EdgeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} -> {:?} {} {}", self.from, self.to, self.kind.as_str(), self.provenance.as_str())
    }
}

/// An edge `{from, to, kind, provenance, weight, sign}` ([CB-2]).
///
/// [`Edge::new`] takes no sign and sets [`Sign::Unset`]; the consumer may assign [`Edge::sign`] and
/// rebuild the graph with [`Graph::new`], which checks every edge again.
///
/// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// The source node id.
    pub from: String,
    /// The target node id.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
    /// Declared or observed.
    pub provenance: Provenance,
    /// A measurement ([CA-7]); never hashed, written only in the sidecar.
    ///
    /// [CA-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub weight: Option<Weight>,
    /// The sign slot ([CA-6]): [`Sign::Unset`] unless the consumer assigns another value.
    ///
    /// [CA-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub sign: Sign,
}

impl Edge {
    /// Builds an edge with sign [`Sign::Unset`], refusing a float weight that is NaN, infinite or below
    /// zero (`-0.0` is accepted).
    pub fn new(
        from: impl Into<String>,
        to: impl Into<String>,
        kind: EdgeKind,
        provenance: Provenance,
        weight: Option<Weight>,
    ) -> Result<Edge, GraphError> {
        let edge = Edge { from: from.into(), to: to.into(), kind, provenance, weight, sign: Sign::default() };
        edge.check()?;
        Ok(edge)
    }

    /// Checks the fields in the [CB-2] order; in Rust only the weight can be refused.
    ///
    /// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn check(&self) -> Result<(), GraphError> {
        match self.weight {
            Some(Weight::Float(w)) if !(w.is_finite() && w >= 0.0) => {
                Err(GraphError::InvalidWeight(self.key()))
            }
            _ => Ok(()),
        }
    }

    /// The edge's identity ([CB-2]).
    ///
    /// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn key(&self) -> EdgeKey {
        EdgeKey { from: self.from.clone(), to: self.to.clone(), kind: self.kind, provenance: self.provenance }
    }
}

/// A checked graph `{schema_version, nodes, edges}` ([CB-3]): nodes sorted by raw id, edges by raw key.
///
/// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Graph {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

impl Graph {
    /// The graph `schema_version` (3).
    pub const fn schema_version() -> u64 {
        SCHEMA_VERSION as u64
    }

    /// Builds a graph at [`Graph::schema_version`]; see [`Graph::with_version`] for the checks.
    pub fn new(nodes: Vec<Node>, edges: Vec<Edge>) -> Result<Graph, GraphError> {
        Graph::with_version(Graph::schema_version(), nodes, edges)
    }

    /// Builds a graph, refusing in the [CB-3] order: a version other than 3, then each edge's own check,
    /// then a duplicate raw id (the first in id order), a duplicate raw key (the first in key order), and
    /// a dangling endpoint (edges in key order, `from` before `to`).
    ///
    /// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn with_version(
        schema_version: u64,
        mut nodes: Vec<Node>,
        mut edges: Vec<Edge>,
    ) -> Result<Graph, GraphError> {
        if schema_version != Graph::schema_version() {
            return Err(GraphError::InvalidVersion(schema_version));
        }
        for edge in &edges {
            edge.check()?;
        }
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(w) = nodes.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(GraphError::DuplicateNode(w[0].id.clone()));
        }
        let mut keyed: Vec<(EdgeKey, Edge)> = edges.drain(..).map(|e| (e.key(), e)).collect();
        keyed.sort_by(|a, b| a.0.order().cmp(&b.0.order()));
        if let Some(w) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(GraphError::DuplicateEdge(w[0].0.clone()));
        }
        let ids: BTreeSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        for (key, _) in &keyed {
            for end in [&key.from, &key.to] {
                if !ids.contains(end.as_str()) {
                    return Err(GraphError::DanglingEdge(end.clone()));
                }
            }
        }
        Ok(Graph { nodes, edges: keyed.into_iter().map(|(_, e)| e).collect() })
    }

    /// The nodes, sorted by raw id.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The edges, sorted by raw key.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// The nodes and edges, to be changed (e.g. a sign assigned) and rebuilt with [`Graph::new`].
    pub fn into_parts(self) -> (Vec<Node>, Vec<Edge>) {
        (self.nodes, self.edges)
    }

    /// The graph in the canonical writer's model.
    pub fn to_canonical(&self) -> CanonicalGraph {
        CanonicalGraph {
            nodes: self
                .nodes
                .iter()
                .map(|n| CanonicalNode {
                    id: n.id.clone(),
                    kind: n.kind,
                    level: n.level,
                    labels: n.labels.clone(),
                })
                .collect(),
            edges: self
                .edges
                .iter()
                .map(|e| CanonicalEdge {
                    from: e.from.clone(),
                    to: e.to.clone(),
                    kind: e.kind,
                    provenance: e.provenance,
                    sign: e.sign,
                    weight: e.weight,
                })
                .collect(),
        }
    }

    /// The canonical bytes naming `algorithm` ([CC-1]…[CC-9]); refusals are [CC-14]'s.
    ///
    /// [CC-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn to_canonical_bytes(&self, algorithm: Algorithm) -> Result<Vec<u8>, Uncanonical> {
        connectome_canonical::encode(&self.to_canonical(), algorithm)
    }

    /// The digest named by `algorithm` over the canonical bytes ([CC-12]).
    ///
    /// [CC-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn hash(&self, algorithm: Algorithm) -> Result<Vec<u8>, Uncanonical> {
        connectome_canonical::hash(&self.to_canonical(), algorithm)
    }

    /// [`Graph::hash`] as lowercase hex.
    pub fn hash_hex(&self, algorithm: Algorithm) -> Result<String, Uncanonical> {
        connectome_canonical::hash_hex(&self.to_canonical(), algorithm)
    }

    /// The unsigned weight sidecar ([CB-5]).
    ///
    /// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn to_sidecar_bytes(&self) -> Result<Vec<u8>, Uncanonical> {
        connectome_canonical::encode_sidecar(&self.to_canonical())
    }
}
