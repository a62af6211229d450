//! The loaded inputs and the neutral views every output format draws: nodes with aliases in id
//! order, edges by alias index, diff classes. A view holds only what the JSON carries.

use std::collections::BTreeMap;

use crate::diff::DiffRecord;
use crate::error::{Error, Role};
use crate::model::{Graph, Sidecar};
use crate::vocab::{DiffClass, EdgeKind, NodeKind, Sign};

/// Which view a diagram draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewName {
    /// The declared graph.
    Declared,
    /// The observed graph.
    Observed,
    /// The diff over the union of nodes.
    Diff,
}

impl ViewName {
    /// The name on the command line and in DOT graph names.
    pub fn name(self) -> &'static str {
        match self {
            ViewName::Declared => "declared",
            ViewName::Observed => "observed",
            ViewName::Diff => "diff",
        }
    }

    /// The heading the documents print.
    pub fn title(self) -> &'static str {
        match self {
            ViewName::Declared => "Declared graph",
            ViewName::Observed => "Observed graph",
            ViewName::Diff => "Diff",
        }
    }
}

/// Every input, read and cross-checked (the sidecar names edges of the graph it weighs).
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// The declared export.
    pub declared: Graph,
    /// The observed export, if given.
    pub observed: Option<Graph>,
    /// The sidecar, if given.
    pub sidecar: Option<Sidecar>,
    /// The diff record, if given.
    pub diff: Option<DiffRecord>,
    /// Which graph the sidecar weighs: the observed export if given, else the declared one.
    pub weighed: Option<ViewName>,
    /// The sidecar weight of each edge of the weighed graph (index-aligned).
    pub weights: Vec<Option<String>>,
}

impl Inputs {
    /// Joins the inputs; the sidecar must name only edges of the graph it weighs.
    pub fn new(
        declared: Graph,
        observed: Option<Graph>,
        sidecar: Option<Sidecar>,
        diff: Option<DiffRecord>,
    ) -> Result<Self, Error> {
        let (weighed, weights) = match (&sidecar, &observed) {
            (None, _) => (None, Vec::new()),
            (Some(s), Some(o)) => (Some(ViewName::Observed), s.attach(o, Role::Observed)?),
            (Some(s), None) => (Some(ViewName::Declared), s.attach(&declared, Role::Declared)?),
        };
        Ok(Inputs { declared, observed, sidecar, diff, weighed, weights })
    }

    /// The views the inputs allow, in page order: declared, observed if given, diff if given.
    pub fn available(&self) -> Vec<ViewName> {
        let mut v = vec![ViewName::Declared];
        v.extend(self.observed.as_ref().map(|_| ViewName::Observed));
        v.extend(self.diff.as_ref().map(|_| ViewName::Diff));
        v
    }

    /// One view, or `None` when its input was not given.
    pub fn view(&self, name: ViewName) -> Option<View> {
        let weights = |n| (self.weighed == Some(n)).then_some(self.weights.as_slice());
        match name {
            ViewName::Declared => Some(graph_view(name, &self.declared, weights(name))),
            ViewName::Observed => self.observed.as_ref().map(|g| graph_view(name, g, weights(name))),
            ViewName::Diff => {
                self.diff.as_ref().map(|d| diff_view(d, &self.declared, self.observed.as_ref()))
            }
        }
    }
}

/// A node of a view; its alias is `n<index>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewNode {
    /// The node id.
    pub id: String,
    /// The kind, when an export carries it (diff-only endpoints have none).
    pub kind: Option<NodeKind>,
    /// Present in exactly one of the two graph exports (diff view, both exports given).
    pub one_side: bool,
    /// Everything else the export says about the node, one fact per line.
    pub detail: Vec<String>,
}

/// An edge of a view, between node indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewEdge {
    /// The source node index.
    pub from: usize,
    /// The target node index.
    pub to: usize,
    /// The edge kind.
    pub kind: EdgeKind,
    /// The diff class (diff view only).
    pub class: Option<DiffClass>,
    /// The arrow label: weight and supplied sign, or the sign change.
    pub label: Option<String>,
    /// Everything the export says about the edge, for tooltips, one fact per line.
    pub detail: Vec<String>,
}

/// A drawable view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// Which view.
    pub name: ViewName,
    /// The nodes, sorted by id.
    pub nodes: Vec<ViewNode>,
    /// The edges, in export order (diff: by class, then record order).
    pub edges: Vec<ViewEdge>,
    /// Whether one-side-only nodes could be told (diff view: both exports given).
    pub sides_known: bool,
}

fn graph_view(name: ViewName, g: &Graph, weights: Option<&[Option<String>]>) -> View {
    let index: BTreeMap<&str, usize> = g.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let nodes = g
        .nodes
        .iter()
        .map(|n| {
            let labels = serde_json::Value::Object(n.labels.clone()).to_string();
            let detail = vec![
                n.id.clone(),
                format!("kind {} · level {}", n.kind.name(), n.level.name()),
                format!("labels {labels}"),
            ];
            ViewNode { id: n.id.clone(), kind: Some(n.kind), one_side: false, detail }
        })
        .collect();
    let edges = g
        .edges
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let weight = weights.and_then(|w| w.get(i).cloned().flatten());
            let sign = (e.sign != Sign::Unset).then(|| e.sign.name().to_owned());
            let parts: Vec<String> = weight.iter().cloned().chain(sign).collect();
            let mut facts = format!("{} · {} · sign {}", e.kind.name(), e.provenance.name(), e.sign.name());
            if let Some(w) = &weight {
                facts.push_str(&format!(" · weight {w}"));
            }
            let detail = vec![format!("{} → {}", e.from, e.to), facts];
            ViewEdge {
                from: index[e.from.as_str()],
                to: index[e.to.as_str()],
                kind: e.kind,
                class: None,
                label: (!parts.is_empty()).then(|| parts.join(" · ")),
                detail,
            }
        })
        .collect();
    View { name, nodes, edges, sides_known: false }
}

fn diff_view(d: &DiffRecord, declared: &Graph, observed: Option<&Graph>) -> View {
    // id → (kind, in declared, in observed)
    let mut all: BTreeMap<&str, (Option<NodeKind>, bool, bool)> = BTreeMap::new();
    for n in &declared.nodes {
        all.insert(&n.id, (Some(n.kind), true, false));
    }
    for n in observed.iter().flat_map(|g| &g.nodes) {
        let slot = all.entry(&n.id).or_insert((Some(n.kind), false, false));
        slot.2 = true;
    }
    for (_, e) in d.entries() {
        all.entry(&e.from).or_insert((None, false, false));
        all.entry(&e.to).or_insert((None, false, false));
    }
    let sides_known = observed.is_some();
    let index: BTreeMap<&str, usize> = all.keys().enumerate().map(|(i, id)| (*id, i)).collect();
    let nodes = all
        .iter()
        .map(|(id, &(kind, in_d, in_o))| {
            let side = match (sides_known, in_d, in_o) {
                (false, _, _) => "observed side not given",
                (true, true, true) => "in both exports",
                (true, true, false) => "declared export only",
                (true, false, true) => "observed export only",
                (true, false, false) => "in neither export (diff record only)",
            };
            let kind_text = kind.map_or("kind not carried", |k| k.name());
            ViewNode {
                id: (*id).to_owned(),
                kind,
                one_side: sides_known && in_d != in_o,
                detail: vec![(*id).to_owned(), format!("{kind_text} · {side}")],
            }
        })
        .collect();
    let edges = d
        .entries()
        .map(|(class, e)| {
            let label = e.signs.map(|(ds, os)| format!("{} → {}", ds.name(), os.name()));
            let mut facts = format!("{} · {}", e.kind.name(), class.name());
            if let Some(l) = &label {
                facts.push_str(&format!(" · sign {l}"));
            }
            let detail = vec![format!("{} → {}", e.from, e.to), facts];
            ViewEdge {
                from: index[e.from.as_str()],
                to: index[e.to.as_str()],
                kind: e.kind,
                class: Some(class),
                label,
                detail,
            }
        })
        .collect();
    View { name: ViewName::Diff, nodes, edges, sides_known }
}
