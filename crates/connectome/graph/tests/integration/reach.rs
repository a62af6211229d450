//! Rules of docs/connectome.md §G (Reach) and CK-5 through the public API: the CG-7 example, the options,
//! the witness tie-break, the dominance semantics and every refusal by name, in the CG-5 order.

use std::collections::BTreeSet;

use connectome_graph::{
    DEFAULT_MAX_EDGES, DominanceOptions, Edge, EdgeKind, Graph, Identity, Labels, Node, Path, PathOptions,
    Provenance, ReachError, Sign, all_paths, dominates, mandatory_pass, reachable, reachable_without,
};

const SRV: &str = "srv/server";
const A: &str = "srv/tool/a";
const B: &str = "srv/tool/b";
const G: &str = "srv/tool/g";
const X: &str = "srv/tool/x";
const ORPHAN: &str = "srv/tool/orphan";
const NOPE: &str = "srv/tool/nope";

fn tool(name: &str) -> Node {
    Node::from_identity(Identity::Tool { server: "srv".to_owned(), name: name.to_owned() }, Labels::new())
}

fn server(name: &str) -> Node {
    Node::from_identity(Identity::Server { server: name.to_owned() }, Labels::new())
}

fn edge(from: &str, to: &str, kind: EdgeKind) -> Edge {
    Edge::new(from, to, kind, Provenance::Declared, None).unwrap()
}

fn invoke(pairs: &[(&str, &str)]) -> Vec<Edge> {
    pairs.iter().map(|(f, t)| edge(f, t, EdgeKind::Invoke)).collect()
}

/// CG-7: srv→a, srv→b, a→g, b→g, g→x, plus `extra` edges and an orphan tool with no edges.
fn g7(extra: &[(&str, &str)]) -> Graph {
    let nodes = vec![server("srv"), tool("a"), tool("b"), tool("g"), tool("x"), tool("orphan")];
    let mut edges = invoke(&[(SRV, A), (SRV, B), (A, G), (B, G), (G, X)]);
    edges.extend(invoke(extra));
    Graph::new(nodes, edges).unwrap()
}

fn ids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn kinds(list: &[EdgeKind]) -> Option<BTreeSet<EdgeKind>> {
    Some(list.iter().copied().collect())
}

fn entries(list: &[&str]) -> DominanceOptions {
    DominanceOptions { entries: Some(list.iter().map(|s| (*s).to_owned()).collect()), ..Default::default() }
}

fn po() -> PathOptions {
    PathOptions::default()
}

fn dom() -> DominanceOptions {
    DominanceOptions::default()
}

const NO_GATES: [&str; 0] = [];

// ---------------------------------------------------------------------------------------------- CG-7

#[test]
fn cg7_server_reaches_x() {
    assert_eq!(reachable(&g7(&[]), SRV, X, &po()), Ok(true));
}

#[test]
fn cg7_g_dominates_x() {
    assert_eq!(dominates(&g7(&[]), G, X, &dom()), Ok(true));
}

#[test]
fn cg7_no_path_avoids_g() {
    assert_eq!(reachable_without(&g7(&[]), SRV, X, &[G], &po()), Ok(None));
}

#[test]
fn cg7_mandatory_pass_of_x_is_srv_and_g() {
    assert_eq!(mandatory_pass(&g7(&[]), X, &dom()), Ok(ids(&[SRV, G])));
}

#[test]
fn cg7_with_a_x_the_witness_is_srv_a_x() {
    let g = g7(&[(A, X)]);
    let path = reachable_without(&g, SRV, X, &[G], &po()).unwrap().unwrap();
    assert_eq!(path.nodes, vec![SRV.to_owned(), A.to_owned(), X.to_owned()]);
    assert_eq!(path.edges, invoke(&[(SRV, A), (A, X)]));
    // Without gates the shortest path is the same one: a sorts before b and x before g.
    assert_eq!(reachable_without(&g, SRV, X, &NO_GATES, &po()).unwrap(), Some(path));
}

#[test]
fn cg7_with_a_x_g_no_longer_dominates_x() {
    assert_eq!(dominates(&g7(&[(A, X)]), G, X, &dom()), Ok(false));
}

#[test]
fn cg7_with_a_x_mandatory_pass_of_x_is_srv() {
    assert_eq!(mandatory_pass(&g7(&[(A, X)]), X, &dom()), Ok(ids(&[SRV])));
}

// ---------------------------------------------------------------------------------------------- CG-2

#[test]
fn a_node_reaches_itself_with_zero_hops() {
    let g = g7(&[]);
    assert_eq!(reachable(&g, ORPHAN, ORPHAN, &po()), Ok(true));
    let one_hop = PathOptions { max_hops: Some(1), kinds: kinds(&[EdgeKind::Supervise]), ..po() };
    assert_eq!(reachable(&g, X, X, &one_hop), Ok(true));
    let zero = Path { nodes: vec![ORPHAN.to_owned()], edges: vec![] };
    assert_eq!(reachable_without(&g, ORPHAN, ORPHAN, &[G], &one_hop), Ok(Some(zero)));
}

#[test]
fn paths_follow_edge_direction() {
    let g = g7(&[]);
    assert_eq!(reachable(&g, X, SRV, &po()), Ok(false));
    assert_eq!(reachable(&g, A, B, &po()), Ok(false));
    assert_eq!(reachable(&g, ORPHAN, X, &po()), Ok(false));
}

#[test]
fn a_gate_at_either_endpoint_answers_none() {
    let g = g7(&[(A, X)]);
    assert_eq!(reachable_without(&g, SRV, X, &[SRV], &po()), Ok(None));
    assert_eq!(reachable_without(&g, SRV, X, &[X], &po()), Ok(None));
    assert_eq!(reachable_without(&g, X, X, &[X], &po()), Ok(None));
    assert_eq!(reachable_without(&g, SRV, X, &[B.to_owned(), X.to_owned()], &po()), Ok(None));
}

#[test]
fn kinds_invoke_blocks_a_read_hop() {
    let nodes = vec![server("srv"), tool("a"), tool("x")];
    let edges = vec![edge(SRV, A, EdgeKind::Invoke), edge(A, X, EdgeKind::Read)];
    let g = Graph::new(nodes, edges).unwrap();
    let only_invoke = PathOptions { kinds: kinds(&[EdgeKind::Invoke]), ..po() };
    assert_eq!(reachable(&g, SRV, X, &po()), Ok(true));
    assert_eq!(reachable(&g, SRV, X, &only_invoke), Ok(false));
    assert_eq!(reachable(&g, SRV, A, &only_invoke), Ok(true));
    assert_eq!(reachable_without(&g, SRV, X, &NO_GATES, &only_invoke), Ok(None));
    let d = DominanceOptions { kinds: kinds(&[EdgeKind::Invoke]), ..dom() };
    assert_eq!(mandatory_pass(&g, X, &d), Err(ReachError::Unreachable(X.to_owned())));
    let both = DominanceOptions { kinds: kinds(&[EdgeKind::Invoke, EdgeKind::Read]), ..dom() };
    assert_eq!(mandatory_pass(&g, X, &both), Ok(ids(&[SRV, A])));
}

#[test]
fn max_hops_2_on_a_3_hop_chain_is_false_and_3_is_true() {
    let g = g7(&[]);
    let hops = |m| PathOptions { max_hops: Some(m), ..po() };
    assert_eq!(reachable(&g, SRV, X, &hops(2)), Ok(false));
    assert_eq!(reachable_without(&g, SRV, X, &NO_GATES, &hops(2)), Ok(None));
    assert_eq!(reachable(&g, SRV, X, &hops(3)), Ok(true));
    let path = reachable_without(&g, SRV, X, &NO_GATES, &hops(3)).unwrap().unwrap();
    assert_eq!(path.nodes, vec![SRV.to_owned(), A.to_owned(), G.to_owned(), X.to_owned()]);
}

#[test]
fn signs_are_never_consulted() {
    let (nodes, mut edges) = g7(&[]).into_parts();
    for e in &mut edges {
        e.sign = Sign::Deny;
    }
    let g = Graph::new(nodes, edges).unwrap();
    assert_eq!(reachable(&g, SRV, X, &po()), Ok(true));
    assert_eq!(mandatory_pass(&g, X, &dom()), Ok(ids(&[SRV, G])));
}

// ---------------------------------------------------------------------------------------------- CG-3

#[test]
fn witness_tie_break_follows_canonical_edge_order() {
    // srv→b→x and srv→a→x are both shortest; a sorts before b, so BFS takes a first.
    let nodes = vec![server("srv"), tool("a"), tool("b"), tool("x")];
    let g = Graph::new(nodes, invoke(&[(SRV, B), (B, X), (SRV, A), (A, X)])).unwrap();
    let path = reachable_without(&g, SRV, X, &NO_GATES, &po()).unwrap().unwrap();
    assert_eq!(path.nodes, vec![SRV.to_owned(), A.to_owned(), X.to_owned()]);
}

#[test]
fn witness_tie_break_uses_nfc_ids_not_their_raw_spelling() {
    // Two shortest paths 0src→X→zz and 0src→"café a"→zz. As NFC, "café a" sorts before "caféb"; the
    // decomposed spelling "cafe\u{301}b" sorts before it as raw bytes. The witness must not depend on
    // the spelling: both graphs have the same canonical bytes.
    for x in ["cafe\u{301}b", "caf\u{e9}b"] {
        let names = ["0src", x, "caf\u{e9} a", "zz"];
        let id = |name: &str| format!("srv/tool/{name}");
        let nodes = names.iter().map(|n| tool(n)).collect();
        let pairs = [
            (id("0src"), id(x)),
            (id("0src"), id("caf\u{e9} a")),
            (id(x), id("zz")),
            (id("caf\u{e9} a"), id("zz")),
        ];
        let edges = pairs.iter().map(|(f, t)| edge(f, t, EdgeKind::Invoke)).collect();
        let g = Graph::new(nodes, edges).unwrap();
        let path = reachable_without(&g, &id("0src"), &id("zz"), &NO_GATES, &po()).unwrap().unwrap();
        assert_eq!(path.nodes[1], id("caf\u{e9} a"), "spelling {x:?}");
    }
}

#[test]
fn witness_step_is_the_first_admitted_edge_in_graph_order() {
    let nodes = vec![tool("a"), tool("x")];
    let observed = |kind| Edge::new(A, X, kind, Provenance::Observed, None).unwrap();
    let edges = vec![
        observed(EdgeKind::Read),
        edge(A, X, EdgeKind::Read),
        observed(EdgeKind::Invoke),
        edge(A, X, EdgeKind::Invoke),
    ];
    let g = Graph::new(nodes, edges).unwrap();
    let all = reachable_without(&g, A, X, &NO_GATES, &po()).unwrap().unwrap();
    assert_eq!(all.edges, vec![edge(A, X, EdgeKind::Invoke)]);
    let read = PathOptions { kinds: kinds(&[EdgeKind::Read, EdgeKind::Message]), ..po() };
    let read = reachable_without(&g, A, X, &NO_GATES, &read).unwrap().unwrap();
    assert_eq!(read.edges, vec![edge(A, X, EdgeKind::Read)]);
}

#[test]
fn witness_is_shortest_not_first_found_depth_first() {
    // a→b→c→x and a→x: the direct edge wins although b sorts before x.
    let nodes = vec![tool("a"), tool("b"), tool("c"), tool("x")];
    let g = Graph::new(nodes, invoke(&[(A, B), ("srv/tool/b", "srv/tool/c"), ("srv/tool/c", X), (A, X)]))
        .unwrap();
    let path = reachable_without(&g, A, X, &NO_GATES, &po()).unwrap().unwrap();
    assert_eq!(path.nodes, vec![A.to_owned(), X.to_owned()]);
}

// ---------------------------------------------------------------------------------------- dominance

#[test]
fn dominates_x_x_is_true_when_x_is_reachable() {
    let g = g7(&[]);
    assert_eq!(dominates(&g, X, X, &dom()), Ok(true));
    assert_eq!(dominates(&g, SRV, SRV, &dom()), Ok(true));
}

#[test]
fn the_sole_entry_dominates_everything_it_reaches() {
    let g = g7(&[(A, X)]);
    assert_eq!(dominates(&g, SRV, X, &dom()), Ok(true));
    assert_eq!(dominates(&g, A, X, &dom()), Ok(false));
    assert_eq!(dominates(&g, ORPHAN, X, &dom()), Ok(false));
}

#[test]
fn entries_a_roots_the_dominance_at_a() {
    let g = g7(&[]);
    let o = entries(&[A]);
    assert_eq!(mandatory_pass(&g, X, &o), Ok(ids(&[A, G])));
    assert_eq!(dominates(&g, A, X, &o), Ok(true));
    assert_eq!(dominates(&g, SRV, X, &o), Ok(false));
    assert_eq!(mandatory_pass(&g, A, &o), Ok(ids(&[])));
    assert_eq!(mandatory_pass(&g, SRV, &o), Err(ReachError::Unreachable(SRV.to_owned())));
    assert_eq!(dominates(&g, B, B, &o), Err(ReachError::Unreachable(B.to_owned())));
}

#[test]
fn with_entries_a_and_b_neither_dominates_x() {
    let g = g7(&[]);
    let o = entries(&[A, B]);
    assert_eq!(dominates(&g, A, X, &o), Ok(false));
    assert_eq!(dominates(&g, B, X, &o), Ok(false));
    assert_eq!(dominates(&g, G, X, &o), Ok(true));
    assert_eq!(mandatory_pass(&g, X, &o), Ok(ids(&[G])));
}

#[test]
fn an_entry_every_root_path_crosses_dominates_even_when_not_sole() {
    // Entries [srv, a] with srv→a→x only: every path from the virtual root to x crosses a.
    let nodes = vec![server("srv"), tool("a"), tool("x")];
    let g = Graph::new(nodes, invoke(&[(SRV, A), (A, X)])).unwrap();
    let o = entries(&[SRV, A]);
    assert_eq!(dominates(&g, A, X, &o), Ok(true));
    assert_eq!(dominates(&g, SRV, X, &o), Ok(false));
    assert_eq!(mandatory_pass(&g, X, &o), Ok(ids(&[A])));
}

#[test]
fn several_server_nodes_are_all_default_entries() {
    let nodes = vec![server("s1"), server("s2"), tool("x")];
    let g = Graph::new(nodes, invoke(&[("s1/server", X), ("s2/server", X)])).unwrap();
    assert_eq!(mandatory_pass(&g, X, &dom()), Ok(ids(&[])));
    assert_eq!(dominates(&g, "s1/server", X, &dom()), Ok(false));
    assert_eq!(dominates(&g, X, X, &dom()), Ok(true));
}

#[test]
fn dominance_of_an_unreachable_target_is_refused_never_true() {
    let g = g7(&[]);
    let unreachable = ReachError::Unreachable(ORPHAN.to_owned());
    assert_eq!(dominates(&g, G, ORPHAN, &dom()).unwrap_err(), unreachable);
    assert_eq!(dominates(&g, ORPHAN, ORPHAN, &dom()).unwrap_err(), unreachable);
    assert_eq!(mandatory_pass(&g, ORPHAN, &dom()).unwrap_err(), unreachable);
}

#[test]
fn self_loops_and_cycles_do_not_confuse_dominance() {
    let g = g7(&[(X, X), (G, A), (X, SRV)]);
    assert_eq!(mandatory_pass(&g, X, &dom()), Ok(ids(&[SRV, G])));
    assert_eq!(mandatory_pass(&g, A, &dom()), Ok(ids(&[SRV])));
    assert_eq!(dominates(&g, G, X, &dom()), Ok(true));
}

// ---------------------------------------------------------------------------------------------- CG-1

#[test]
fn all_paths_is_always_refused() {
    let g = g7(&[]);
    assert_eq!(all_paths(&g, SRV, X), Err(ReachError::Refused("all_paths")));
    assert_eq!(all_paths(&g, NOPE, NOPE), Err(ReachError::Refused("all_paths")));
    assert_eq!(all_paths(&Graph::default(), "", ""), Err(ReachError::Refused("all_paths")));
}

// ---------------------------------------------------------------------------------------------- CG-4

#[test]
fn option_defaults_are_all_kinds_infinite_hops_and_a_million_edges() {
    assert_eq!(DEFAULT_MAX_EDGES, 1_000_000);
    assert_eq!(po(), PathOptions { kinds: None, max_hops: None, max_edges: DEFAULT_MAX_EDGES });
    assert_eq!(dom(), DominanceOptions { kinds: None, entries: None, max_edges: DEFAULT_MAX_EDGES });
}

/// An invalid-option refusal with its reason blanked, to compare with [`named`].
fn invalid(option: &'static str) -> ReachError {
    ReachError::InvalidOption { option, reason: "" }
}

/// The refusal with its reason blanked, so that tests pin the option name only.
fn named<T>(r: Result<T, ReachError>) -> Option<ReachError> {
    match r {
        Err(ReachError::InvalidOption { option, .. }) => Some(invalid(option)),
        Err(e) => Some(e),
        Ok(_) => None,
    }
}

#[test]
fn empty_kinds_are_refused_as_invalid_kinds() {
    let g = g7(&[]);
    let o = PathOptions { kinds: kinds(&[]), ..po() };
    assert_eq!(named(reachable(&g, SRV, X, &o)), Some(invalid("kinds")));
    assert_eq!(named(reachable_without(&g, SRV, X, &NO_GATES, &o)), Some(invalid("kinds")));
    let d = DominanceOptions { kinds: kinds(&[]), ..dom() };
    assert_eq!(named(dominates(&g, G, X, &d)), Some(invalid("kinds")));
    assert_eq!(named(mandatory_pass(&g, X, &d)), Some(invalid("kinds")));
}

#[test]
fn zero_max_hops_is_refused_as_invalid_max_hops() {
    let g = g7(&[]);
    let o = PathOptions { max_hops: Some(0), ..po() };
    assert_eq!(named(reachable(&g, SRV, SRV, &o)), Some(invalid("max_hops")));
    assert_eq!(named(reachable_without(&g, SRV, X, &NO_GATES, &o)), Some(invalid("max_hops")));
}

#[test]
fn an_empty_entry_list_is_refused_as_invalid_entries() {
    let g = g7(&[]);
    assert_eq!(named(dominates(&g, G, X, &entries(&[]))), Some(invalid("entries")));
    assert_eq!(named(mandatory_pass(&g, X, &entries(&[]))), Some(invalid("entries")));
}

#[test]
fn no_server_node_to_default_to_is_refused_as_invalid_entries() {
    let g = Graph::new(vec![tool("a"), tool("x")], invoke(&[(A, X)])).unwrap();
    assert_eq!(named(dominates(&g, A, X, &dom())), Some(invalid("entries")));
    assert_eq!(named(mandatory_pass(&g, X, &dom())), Some(invalid("entries")));
    assert_eq!(named(mandatory_pass(&Graph::default(), X, &dom())), Some(invalid("entries")));
    // Explicit entries need no server node.
    assert_eq!(mandatory_pass(&g, X, &entries(&[A])), Ok(ids(&[A])));
}

#[test]
fn an_unknown_entry_id_is_refused_as_unknown_node() {
    let g = g7(&[]);
    let o = entries(&[A, NOPE, "other"]);
    assert_eq!(mandatory_pass(&g, X, &o), Err(ReachError::UnknownNode(NOPE.to_owned())));
    assert_eq!(dominates(&g, G, X, &o), Err(ReachError::UnknownNode(NOPE.to_owned())));
}

#[test]
fn a_graph_over_max_edges_is_refused_as_cap() {
    let g = g7(&[]);
    let cap = ReachError::Cap { max_edges: 4, edges: 5 };
    let (p, d) = (PathOptions { max_edges: 4, ..po() }, DominanceOptions { max_edges: 4, ..dom() });
    assert_eq!(reachable(&g, SRV, X, &p).unwrap_err(), cap);
    assert_eq!(reachable_without(&g, SRV, X, &NO_GATES, &p).unwrap_err(), cap);
    assert_eq!(dominates(&g, G, X, &d).unwrap_err(), cap);
    assert_eq!(mandatory_pass(&g, X, &d).unwrap_err(), cap);
    // The cap is inclusive: exactly max_edges edges are accepted.
    assert_eq!(reachable(&g, SRV, X, &PathOptions { max_edges: 5, ..po() }), Ok(true));
    let empty = PathOptions { max_edges: 0, ..po() };
    assert_eq!(reachable(&Graph::default(), "", "", &empty), Err(ReachError::UnknownNode(String::new())));
}

#[test]
fn unknown_argument_ids_are_refused_as_unknown_node() {
    let g = g7(&[]);
    let unknown = ReachError::UnknownNode(NOPE.to_owned());
    assert_eq!(reachable(&g, NOPE, X, &po()).unwrap_err(), unknown);
    assert_eq!(reachable(&g, SRV, NOPE, &po()).unwrap_err(), unknown);
    assert_eq!(reachable_without(&g, NOPE, X, &NO_GATES, &po()).unwrap_err(), unknown);
    assert_eq!(reachable_without(&g, SRV, X, &[NOPE], &po()).unwrap_err(), unknown);
    assert_eq!(dominates(&g, NOPE, X, &dom()).unwrap_err(), unknown);
    assert_eq!(dominates(&g, G, NOPE, &dom()).unwrap_err(), unknown);
    assert_eq!(mandatory_pass(&g, NOPE, &dom()).unwrap_err(), unknown);
}

// ---------------------------------------------------------------------------------------------- CG-5

#[test]
fn refusal_order_options_before_unknown_node() {
    let g = g7(&[]);
    let o = PathOptions { kinds: kinds(&[]), ..po() };
    assert_eq!(named(reachable(&g, NOPE, NOPE, &o)), Some(invalid("kinds")));
    let d = DominanceOptions { kinds: kinds(&[]), ..dom() };
    assert_eq!(named(mandatory_pass(&g, NOPE, &d)), Some(invalid("kinds")));
}

#[test]
fn refusal_order_kinds_before_max_hops_and_entries() {
    let g = g7(&[]);
    let o = PathOptions { kinds: kinds(&[]), max_hops: Some(0), ..po() };
    assert_eq!(named(reachable(&g, SRV, X, &o)), Some(invalid("kinds")));
    let d = DominanceOptions { kinds: kinds(&[]), entries: Some(vec![]), ..dom() };
    assert_eq!(named(dominates(&g, G, X, &d)), Some(invalid("kinds")));
    let d = DominanceOptions { kinds: kinds(&[]), entries: Some(vec![NOPE.to_owned()]), ..dom() };
    assert_eq!(named(dominates(&g, G, X, &d)), Some(invalid("kinds")));
}

#[test]
fn refusal_order_options_before_cap() {
    let g = g7(&[]);
    let o = PathOptions { max_hops: Some(0), max_edges: 0, ..po() };
    assert_eq!(named(reachable(&g, SRV, X, &o)), Some(invalid("max_hops")));
    let d = DominanceOptions { entries: Some(vec![]), max_edges: 0, ..dom() };
    assert_eq!(named(mandatory_pass(&g, X, &d)), Some(invalid("entries")));
    let d = DominanceOptions { entries: Some(vec![NOPE.to_owned()]), max_edges: 0, ..dom() };
    assert_eq!(mandatory_pass(&g, X, &d), Err(ReachError::UnknownNode(NOPE.to_owned())));
    let no_server = Graph::new(vec![tool("a"), tool("x")], invoke(&[(A, X)])).unwrap();
    let d = DominanceOptions { max_edges: 0, ..dom() };
    assert_eq!(named(mandatory_pass(&no_server, X, &d)), Some(invalid("entries")));
}

#[test]
fn refusal_order_cap_before_unknown_node() {
    let g = g7(&[]);
    let cap = ReachError::Cap { max_edges: 1, edges: 5 };
    assert_eq!(named(reachable(&g, NOPE, NOPE, &PathOptions { max_edges: 1, ..po() })), Some(cap.clone()));
    let o = PathOptions { max_edges: 1, ..po() };
    assert_eq!(named(reachable_without(&g, SRV, X, &[NOPE], &o)), Some(cap.clone()));
    let d = DominanceOptions { max_edges: 1, ..dom() };
    assert_eq!(named(dominates(&g, NOPE, NOPE, &d)), Some(cap.clone()));
    assert_eq!(named(mandatory_pass(&g, NOPE, &d)), Some(cap));
}

#[test]
fn refusal_order_argument_ids_in_argument_order() {
    let g = g7(&[]);
    let first = |id: &str| ReachError::UnknownNode(id.to_owned());
    assert_eq!(reachable(&g, "f?", "t?", &po()).unwrap_err(), first("f?"));
    assert_eq!(reachable_without(&g, "f?", "t?", &["g1?"], &po()).unwrap_err(), first("f?"));
    assert_eq!(reachable_without(&g, SRV, "t?", &["g1?", "g2?"], &po()).unwrap_err(), first("t?"));
    assert_eq!(reachable_without(&g, SRV, X, &["g1?", "g2?"], &po()).unwrap_err(), first("g1?"));
    assert_eq!(reachable_without(&g, SRV, X, &[G, "g2?"], &po()).unwrap_err(), first("g2?"));
    assert_eq!(dominates(&g, "g?", "t?", &dom()).unwrap_err(), first("g?"));
    // Unknown ids are refused before a gate at an endpoint or an unreachable target is answered.
    assert_eq!(reachable_without(&g, SRV, X, &[SRV, "g2?"], &po()).unwrap_err(), first("g2?"));
    assert_eq!(dominates(&g, "g?", ORPHAN, &dom()).unwrap_err(), first("g?"));
}

// ------------------------------------------------------------------------------------------ Display

#[test]
fn refusals_display_their_reason_and_bound_long_ids() {
    let long = "x".repeat(10_000);
    let shown = ReachError::UnknownNode(long.clone()).to_string();
    assert!(shown.starts_with("unknown node \"xxx"), "{shown}");
    assert!(shown.len() < 300, "{}", shown.len());
    assert!(shown.contains("10000 bytes"), "{shown}");
    assert_eq!(ReachError::UnknownNode(NOPE.to_owned()).to_string(), format!("unknown node {NOPE:?}"));
    assert!(ReachError::Unreachable(long).to_string().len() < 350);
    assert!(ReachError::Cap { max_edges: 4, edges: 5 }.to_string().contains("max_edges = 4"));
    assert!(ReachError::Refused("all_paths").to_string().starts_with("all_paths is refused"));
    let e = ReachError::InvalidOption { option: "kinds", reason: "the set of kinds is empty" };
    assert_eq!(e.to_string(), "invalid option kinds: the set of kinds is empty");
    let _: &dyn std::error::Error = &e;
}
