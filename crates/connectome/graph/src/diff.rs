//! The diff of a declared and an observed graph (docs/connectome.md §F, [CB-7]).
//!
//! An edge's **label** is `(from, to, kind)` after NFC ([CF-1]). The diff is a set difference over labels —
//! deliberately not an isomorphism check — and puts every label of either graph in exactly one of four
//! classes ([CF-3]):
//!
//! | class | meaning |
//! |--|--|
//! | `declared_and_observed` | in both graphs, and the signs do not disagree |
//! | `declared_never_observed` | declared only: *dead authority*, evidence rather than a fault |
//! | `observed_but_undeclared` | observed only: *drift* |
//! | `changed_sign` | in both, **both** signs supplied (not `unset`) and different: drift too |
//!
//! A sign never moves an edge between the other classes, and `unset` against anything is never a
//! change. The ten [`Coverage`] counts ([CF-4]) are stated together with the consumer's window, which the
//! record copies verbatim; the consumer divides them into ratios. The diff never reads weights, signs
//! nothing and interprets nothing.
//!
//! # Refusals ([CF-2]), first match wins
//!
//! 1. The options: in Rust the window is a required argument and there are no other options, so
//!    `{:invalid, :opts, …}` and `{:missing, :window}` cannot be written.
//! 2. The declared graph: its own check (a [`Graph`] is checked when it is built, so this never fails
//!    here), then its canonical check ([`SideError::Uncanonical`]), then an edge of the wrong provenance
//!    ([`SideError::Provenance`]); wrapped as [`DiffError::Declared`].
//! 3. The observed graph, the same way, wrapped as [`DiffError::Observed`].
//! 4. A window with no canonical form (not a JSON object, a float anywhere in it — a JSON integer beyond
//!    64 bits is already a float —, keys equal after NFC): [`DiffError::Window`], naming `"record"`,
//!    `"window"` and the value as given. [`Diff::run_with_window`] takes typed labels instead.
//!
//! The window's size is not bounded here; a host taking a window from a caller bounds it first.
//!
//! # The record ([CB-7])
//!
//! [`Diff::encode`] writes `{"algorithm", "classes", "coverage", "schema_version", "window"}` with the
//! label grammar of [CC-4]…[CC-9] (so every key is in UTF-16 order and `"algorithm"` comes first), equal to
//! [`connectome_canonical::encode_value`] of [`Diff::to_record`]. Each class is an array of
//! `{"from","kind","to"}` (a `changed_sign` entry adds `"declared_sign"` and `"observed_sign"`), sorted
//! by from, to and kind name as UTF-16 code units. Nothing else is written: no weight, latency or labels.
//!
//! [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CF-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CF-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CF-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use connectome_canonical::{
    Algorithm, Labels, Provenance, Sign, Uncanonical, Value, digest, nfc, to_hex, utf16_cmp,
};

use crate::graph::Graph;
use connectome_canonical::EdgeKind;

/// The diff record's own `schema_version` ([CV-3]): 3, the version that carries `"algorithm"`.
///
/// [CV-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub const RECORD_SCHEMA_VERSION: u64 = 3;

/// An edge's label `(from, to, kind)`, its endpoints in NFC ([CF-1]).
///
/// [CF-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Label {
    /// The source node id, NFC.
    pub from: String,
    /// The target node id, NFC.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
}

impl Label {
    /// The record order ([CB-7]): from, to, then the kind name, each by UTF-16 code units.
    ///
    /// [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    fn record_cmp(&self, other: &Label) -> Ordering {
        utf16_cmp(&self.from, &other.from)
            .then_with(|| utf16_cmp(&self.to, &other.to))
            .then_with(|| utf16_cmp(self.kind.as_str(), other.kind.as_str()))
    }

    /// The label as a record object `{"from","kind","to"}`.
    fn to_record(&self) -> BTreeMap<String, Value> {
        BTreeMap::from([
            ("from".to_owned(), Value::from(self.from.as_str())),
            ("kind".to_owned(), Value::from(self.kind.as_str())),
            ("to".to_owned(), Value::from(self.to.as_str())),
        ])
    }
}

/// A label in both graphs whose two supplied signs differ (the `changed_sign` class).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignChange {
    /// The label.
    pub label: Label,
    /// The declared edge's sign (never [`Sign::Unset`] here).
    pub declared_sign: Sign,
    /// The observed edge's sign (never [`Sign::Unset`] here).
    pub observed_sign: Sign,
}

/// The four classes ([CF-3]); together they partition the labels of both graphs.
///
/// [CF-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Classes {
    /// In both graphs, both signs supplied and different.
    pub changed_sign: Vec<SignChange>,
    /// In both graphs, and not a sign change.
    pub declared_and_observed: Vec<Label>,
    /// Declared and never observed in the window (dead authority).
    pub declared_never_observed: Vec<Label>,
    /// Observed and not declared (drift).
    pub observed_but_undeclared: Vec<Label>,
}

/// The ten coverage counts ([CF-4]); node counts are distinct NFC ids of each graph's node list.
///
/// [CF-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Coverage {
    /// 1. Labels in the declared graph.
    pub declared_edges: u64,
    /// 2. Labels in the observed graph.
    pub observed_edges: u64,
    /// 3. Labels in both (`declared_and_observed` and `changed_sign` together).
    pub declared_and_observed: u64,
    /// 4. Declared labels whose `from` and `to` are both observed node ids.
    pub declared_endpoint_covered: u64,
    /// 5. Observed labels whose `from` and `to` are both declared node ids.
    pub observed_endpoint_declared: u64,
    /// 6. Distinct NFC node ids of the declared graph.
    pub declared_nodes: u64,
    /// 7. Distinct NFC node ids of the observed graph.
    pub observed_nodes: u64,
    /// 8. Node ids in both graphs.
    pub nodes_in_both: u64,
    /// 9. Labels in both with the declared sign supplied and the observed sign `unset`.
    pub declared_sign_only: u64,
    /// 10. Labels in both with the observed sign supplied and the declared sign `unset`.
    pub observed_sign_only: u64,
}

impl Coverage {
    /// The counts by their record names, in the order of [CF-4].
    ///
    /// [CF-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn named(&self) -> [(&'static str, u64); 10] {
        [
            ("declared_edges", self.declared_edges),
            ("observed_edges", self.observed_edges),
            ("declared_and_observed", self.declared_and_observed),
            ("declared_endpoint_covered", self.declared_endpoint_covered),
            ("observed_endpoint_declared", self.observed_endpoint_declared),
            ("declared_nodes", self.declared_nodes),
            ("observed_nodes", self.observed_nodes),
            ("nodes_in_both", self.nodes_in_both),
            ("declared_sign_only", self.declared_sign_only),
            ("observed_sign_only", self.observed_sign_only),
        ]
    }
}

/// Why one side of the diff was refused ([CF-2] steps 2 and 3).
///
/// [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum SideError {
    /// The graph has no canonical bytes ([CC-14]).
    ///
    /// [CC-14]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    Uncanonical(Uncanonical),
    /// An edge has the other side's provenance: `{:invalid, :provenance, p}` naming the one found.
    Provenance(Provenance),
}

/// A refusal of [`Diff::run`], in the order of [CF-2].
///
/// [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq)]
pub enum DiffError {
    /// The declared graph was refused.
    Declared(SideError),
    /// The observed graph was refused.
    Observed(SideError),
    /// The window has no canonical form: `{:uncanonical, {:label_value, "record", :window, v}}`.
    Window(Uncanonical),
}

impl fmt::Display for SideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SideError::Uncanonical(reason) => reason.fmt(f),
            SideError::Provenance(p) => write!(f, "invalid provenance: an edge is {}", p.as_str()),
        }
    }
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiffError::Declared(e) => write!(f, "declared graph refused: {e}"),
            DiffError::Observed(e) => write!(f, "observed graph refused: {e}"),
            DiffError::Window(e) => write!(f, "window refused: {e}"),
        }
    }
}

impl std::error::Error for DiffError {}

/// The result of diffing a declared and an observed graph over a window (§F).
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    classes: Classes,
    coverage: Coverage,
    window: Labels,
    /// The canonical record after its `"algorithm"` member: `"classes":…}` ([CB-7]), written once by `run`.
    ///
    /// [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    tail: Vec<u8>,
}

impl Diff {
    /// Diffs `declared` against `observed` over `window` (a JSON object copied verbatim into the record),
    /// refusing in the order of [CF-2] (see the module docs).
    ///
    /// JSON integers beyond the 64-bit range arrive as floats and are refused; use
    /// [`Diff::run_with_window`] for a window with larger integers.
    ///
    /// [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn run(declared: &Graph, observed: &Graph, window: &serde_json::Value) -> Result<Diff, DiffError> {
        Diff::run_checked(declared, observed, || json_window(window))
    }

    /// [`Diff::run`] with the window as typed labels (integers of any size); the only window refusal is
    /// two keys equal after NFC, as [`Uncanonical::DuplicateLabelKey`] naming `"record"`.
    pub fn run_with_window(declared: &Graph, observed: &Graph, window: Labels) -> Result<Diff, DiffError> {
        Diff::run_checked(declared, observed, || {
            connectome_canonical::encode_value(&window).map_err(DiffError::Window)?;
            Ok(window)
        })
    }

    /// Both sides' checks, then the window's ([CF-2]), then the diff itself.
    ///
    /// [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    fn run_checked(
        declared: &Graph,
        observed: &Graph,
        window: impl FnOnce() -> Result<Labels, DiffError>,
    ) -> Result<Diff, DiffError> {
        check_side(declared, Provenance::Declared).map_err(DiffError::Declared)?;
        check_side(observed, Provenance::Observed).map_err(DiffError::Observed)?;
        let window = window()?;

        let declared_nodes = node_ids(declared);
        let observed_nodes = node_ids(observed);
        let declared_labels = labels(declared);
        let observed_labels = labels(observed);

        let mut classes = Classes::default();
        let mut coverage = Coverage {
            declared_edges: count(declared_labels.len()),
            observed_edges: count(observed_labels.len()),
            declared_nodes: count(declared_nodes.len()),
            observed_nodes: count(observed_nodes.len()),
            nodes_in_both: count(declared_nodes.intersection(&observed_nodes).count()),
            ..Coverage::default()
        };
        for (label, &declared_sign) in &declared_labels {
            if observed_nodes.contains(label.from.as_str()) && observed_nodes.contains(label.to.as_str()) {
                coverage.declared_endpoint_covered += 1;
            }
            let Some(&observed_sign) = observed_labels.get(label) else {
                classes.declared_never_observed.push(label.clone());
                continue;
            };
            coverage.declared_and_observed += 1;
            match (declared_sign, observed_sign) {
                (Sign::Unset, Sign::Unset) => {}
                (_, Sign::Unset) => coverage.declared_sign_only += 1,
                (Sign::Unset, _) => coverage.observed_sign_only += 1,
                _ => {}
            }
            if declared_sign != Sign::Unset && observed_sign != Sign::Unset && declared_sign != observed_sign
            {
                classes.changed_sign.push(SignChange { label: label.clone(), declared_sign, observed_sign });
            } else {
                classes.declared_and_observed.push(label.clone());
            }
        }
        for label in observed_labels.keys() {
            if declared_nodes.contains(label.from.as_str()) && declared_nodes.contains(label.to.as_str()) {
                coverage.observed_endpoint_declared += 1;
            }
            if !declared_labels.contains_key(label) {
                classes.observed_but_undeclared.push(label.clone());
            }
        }
        classes.changed_sign.sort_by(|a, b| a.label.record_cmp(&b.label));
        for class in [
            &mut classes.declared_and_observed,
            &mut classes.declared_never_observed,
            &mut classes.observed_but_undeclared,
        ] {
            class.sort_by(Label::record_cmp);
        }

        let mut diff = Diff { classes, coverage, window, tail: Vec::new() };
        let mut record = diff.to_record_without_algorithm();
        // A fixed member that sorts before every other key stands in for "algorithm" while the tail is
        // written; every value in the record is already known to have a canonical form.
        record.insert("algorithm".to_owned(), Value::Null);
        let bytes = connectome_canonical::encode_value(&record).map_err(DiffError::Window)?;
        let prefix = b"{\"algorithm\":null,";
        diff.tail = bytes.get(prefix.len()..).map(<[u8]>::to_vec).unwrap_or_default();
        Ok(diff)
    }

    /// The four classes.
    pub fn classes(&self) -> &Classes {
        &self.classes
    }

    /// The ten counts.
    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    /// The window, as the record holds it.
    pub fn window(&self) -> &Labels {
        &self.window
    }

    /// The record of [CB-7] naming `algorithm`, as a plain map for [`connectome_canonical::encode_value`].
    ///
    /// [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn to_record(&self, algorithm: Algorithm) -> Labels {
        let mut record = self.to_record_without_algorithm();
        record.insert("algorithm".to_owned(), Value::from(algorithm.name()));
        record
    }

    /// The canonical bytes of the record naming `algorithm` ([CF-6]).
    ///
    /// [CF-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn encode(&self, algorithm: Algorithm) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.tail.len() + 24);
        out.extend_from_slice(b"{\"algorithm\":\"");
        out.extend_from_slice(algorithm.name().as_bytes());
        out.extend_from_slice(b"\",");
        out.extend_from_slice(&self.tail);
        out
    }

    /// The raw digest (32, 48 or 64 bytes) named by `algorithm` over [`Diff::encode`]'s bytes.
    pub fn hash(&self, algorithm: Algorithm) -> Vec<u8> {
        digest(algorithm, &self.encode(algorithm))
    }

    /// [`Diff::hash`] as lowercase hex.
    pub fn hash_hex(&self, algorithm: Algorithm) -> String {
        to_hex(&self.hash(algorithm))
    }

    /// Every member of the record except `"algorithm"`.
    fn to_record_without_algorithm(&self) -> Labels {
        let labels =
            |class: &[Label]| Value::Array(class.iter().map(|l| Value::Object(l.to_record())).collect());
        let changed = self
            .classes
            .changed_sign
            .iter()
            .map(|c| {
                let mut entry = c.label.to_record();
                entry.insert("declared_sign".to_owned(), Value::from(c.declared_sign.as_str()));
                entry.insert("observed_sign".to_owned(), Value::from(c.observed_sign.as_str()));
                Value::Object(entry)
            })
            .collect();
        let classes = BTreeMap::from([
            ("changed_sign".to_owned(), Value::Array(changed)),
            ("declared_and_observed".to_owned(), labels(&self.classes.declared_and_observed)),
            ("declared_never_observed".to_owned(), labels(&self.classes.declared_never_observed)),
            ("observed_but_undeclared".to_owned(), labels(&self.classes.observed_but_undeclared)),
        ]);
        let coverage =
            self.coverage.named().into_iter().map(|(k, n)| (k.to_owned(), Value::from(n))).collect();
        BTreeMap::from([
            ("classes".to_owned(), Value::Object(classes)),
            ("coverage".to_owned(), Value::Object(coverage)),
            ("schema_version".to_owned(), Value::from(RECORD_SCHEMA_VERSION)),
            ("window".to_owned(), Value::Object(self.window.clone())),
        ])
    }
}

/// [CF-2] steps 2 and 3 for one side: the canonical check, then every edge's provenance.
///
/// [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn check_side(graph: &Graph, side: Provenance) -> Result<(), SideError> {
    connectome_canonical::check(&graph.to_canonical()).map_err(SideError::Uncanonical)?;
    match graph.edges().iter().find(|e| e.provenance != side) {
        Some(edge) => Err(SideError::Provenance(edge.provenance)),
        None => Ok(()),
    }
}

/// The window as a label object, or the [CF-2] step 4 refusal naming the value as given.
///
/// [CF-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn json_window(window: &serde_json::Value) -> Result<Labels, DiffError> {
    let refused = || {
        DiffError::Window(Uncanonical::LabelValue {
            id: "record".to_owned(),
            key: "window".to_owned(),
            value: window.clone(),
        })
    };
    let Some(Value::Object(labels)) = window.is_object().then(|| Value::from_json(window)).flatten() else {
        return Err(refused());
    };
    connectome_canonical::encode_value(&labels).map_err(|_| refused())?;
    Ok(labels)
}

/// The distinct NFC node ids of a graph.
fn node_ids(graph: &Graph) -> HashSet<Cow<'_, str>> {
    graph.nodes().iter().map(|n| nfc(n.id())).collect()
}

/// The labels of a graph with their signs; unique, because the graph passed its canonical check and has
/// one provenance.
fn labels(graph: &Graph) -> HashMap<Label, Sign> {
    graph
        .edges()
        .iter()
        .map(|e| {
            (Label { from: nfc(&e.from).into_owned(), to: nfc(&e.to).into_owned(), kind: e.kind }, e.sign)
        })
        .collect()
}

/// A collection size as a record count.
fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
