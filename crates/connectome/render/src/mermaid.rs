//! Mermaid `graph LR` diagrams ([CJ-2]): aliases `n0…` in id order, shapes by node kind, arrows by
//! edge kind, weights as arrow labels; the diff with a `linkStyle` colour per class, dashed
//! one-side-only nodes and a legend.
//!
//! [CJ-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt::Write as _;

use crate::escape;
use crate::view::{View, ViewName};
use crate::vocab::{DiffClass, EdgeKind, NodeKind};

/// The node line for alias `n<i>`: server `[[ ]]`, tool `([ ])`, resource `[( )]`, prompt `> ]`,
/// anything else `[ ]`.
pub fn node_line(i: usize, id: &str, kind: Option<NodeKind>) -> String {
    let text = escape::mermaid(id);
    let (open, close) = match kind {
        Some(NodeKind::Server) => ("[[", "]]"),
        Some(NodeKind::Tool) => ("([", "])"),
        Some(NodeKind::Resource) => ("[(", ")]"),
        Some(NodeKind::Prompt) => (">", "]"),
        _ => ("[", "]"),
    };
    format!("    n{i}{open}\"{text}\"{close}")
}

/// The arrow of an edge kind: invoke `-->`, read `-.->`, message `==>`, supervise `--o`.
pub fn arrow(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Invoke => "-->",
        EdgeKind::Read => "-.->",
        EdgeKind::Message => "==>",
        EdgeKind::Supervise => "--o",
    }
}

/// One bare Mermaid diagram for a view.
pub fn render(view: &View) -> String {
    let mut out = String::from("graph LR\n");
    for (i, n) in view.nodes.iter().enumerate() {
        out.push_str(&node_line(i, &n.id, n.kind));
        out.push('\n');
    }
    for e in &view.edges {
        let label = e.label.as_ref().map(|l| format!("|\"{}\"|", escape::mermaid(l))).unwrap_or_default();
        let _ = writeln!(out, "    n{} {}{label} n{}", e.from, arrow(e.kind), e.to);
    }
    if view.name == ViewName::Diff {
        diff_styles(view, &mut out);
    }
    out
}

fn diff_styles(view: &View, out: &mut String) {
    for &class in DiffClass::ALL {
        let links: Vec<String> = view
            .edges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.class == Some(class))
            .map(|(i, _)| i.to_string())
            .collect();
        if !links.is_empty() {
            let _ =
                writeln!(out, "    linkStyle {} stroke:{},stroke-width:2px", links.join(","), class.colour());
        }
    }
    out.push_str("    classDef oneside stroke-dasharray:5 5\n");
    let dashed: Vec<String> =
        view.nodes.iter().enumerate().filter(|(_, n)| n.one_side).map(|(i, _)| format!("n{i}")).collect();
    if !dashed.is_empty() {
        let _ = writeln!(out, "    class {} oneside", dashed.join(","));
    }
    out.push_str("    subgraph legend[\"Legend\"]\n");
    for (i, &class) in DiffClass::ALL.iter().enumerate() {
        let _ = writeln!(out, "        legend{i}[\"{}\"]", escape::mermaid(class.legend()));
    }
    let note = if view.sides_known {
        "dashed node: in one export only"
    } else {
        "no observed export given: one-side-only nodes cannot be told"
    };
    let _ = writeln!(out, "        legend4[\"{}\"]", escape::mermaid(note));
    out.push_str("    end\n");
    for (i, &class) in DiffClass::ALL.iter().enumerate() {
        let _ = writeln!(out, "    style legend{i} fill:{},color:#ffffff", class.colour());
    }
    if view.sides_known {
        out.push_str("    class legend4 oneside\n");
    }
}

/// A Markdown document with one fenced `mermaid` block per view, each under its heading.
pub fn document(views: &[View]) -> String {
    let mut out = String::from("# Connectome\n");
    for v in views {
        let _ = write!(out, "\n## {}\n\n```mermaid\n{}```\n", v.name.title(), render(v));
    }
    out
}
