//! The collector's reads ([CE-4]): rows, size, the observed graph, its sidecar and the latency summary.
//!
//! Id strings are built here and only here, through [`Node::from_identity`] (which calls
//! [`Identity::id`], the one id function): once per distinct endpoint per read, never per call ([CE-3]).
//! Every read of a collector that is not running is [`ObserveError::NotStarted`].
//!
//! The graph ([CB-6]): one node per distinct identity, at the level the identity requires (servers and
//! catalog parts at `server`, modules at `module`), all labels empty; one edge per row, `observed`, sign
//! unset, weight = call count. Weights and latency are measurements: never hashed, written only in the
//! sidecar (counts), the timing sidecar (total and longest call, [CM-2]) or returned as a summary
//! (latency).
//!
//! [CB-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CE-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;

use connectome_graph::{
    Edge, EdgeKey, EdgeKind, Graph, Identity, Labels, Node, Provenance, Timing, Timings, Weight,
};

use crate::collector::{Collector, Counters};
use crate::error::ObserveError;
use crate::key::{End, Key};

/// One collector row: an edge between two identities and its measurements.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Row {
    /// The caller.
    pub from: Identity,
    /// The callee.
    pub to: Identity,
    /// The edge kind.
    pub kind: EdgeKind,
    /// Calls seen (at least 1).
    pub count: u64,
    /// Total time of those calls, in nanoseconds.
    pub sum_ns: u64,
    /// The longest call, in nanoseconds.
    pub max_ns: u64,
}

/// An observed edge's ids `(from, to, kind)`; its provenance is always `observed`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EdgeIds {
    /// The source node id.
    pub from: String,
    /// The target node id.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
}

impl EdgeIds {
    /// The graph's edge key for these ids (provenance `observed`).
    pub fn edge_key(&self) -> EdgeKey {
        EdgeKey {
            from: self.from.clone(),
            to: self.to.clone(),
            kind: self.kind,
            provenance: Provenance::Observed,
        }
    }
}

/// The latency of one edge ([CE-4]): a summary, never hashed.
///
/// [CE-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySummary {
    /// Calls seen.
    pub count: u64,
    /// The mean call time, in microseconds.
    pub mean_us: f64,
    /// The longest call, in microseconds.
    pub max_us: f64,
}

/// A row as read: the key and its three counters.
type Read = (Key, u64, u64, u64);

/// A row's key and its three counters, each read once.
fn counted(key: &Key, c: &Counters) -> Read {
    let count = c.count.load(Ordering::Relaxed);
    let sum = c.sum_ns.load(Ordering::Relaxed);
    (key.clone(), count, sum, c.max_ns.load(Ordering::Relaxed))
}

/// Microseconds from nanoseconds, as a float (summary only).
#[allow(clippy::cast_precision_loss)] // a summary: 2^53 ns is over 100 days
fn micros(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

impl Collector {
    /// Every row, read once; refused when not running. A row being inserted is already counted (a row
    /// is created with its first call), so no row reads a count of zero.
    fn read(&self) -> Result<Vec<Read>, ObserveError> {
        if !self.is_running() {
            return Err(ObserveError::NotStarted);
        }
        let window = self.inner.generation.load(Ordering::Acquire);
        let rows = self.inner.rows.pin();
        let mut read: Vec<Read> = rows.iter().map(|(key, c)| counted(key, c)).collect();
        drop(rows);
        // The bound slots' counters of this window, merged into the row of the same edge, if any.
        let slots = self.inner.slots();
        let mut at: HashMap<Key, usize> = HashMap::new();
        if !slots.is_empty() {
            at = read.iter().enumerate().map(|(i, row)| (row.0.clone(), i)).collect();
        }
        for slot in slots.values() {
            let (key, count, sum, max) = counted(&slot.key, slot.set(window));
            if count == 0 {
                continue;
            }
            match at.get(&key) {
                Some(&i) => {
                    let row = &mut read[i];
                    row.1 = row.1.saturating_add(count);
                    row.2 = row.2.saturating_add(sum);
                    row.3 = row.3.max(max);
                }
                None => read.push((key, count, sum, max)),
            }
        }
        Ok(read)
    }

    /// The rows, sorted by (from, to, kind) identity.
    pub fn rows(&self) -> Result<Vec<Row>, ObserveError> {
        let mut rows: Vec<Row> = self
            .read()?
            .into_iter()
            .map(|(key, count, sum_ns, max_ns)| Row {
                from: key.from.to_identity(),
                to: key.to.to_identity(),
                kind: key.kind,
                count,
                sum_ns,
                max_ns,
            })
            .collect();
        rows.sort();
        Ok(rows)
    }

    /// The number of rows (distinct edges seen in this window).
    pub fn size(&self) -> Result<usize, ObserveError> {
        Ok(self.read()?.len())
    }

    /// The observed graph ([CB-6]): one node per distinct identity, one `observed` edge per row with the
    /// call count as its weight; refused when not running. A running collector with no rows gives the
    /// empty graph ("watched, nothing ran").
    ///
    /// [CB-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn snapshot(&self) -> Result<Graph, ObserveError> {
        Ok(graph_of(self.read()?)?.0)
    }

    /// The observed graph and the timings of its edges (their total and longest call time, [CM-2]), from
    /// one read of the rows, so the two describe the same calls; refused when not running.
    ///
    /// [CM-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn snapshot_with_timings(&self) -> Result<(Graph, Timings), ObserveError> {
        let (graph, timings) = graph_of(self.read()?)?;
        Ok((graph, Timings::new(timings)?))
    }

    /// The unsigned weight sidecar ([CB-5]) of [`Collector::snapshot`]: one call count per edge.
    ///
    /// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn sidecar_bytes(&self) -> Result<Vec<u8>, ObserveError> {
        Ok(self.snapshot()?.to_sidecar_bytes()?)
    }

    /// The latency summary per edge ([CE-4]), keyed by the edge's ids; refused when not running.
    ///
    /// [CE-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn latency(&self) -> Result<BTreeMap<EdgeIds, LatencySummary>, ObserveError> {
        let mut ids: HashMap<End, String> = HashMap::new();
        let mut id_of = |end: &End| ids.entry(end.clone()).or_insert_with(|| end.to_identity().id()).clone();
        let mut summary = BTreeMap::new();
        for (key, count, sum_ns, max_ns) in self.read()? {
            let edge = EdgeIds { from: id_of(&key.from), to: id_of(&key.to), kind: key.kind };
            let mean_us = micros(sum_ns.checked_div(count).unwrap_or(0));
            summary.insert(edge, LatencySummary { count, mean_us, max_us: micros(max_ns) });
        }
        Ok(summary)
    }
}

/// The graph of rows read once, and each edge's timing: ids built once per distinct endpoint.
fn graph_of(rows: Vec<Read>) -> Result<(Graph, Vec<(EdgeKey, Timing)>), ObserveError> {
    let mut ids: HashMap<End, String> = HashMap::new();
    let mut nodes: BTreeMap<String, Node> = BTreeMap::new();
    let mut id_of = |end: &End| -> String {
        if let Some(id) = ids.get(end) {
            return id.clone();
        }
        let node = Node::from_identity(end.to_identity(), Labels::new());
        let id = node.id().to_owned();
        nodes.entry(id.clone()).or_insert(node);
        ids.insert(end.clone(), id.clone());
        id
    };
    let mut edges = Vec::with_capacity(rows.len());
    let mut timings = Vec::with_capacity(rows.len());
    for (key, count, sum_ns, max_ns) in rows {
        let (from, to) = (id_of(&key.from), id_of(&key.to));
        let edge = Edge::new(from, to, key.kind, Provenance::Observed, Some(Weight::Int(count)))?;
        timings.push((edge.key(), Timing { sum_ns, max_ns }));
        edges.push(edge);
    }
    Ok((Graph::new(nodes.into_values().collect(), edges)?, timings))
}
