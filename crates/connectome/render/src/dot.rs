//! Graphviz DOT: one `digraph` per view with the information of the Mermaid diagrams (shapes by
//! node kind, styles by edge kind, weights as labels, a colour per diff class, dashed one-side-only
//! nodes, a legend cluster), plus tooltips with every field the export carries.

use std::fmt::Write as _;

use crate::escape;
use crate::view::{View, ViewName};
use crate::vocab::{DiffClass, EdgeKind, NodeKind};

/// The shape attributes of a node kind (server doubled box, tool rounded, resource cylinder,
/// prompt `cds`, anything else a box), and whether the style list already holds `rounded`.
fn shape(kind: Option<NodeKind>) -> (&'static str, bool) {
    match kind {
        Some(NodeKind::Server) => ("shape=box, peripheries=2", false),
        Some(NodeKind::Tool) => ("shape=box", true),
        Some(NodeKind::Resource) => ("shape=cylinder", false),
        Some(NodeKind::Prompt) => ("shape=cds", false),
        _ => ("shape=box", false),
    }
}

/// The style attributes of an edge kind: invoke solid, read dashed, message bold, supervise with
/// an `odot` head.
pub fn edge_style(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Invoke => "style=solid",
        EdgeKind::Read => "style=dashed",
        EdgeKind::Message => "style=bold",
        EdgeKind::Supervise => "style=solid, arrowhead=odot",
    }
}

/// A tooltip: each line escaped, lines joined by the DOT `\n` escape.
fn tooltip(lines: &[String]) -> String {
    lines.iter().map(|l| escape::dot(l)).collect::<Vec<_>>().join("\\n")
}

/// One `digraph <view>` for a view.
pub fn render(view: &View) -> String {
    let mut out = format!("digraph {} {{\n", view.name.name());
    out.push_str("    rankdir=LR;\n");
    out.push_str("    node [fontname=\"Helvetica\", fontsize=10];\n");
    out.push_str("    edge [fontname=\"Helvetica\", fontsize=9];\n");
    for (i, n) in view.nodes.iter().enumerate() {
        let (shape, rounded) = shape(n.kind);
        let mut styles = Vec::new();
        if rounded {
            styles.push("rounded");
        }
        if n.one_side {
            styles.push("dashed");
        }
        let style =
            if styles.is_empty() { String::new() } else { format!(", style=\"{}\"", styles.join(",")) };
        let _ = writeln!(
            out,
            "    n{i} [label=\"{}\", {shape}{style}, tooltip=\"{}\"];",
            escape::dot(&n.id),
            tooltip(&n.detail)
        );
    }
    for e in &view.edges {
        let mut attrs = vec![edge_style(e.kind).to_owned()];
        if let Some(class) = e.class {
            attrs.push(format!("color=\"{}\"", class.colour()));
        }
        if let Some(l) = &e.label {
            attrs.push(format!("label=\"{}\"", escape::dot(l)));
        }
        attrs.push(format!("tooltip=\"{}\"", tooltip(&e.detail)));
        let _ = writeln!(out, "    n{} -> n{} [{}];", e.from, e.to, attrs.join(", "));
    }
    if view.name == ViewName::Diff {
        legend(view, &mut out);
    }
    out.push_str("}\n");
    out
}

fn legend(view: &View, out: &mut String) {
    out.push_str("    subgraph cluster_legend {\n        label=\"Legend\";\n");
    for (i, &class) in DiffClass::ALL.iter().enumerate() {
        let _ = writeln!(
            out,
            "        legend{i} [label=\"{}\", shape=box, style=filled, fillcolor=\"{}\", fontcolor=\"#ffffff\"];",
            escape::dot(class.legend()),
            class.colour()
        );
    }
    let (note, style) = if view.sides_known {
        ("dashed node: in one export only", "dashed")
    } else {
        ("no observed export given: one-side-only nodes cannot be told", "solid")
    };
    let _ = writeln!(out, "        legend4 [label=\"{note}\", shape=box, style={style}];");
    out.push_str("    }\n");
}

/// Every view's `digraph`, one after another (Graphviz reads several graphs from one file).
pub fn document(views: &[View]) -> String {
    views.iter().map(render).collect::<Vec<_>>().join("\n")
}
