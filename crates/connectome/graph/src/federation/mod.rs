//! Federation (docs/connectome.md §M): the observed graphs of several instances of one system, merged
//! into one observed graph that says which instances saw each edge.
//!
//! A [`Federation`] is four documents: the graph export ([CB-4]) of the union of the instances' edges, its
//! weight sidecar ([CB-5]) with the call counts summed, its timing sidecar ([CM-2]) with the times summed
//! and the longest call kept (when the instances gave timings), and the federation record ([CM-5]), a
//! canonical, hashed document naming the system, the instances and, for each edge, the instances that
//! observed it. One instance's export is lifted into a federation of one ([`Federation::instance`]);
//! [`merge`] combines federations into one; [`Federation::read`] reads the four documents back, so a
//! merged result is itself a merge input and `merge` is associative and commutative on the bytes,
//! with [`Federation::empty`] as its identity ([CM-6]).
//!
//! ```
//! use connectome_graph::federation::{Federation, merge};
//! use connectome_graph::{Algorithm, Edge, EdgeKind, Graph, Identity, Labels, Node, Provenance, Weight};
//!
//! let observed = |count| -> Result<Graph, connectome_graph::GraphError> {
//!     let server = Node::from_identity(Identity::Server { server: "srv".into() }, Labels::new());
//!     let tool = Node::from_identity(Identity::Tool { server: "srv".into(), name: "t".into() }, Labels::new());
//!     let edge = Edge::new(server.id(), tool.id(), EdgeKind::Invoke, Provenance::Observed, Some(Weight::Int(count)))?;
//!     Graph::new(vec![server, tool], vec![edge])
//! };
//! let a = Federation::from_graph("eu-1", "srv", &observed(3)?, Algorithm::Sha256, None)?;
//! let b = Federation::from_graph("us-1", "srv", &observed(4)?, Algorithm::Sha256, None)?;
//! let both = merge(&[a, b])?;
//! assert_eq!(both.graph().edges()[0].weight, Some(Weight::Int(7)));
//! assert_eq!(both.instances(), ["eu-1", "us-1"]);
//! let again = Federation::read(both.export_bytes(), both.sidecar_bytes(), both.record_bytes(), None)?;
//! assert_eq!(again, both);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

mod error;
mod record;

use std::collections::{BTreeMap, HashMap};

use connectome_canonical::{
    Algorithm, EdgeKind, NodeKind, Provenance, Weight, digest, nfc, to_hex, utf16_cmp,
};

pub use error::FederationError;
pub use record::FEDERATION_SCHEMA_VERSION;
pub(crate) use record::record_order;

use crate::graph::{Edge, Graph, Node};
use crate::identity::Identity;
use crate::read::{Document, read_observed, read_timing, require_canonical};
use crate::timing::{Timing, Timings, counts, timed};

/// One or more instances of one system, merged ([CM-5]): the graph, the provenance and the documents.
///
/// [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub struct Federation {
    system: String,
    algorithm: Algorithm,
    instances: Vec<String>,
    graph: Graph,
    seen_by: Vec<Vec<u32>>,
    timings: Option<Timings>,
    export: Vec<u8>,
    sidecar: Vec<u8>,
    record: Vec<u8>,
    timing: Option<Vec<u8>>,
}

/// A name in NFC, refused when empty.
fn name(what: &'static str, given: &str) -> Result<String, FederationError> {
    if given.is_empty() {
        return Err(FederationError::EmptyName { what });
    }
    Ok(nfc(given).into_owned())
}

/// The [CM-1] checks of an observed graph of `system`, in order: every edge observed, every edge
/// counted, the timings timing exactly its edges, every server node the system's.
///
/// [CM-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn check(system: &str, graph: &Graph, timings: Option<&Timings>) -> Result<(), FederationError> {
    if let Some(edge) = graph.edges().iter().find(|e| e.provenance != Provenance::Observed) {
        return Err(FederationError::NotObserved(edge.key()));
    }
    counts(graph)?;
    if let Some(timings) = timings {
        timed(graph, timings)?;
    }
    let server = nfc(&Identity::Server { server: system.to_owned() }.id()).into_owned();
    let other = graph.nodes().iter().find(|n| n.kind() == NodeKind::Server && nfc(n.id()) != server);
    if let Some(node) = other {
        return Err(FederationError::NotOfSystem { system: system.to_owned(), server: node.id().to_owned() });
    }
    Ok(())
}

/// Documents the reader has already found canonical for the graph and timings they hold, so they are
/// kept rather than written again.
struct Held<'a> {
    export: &'a [u8],
    sidecar: &'a [u8],
    timing: Option<&'a [u8]>,
}

impl Federation {
    /// Writes the documents of a federation whose parts are already checked and normalised: NFC ids,
    /// `instances` sorted by UTF-16 and unique, `seen_by[i]` the instances of edge `i` (sorted here).
    /// `held` are the graph's and timings' documents when they were just read back ([CR-2]): the same
    /// bytes the writer would give.
    ///
    /// [CR-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    fn assemble(
        system: String,
        algorithm: Algorithm,
        instances: Vec<String>,
        graph: Graph,
        mut seen_by: Vec<Vec<u32>>,
        timings: Option<Timings>,
        held: Option<Held<'_>>,
    ) -> Result<Federation, FederationError> {
        for seen in &mut seen_by {
            seen.sort_unstable();
            seen.dedup();
        }
        let (export, sidecar, timing) = match held {
            Some(held) => (held.export.to_vec(), held.sidecar.to_vec(), held.timing.map(<[u8]>::to_vec)),
            None => (
                graph.to_canonical_bytes(algorithm)?,
                graph.to_sidecar_bytes()?,
                timings.as_ref().map(Timings::to_bytes).transpose()?,
            ),
        };
        let graph_hex = to_hex(&digest(algorithm, &export));
        let record = record::to_record(&system, algorithm, &instances, &graph, &seen_by, &graph_hex);
        let record = connectome_canonical::encode_value(&record)?;
        Ok(Federation {
            system,
            algorithm,
            instances,
            graph,
            seen_by,
            timings,
            export,
            sidecar,
            record,
            timing,
        })
    }

    /// The federation of no instance of `system` ([CM-6]): the identity of [`merge`]. It carries no
    /// timings and merges with timed and untimed parts alike.
    ///
    /// [CM-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn empty(system: &str, algorithm: Algorithm) -> Result<Federation, FederationError> {
        let system = name("system", system)?;
        Federation::assemble(system, algorithm, Vec::new(), Graph::default(), Vec::new(), None, None)
    }

    /// Lifts one instance's observed export — its graph export, its sidecar and, if it has one, its
    /// timing sidecar — into a federation of one ([CM-1]), refusing in order: an empty instance or system
    /// name, a document that does not read (§R), an edge that is not observed, an edge without a call
    /// count, timings that do not time exactly the graph's edges, and a server node of another system.
    ///
    /// [CM-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn instance(
        instance: &str,
        system: &str,
        export: &[u8],
        sidecar: &[u8],
        timing: Option<&[u8]>,
    ) -> Result<Federation, FederationError> {
        let instance = name("instance", instance)?;
        let system = name("system", system)?;
        let read = read_observed(export, sidecar)?;
        let timings = timing.map(read_timing).transpose()?;
        check(&system, &read.graph, timings.as_ref())?;
        let seen_by = vec![vec![0]; read.graph.edges().len()];
        let held = Held { export, sidecar, timing };
        Federation::assemble(system, read.algorithm, vec![instance], read.graph, seen_by, timings, Some(held))
    }

    /// [`Federation::instance`] of a graph in memory (e.g. a collector's snapshot): its documents are
    /// written under `algorithm` and read back, so it holds what its bytes say.
    pub fn from_graph(
        instance: &str,
        system: &str,
        graph: &Graph,
        algorithm: Algorithm,
        timings: Option<&Timings>,
    ) -> Result<Federation, FederationError> {
        let export = graph.to_canonical_bytes(algorithm)?;
        let sidecar = graph.to_sidecar_bytes()?;
        let timing = timings.map(Timings::to_bytes).transpose()?;
        Federation::instance(instance, system, &export, &sidecar, timing.as_deref())
    }

    /// Reads a federation's documents back ([CM-5]) — what [`Federation::export_bytes`],
    /// [`Federation::sidecar_bytes`], [`Federation::record_bytes`] and [`Federation::timing_bytes`]
    /// wrote — refusing a document that does not read, a graph that fails the [CM-1] checks, a record
    /// that does not describe the graph (its algorithm, its graph digest, its edges), and a record whose
    /// bytes are not the canonical bytes of what it holds.
    ///
    /// [CM-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    /// [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn read(
        export: &[u8],
        sidecar: &[u8],
        record: &[u8],
        timing: Option<&[u8]>,
    ) -> Result<Federation, FederationError> {
        let read = read_observed(export, sidecar)?;
        let timings = timing.map(read_timing).transpose()?;
        let held = record::read(record)?;
        let system = name("system", &held.system)?;
        check(&system, &read.graph, timings.as_ref())?;
        if held.algorithm != read.algorithm {
            return Err(FederationError::Record { what: "algorithm" });
        }
        if held.graph != to_hex(&digest(read.algorithm, export)) {
            return Err(FederationError::Record { what: "graph" });
        }
        let mut instances = Vec::with_capacity(held.instances.len());
        for listed in &held.instances {
            instances.push(name("instance", listed)?);
        }
        instances.sort_by(|a, b| utf16_cmp(a, b));
        instances.dedup();
        let seen_by = record::seen_by(&read.graph, &instances, held.edges)?;
        let held = Held { export, sidecar, timing };
        let federation = Federation::assemble(
            system,
            read.algorithm,
            instances,
            read.graph,
            seen_by,
            timings,
            Some(held),
        )?;
        require_canonical(Document::FederationRecord, record, &federation.record)?;
        Ok(federation)
    }

    /// The system: the server name every part's server node is derived from.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// The algorithm of every document.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The instance names, in NFC, sorted by UTF-16 code units.
    pub fn instances(&self) -> &[String] {
        &self.instances
    }

    /// The merged observed graph: every edge weighed by its summed call count.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The instances that observed edge `edge` of [`Federation::graph`] (by index), sorted; empty for
    /// an index past the last edge.
    pub fn observed_by(&self, edge: usize) -> Vec<&str> {
        self.seen_by
            .get(edge)
            .map_or_else(Vec::new, |seen| seen.iter().map(|&i| self.instances[i as usize].as_str()).collect())
    }

    /// The merged timings, when every instance gave timings.
    pub fn timings(&self) -> Option<&Timings> {
        self.timings.as_ref()
    }

    /// The graph export ([CB-4]).
    ///
    /// [CB-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn export_bytes(&self) -> &[u8] {
        &self.export
    }

    /// The weight sidecar ([CB-5]): the summed call counts.
    ///
    /// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn sidecar_bytes(&self) -> &[u8] {
        &self.sidecar
    }

    /// The federation record ([CM-5]).
    ///
    /// [CM-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn record_bytes(&self) -> &[u8] {
        &self.record
    }

    /// The timing sidecar ([CM-2]), when the federation carries timings.
    ///
    /// [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn timing_bytes(&self) -> Option<&[u8]> {
        self.timing.as_deref()
    }

    /// The digest the federation names over its record's bytes, lowercase hex.
    pub fn record_hash_hex(&self) -> String {
        to_hex(&digest(self.algorithm, &self.record))
    }
}

/// One merged edge while the parts are read.
struct Merged<'a> {
    edge: &'a Edge,
    count: u64,
    timing: Timing,
    seen: Vec<u32>,
}

/// Merges federations of one system into one ([CM-3], [CM-4]): nodes united by id, edges by
/// (from, to, kind), call counts and total times summed (saturating), the longest call kept, each
/// edge's instances united. Refused, first match wins: no part, a part of another system, a part
/// under another algorithm, an instance in two parts, timed and untimed parts (a part without
/// instances is neither), a node two parts describe differently, an edge two parts sign differently.
///
/// [CM-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CM-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn merge(parts: &[Federation]) -> Result<Federation, FederationError> {
    let first = parts.first().ok_or(FederationError::NoInputs)?;
    for (index, part) in parts.iter().enumerate() {
        if part.system != first.system {
            let (expected, found) = (first.system.clone(), part.system.clone());
            return Err(FederationError::DifferentSystem { index, expected, found });
        }
    }
    for (index, part) in parts.iter().enumerate() {
        if part.algorithm != first.algorithm {
            let (expected, found) = (first.algorithm, part.algorithm);
            return Err(FederationError::DifferentAlgorithm { index, expected, found });
        }
    }
    let mut instances: Vec<&str> =
        parts.iter().flat_map(|p| p.instances.iter().map(String::as_str)).collect();
    instances.sort_by(|a, b| utf16_cmp(a, b));
    if let Some(pair) = instances.windows(2).find(|w| w[0] == w[1]) {
        return Err(FederationError::DuplicateInstance(pair[0].to_owned()));
    }
    let mut timed_parts = None;
    for (index, part) in parts.iter().enumerate().filter(|(_, p)| !p.instances.is_empty()) {
        let this = part.timings.is_some();
        if *timed_parts.get_or_insert(this) != this {
            return Err(FederationError::TimingMismatch { index });
        }
    }
    let position: HashMap<&str, u32> = instances.iter().zip(0u32..).map(|(n, i)| (*n, i)).collect();
    let mut nodes: BTreeMap<&str, &Node> = BTreeMap::new();
    let mut edges: HashMap<(&str, &str, EdgeKind), Merged<'_>> = HashMap::new();
    for node in parts.iter().flat_map(|p| p.graph.nodes()) {
        if let Some(kept) = nodes.insert(node.id(), node)
            && kept != node
        {
            return Err(FederationError::ConflictingNode(node.id().to_owned()));
        }
    }
    for part in parts {
        let remap: Vec<u32> = part.instances.iter().map(|n| position[n.as_str()]).collect();
        let times = part.timings.as_ref().map(Timings::entries);
        for (i, edge) in part.graph.edges().iter().enumerate() {
            // Every edge of a part carries its count: lifting and reading back check it (CM-1).
            let count = match edge.weight {
                Some(Weight::Int(n)) => n,
                _ => 0,
            };
            let timing = times.map_or_else(Timing::default, |t| t[i].1);
            let seen = part.seen_by[i].iter().map(|&s| remap[s as usize]);
            let key = (edge.from.as_str(), edge.to.as_str(), edge.kind);
            match edges.get_mut(&key) {
                Some(merged) => {
                    refuse_a_second_sign(merged.edge, edge)?;
                    merged.count = merged.count.saturating_add(count);
                    merged.timing = merged.timing.merge(timing);
                    merged.seen.extend(seen);
                }
                None => {
                    let merged = Merged { edge, count, timing, seen: seen.collect() };
                    edges.insert(key, merged);
                }
            }
        }
    }
    let mut out_edges = Vec::with_capacity(edges.len());
    for merged in edges.values() {
        let e = merged.edge;
        let mut edge =
            Edge::new(e.from.clone(), e.to.clone(), e.kind, e.provenance, Some(Weight::Int(merged.count)))
                .map_err(FederationError::Graph)?;
        edge.sign = e.sign;
        out_edges.push(edge);
    }
    let graph =
        Graph::new(nodes.into_values().cloned().collect(), out_edges).map_err(FederationError::Graph)?;
    let mut seen_by = Vec::with_capacity(graph.edges().len());
    let mut timing_entries = Vec::with_capacity(graph.edges().len());
    for edge in graph.edges() {
        let merged = &edges[&(edge.from.as_str(), edge.to.as_str(), edge.kind)];
        seen_by.push(merged.seen.clone());
        timing_entries.push((edge.key(), merged.timing));
    }
    let timings = match timed_parts {
        Some(true) => Some(Timings::new(timing_entries)?),
        _ => None,
    };
    let instances = instances.into_iter().map(str::to_owned).collect();
    Federation::assemble(first.system.clone(), first.algorithm, instances, graph, seen_by, timings, None)
}

/// Refuses two parts that sign one edge differently: merge never picks one of two supplied signs.
fn refuse_a_second_sign(kept: &Edge, edge: &Edge) -> Result<(), FederationError> {
    if kept.sign != edge.sign {
        return Err(FederationError::ConflictingSign(edge.key()));
    }
    Ok(())
}
