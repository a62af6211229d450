//! An inline SVG drawing of a view, laid out here ([`crate::layout`], connectome [CJ-6]): layers left to
//! right, the order within a layer by barycenter sweeps, a large layer dealt into several columns.
//! Nodes show their human names ([`crate::label`]), their full ids on hover. All coordinates are
//! integers, so the bytes are the same on every run and platform. Edges sit in one `<g class="edges">`
//! and nodes in one `<g class="nodes">`, each child in view order, for the page's script.
//!
//! [CJ-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt::Write as _;

use crate::escape::html;
use crate::label;
use crate::layout::{self, Layers};
use crate::view::View;
use crate::vocab::{DiffClass, EdgeKind, NodeKind};

const NODE_H: i64 = 34;
const ROW: i64 = 56;
const GAP: i64 = 120;
const SUB_GAP: i64 = 56;
const MARGIN: i64 = 24;
const CHAR_W: i64 = 7;
const NEUTRAL: &str = "#555555";
/// From this many edges on, a drawing is marked `many` (its edges drawn fainter until highlighted).
pub const MANY_EDGES: usize = 1500;

/// The layout of a view ([`layout::layered`]), the server nodes kept in the first layer.
pub fn layout(view: &View) -> Layers {
    let pairs: Vec<(usize, usize)> = view.edges.iter().map(|e| (e.from, e.to)).collect();
    let roots: Vec<bool> = view.nodes.iter().map(|n| n.kind == Some(NodeKind::Server)).collect();
    layout::layered(view.nodes.len(), &pairs, &roots)
}

/// The layer of every node (see [`layout()`]).
pub fn layers(view: &View) -> Vec<usize> {
    layout(view).layer
}

/// The name a drawing prints for a node: its human name, cut to [`label::MAX_CHARS`].
pub fn shown_name(id: &str, kind: Option<NodeKind>) -> String {
    label::short(&label::name(id, kind))
}

/// A node box: its left, top, width and column (the effective view's layer).
pub(crate) struct Placed {
    pub(crate) x: i64,
    pub(crate) y: i64,
    pub(crate) w: i64,
    pub(crate) column: usize,
}

struct Placement {
    placed: Vec<Placed>,
    /// The lowest node bottom of the drawing.
    bottom: i64,
    width: i64,
}

fn place(view: &View, names: &[String]) -> Placement {
    let l = layout(view);
    let columns = l.column_layer.len();
    let widths: Vec<i64> = names.iter().map(|s| (s.chars().count() as i64 * CHAR_W + 28).max(64)).collect();
    let mut col_w = vec![0; columns];
    for (i, &c) in l.column.iter().enumerate() {
        col_w[c] = col_w[c].max(widths[i]);
    }
    let mut col_x = vec![MARGIN; columns];
    for c in 1..columns {
        let gap = if l.column_layer[c] == l.column_layer[c - 1] { SUB_GAP } else { GAP };
        col_x[c] = col_x[c - 1] + col_w[c - 1] + gap;
    }
    let tallest = l.rows.iter().copied().max().unwrap_or(0) as i64;
    let offset: Vec<i64> = l.rows.iter().map(|&r| (tallest - r as i64) * ROW / 2).collect();
    let placed = (0..view.nodes.len())
        .map(|i| {
            let c = l.column[i];
            Placed { x: col_x[c], y: MARGIN + offset[c] + l.row[i] as i64 * ROW, w: widths[i], column: c }
        })
        .collect();
    let width = col_x.last().map_or(2 * MARGIN, |x| x + col_w[columns - 1] + MARGIN + 60);
    let bottom = MARGIN + tallest * ROW - (ROW - NODE_H);
    Placement { placed, bottom, width }
}

fn colour_index(class: Option<DiffClass>) -> usize {
    class.map_or(0, |c| c.index() + 1)
}

fn colour(i: usize) -> &'static str {
    if i == 0 { NEUTRAL } else { DiffClass::ALL[i - 1].colour() }
}

fn node_shape(out: &mut String, kind: Option<NodeKind>, p: &Placed, class: &str) {
    let (x, y, w, h) = (p.x, p.y, p.w, NODE_H);
    let _ = match kind {
        Some(NodeKind::Server) => write!(
            out,
            "<rect class=\"{class}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\"/><rect class=\"{class} inner\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            x + 4,
            y + 4,
            w - 8,
            h - 8
        ),
        Some(NodeKind::Tool) => write!(
            out,
            "<rect class=\"{class}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"{}\"/>",
            h / 2
        ),
        Some(NodeKind::Resource) => write!(
            out,
            "<path class=\"{class}\" d=\"M{x},{} a{},5 0 0,0 {w},0 a{},5 0 0,0 -{w},0 v{} a{},5 0 0,0 {w},0 v-{}\"/>",
            y + 5,
            w / 2,
            w / 2,
            h - 10,
            w / 2,
            h - 10
        ),
        Some(NodeKind::Prompt) => write!(
            out,
            "<polygon class=\"{class}\" points=\"{x},{y} {},{y} {},{} {x},{} {},{}\"/>",
            x + w,
            x + w,
            y + h,
            y + h,
            x + 12,
            y + h / 2
        ),
        _ => write!(out, "<rect class=\"{class}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\"/>"),
    };
}

/// A drawn view: the SVG and its natural size in pixels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drawing {
    /// The `<svg>` element.
    pub svg: String,
    /// Its width.
    pub width: i64,
    /// Its height.
    pub height: i64,
}

/// The SVG of a view. `prefix` keeps marker ids unique when one page holds several drawings.
pub fn render(view: &View, prefix: &str) -> String {
    draw(view, prefix).svg
}

/// The SVG of a view with its size; `prefix` as for [`render`].
pub fn draw(view: &View, prefix: &str) -> Drawing {
    let names: Vec<String> = view.nodes.iter().map(|n| shown_name(&n.id, n.kind)).collect();
    let layout = place(view, &names);
    let placed = &layout.placed;
    let mut body = String::from("<g class=\"edges\">\n");
    let mut bottom = layout.bottom;
    // How many edges between the same two nodes were drawn before this one (they bend apart).
    let mut pairs: std::collections::HashMap<(usize, usize), i64> = std::collections::HashMap::new();
    for e in &view.edges {
        let key = (e.from.min(e.to), e.from.max(e.to));
        let seen = pairs.entry(key).or_insert(0);
        let k = *seen;
        *seen += 1;
        let bend = if k % 2 == 0 { k / 2 * 16 } else { -(k / 2 + 1) * 16 };
        let path = edge_path(placed, e.from, e.to, bend);
        bottom = bottom.max(path.lowest);
        let ci = colour_index(e.class);
        let head = if e.kind == EdgeKind::Supervise { 'o' } else { 'a' };
        let _ = write!(
            body,
            "<g class=\"e\"><title>{}</title><path class=\"edge e-{}\" d=\"{}\" stroke=\"{}\" marker-end=\"url(#{prefix}-{head}{ci})\"/>",
            html(&e.detail.join("\n")),
            e.kind.name(),
            path.d,
            colour(ci)
        );
        if let Some(l) = &e.label {
            let _ = write!(
                body,
                "<text class=\"elabel\" x=\"{}\" y=\"{}\">{}</text>",
                path.label.0,
                path.label.1,
                html(l)
            );
        }
        body.push_str("</g>\n");
    }
    body.push_str("</g>\n");
    let (width, height) = (layout.width, bottom + MARGIN);
    let many = if view.edges.len() >= MANY_EDGES { " many" } else { "" };
    let mut out = format!(
        "<svg class=\"graph{many}\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{}\">\n<defs>",
        html(view.name.title())
    );
    for i in 0..=DiffClass::ALL.len() {
        let c = colour(i);
        let _ = write!(
            out,
            "<marker id=\"{prefix}-a{i}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"9\" markerHeight=\"9\" markerUnits=\"userSpaceOnUse\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"{c}\"/></marker>\
             <marker id=\"{prefix}-o{i}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"10\" markerHeight=\"10\" markerUnits=\"userSpaceOnUse\" orient=\"auto\"><circle cx=\"5\" cy=\"5\" r=\"4\" fill=\"#ffffff\" stroke=\"{c}\" stroke-width=\"1.5\"/></marker>"
        );
    }
    out.push_str("</defs>\n");
    out.push_str(&body);
    out.push_str("<g class=\"nodes\">\n");
    for ((n, p), name) in view.nodes.iter().zip(placed).zip(&names) {
        let kind = n.kind.map_or("other", |k| k.name());
        let class = if n.one_side { format!("node k-{kind} oneside") } else { format!("node k-{kind}") };
        let _ = write!(out, "<g class=\"n\"><title>{}</title>", html(&n.detail.join("\n")));
        node_shape(&mut out, n.kind, p, &class);
        let _ = writeln!(
            out,
            "<text class=\"nlabel\" x=\"{}\" y=\"{}\">{}</text></g>",
            p.x + p.w / 2,
            p.y + NODE_H / 2 + 4,
            html(name)
        );
    }
    out.push_str("</g>\n</svg>\n");
    Drawing { svg: out, width, height }
}

/// An edge's cubic curve, as both the SVG view and the effective view draw it.
pub(crate) struct EdgePath {
    /// The `d` attribute of the `<path>`.
    pub(crate) d: String,
    /// Where the edge's label sits.
    pub(crate) label: (i64, i64),
    /// The lowest y the curve can reach (its control points bound it).
    pub(crate) lowest: i64,
}

/// The cubic path of an edge, the one both the SVG view and the effective view draw: to a later column
/// right side to left side, within a column right side to right side, backwards left side to right side
/// below the forward line, dipping, a self-loop out to the right; the label sits at the curve's midpoint.
pub(crate) fn edge_path(placed: &[Placed], from: usize, to: usize, bend: i64) -> EdgePath {
    let (a, b) = (&placed[from], &placed[to]);
    let mid = |p: &Placed| p.y + NODE_H / 2;
    if from == to {
        let (x, top, bottom) = (a.x + a.w - 14, a.y, a.y + NODE_H);
        let d = format!("M{x},{top} C{},{} {},{} {x},{bottom}", x + 56, top - 30, x + 56, bottom + 30);
        return EdgePath { d, label: (x + 44, mid(a) + 4), lowest: bottom + 30 };
    }
    let (p0, p3, c1, c2) = if b.column > a.column {
        let (x0, y0, x3, y3) = (a.x + a.w, mid(a), b.x, mid(b));
        let dx = ((x3 - x0) / 2).max(40);
        ((x0, y0), (x3, y3), (x0 + dx, y0 + bend), (x3 - dx, y3 + bend))
    } else if b.column == a.column {
        let (x0, y0, x3, y3) = (a.x + a.w, mid(a), b.x + b.w, mid(b));
        let reach = x0.max(x3) + 48 + bend.abs();
        ((x0, y0), (x3, y3), (reach, y0), (reach, y3))
    } else {
        let (x0, y0, x3, y3) = (a.x, mid(a) + 8, b.x + b.w, mid(b) + 8);
        let dx = ((x0 - x3) / 3).max(30);
        let dip = 28 + bend.abs();
        ((x0, y0), (x3, y3), (x0 - dx, y0 + dip), (x3 + dx, y3 + dip))
    };
    let d = format!("M{},{} C{},{} {},{} {},{}", p0.0, p0.1, c1.0, c1.1, c2.0, c2.1, p3.0, p3.1);
    let lx = (p0.0 + 3 * c1.0 + 3 * c2.0 + p3.0) / 8;
    let ly = (p0.1 + 3 * c1.1 + 3 * c2.1 + p3.1) / 8 - 4;
    let lowest = [p0.1, p3.1, c1.1, c2.1].into_iter().max().unwrap_or(0);
    EdgePath { d, label: (lx, ly), lowest }
}
