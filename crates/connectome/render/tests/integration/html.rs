//! The HTML page: self-contained, escaped, the coverage table with its ratios, deterministic.

use crate::common::*;
use connectome_render::{DiffRecord, Format, Graph, Inputs, Role, Sidecar, render};
use serde_json::json;

fn full_page() -> String {
    let declared = Graph::from_json(Role::Declared, GOLDEN).unwrap();
    let observed = Graph::from_json(Role::Observed, GOLDEN).unwrap();
    let sidecar = Sidecar::from_json(GOLDEN_SIDECAR).unwrap();
    let diff = DiffRecord::from_json(CF7_DIFF).unwrap();
    let inputs = Inputs::new(declared, Some(observed), Some(sidecar), Some(diff)).unwrap();
    render(&inputs, Format::Html, None).unwrap()
}

#[test]
fn html_makes_no_network_reference() {
    for page in [full_page(), render(&sided_inputs(), Format::Html, None).unwrap()] {
        // One inline script (the explorer) and one JSON data element per drawing; nothing else runs.
        let drawings = page.matches("<svg ").count();
        assert_eq!(page.matches("<script>").count(), 1, "one inline script");
        assert_eq!(page.matches("<script type=\"application/json\" class=\"graph-data\">").count(), drawings);
        assert_eq!(page.matches("<script").count(), drawings + 1);
        assert!(!page.to_ascii_lowercase().contains("http"), "no http(s) reference, not even a namespace");
        assert!(!page.contains("<link"));
        assert!(!page.contains("@import"));
        assert!(!page.contains("src="));
        for call in ["fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon", "import("] {
            assert!(!page.contains(call), "{call}");
        }
    }
}

#[test]
fn html_has_every_section_in_order() {
    let page = full_page();
    let at: Vec<usize> =
        ["id=\"summary\"", "id=\"declared\"", "id=\"observed\"", "id=\"diff\"", "id=\"coverage\""]
            .iter()
            .map(|s| page.find(s).unwrap_or_else(|| panic!("missing {s}")))
            .collect();
    assert!(at.is_sorted());
    assert_eq!(page.matches("<svg ").count(), 3);
    // The observed drawing carries the sidecar weights as edge labels.
    let observed = &page[at[2]..at[3]];
    assert!(observed.contains(">3</text>") && observed.contains(">1</text>"));
    // The legend names every class colour.
    for colour in ["#2a9d8f", "#8d99ae", "#e63946", "#f4a261"] {
        assert!(page[at[3]..at[4]].contains(&format!("background:{colour}")), "{colour}");
    }
}

#[test]
fn html_escapes_hostile_id() {
    let hostile = "</svg><script>alert(1)</script>";
    let bytes = graph_bytes(
        vec![node("s/server", "server"), node(hostile, "tool")],
        vec![edge("s/server", hostile, "invoke", "declared")],
    );
    let inputs = Inputs::new(Graph::from_json(Role::Declared, &bytes).unwrap(), None, None, None).unwrap();
    let page = render(&inputs, Format::Html, None).unwrap();
    // The page's own script and the drawing's data are the only script elements.
    assert_eq!(page.matches("<script").count(), 2);
    assert!(!page.contains("<script>alert"));
    assert!(!page.contains("alert(1)</"));
    assert!(page.contains("&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_eq!(page.matches("</svg>").count(), page.matches("<svg ").count());
}

#[test]
fn coverage_table_has_ten_counts_and_four_ratios() {
    let page = full_page();
    let coverage = &page[page.find("id=\"coverage\"").unwrap()..];
    for count in ["declared_edges", "observed_edges", "declared_endpoint_covered", "observed_sign_only"] {
        assert!(coverage.contains(&format!("<code>{count}</code>")), "{count}");
    }
    // CF-7: 3/4 for both edge ratios, 4/4 completeness and endpoint coverage.
    assert_eq!(coverage.matches(">3/4 (75.0%)<").count(), 2);
    assert_eq!(coverage.matches(">4/4 (100.0%)<").count(), 2);
}

#[test]
fn ratio_with_zero_denominator_is_undefined() {
    let zero = json!({
        "algorithm": "sha256",
        "classes": {"changed_sign": [], "declared_and_observed": [], "declared_never_observed": [], "observed_but_undeclared": []},
        "coverage": {
            "declared_and_observed": 0, "declared_edges": 0, "declared_endpoint_covered": 0, "declared_nodes": 0,
            "declared_sign_only": 0, "nodes_in_both": 0, "observed_edges": 0, "observed_endpoint_declared": 0,
            "observed_nodes": 0, "observed_sign_only": 0
        },
        "schema_version": 3,
        "window": {}
    });
    let diff = DiffRecord::from_json(&serde_json::to_vec(&zero).unwrap()).unwrap();
    let ratios: Vec<String> = diff.coverage.ratios().iter().map(ToString::to_string).collect();
    assert_eq!(ratios, ["0/0 (undefined)"; 4]);
    let declared = Graph::from_json(Role::Declared, &graph_bytes(vec![], vec![])).unwrap();
    let page = render(&Inputs::new(declared, None, None, Some(diff)).unwrap(), Format::Html, None).unwrap();
    assert_eq!(page.matches(">0/0 (undefined)<").count(), 4);
}

#[test]
fn render_is_deterministic() {
    assert_eq!(full_page(), full_page());
    for format in [Format::Mermaid, Format::Dot, Format::Html] {
        assert_eq!(render(&sided_inputs(), format, None), render(&sided_inputs(), format, None));
    }
}
