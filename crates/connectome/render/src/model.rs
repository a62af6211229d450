//! The graph export ([CB-4], [CB-6]) and the weight sidecar ([CB-5]), read strictly from their bytes.
//!
//! [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Number, Value};

use crate::error::{Error, Role};
use crate::escape::excerpt;
use crate::json::{self, Obj};
use crate::vocab::{Algorithm, EdgeKind, Level, NodeKind, Provenance, Sign};

/// A node object: exactly `id`, `kind`, `labels`, `level`.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The node id, as written.
    pub id: String,
    /// The node kind.
    pub kind: NodeKind,
    /// The node level.
    pub level: Level,
    /// The labels, as written (member order kept).
    pub labels: Map<String, Value>,
}

/// An edge object: exactly `from`, `kind`, `provenance`, `sign`, `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The source node id.
    pub from: String,
    /// The target node id.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
    /// The edge provenance.
    pub provenance: Provenance,
    /// The edge sign, as supplied.
    pub sign: Sign,
}

/// An edge's identity ([CB-2]): from, to, kind, provenance.
///
/// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub type EdgeKey = (String, String, EdgeKind, Provenance);

impl Edge {
    /// The edge's key.
    pub fn key(&self) -> EdgeKey {
        (self.from.clone(), self.to.clone(), self.kind, self.provenance)
    }
}

/// A graph export, schema 3: nodes sorted by id (the alias order), edges in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// The digest the export names.
    pub algorithm: Algorithm,
    /// The nodes, sorted by the bytes of their ids.
    pub nodes: Vec<Node>,
    /// The edges, in the order the export lists them.
    pub edges: Vec<Edge>,
}

impl Graph {
    /// Reads a graph export, refusing anything that is not exactly the [CB-4] format, duplicate node ids
    /// or edge keys, and edges whose endpoints are not nodes.
    ///
    /// [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn from_json(role: Role, bytes: &[u8]) -> Result<Self, Error> {
        let doc = json::parse(role, bytes)?;
        let top = Obj::new(role, "", &doc)?;
        top.schema_version_3()?;
        top.exact(&["schema_version", "algorithm", "nodes", "edges"])?;
        let algorithm = top.vocab::<Algorithm>("algorithm")?;
        let mut nodes = Vec::new();
        for (i, v) in top.array("nodes")?.iter().enumerate() {
            let o = Obj::new(role, top.item_path("nodes", i), v)?;
            o.exact(&["id", "kind", "labels", "level"])?;
            nodes.push(Node {
                id: o.str("id")?.to_owned(),
                kind: o.vocab("kind")?,
                level: o.vocab("level")?,
                labels: o.map("labels")?.clone(),
            });
        }
        let mut edges = Vec::new();
        for (i, v) in top.array("edges")?.iter().enumerate() {
            let o = Obj::new(role, top.item_path("edges", i), v)?;
            o.exact(&["from", "kind", "provenance", "sign", "to"])?;
            edges.push(Edge {
                from: o.str("from")?.to_owned(),
                to: o.str("to")?.to_owned(),
                kind: o.vocab("kind")?,
                provenance: o.vocab("provenance")?,
                sign: o.vocab("sign")?,
            });
        }
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(pair) = nodes.windows(2).find(|p| p[0].id == p[1].id) {
            return Err(top.err("nodes", format!("duplicate node id {}", excerpt(&pair[0].id))));
        }
        let ids: BTreeSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        let mut keys = BTreeSet::new();
        for (i, e) in edges.iter().enumerate() {
            let at = top.item_path("edges", i);
            for end in [&e.from, &e.to] {
                if !ids.contains(end.as_str()) {
                    return Err(Error::format(role, at, format!("endpoint {} is not a node", excerpt(end))));
                }
            }
            if !keys.insert(e.key()) {
                return Err(Error::format(role, at, "duplicate edge (same from, to, kind, provenance)"));
            }
        }
        Ok(Graph { algorithm, nodes, edges })
    }

    /// The position of the node with this id, if any.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.binary_search_by(|n| n.id.as_str().cmp(id)).ok().map(|i| &self.nodes[i])
    }
}

/// One sidecar entry: an edge key and its weight, as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Weight {
    /// The edge's key.
    pub key: EdgeKey,
    /// The weight (integer or float, never negative).
    pub weight: Number,
}

/// A sidecar, schema 3 ([CB-5]): one weight per weighed edge.
///
/// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Clone, Debug, PartialEq)]
pub struct Sidecar {
    /// The entries, in file order.
    pub weights: Vec<Weight>,
}

impl Sidecar {
    /// Reads a sidecar, refusing anything that is not exactly the [CB-5] format.
    ///
    /// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn from_json(bytes: &[u8]) -> Result<Self, Error> {
        let role = Role::Sidecar;
        let doc = json::parse(role, bytes)?;
        let top = Obj::new(role, "", &doc)?;
        top.schema_version_3()?;
        top.exact(&["schema_version", "weights"])?;
        let mut weights = Vec::new();
        for (i, v) in top.array("weights")?.iter().enumerate() {
            let o = Obj::new(role, top.item_path("weights", i), v)?;
            o.exact(&["from", "kind", "provenance", "to", "weight"])?;
            let key = (
                o.str("from")?.to_owned(),
                o.str("to")?.to_owned(),
                o.vocab("kind")?,
                o.vocab("provenance")?,
            );
            let weight = match o.get("weight")? {
                Value::Number(n) if n.as_f64().is_some_and(|f| f >= 0.0) => n.clone(),
                other => {
                    return Err(o.err(
                        "weight",
                        format!("expected a non-negative number, found {}", json::describe(other)),
                    ));
                }
            };
            weights.push(Weight { key, weight });
        }
        Ok(Sidecar { weights })
    }

    /// The weight of each edge of `graph` (index-aligned, `None` when unweighed), refusing an entry
    /// that names no edge of the graph or an edge named twice.
    pub fn attach(&self, graph: &Graph, graph_role: Role) -> Result<Vec<Option<String>>, Error> {
        let index: BTreeMap<EdgeKey, usize> =
            graph.edges.iter().enumerate().map(|(i, e)| (e.key(), i)).collect();
        let mut out = vec![None; graph.edges.len()];
        for (i, w) in self.weights.iter().enumerate() {
            let at = format!("weights[{i}]");
            let Some(&edge) = index.get(&w.key) else {
                let problem = format!(
                    "names an edge that is not in the {} ({} to {})",
                    graph_role.name(),
                    excerpt(&w.key.0),
                    excerpt(&w.key.1)
                );
                return Err(Error::format(Role::Sidecar, at, problem));
            };
            if out[edge].replace(w.weight.to_string()).is_some() {
                return Err(Error::format(Role::Sidecar, at, "a second weight for the same edge"));
            }
        }
        Ok(out)
    }
}
