//! One self-contained HTML page: inline CSS, inline SVG and one inline script, nothing fetched (no
//! external script, font, stylesheet or image). Sections: summary, declared graph, observed graph
//! with weights, diff by class with a legend, coverage (ten counts, four ratios). Each drawing sits in
//! an explorer ([`explore`]: search, kind filter, pan and zoom, reach highlighting). Every text is
//! HTML-escaped; the graph data for the script is escaped for its `<script>` element.

pub mod explore;

use std::fmt::Write as _;

use serde_json::Value;

use crate::diff::{COUNTS, DiffRecord};
use crate::escape::html;
use crate::model::Graph;
use crate::view::{Inputs, View, ViewName};
use crate::vocab::DiffClass;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem;color:#1d1d1f;max-width:90rem}\
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:.6rem 0}th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}code{font-size:.9em;word-break:break-all}\
.note{color:#555}\
.swatch{display:inline-block;width:1.6rem;height:.35rem;vertical-align:middle;margin-right:.4rem}\
.dashbox{display:inline-block;width:1.2rem;height:.8rem;border:1.5px dashed #333;vertical-align:middle;margin-right:.4rem}\
svg.graph{font-family:system-ui,sans-serif;font-size:12px}\
.node{fill:#f7f7f7;stroke:#333;stroke-width:1.2}.node.inner{fill:none}.k-server{fill:#e8f1fb}.k-tool{fill:#eef7ee}\
.k-resource{fill:#fdf6e3}.k-prompt{fill:#f6eefb}.oneside{stroke-dasharray:5 4}\
.nlabel{text-anchor:middle;fill:#111}.edge{fill:none;stroke-width:1.5}.e-read{stroke-dasharray:6 4}.e-message{stroke-width:3}\
.elabel{text-anchor:middle;font-size:11px;fill:#111;paint-order:stroke;stroke:#fff;stroke-width:3px}";

const KEY: &str = "<p class=\"note\">Node shape by kind: server double box, tool rounded, resource cylinder, \
prompt flag, process and module plain box. Edge by kind: invoke solid, read dashed, message thick, \
supervise with a circle head. Hover a node or an edge for every field the export carries. Search the \
names, tick the kinds to show, drag to pan, wheel or <kbd>+</kbd>/<kbd>-</kbd> to zoom, <kbd>0</kbd> to fit; \
click a node to light up what it reaches (<span class=\"hl-fwd\"></span>blue) and what reaches it \
(<span class=\"hl-bwd\"></span>magenta), click the background or press <kbd>Esc</kbd> to clear.</p>\n";

/// The whole page.
pub fn render(inputs: &Inputs) -> String {
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<title>Connectome</title>\n<style>{STYLE}\n{}</style>\n<noscript><style>{}</style></noscript>\n</head>\n<body>",
        explore::STYLE,
        explore::NOSCRIPT_STYLE
    );
    out.push_str(
        "<h1>Connectome</h1>\n<p class=\"note\">Drawn from the JSON exports alone: nothing here is inferred \
beyond what they carry.</p>\n",
    );
    summary(inputs, &mut out);
    graph_section(inputs, ViewName::Declared, Some(&inputs.declared), &mut out);
    graph_section(inputs, ViewName::Observed, inputs.observed.as_ref(), &mut out);
    diff_section(inputs, &mut out);
    coverage_section(inputs.diff.as_ref(), &mut out);
    let _ = write!(out, "<script>\n{}</script>\n</body>\n</html>\n", explore::SCRIPT);
    out
}

fn summary(inputs: &Inputs, out: &mut String) {
    out.push_str(
        "<section id=\"summary\">\n<h2>Summary</h2>\n<table>\n<tr><th>export</th><th>schema_version</th>\
<th>algorithm</th><th>nodes</th><th>edges</th><th>weights</th><th>class entries</th></tr>\n",
    );
    let dash = "—";
    let row = |out: &mut String, name: &str, cells: [String; 6]| {
        let _ = write!(out, "<tr><td>{}</td>", html(name));
        for c in cells {
            let class = if c.bytes().all(|b| b.is_ascii_digit()) { " class=\"num\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", html(&c));
        }
        out.push_str("</tr>\n");
    };
    let graph_row = |out: &mut String, name: &str, g: Option<&Graph>| match g {
        Some(g) => row(
            out,
            name,
            [
                "3".into(),
                g.algorithm.name().into(),
                g.nodes.len().to_string(),
                g.edges.len().to_string(),
                dash.into(),
                dash.into(),
            ],
        ),
        None => row(
            out,
            name,
            ["not given".into(), dash.into(), dash.into(), dash.into(), dash.into(), dash.into()],
        ),
    };
    graph_row(out, "declared", Some(&inputs.declared));
    graph_row(out, "observed", inputs.observed.as_ref());
    match &inputs.sidecar {
        Some(s) => row(
            out,
            "sidecar",
            ["3".into(), dash.into(), dash.into(), dash.into(), s.weights.len().to_string(), dash.into()],
        ),
        None => row(
            out,
            "sidecar",
            ["not given".into(), dash.into(), dash.into(), dash.into(), dash.into(), dash.into()],
        ),
    }
    match &inputs.diff {
        Some(d) => {
            let entries = d.classes.iter().map(Vec::len).sum::<usize>().to_string();
            row(
                out,
                "diff record",
                ["3".into(), d.algorithm.name().into(), dash.into(), dash.into(), dash.into(), entries],
            );
        }
        None => row(
            out,
            "diff record",
            ["not given".into(), dash.into(), dash.into(), dash.into(), dash.into(), dash.into()],
        ),
    }
    out.push_str("</table>\n");
    if let Some(w) = inputs.weighed {
        let _ = writeln!(out, "<p class=\"note\">The sidecar weighs the {} graph.</p>", w.name());
    }
    out.push_str("</section>\n");
}

fn drawing(view: &View, out: &mut String) {
    out.push_str(&explore::drawing(view));
}

fn graph_section(inputs: &Inputs, name: ViewName, graph: Option<&Graph>, out: &mut String) {
    let _ = writeln!(out, "<section id=\"{}\">\n<h2>{}</h2>", name.name(), html(name.title()));
    let (Some(g), Some(view)) = (graph, inputs.view(name)) else {
        let _ = writeln!(out, "<p class=\"note\">No {} export given.</p>\n</section>", name.name());
        return;
    };
    out.push_str(KEY);
    drawing(&view, out);
    let weights = (inputs.weighed == Some(name)).then_some(inputs.weights.as_slice());
    out.push_str("<details><summary>Nodes and labels</summary>\n<table>\n<tr><th>id</th><th>kind</th><th>level</th><th>labels</th></tr>\n");
    for n in &g.nodes {
        let labels = Value::Object(n.labels.clone()).to_string();
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            html(&n.id),
            n.kind.name(),
            n.level.name(),
            html(&labels)
        );
    }
    out.push_str(
        "</table>\n</details>\n<details><summary>Edges</summary>\n<table>\n<tr><th>from</th><th>kind</th>\
<th>provenance</th><th>sign</th><th>to</th><th>weight</th></tr>\n",
    );
    for (i, e) in g.edges.iter().enumerate() {
        let w = weights.and_then(|w| w.get(i).cloned().flatten()).unwrap_or_else(|| "—".into());
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td></tr>",
            html(&e.from),
            e.kind.name(),
            e.provenance.name(),
            e.sign.name(),
            html(&e.to),
            html(&w)
        );
    }
    out.push_str("</table>\n</details>\n</section>\n");
}

/// The colour legend of the diff view (also used by the tests).
pub fn legend(sides_known: bool) -> String {
    let mut out = String::from("<ul class=\"legend\">\n");
    for &c in DiffClass::ALL {
        let _ = writeln!(
            out,
            "<li><span class=\"swatch\" style=\"background:{}\"></span><code>{}</code> {}</li>",
            c.colour(),
            c.name(),
            html(c.legend())
        );
    }
    if sides_known {
        out.push_str("<li><span class=\"dashbox\"></span>dashed node: in one graph export only</li>\n");
    } else {
        out.push_str("<li>no observed export given: one-side-only nodes cannot be told</li>\n");
    }
    out.push_str("</ul>\n");
    out
}

fn diff_section(inputs: &Inputs, out: &mut String) {
    out.push_str("<section id=\"diff\">\n<h2>Diff</h2>\n");
    let (Some(d), Some(view)) = (&inputs.diff, inputs.view(ViewName::Diff)) else {
        out.push_str("<p class=\"note\">No diff record given.</p>\n</section>\n");
        return;
    };
    out.push_str(&legend(view.sides_known));
    drawing(&view, out);
    out.push_str("<table>\n<tr><th>class</th><th>from</th><th>kind</th><th>to</th><th>declared sign</th><th>observed sign</th></tr>\n");
    for (class, e) in d.entries() {
        let (ds, os) = e.signs.map_or(("—", "—"), |(a, b)| (a.name(), b.name()));
        let _ = writeln!(
            out,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td><code>{}</code></td><td>{}</td>\
<td><code>{}</code></td><td>{ds}</td><td>{os}</td></tr>",
            class.colour(),
            class.name(),
            html(&e.from),
            e.kind.name(),
            html(&e.to)
        );
    }
    out.push_str("</table>\n<h3>Window</h3>\n<table>\n");
    for (k, v) in &d.window {
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let _ = writeln!(out, "<tr><th>{}</th><td><code>{}</code></td></tr>", html(k), html(&text));
    }
    out.push_str("</table>\n</section>\n");
}

fn coverage_section(diff: Option<&DiffRecord>, out: &mut String) {
    out.push_str("<section id=\"coverage\">\n<h2>Coverage</h2>\n");
    let Some(d) = diff else {
        out.push_str("<p class=\"note\">No diff record given.</p>\n</section>\n");
        return;
    };
    out.push_str("<table>\n<tr><th>count</th><th>value</th><th>meaning</th></tr>\n");
    for (i, (name, meaning)) in COUNTS.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td><code>{name}</code></td><td class=\"num\">{}</td><td>{}</td></tr>",
            d.coverage.0[i],
            html(meaning)
        );
    }
    out.push_str("</table>\n<table>\n<tr><th>ratio</th><th>definition</th><th>value</th></tr>\n");
    for r in d.coverage.ratios() {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td></tr>",
            html(r.name),
            html(r.definition),
            html(&r.to_string())
        );
    }
    out.push_str("</table>\n</section>\n");
}
