//! Mermaid output (CJ-2) on the spec's fixtures: exact lines for shapes, arrows, weights and colours.

use crate::common::*;
use connectome_render::{DiffRecord, Format, Graph, Inputs, Role, ViewName, render};

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn node_shape_follows_kind_and_aliases_follow_id_order() {
    let out = render(&golden_inputs(), Format::Mermaid, Some(ViewName::Declared)).unwrap();
    let l = lines(&out);
    assert_eq!(l[0], "graph LR");
    assert_eq!(
        &l[1..6],
        [
            "    n0[\"srv/boundary/application/beam_mcp\"]",
            "    n1[\"srv/module/Enum\"]",
            "    n2[(\"srv/resource/r:#37;2F#37;2Fa\")]",
            "    n3[[\"srv/server\"]]",
            "    n4([\"srv/tool/écho\"])",
        ]
    );
}

#[test]
fn arrow_follows_edge_kind_and_sidecar_weights_label_arrows() {
    let out = render(&golden_inputs(), Format::Mermaid, Some(ViewName::Declared)).unwrap();
    assert_eq!(
        &lines(&out)[6..],
        ["    n1 ==>|\"1\"| n0", "    n3 --> n4", "    n4 --> n1", "    n4 -.->|\"3\"| n2"]
    );
}

#[test]
fn prompt_and_supervise_use_their_shapes() {
    let bytes = graph_bytes(
        vec![node("s/process/sup", "process"), node("s/prompt/greet", "prompt")],
        vec![edge("s/process/sup", "s/prompt/greet", "supervise", "declared")],
    );
    let inputs = Inputs::new(Graph::from_json(Role::Declared, &bytes).unwrap(), None, None, None).unwrap();
    let out = render(&inputs, Format::Mermaid, Some(ViewName::Declared)).unwrap();
    assert_eq!(
        lines(&out),
        ["graph LR", "    n0[\"s/process/sup\"]", "    n1>\"s/prompt/greet\"]", "    n0 --o n1"]
    );
}

#[test]
fn diff_link_style_colour_per_class() {
    let declared = Graph::from_json(Role::Declared, GOLDEN).unwrap();
    let inputs = Inputs::new(declared, None, None, Some(DiffRecord::from_json(CF7_DIFF).unwrap())).unwrap();
    let out = render(&inputs, Format::Mermaid, Some(ViewName::Diff)).unwrap();
    let l = lines(&out);
    // Union of nodes: the five golden ids and the CF-7 endpoints a, b, c (no kind carried: plain box).
    assert!(l.contains(&"    n4[\"srv/tool/a\"]"));
    assert!(l.contains(&"    n7([\"srv/tool/écho\"])"));
    for expected in [
        "    n4 --> n5",
        "    n5 --> n4",
        "    n4 --> n6",
        "    n5 --> n6",
        "    n6 -->|\"allow → deny\"| n4",
        "    linkStyle 0,1 stroke:#2a9d8f,stroke-width:2px",
        "    linkStyle 2 stroke:#8d99ae,stroke-width:2px",
        "    linkStyle 3 stroke:#e63946,stroke-width:2px",
        "    linkStyle 4 stroke:#f4a261,stroke-width:2px",
        "    subgraph legend[\"Legend\"]",
        "    style legend0 fill:#2a9d8f,color:#ffffff",
        "    style legend3 fill:#f4a261,color:#ffffff",
    ] {
        assert!(l.contains(&expected), "missing {expected:?} in\n{out}");
    }
    // Without an observed export, no node is called one-sided.
    assert!(!out.contains("class n"), "{out}");
}

#[test]
fn one_side_only_nodes_are_dashed() {
    let out = render(&sided_inputs(), Format::Mermaid, Some(ViewName::Diff)).unwrap();
    let l = lines(&out);
    assert_eq!(
        &l[1..5],
        [
            "    n0[[\"s/server\"]]",
            "    n1([\"s/tool/a\"])",
            "    n2([\"s/tool/b\"])",
            "    n3([\"s/tool/probe\"])"
        ]
    );
    assert!(l.contains(&"    classDef oneside stroke-dasharray:5 5"));
    assert!(l.contains(&"    class n2,n3 oneside"), "{out}");
}

#[test]
fn mermaid_text_is_quoted_with_quot_entity() {
    let bytes = graph_bytes(vec![node("s/tool/a\"]-->x", "tool")], vec![]);
    let inputs = Inputs::new(Graph::from_json(Role::Declared, &bytes).unwrap(), None, None, None).unwrap();
    let out = render(&inputs, Format::Mermaid, Some(ViewName::Declared)).unwrap();
    assert_eq!(lines(&out)[1], "    n0([\"s/tool/a#quot;]--#62;x\"])");
}

#[test]
fn document_without_view_holds_one_block_per_view() {
    let out = render(&sided_inputs(), Format::Mermaid, None).unwrap();
    assert_eq!(out.matches("```mermaid\ngraph LR\n").count(), 3);
    let order = ["## Declared graph", "## Observed graph", "## Diff"].map(|h| out.find(h).unwrap());
    assert!(order.is_sorted());
}

#[test]
fn a_directive_in_an_id_cannot_cut_or_reconfigure_the_diagram() {
    for id in ["a/tool/%%{x", "a/tool/%%{init: {'theme':'dark'}}%%"] {
        let escaped = connectome_render::escape::mermaid(id);
        assert!(!escaped.contains("%%"), "{escaped}");
        assert!(!escaped.contains('{') && !escaped.contains('}') && !escaped.contains('\''), "{escaped}");
    }
}
