//! The page's explorer: human names with the full id on hover (CJ-3), data no id can break out of
//! (CJ-4), and one explorer per drawing with its data aligned with the drawing (CJ-5).

use crate::common::*;
use connectome_render::label::{MAX_CHARS, name};
use connectome_render::vocab::NodeKind;
use connectome_render::{Format, Graph, Inputs, Role, render};
use serde_json::{Value, json};

const DATA_OPEN: &str = "<script type=\"application/json\" class=\"graph-data\">";

fn page_of(nodes: Vec<Value>, edges: Vec<Value>) -> String {
    let g = Graph::from_json(Role::Declared, &graph_bytes(nodes, edges)).unwrap();
    render(&Inputs::new(g, None, None, None).unwrap(), Format::Html, None).unwrap()
}

/// The JSON data of every drawing of a page, parsed.
fn data_of(page: &str) -> Vec<Value> {
    page.split(DATA_OPEN)
        .skip(1)
        .map(|rest| serde_json::from_str(&rest[..rest.find("</script>").unwrap()]).unwrap())
        .collect()
}

#[test]
fn cj3_node_shows_its_human_name_and_full_id_on_hover() {
    let ids = [
        ("weather/server", "server", "weather"),
        ("weather/tool/get_weather", "tool", "get_weather"),
        ("weather/resource/weather:%2F%2Fplaces", "resource", "weather://places"),
        ("weather/prompt/p%25", "prompt", "p%"),
        ("weather/process/worker", "process", "worker"),
        ("weather/module/my_crate::tools", "module", "my_crate::tools"),
        ("weather/module/my_crate::tools/run", "module", "my_crate::tools::run"),
        ("weather/boundary/application/my_crate", "module", "my_crate"),
    ];
    let page = page_of(
        ids.iter().map(|(id, kind, _)| node(id, kind)).collect(),
        vec![edge("weather/server", "weather/tool/get_weather", "invoke", "declared")],
    );
    for (id, kind, shown) in ids {
        assert!(page.contains(&format!(">{shown}</text></g>")), "{id} shows {shown}");
        assert!(page.contains(&format!("<g class=\"n\"><title>{id}&#10;kind {kind}")), "{id} on hover");
    }
    // The data carries the same name, and the id in full.
    let data = &data_of(&page)[0];
    let resource = data["nodes"].as_array().unwrap().iter().find(|n| n[2] == "resource").unwrap();
    assert_eq!(resource, &json!(["weather/resource/weather:%2F%2Fplaces", "weather://places", "resource"]));
}

#[test]
fn cj3_an_id_off_the_scheme_is_shown_as_written() {
    // A tag that disagrees with the kind, an unknown tag, too many components, an empty name.
    for (id, kind) in [
        ("s/tool/x", Some(NodeKind::Module)),
        ("s/widget/x", Some(NodeKind::Tool)),
        ("s/tool/a/b", Some(NodeKind::Tool)),
        ("s/tool/", Some(NodeKind::Tool)),
        ("plain", None),
    ] {
        assert_eq!(name(id, kind), id);
    }
    // A diff endpoint no export describes is named by its tag alone.
    assert_eq!(name("s/resource/r:%2F%2Fa", None), "r://a");
    // A long name keeps its most specific end in the drawing; the hover title keeps the id.
    let long = format!("s/module/my_crate::{}::leaf/run", "inner".repeat(10));
    let page = page_of(vec![node(&long, "module")], vec![]);
    let drawn = page.split("<text class=\"nlabel\"").nth(1).unwrap();
    let drawn = &drawn[drawn.find('>').unwrap() + 1..drawn.find("</text>").unwrap()];
    assert_eq!(drawn.chars().count(), MAX_CHARS);
    assert!(drawn.starts_with('…') && drawn.ends_with("::leaf::run"), "{drawn}");
    assert!(page.contains(&format!("<title>{long}&#10;")));
}

#[test]
fn cj4_script_data_cannot_close_its_element() {
    let hostile = "s/tool/</script><script>alert(1)</script><!--\u{2028}\u{2029}&amp;";
    let page = page_of(
        vec![node("s/server", "server"), node(hostile, "tool")],
        vec![edge("s/server", hostile, "invoke", "declared")],
    );
    // The page's script and the one data element are all: nothing in the id opened or closed one.
    assert_eq!(page.matches("<script").count(), 2);
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(!page.contains("<script>alert") && !page.contains("<!--"));
    let at = page.find(DATA_OPEN).unwrap() + DATA_OPEN.len();
    let raw = &page[at..at + page[at..].find("</script>").unwrap()];
    assert!(!raw.contains(['<', '>', '&']), "the data holds no markup character");
    assert!(
        !raw.contains(['\u{2028}', '\u{2029}']),
        "nor a raw line separator (a line end to older scripts)"
    );
    assert!(raw.contains("\\u003c/script\\u003e") && raw.contains("\\u2028") && raw.contains("\\u0026"));
    // And it still reads back to the id as written.
    let data = &data_of(&page)[0];
    assert!(data["nodes"].as_array().unwrap().iter().any(|n| n[0] == hostile));
    // In the drawing the id is escaped text.
    assert!(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--"));
}

#[test]
fn cj5_each_drawing_has_its_explorer_and_data_aligned_with_it() {
    let page = render(&sided_inputs(), Format::Html, None).unwrap();
    let explorers: Vec<&str> = page.split("<div class=\"explore\" data-view=\"").skip(1).collect();
    assert_eq!(explorers.len(), 3);
    for (block, view) in explorers.iter().zip(["declared", "observed", "diff"]) {
        assert!(block.starts_with(&format!("{view}\">")));
        assert!(block.contains("<div class=\"tools\" hidden>"), "the tool bar waits for the script");
        assert!(block.contains("<input type=\"search\" class=\"q\""));
        let data = &data_of(block)[0];
        let nodes = data["nodes"].as_array().unwrap();
        let edges = data["edges"].as_array().unwrap();
        let svg = &block[..block.find("</svg>").unwrap()];
        assert_eq!(
            svg.matches("<g class=\"n\">").count(),
            nodes.len(),
            "{view}: one data node per drawn node"
        );
        assert_eq!(
            svg.matches("<g class=\"e\">").count(),
            edges.len(),
            "{view}: one data edge per drawn edge"
        );
        // A checkbox per kind the drawing holds, with its count, and none for kinds it lacks.
        assert!(block.contains("data-kind=\"server\" checked> server <span class=\"count\">1</span>"));
        assert!(!block.contains("data-kind=\"prompt\""));
        for pair in edges {
            assert!(pair[0].as_u64().unwrap() < nodes.len() as u64);
        }
    }
    // The observed drawing holds the probe tool, the declared one does not.
    assert!(explorers[1].contains("\"s/tool/probe\",\"probe\",\"tool\""));
    assert!(!explorers[0].contains("s/tool/probe"));
}

#[test]
fn cj5_a_large_drawing_is_marked_and_still_one_page() {
    let page = render(&host_inputs(2000, 10_000), Format::Html, None).unwrap();
    assert!(page.contains("<svg class=\"graph many\""), "a large drawing draws its edges fainter");
    assert_eq!(page.matches("<g class=\"e\">").count(), 10_000);
    assert_eq!(page.matches("<script").count(), 2);
    assert_eq!(page, render(&host_inputs(2000, 10_000), Format::Html, None).unwrap(), "deterministic");
}
