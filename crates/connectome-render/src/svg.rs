//! An inline SVG drawing of a view, laid out here (no script, no external reference): layers by
//! breadth-first distance from the server nodes, left to right; within a layer, id order. All
//! coordinates are integers, so the bytes are the same on every run and platform.

use std::collections::VecDeque;
use std::fmt::Write as _;

use crate::escape::html;
use crate::view::View;
use crate::vocab::{DiffClass, EdgeKind, NodeKind};

const NODE_H: i64 = 34;
const ROW: i64 = 56;
const GAP: i64 = 120;
const MARGIN: i64 = 24;
const CHAR_W: i64 = 7;
const MAX_CHARS: usize = 36;
const NEUTRAL: &str = "#555555";

/// The layer of every node: breadth-first distance from the server nodes along edges; each part
/// not reached restarts at layer 0 from its smallest id with no incoming edge from the part (else
/// its smallest id). Nodes with no edge in the view form the last layer.
pub fn layers(view: &View) -> Vec<usize> {
    let n = view.nodes.len();
    let mut out_adj = vec![Vec::new(); n];
    for e in view.edges.iter().filter(|e| e.from != e.to) {
        out_adj[e.from].push(e.to);
    }
    let mut linked = vec![false; n];
    for e in &view.edges {
        linked[e.from] = true;
        linked[e.to] = true;
    }
    let mut layer = vec![usize::MAX; n];
    let servers: Vec<usize> = (0..n).filter(|&i| view.nodes[i].kind == Some(NodeKind::Server)).collect();
    bfs_from(&servers, &out_adj, &mut layer);
    // What the servers do not reach starts again at layer 0: first from the nodes no unreached node
    // points at, then (cycles) from the first unreached node left. Each search visits only unreached
    // nodes, so the whole layout stays linear in the graph's size.
    let mut pointed = vec![false; n];
    for e in view.edges.iter().filter(|e| e.from != e.to && layer[e.from] == usize::MAX) {
        pointed[e.to] = true;
    }
    for i in 0..n {
        if linked[i] && layer[i] == usize::MAX && !pointed[i] {
            bfs_from(&[i], &out_adj, &mut layer);
        }
    }
    for i in 0..n {
        if linked[i] && layer[i] == usize::MAX {
            bfs_from(&[i], &out_adj, &mut layer);
        }
    }
    let last = (0..n).filter(|&i| linked[i]).map(|i| layer[i] + 1).max().unwrap_or(0);
    for i in (0..n).filter(|&i| !linked[i]) {
        layer[i] = last;
    }
    layer
}

/// A breadth-first search from `roots` (at layer 0) giving every node it reaches for the first time the
/// layer after its parent's.
fn bfs_from(roots: &[usize], out_adj: &[Vec<usize>], layer: &mut [usize]) {
    let mut queue = VecDeque::new();
    for &r in roots {
        if layer[r] == usize::MAX {
            layer[r] = 0;
            queue.push_back(r);
        }
    }
    while let Some(u) = queue.pop_front() {
        for &v in &out_adj[u] {
            if layer[v] == usize::MAX {
                layer[v] = layer[u] + 1;
                queue.push_back(v);
            }
        }
    }
}

fn display(id: &str) -> String {
    if id.chars().count() <= MAX_CHARS {
        id.to_owned()
    } else {
        id.chars().take(MAX_CHARS - 1).chain(['…']).collect()
    }
}

struct Placed {
    x: i64,
    y: i64,
    w: i64,
    layer: usize,
}

struct Layout {
    placed: Vec<Placed>,
    /// The lowest node bottom of each column.
    col_bottom: Vec<i64>,
    width: i64,
}

fn place(view: &View) -> Layout {
    let layer = layers(view);
    let columns = layer.iter().copied().max().map_or(0, |m| m + 1);
    let widths: Vec<i64> =
        view.nodes.iter().map(|n| (display(&n.id).chars().count() as i64 * CHAR_W + 28).max(64)).collect();
    let mut col_w = vec![0; columns];
    let mut rows = vec![0i64; columns];
    for (i, &l) in layer.iter().enumerate() {
        col_w[l] = col_w[l].max(widths[i]);
    }
    let mut col_x = vec![MARGIN; columns];
    for c in 1..columns {
        col_x[c] = col_x[c - 1] + col_w[c - 1] + GAP;
    }
    let mut placed = Vec::with_capacity(view.nodes.len());
    for (i, &l) in layer.iter().enumerate() {
        placed.push(Placed { x: col_x[l], y: MARGIN + rows[l] * ROW, w: widths[i], layer: l });
        rows[l] += 1;
    }
    let width = col_x.last().map_or(2 * MARGIN, |x| x + col_w[columns - 1] + MARGIN + 60);
    let col_bottom = rows.iter().map(|r| MARGIN + r * ROW - (ROW - NODE_H)).collect();
    Layout { placed, col_bottom, width }
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

/// The SVG of a view. `prefix` keeps marker ids unique when one page holds several drawings.
pub fn render(view: &View, prefix: &str) -> String {
    let layout = place(view);
    let placed = &layout.placed;
    let mut body = String::new();
    let mut bottom = layout.col_bottom.iter().copied().max().unwrap_or(0);
    // How many edges between the same two nodes were drawn before this one (they bend apart).
    let mut pairs: std::collections::HashMap<(usize, usize), i64> = std::collections::HashMap::new();
    for e in &view.edges {
        let key = (e.from.min(e.to), e.from.max(e.to));
        let seen = pairs.entry(key).or_insert(0);
        let k = *seen;
        *seen += 1;
        let bend = if k % 2 == 0 { k / 2 * 16 } else { -(k / 2 + 1) * 16 };
        let path = edge_path(&layout, e.from, e.to, bend);
        bottom = bottom.max(path.lowest);
        let ci = colour_index(e.class);
        let head = if e.kind == EdgeKind::Supervise { 'o' } else { 'a' };
        let _ = write!(
            body,
            "<g><title>{}</title><path class=\"edge e-{}\" d=\"{}\" stroke=\"{}\" marker-end=\"url(#{prefix}-{head}{ci})\"/>",
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
    let (width, height) = (layout.width, bottom + MARGIN);
    let mut out = format!(
        "<svg class=\"graph\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{}\">\n<defs>",
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
    for (n, p) in view.nodes.iter().zip(placed) {
        let kind = n.kind.map_or("other", |k| k.name());
        let class = if n.one_side { format!("node k-{kind} oneside") } else { format!("node k-{kind}") };
        let _ = write!(out, "<g><title>{}</title>", html(&n.detail.join("\n")));
        node_shape(&mut out, n.kind, p, &class);
        let _ = writeln!(
            out,
            "<text class=\"nlabel\" x=\"{}\" y=\"{}\">{}</text></g>",
            p.x + p.w / 2,
            p.y + NODE_H / 2 + 4,
            html(&display(&n.id))
        );
    }
    out.push_str("</svg>\n");
    out
}

struct EdgePath {
    d: String,
    label: (i64, i64),
    /// The lowest y the curve can reach (its control points bound it).
    lowest: i64,
}

/// The cubic path of an edge: forward right side to left side, within a column right side to right
/// side, backwards left side to right side below the forward line, dipping; the label sits at the
/// curve's midpoint.
fn edge_path(layout: &Layout, from: usize, to: usize, bend: i64) -> EdgePath {
    let (a, b) = (&layout.placed[from], &layout.placed[to]);
    let mid = |p: &Placed| p.y + NODE_H / 2;
    if from == to {
        let (x, top, bottom) = (a.x + a.w - 14, a.y, a.y + NODE_H);
        let d = format!("M{x},{top} C{},{} {},{} {x},{bottom}", x + 56, top - 30, x + 56, bottom + 30);
        return EdgePath { d, label: (x + 44, mid(a) + 4), lowest: bottom + 30 };
    }
    let (p0, p3, c1, c2) = if b.layer > a.layer {
        let (x0, y0, x3, y3) = (a.x + a.w, mid(a), b.x, mid(b));
        let dx = ((x3 - x0) / 2).max(40);
        ((x0, y0), (x3, y3), (x0 + dx, y0 + bend), (x3 - dx, y3 + bend))
    } else if b.layer == a.layer {
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
