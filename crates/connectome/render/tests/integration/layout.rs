//! The layered layout (connectome CJ-6): deterministic, layered left to right with the cycles set
//! aside, no column taller than its cap, and the small drawings as they were.

use std::collections::BTreeSet;

use crate::common::*;
use connectome_render::layout::{MAX_ROWS, layered};
use connectome_render::svg;
use connectome_render::view::ViewName;

#[test]
fn cj6_layout_is_layered_deterministic_and_capped_at_ten_thousand_edges() {
    let inputs = host_inputs(2000, 10_000);
    let view = inputs.view(ViewName::Declared).unwrap();
    assert_eq!(view.edges.len(), 10_000);
    let l = svg::layout(&view);
    assert_eq!(l, svg::layout(&view), "the same view gives the same layout");
    // Every edge the cycle breaking kept points to a later layer, so what it set aside broke every
    // cycle; the generator's one edge in twenty-five to a random module closes cycles, and few others.
    for (e, &back) in view.edges.iter().zip(&l.back) {
        if !back && e.from != e.to {
            assert!(l.layer[e.to] > l.layer[e.from], "a kept edge points right");
        }
    }
    let back = l.back.iter().filter(|b| **b).count();
    eprintln!("{back} of {} edges set aside, {} layers", view.edges.len(), l.layer.iter().max().unwrap() + 1);
    assert!(back > 0 && back < view.edges.len() / 20, "{back} edges set aside");
    // The server is the first layer; no column holds more than its cap; no two nodes share a slot.
    let server = view.nodes.iter().position(|n| n.id == "big/server").unwrap();
    assert_eq!(l.layer[server], 0);
    assert!(l.rows.iter().all(|&r| r <= MAX_ROWS));
    let slots: BTreeSet<(usize, usize)> = l.column.iter().copied().zip(l.row.iter().copied()).collect();
    assert_eq!(slots.len(), view.nodes.len());
    for (i, (&c, &r)) in l.column.iter().zip(&l.row).enumerate() {
        assert!(r < l.rows[c], "node {i} sits inside its column");
        assert_eq!(l.column_layer[c], l.layer[i]);
    }
    assert!(l.column_layer.is_sorted(), "columns run left to right by layer");
}

#[test]
fn cj6_a_large_layer_is_dealt_into_columns_in_order() {
    // One root fanning out to 100 leaves: one layer of 100, dealt into three columns of at most 34.
    let edges: Vec<(usize, usize)> = (1..=100).map(|i| (0, i)).collect();
    let mut roots = vec![false; 101];
    roots[0] = true;
    let l = layered(101, &edges, &roots);
    assert_eq!(l.column_layer, [0, 1, 1, 1]);
    assert_eq!(l.rows, [1, 34, 33, 33]);
    // Round-robin: consecutive leaves share a row across the three columns.
    assert_eq!((l.column[1], l.row[1]), (1, 0));
    assert_eq!((l.column[2], l.row[2]), (2, 0));
    assert_eq!((l.column[4], l.row[4]), (1, 1));
}

#[test]
fn cj6_small_views_keep_their_layers() {
    // The CC-16 golden graph: server, tool, then the module and the resource, then the boundary.
    let view = golden_inputs().view(ViewName::Declared).unwrap();
    let ids: Vec<&str> = view.nodes.iter().map(|n| n.id.as_str()).collect();
    let layer = svg::layers(&view);
    let at = |id: &str| layer[ids.iter().position(|i| *i == id).unwrap()];
    assert_eq!(
        [at("srv/server"), at("srv/tool/écho"), at("srv/module/Enum"), at("srv/resource/r:%2F%2Fa")],
        [0, 1, 2, 2]
    );
    assert_eq!(at("srv/boundary/application/beam_mcp"), 3);
    // A node with no edge stands in a last layer of its own.
    let lone = layered(3, &[(0, 1)], &[true, false, false]);
    assert_eq!(lone.layer, [0, 1, 2]);
}

#[test]
fn cj6_barycenter_sweeps_untangle_a_crossing() {
    // 0 → {1, 2}; 1 → 4, 2 → 3: id order puts 3 above 4, the sweep puts 4 (under 1) above 3.
    let l = layered(5, &[(0, 1), (0, 2), (1, 4), (2, 3)], &[true, false, false, false, false]);
    assert_eq!(l.layer, [0, 1, 1, 2, 2]);
    assert!(l.row[4] < l.row[3], "the children follow their parents' order");
}
