//! DOT output: the same information as Mermaid, a colour per diff class.

use crate::common::*;
use connectome_render::{Format, ViewName, render};

#[test]
fn dot_shapes_styles_and_weights() {
    let out = render(&golden_inputs(), Format::Dot, Some(ViewName::Declared)).unwrap();
    let l: Vec<&str> = out.lines().collect();
    assert_eq!(l[0], "digraph declared {");
    assert_eq!(*l.last().unwrap(), "}");
    let starts = |p: &str| l.iter().any(|x| x.starts_with(p));
    assert!(starts("    n2 [label=\"srv/resource/r:%2F%2Fa\", shape=cylinder, tooltip="));
    assert!(starts("    n3 [label=\"srv/server\", shape=box, peripheries=2, tooltip="));
    assert!(starts("    n4 [label=\"srv/tool/écho\", shape=box, style=\"rounded\", tooltip="));
    assert!(starts("    n1 -> n0 [style=bold, label=\"1\", tooltip="));
    assert!(starts("    n3 -> n4 [style=solid, tooltip="));
    assert!(starts("    n4 -> n2 [style=dashed, label=\"3\", tooltip="));
}

#[test]
fn dot_diff_colour_per_class_and_dashed_one_side_nodes() {
    let out = render(&sided_inputs(), Format::Dot, Some(ViewName::Diff)).unwrap();
    let l: Vec<&str> = out.lines().collect();
    let starts = |p: &str| l.iter().any(|x| x.starts_with(p));
    assert!(starts("    n0 -> n1 [style=solid, color=\"#2a9d8f\", tooltip="));
    assert!(starts("    n0 -> n2 [style=solid, color=\"#8d99ae\", tooltip="));
    assert!(starts("    n0 -> n3 [style=solid, color=\"#e63946\", tooltip="));
    assert!(starts("    n2 [label=\"s/tool/b\", shape=box, style=\"rounded,dashed\", tooltip="));
    assert!(starts("    n1 [label=\"s/tool/a\", shape=box, style=\"rounded\", tooltip="));
    assert!(out.contains("subgraph cluster_legend {"));
    assert!(out.contains("fillcolor=\"#f4a261\""));
}

#[test]
fn dot_document_holds_one_digraph_per_view() {
    let out = render(&sided_inputs(), Format::Dot, None).unwrap();
    for name in ["digraph declared {", "digraph observed {", "digraph diff {"] {
        assert_eq!(out.matches(name).count(), 1, "{name}");
    }
}
