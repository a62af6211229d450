//! The explorer around each drawing of the page (connectome [CJ-5]): a tool bar (search by name, a
//! checkbox per node kind, zoom buttons, a status line), the drawing in a pan-and-zoom viewport, and
//! the drawing's graph as JSON data for the page's one script ([`SCRIPT`]).
//!
//! The tool bar is written `hidden`; the script shows it, so a page read without scripts shows the
//! drawings alone (at their natural size, scrolling). The data holds, per node, its id, its human name
//! and its kind, and per edge its two node indices: index-aligned with the drawing's `g.nodes` and
//! `g.edges` children. It is embedded with [`script_json`], so no id can close its element.
//!
//! [CJ-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::escape::{html, script_json};
use crate::label;
use crate::svg;
use crate::view::View;
use crate::vocab::NodeKind;

/// The page's one script: the explorer's behaviour. It fetches nothing and writes text only as text.
pub const SCRIPT: &str = include_str!("explore.js");
/// The explorer's styles.
pub const STYLE: &str = include_str!("explore.css");
/// Styles for a page read without scripts: the drawings scroll at their natural size.
pub const NOSCRIPT_STYLE: &str =
    ".viewport{overflow:auto;height:auto!important}.viewport svg.graph{width:auto;height:auto}";
/// The tallest a viewport grows, as CSS: a drawing taller than this is panned and zoomed.
const VIEWPORT_MAX: &str = "78vh";

/// The name of a kind in the filter (`other` for a diff endpoint no export describes).
fn kind_name(kind: Option<NodeKind>) -> &'static str {
    kind.map_or("other", |k| k.name())
}

/// The graph data of a view as the script reads it, escaped for a `<script>` element.
pub fn data(view: &View) -> String {
    let nodes: Vec<Value> =
        view.nodes.iter().map(|n| json!([n.id, label::name(&n.id, n.kind), kind_name(n.kind)])).collect();
    let edges: Vec<Value> = view.edges.iter().map(|e| json!([e.from, e.to])).collect();
    script_json(&json!({"nodes": nodes, "edges": edges}).to_string())
}

/// A drawing with its explorer: tool bar, viewport and data.
pub fn drawing(view: &View) -> String {
    let name = view.name.name();
    let d = svg::draw(view, name);
    let mut out = format!("<div class=\"explore\" data-view=\"{name}\">\n<div class=\"tools\" hidden>\n");
    let _ = write!(
        out,
        "<input type=\"search\" class=\"q\" placeholder=\"Search names\" aria-label=\"Search the node names of the {}\" spellcheck=\"false\">\n<span class=\"kinds\">",
        html(&view.name.title().to_lowercase())
    );
    let kinds = NodeKind::ALL.iter().map(|k| Some(*k)).chain([None]);
    for kind in kinds {
        let count = view.nodes.iter().filter(|n| n.kind == kind).count();
        if count > 0 {
            let k = kind_name(kind);
            let _ = write!(
                out,
                "<label><input type=\"checkbox\" data-kind=\"{k}\" checked> {k} <span class=\"count\">{count}</span></label>"
            );
        }
    }
    out.push_str(
        "</span>\n<span class=\"buttons\"><button type=\"button\" data-act=\"in\" title=\"Zoom in (+)\">+</button>\
<button type=\"button\" data-act=\"out\" title=\"Zoom out (-)\">&minus;</button>\
<button type=\"button\" data-act=\"fit\" title=\"Fit the drawing (0)\">Fit</button>\
<button type=\"button\" data-act=\"clear\" title=\"Clear the highlight (Esc)\">Clear</button></span>\n\
<span class=\"status\" aria-live=\"polite\"></span>\n</div>\n",
    );
    let _ = write!(
        out,
        "<div class=\"viewport\" tabindex=\"0\" style=\"height:min({}px,{VIEWPORT_MAX})\">\n{}</div>\n",
        d.height, d.svg
    );
    let _ = writeln!(out, "<script type=\"application/json\" class=\"graph-data\">{}</script>", data(view));
    out.push_str("</div>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_cannot_end_its_element_or_reach_the_network() {
        for asset in [SCRIPT, STYLE, NOSCRIPT_STYLE] {
            let lower = asset.to_ascii_lowercase();
            for word in [
                "</script",
                "<!--",
                "http",
                "fetch(",
                "xmlhttprequest",
                "websocket",
                "import(",
                "@import",
                "eval(",
            ] {
                assert!(!lower.contains(word), "an asset holds {word:?}");
            }
            assert!(
                !lower.contains("innerhtml") && !lower.contains("insertadjacenthtml"),
                "text only as text"
            );
        }
    }
}
