//! The effective export (docs/connectome.md [CW-3]) read strictly, and its weighted view ([CW-6]) as SVG and
//! DOT: `connectome render --effective E.json --format svg|dot`.
//!
//! - **Reading.** `schema_version` 3 first, then exactly the members `algorithm`, `declared_graph`,
//!   `edges` (`class`, `count`, `from`, `kind`, `max_ns`, `sum_ns`, `to`), `nodes` (`id`, `kind`,
//!   `level`), `observed_graph`, `schema_version` and `window`. A class is one of the three the export
//!   uses (`changed_sign` is the diff's only), a graph digest is lowercase hex of the algorithm's
//!   length, `max_ns` and `sum_ns` are both integers or both `null`, a declared edge never observed
//!   counts 0, an endpoint is a node, and no node or edge is listed twice. Nothing is corrected.
//! - **The view.** Nodes are drawn as in the other views (aliases `n0…` in id byte order, a shape per
//!   kind); an edge's thickness grows with its count ([`thickness`]); a declared edge never observed is
//!   dashed, grey and labelled `0`; an observed edge that was not declared is red and labelled
//!   `undeclared`; declared and observed edges are teal. The colours are the diff's class colours
//!   ([CJ-2]). Tooltips carry the kind, the class, the count and, when timed, the total, longest and
//!   mean call time (the mean is the renderer's division, [CF-5]). Layers come from [`svg::layers`].
//!   The same export gives the same bytes, on every run.
//!
//! [CF-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CJ-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CW-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CW-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Role};
use crate::error::{io_reason, shown};
use crate::escape::{self, excerpt};
use crate::json::{self, Obj};
use crate::svg::{self, EdgePath, Placed};
use crate::view::{View, ViewEdge, ViewName, ViewNode};
use crate::vocab::{Algorithm, DiffClass, EdgeKind, Level, NodeKind};

/// A node of the effective export: exactly `id`, `kind`, `level`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveNode {
    /// The node id.
    pub id: String,
    /// The node kind.
    pub kind: NodeKind,
    /// The node level.
    pub level: Level,
}

/// An edge of the effective export with its class and measurements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveEdge {
    /// The source node id.
    pub from: String,
    /// The target node id.
    pub to: String,
    /// The edge kind.
    pub kind: EdgeKind,
    /// `declared_and_observed`, `declared_never_observed` or `observed_but_undeclared`.
    pub class: DiffClass,
    /// The observed call count (0 for a declared edge never observed).
    pub count: u64,
    /// `(sum_ns, max_ns)` when the observed side carried timings.
    pub timing: Option<(u64, u64)>,
}

/// An effective export, schema 3 ([CW-3]).
///
/// [CW-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Clone, Debug, PartialEq)]
pub struct EffectiveExport {
    /// The digest the export names.
    pub algorithm: Algorithm,
    /// The digest of the declared graph export, lowercase hex.
    pub declared_graph: String,
    /// The digest of the observed graph export, lowercase hex.
    pub observed_graph: String,
    /// The nodes, sorted by the bytes of their ids.
    pub nodes: Vec<EffectiveNode>,
    /// The edges, in the order the export lists them.
    pub edges: Vec<EffectiveEdge>,
    /// The window, as written.
    pub window: Map<String, Value>,
}

/// The hex digits of a digest under `algorithm`.
fn hex_len(algorithm: Algorithm) -> usize {
    match algorithm {
        Algorithm::Sha256 => 64,
        Algorithm::Sha384 => 96,
        Algorithm::Sha512 => 128,
    }
}

/// A member holding a digest under `algorithm`: lowercase hex of the right length.
fn digest_member(o: &Obj<'_>, key: &str, algorithm: Algorithm) -> Result<String, Error> {
    let s = o.str(key)?;
    let hex = s.len() == hex_len(algorithm) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if hex {
        Ok(s.to_owned())
    } else {
        Err(o.err(key, format!("expected {} lowercase hex digits, found {}", hex_len(algorithm), excerpt(s))))
    }
}

impl EffectiveExport {
    /// Reads an effective export, refusing anything that is not exactly the [CW-3] format.
    ///
    /// [CW-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn from_json(bytes: &[u8]) -> Result<Self, Error> {
        let role = Role::Effective;
        let doc = json::parse(role, bytes)?;
        let top = Obj::new(role, "", &doc)?;
        top.schema_version_3()?;
        top.exact(&[
            "algorithm",
            "declared_graph",
            "edges",
            "nodes",
            "observed_graph",
            "schema_version",
            "window",
        ])?;
        let algorithm = top.vocab::<Algorithm>("algorithm")?;
        let declared_graph = digest_member(&top, "declared_graph", algorithm)?;
        let observed_graph = digest_member(&top, "observed_graph", algorithm)?;
        let mut nodes = Vec::new();
        for (i, v) in top.array("nodes")?.iter().enumerate() {
            let o = Obj::new(role, top.item_path("nodes", i), v)?;
            o.exact(&["id", "kind", "level"])?;
            nodes.push(EffectiveNode {
                id: o.str("id")?.to_owned(),
                kind: o.vocab("kind")?,
                level: o.vocab("level")?,
            });
        }
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(pair) = nodes.windows(2).find(|p| p[0].id == p[1].id) {
            return Err(top.err("nodes", format!("duplicate node id {}", excerpt(&pair[0].id))));
        }
        let ids: BTreeSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        let mut edges = Vec::new();
        let mut labels = BTreeSet::new();
        for (i, v) in top.array("edges")?.iter().enumerate() {
            let o = Obj::new(role, top.item_path("edges", i), v)?;
            o.exact(&["class", "count", "from", "kind", "max_ns", "sum_ns", "to"])?;
            let class = o.vocab::<DiffClass>("class")?;
            if !CLASSES.contains(&class) {
                return Err(o.err("class", "changed_sign is the diff's class, not the effective export's"));
            }
            let count = o.count("count")?;
            if class == DiffClass::DeclaredNeverObserved && count != 0 {
                return Err(o.err("count", format!("a declared edge never observed counts 0, found {count}")));
            }
            let timing = match (o.get("sum_ns")?, o.get("max_ns")?) {
                (Value::Null, Value::Null) => None,
                (Value::Null, _) | (_, Value::Null) => {
                    return Err(o.err("", "sum_ns and max_ns must both be integers or both null"));
                }
                _ => Some((o.count("sum_ns")?, o.count("max_ns")?)),
            };
            let edge = EffectiveEdge {
                from: o.str("from")?.to_owned(),
                to: o.str("to")?.to_owned(),
                kind: o.vocab("kind")?,
                class,
                count,
                timing,
            };
            for end in [&edge.from, &edge.to] {
                if !ids.contains(end.as_str()) {
                    return Err(o.err("", format!("endpoint {} is not a node", excerpt(end))));
                }
            }
            if !labels.insert((edge.from.clone(), edge.to.clone(), edge.kind)) {
                return Err(o.err("", "duplicate edge (same from, to, kind)"));
            }
            edges.push(edge);
        }
        let window = top.map("window")?.clone();
        Ok(EffectiveExport { algorithm, declared_graph, observed_graph, nodes, edges, window })
    }
}

/// The stroke width of an edge observed `count` times: 1 for 0 and 1, then one more for every two
/// doublings (2–7 → 2, 8–31 → 3, …), at most 8.
pub fn thickness(count: u64) -> u32 {
    let bits = 64 - count.leading_zeros();
    (1 + bits / 2).min(8)
}

/// An edge's arrow label: its count, `0` for a declared edge never observed, `undeclared` added for
/// an observed edge that was not declared.
fn label(e: &EffectiveEdge) -> String {
    match e.class {
        DiffClass::ObservedButUndeclared => format!("{} undeclared", e.count),
        _ => e.count.to_string(),
    }
}

/// Everything the export says about an edge, one fact per line.
fn detail(e: &EffectiveEdge) -> Vec<String> {
    let mut facts = format!("{} · {} · count {}", e.kind.name(), e.class.name(), e.count);
    if let Some((sum, max)) = e.timing {
        let _ = write!(facts, " · total {sum} ns · longest {max} ns");
        if let Some(mean) = sum.checked_div(e.count) {
            let _ = write!(facts, " · mean {mean} ns");
        }
    }
    vec![format!("{} → {}", e.from, e.to), facts]
}

/// The export as a neutral [`View`] (for the layout): nodes in id byte order, edges in export order.
fn view(export: &EffectiveExport) -> View {
    let index: BTreeMap<&str, usize> =
        export.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let nodes = export
        .nodes
        .iter()
        .map(|n| ViewNode {
            id: n.id.clone(),
            kind: Some(n.kind),
            one_side: false,
            detail: vec![n.id.clone(), format!("kind {} · level {}", n.kind.name(), n.level.name())],
        })
        .collect();
    let edges = export
        .edges
        .iter()
        .map(|e| ViewEdge {
            from: index[e.from.as_str()],
            to: index[e.to.as_str()],
            kind: e.kind,
            class: Some(e.class),
            label: Some(label(e)),
            detail: detail(e),
        })
        .collect();
    View { name: ViewName::Observed, nodes, edges, sides_known: false }
}

/// The DOT shape of a node kind, as the other views draw it.
fn shape(kind: Option<NodeKind>) -> &'static str {
    match kind {
        Some(NodeKind::Server) => "shape=box, peripheries=2",
        Some(NodeKind::Tool) => "shape=box, style=\"rounded\"",
        Some(NodeKind::Resource) => "shape=cylinder",
        Some(NodeKind::Prompt) => "shape=cds",
        _ => "shape=box",
    }
}

/// The DOT arrowhead of an edge kind (the line style is the class's): invoke `normal`, read `empty`,
/// message `vee`, supervise `odot`.
fn arrowhead(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Invoke => "normal",
        EdgeKind::Read => "empty",
        EdgeKind::Message => "vee",
        EdgeKind::Supervise => "odot",
    }
}

/// What a class's line means, for the legends.
fn legend_text(class: DiffClass) -> &'static str {
    match class {
        DiffClass::DeclaredNeverObserved => "declared, never observed: dashed, 0",
        DiffClass::ObservedButUndeclared => "observed but undeclared: flagged",
        _ => "declared and observed: thicker with the count",
    }
}

/// The three classes the effective export uses, in legend order.
const CLASSES: [DiffClass; 3] =
    [DiffClass::DeclaredAndObserved, DiffClass::DeclaredNeverObserved, DiffClass::ObservedButUndeclared];

/// The weighted view as one Graphviz `digraph effective`.
pub fn dot(export: &EffectiveExport) -> String {
    let v = view(export);
    let tooltip = |lines: &[String]| lines.iter().map(|l| escape::dot(l)).collect::<Vec<_>>().join("\\n");
    let mut out = String::from("digraph effective {\n    rankdir=LR;\n");
    out.push_str(
        "    node [fontname=\"Helvetica\", fontsize=10];\n    edge [fontname=\"Helvetica\", fontsize=9];\n",
    );
    for (i, n) in v.nodes.iter().enumerate() {
        let _ = writeln!(
            out,
            "    n{i} [label=\"{}\", {}, tooltip=\"{}\"];",
            escape::dot(&n.id),
            shape(n.kind),
            tooltip(&n.detail)
        );
    }
    for (e, source) in v.edges.iter().zip(&export.edges) {
        let class = e.class.unwrap_or(DiffClass::DeclaredAndObserved);
        let dashed = if class == DiffClass::DeclaredNeverObserved { ", style=dashed" } else { "" };
        let _ = writeln!(
            out,
            "    n{} -> n{} [color=\"{}\", penwidth={}{dashed}, arrowhead={}, label=\"{}\", tooltip=\"{}\"];",
            e.from,
            e.to,
            class.colour(),
            thickness(source.count),
            arrowhead(e.kind),
            escape::dot(e.label.as_deref().unwrap_or_default()),
            tooltip(&e.detail)
        );
    }
    out.push_str("    subgraph cluster_legend {\n        label=\"Legend\";\n");
    for (i, class) in CLASSES.into_iter().enumerate() {
        let _ = writeln!(
            out,
            "        legend{i} [label=\"{}\", shape=box, style=filled, fillcolor=\"{}\", fontcolor=\"#ffffff\"];",
            legend_text(class),
            class.colour()
        );
    }
    out.push_str("    }\n}\n");
    out
}

const NODE_H: i64 = 34;
const ROW: i64 = 56;
const GAP: i64 = 140;
const MARGIN: i64 = 24;
const CHAR_W: i64 = 7;
const MAX_CHARS: usize = 36;

/// An id cut to what a node box shows.
fn display(id: &str) -> String {
    if id.chars().count() <= MAX_CHARS {
        id.to_owned()
    } else {
        id.chars().take(MAX_CHARS - 1).chain(['…']).collect()
    }
}

/// Columns by layer, rows by id order within a layer; the drawing's width and lowest node bottom.
fn place(v: &View) -> (Vec<Placed>, i64, i64) {
    let layer = svg::layers(v);
    let columns = layer.iter().copied().max().map_or(0, |m| m + 1);
    let widths: Vec<i64> =
        v.nodes.iter().map(|n| (display(&n.id).chars().count() as i64 * CHAR_W + 28).max(64)).collect();
    let mut col_w = vec![0; columns];
    for (i, &l) in layer.iter().enumerate() {
        col_w[l] = col_w[l].max(widths[i]);
    }
    let mut col_x = vec![MARGIN; columns];
    for c in 1..columns {
        col_x[c] = col_x[c - 1] + col_w[c - 1] + GAP;
    }
    let mut rows = vec![0i64; columns];
    let mut placed = Vec::with_capacity(v.nodes.len());
    for (i, &l) in layer.iter().enumerate() {
        placed.push(Placed { x: col_x[l], y: MARGIN + rows[l] * ROW, w: widths[i], column: l });
        rows[l] += 1;
    }
    let width = col_x.last().map_or(2 * MARGIN, |x| x + col_w[columns - 1] + MARGIN + 60);
    let bottom = rows.iter().map(|r| MARGIN + r * ROW - (ROW - NODE_H)).max().unwrap_or(MARGIN);
    (placed, width, bottom)
}

/// A node's outline, as the other views draw its kind (server doubled, tool rounded).
fn outline(out: &mut String, kind: Option<NodeKind>, p: &Placed) {
    let (x, y, w, h) = (p.x, p.y, p.w, NODE_H);
    let style = "fill=\"#ffffff\" stroke=\"#333333\" stroke-width=\"1.5\"";
    let rx = if kind == Some(NodeKind::Tool) { h / 2 } else { 0 };
    let _ = write!(out, "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"{rx}\" {style}/>");
    if kind == Some(NodeKind::Server) {
        let _ = write!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {style}/>",
            x + 4,
            y + 4,
            w - 8,
            h - 8
        );
    }
}

/// The weighted view as one standalone SVG document (inline attributes, no stylesheet or script).
pub fn svg(export: &EffectiveExport) -> String {
    let v = view(export);
    let (placed, width, mut bottom) = place(&v);
    let mut body = String::new();
    let mut pairs: BTreeMap<(usize, usize), i64> = BTreeMap::new();
    for (e, source) in v.edges.iter().zip(&export.edges) {
        let seen = pairs.entry((e.from.min(e.to), e.from.max(e.to))).or_insert(0);
        let k = *seen;
        *seen += 1;
        let bend = if k % 2 == 0 { k / 2 * 16 } else { -(k / 2 + 1) * 16 };
        let EdgePath { d, label: (lx, ly), lowest } = svg::edge_path(&placed, e.from, e.to, bend);
        bottom = bottom.max(lowest);
        let class = e.class.unwrap_or(DiffClass::DeclaredAndObserved);
        let dash = if class == DiffClass::DeclaredNeverObserved { " stroke-dasharray=\"6 4\"" } else { "" };
        let _ = writeln!(
            body,
            "<g><title>{}</title><path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{dash} marker-end=\"url(#eff-{})\"/><text x=\"{lx}\" y=\"{ly}\" font-size=\"10\" fill=\"{}\">{}</text></g>",
            escape::html(&e.detail.join("\n")),
            class.colour(),
            thickness(source.count),
            class.index(),
            class.colour(),
            escape::html(e.label.as_deref().unwrap_or_default())
        );
    }
    for (n, p) in v.nodes.iter().zip(&placed) {
        let _ = write!(body, "<g><title>{}</title>", escape::html(&n.detail.join("\n")));
        outline(&mut body, n.kind, p);
        let _ = writeln!(
            body,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text></g>",
            p.x + p.w / 2,
            p.y + NODE_H / 2 + 4,
            escape::html(&display(&n.id))
        );
    }
    let legend_y = bottom + MARGIN;
    for (i, class) in CLASSES.into_iter().enumerate() {
        let y = legend_y + 18 * i as i64;
        let dash = if class == DiffClass::DeclaredNeverObserved { " stroke-dasharray=\"6 4\"" } else { "" };
        let _ = writeln!(
            body,
            "<g><line x1=\"{MARGIN}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{}\" stroke-width=\"3\"{dash}/><text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text></g>",
            MARGIN + 40,
            class.colour(),
            MARGIN + 48,
            y + 4,
            legend_text(class)
        );
    }
    let height = legend_y + 18 * CLASSES.len() as i64 + MARGIN;
    let width = width.max(360);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"Helvetica, Arial, sans-serif\" role=\"img\" aria-label=\"Effective connectivity\">\n<defs>"
    );
    for class in CLASSES {
        let _ = write!(
            out,
            "<marker id=\"eff-{}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"9\" markerHeight=\"9\" markerUnits=\"userSpaceOnUse\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"{}\"/></marker>",
            class.index(),
            class.colour()
        );
    }
    out.push_str("</defs>\n");
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

/// The formats of the weighted view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EffectiveFormat {
    /// One standalone SVG document.
    Svg,
    /// One Graphviz `digraph effective`.
    Dot,
}

/// A parsed `render --effective` invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveOptions {
    /// `--effective`.
    pub effective: PathBuf,
    /// `--format` (`svg` or `dot`).
    pub format: EffectiveFormat,
    /// `--out`; stdout when absent.
    pub out: Option<PathBuf>,
}

/// The options of an effective invocation: `--effective` is required and drawn alone, in `svg` or
/// `dot`; `others` says whether a graph, sidecar or diff input was given too.
pub fn options(
    effective: Option<PathBuf>,
    others: bool,
    format: Option<&str>,
    out: Option<PathBuf>,
) -> Result<EffectiveOptions, Error> {
    let usage = |m: &str| Error::Usage(m.to_owned());
    let Some(effective) = effective else { return Err(usage("--view effective needs --effective input")) };
    if others {
        return Err(usage("--effective is drawn alone: no --declared, --observed, --sidecar or --diff"));
    }
    let format = match format {
        Some("svg") => EffectiveFormat::Svg,
        Some("dot") => EffectiveFormat::Dot,
        Some(other) => {
            return Err(Error::Usage(format!("--effective draws svg or dot, not {}", excerpt(other))));
        }
        None => return Err(usage("--format is required")),
    };
    Ok(EffectiveOptions { effective, format, out })
}

/// Reads the effective export a path names.
pub fn load(path: &Path) -> Result<EffectiveExport, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::Read {
        role: Role::Effective,
        path: shown(path),
        reason: io_reason(&e),
    })?;
    EffectiveExport::from_json(&bytes)
}

/// Reads and draws an effective invocation's export.
pub fn run(options: &EffectiveOptions) -> Result<String, Error> {
    let export = load(&options.effective)?;
    Ok(render(&export, options.format))
}

/// The weighted view in a format.
pub fn render(export: &EffectiveExport, format: EffectiveFormat) -> String {
    match format {
        EffectiveFormat::Svg => svg(export),
        EffectiveFormat::Dot => dot(export),
    }
}
