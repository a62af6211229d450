//! Rules of docs/connectome.md CA-6, CA-13, CB-1…CB-3 and CK-1/CK-2 through the graph API, and CC-15/CC-16
//! reproduced byte for byte and hash for hash.

use std::collections::BTreeMap;

use connectome_graph::{
    Algorithm, Edge, EdgeKey, EdgeKind, Graph, GraphError, GroupSource, Identity, IdentityFault, Labels,
    Level, Node, NodeKind, Provenance, Sign, Uncanonical, Value, Weight, escape_component,
};

fn s(x: &str) -> String {
    x.to_owned()
}

fn labels<const N: usize>(entries: [(&str, Value); N]) -> Labels {
    entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

fn server(name: &str) -> Identity {
    Identity::Server { server: s(name) }
}

fn tool(srv: &str, name: &str) -> Identity {
    Identity::Tool { server: s(srv), name: s(name) }
}

fn edge(from: &str, to: &str, kind: EdgeKind, provenance: Provenance) -> Edge {
    Edge::new(from, to, kind, provenance, None).unwrap()
}

// ---------------------------------------------------------------------------------------------- CA-13

#[test]
fn ca13_id_table_with_rust_paths() {
    let cases = [
        (server("srv"), Level::Server, "srv/server"),
        (tool("srv", "\u{e9}cho"), Level::Server, "srv/tool/\u{e9}cho"),
        (Identity::Resource { server: s("srv"), uri: s("r://a") }, Level::Server, "srv/resource/r:%2F%2Fa"),
        (Identity::Prompt { server: s("a/b"), name: s("p%") }, Level::Server, "a%2Fb/prompt/p%25"),
        (Identity::Process { server: s("srv"), name: s("worker") }, Level::Server, "srv/process/worker"),
        (
            Identity::Module { server: s("srv"), path: s("my_crate::tools") },
            Level::Module,
            "srv/module/my_crate::tools",
        ),
        (
            Identity::Fn { server: s("srv"), path: s("my_crate::tools"), name: s("run") },
            Level::Mfa,
            "srv/module/my_crate::tools/run",
        ),
        (
            Identity::Boundary { server: s("srv"), source: GroupSource::Application, name: s("beam_mcp") },
            Level::Boundary,
            "srv/boundary/application/beam_mcp",
        ),
        (
            Identity::Boundary { server: s("srv"), source: GroupSource::BoundaryModule, name: s("Foo") },
            Level::Boundary,
            "srv/boundary/boundary_module/Foo",
        ),
    ];
    for (identity, level, id) in cases {
        assert_eq!(identity.id(), id);
        assert_eq!(identity.level(), level);
        let node = Node::new(identity.kind(), level, identity.clone(), Labels::new()).unwrap();
        assert_eq!(node.id(), id);
    }
}

#[test]
fn ca13_escapes_percent_before_slash() {
    assert_eq!(escape_component("a%2Fb/c"), "a%252Fb%2Fc");
    assert_eq!(tool("s", "%/").id(), "s/tool/%25%2F");
}

#[test]
fn ca13_applies_no_nfc() {
    assert_eq!(tool("s", "cafe\u{301}").id(), "s/tool/cafe\u{301}");
    assert_ne!(tool("s", "cafe\u{301}").id(), tool("s", "caf\u{e9}").id());
}

#[test]
fn ck2_function_id_is_module_id_plus_fn_name() {
    let module = Identity::Module { server: s("srv"), path: s("a::b") };
    let function = Identity::Fn { server: s("srv"), path: s("a::b"), name: s("c") };
    assert_eq!(function.id(), format!("{}/c", module.id()));
    // A path component holding a slash cannot be mistaken for the fn separator.
    let odd = Identity::Module { server: s("srv"), path: s("a::b/c") };
    assert_ne!(odd.id(), function.id());
}

// ---------------------------------------------------------------------------------------------- CB-1

#[test]
fn cb1_identity_tag_must_be_the_kind() {
    let err = Node::new(NodeKind::Server, Level::Server, tool("s", "t"), Labels::new()).unwrap_err();
    assert!(matches!(err, GraphError::InvalidIdentity { fault: IdentityFault::Kind, .. }));
}

#[test]
fn cb1_boundary_identity_requires_kind_module() {
    let boundary = Identity::Boundary { server: s("s"), source: GroupSource::Application, name: s("c") };
    let err = Node::new(NodeKind::Server, Level::Boundary, boundary.clone(), Labels::new()).unwrap_err();
    assert!(matches!(err, GraphError::InvalidIdentity { fault: IdentityFault::Kind, .. }));
    assert!(Node::new(NodeKind::Module, Level::Boundary, boundary, Labels::new()).is_ok());
}

#[test]
fn cb1_level_must_be_consistent() {
    let function = Identity::Fn { server: s("s"), path: s("m"), name: s("f") };
    let err = Node::new(NodeKind::Module, Level::Module, function, Labels::new()).unwrap_err();
    assert!(matches!(err, GraphError::InvalidIdentity { fault: IdentityFault::Level, .. }));
    let module = Identity::Module { server: s("s"), path: s("m") };
    let err = Node::new(NodeKind::Module, Level::Mfa, module, Labels::new()).unwrap_err();
    assert!(matches!(err, GraphError::InvalidIdentity { fault: IdentityFault::Level, .. }));
}

#[test]
fn cb1_kind_is_checked_before_level() {
    let err = Node::new(NodeKind::Tool, Level::Module, server("s"), Labels::new()).unwrap_err();
    assert!(matches!(err, GraphError::InvalidIdentity { fault: IdentityFault::Kind, .. }));
}

// ---------------------------------------------------------------------------------------------- CB-2

#[test]
fn cb2_edge_new_sets_sign_unset() {
    let e = edge("a", "b", EdgeKind::Invoke, Provenance::Declared);
    assert_eq!(e.sign, Sign::Unset);
}

#[test]
fn cb2_weight_must_be_finite_and_not_below_zero() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        let err = Edge::new("a", "b", EdgeKind::Invoke, Provenance::Observed, Some(Weight::Float(bad)));
        assert!(matches!(err, Err(GraphError::InvalidWeight(_))), "{bad}");
    }
    for good in [Some(Weight::Float(-0.0)), Some(Weight::Float(1.5)), Some(Weight::Int(3)), None] {
        assert!(Edge::new("a", "b", EdgeKind::Invoke, Provenance::Observed, good).is_ok());
    }
}

#[test]
fn cb2_key_excludes_sign_and_weight() {
    let a = edge("a", "b", EdgeKind::Read, Provenance::Observed);
    let mut b = Edge::new("a", "b", EdgeKind::Read, Provenance::Observed, Some(Weight::Int(9))).unwrap();
    b.sign = Sign::Hold;
    assert_eq!(a.key(), b.key());
    assert_eq!(
        a.key(),
        EdgeKey { from: s("a"), to: s("b"), kind: EdgeKind::Read, provenance: Provenance::Observed }
    );
}

// ---------------------------------------------------------------------------------------------- CB-3

fn two_nodes() -> Vec<Node> {
    vec![Node::from_identity(tool("s", "t"), Labels::new()), Node::from_identity(server("s"), Labels::new())]
}

#[test]
fn cb3_version_must_be_3_and_is_checked_first() {
    assert_eq!(Graph::schema_version(), 3);
    let dup = vec![two_nodes()[0].clone(), two_nodes()[0].clone()];
    assert_eq!(Graph::with_version(2, dup, vec![]), Err(GraphError::InvalidVersion(2)));
}

#[test]
fn cb3_edge_check_precedes_duplicate_node() {
    let dup = vec![two_nodes()[0].clone(), two_nodes()[0].clone()];
    let mut bad = edge("x", "y", EdgeKind::Invoke, Provenance::Observed);
    bad.weight = Some(Weight::Float(f64::NAN));
    assert!(matches!(Graph::new(dup, vec![bad]), Err(GraphError::InvalidWeight(_))));
}

#[test]
fn cb3_duplicate_node_precedes_duplicate_edge() {
    let dup = vec![two_nodes()[0].clone(), two_nodes()[0].clone()];
    let e = edge("s/server", "s/tool/t", EdgeKind::Invoke, Provenance::Declared);
    assert_eq!(Graph::new(dup, vec![e.clone(), e]), Err(GraphError::DuplicateNode(s("s/tool/t"))));
}

#[test]
fn cb3_duplicate_edge_precedes_dangling_edge_and_ignores_sign() {
    let e = edge("s/server", "nowhere", EdgeKind::Invoke, Provenance::Declared);
    let mut f = e.clone();
    f.sign = Sign::Deny;
    assert_eq!(Graph::new(two_nodes(), vec![e.clone(), f]), Err(GraphError::DuplicateEdge(e.key())));
}

#[test]
fn cb3_dangling_endpoint_is_refused() {
    let e = edge("s/server", "nowhere", EdgeKind::Invoke, Provenance::Declared);
    assert_eq!(Graph::new(two_nodes(), vec![e]), Err(GraphError::DanglingEdge(s("nowhere"))));
    let e = edge("ghost", "s/server", EdgeKind::Invoke, Provenance::Declared);
    assert_eq!(Graph::new(two_nodes(), vec![e]), Err(GraphError::DanglingEdge(s("ghost"))));
}

#[test]
fn cb3_stores_nodes_by_raw_id_and_edges_by_raw_key() {
    let edges = vec![
        edge("s/tool/t", "s/server", EdgeKind::Invoke, Provenance::Observed),
        edge("s/server", "s/tool/t", EdgeKind::Read, Provenance::Declared),
        edge("s/server", "s/tool/t", EdgeKind::Message, Provenance::Declared),
        edge("s/server", "s/tool/t", EdgeKind::Invoke, Provenance::Observed),
        edge("s/server", "s/tool/t", EdgeKind::Invoke, Provenance::Declared),
    ];
    let g = Graph::new(two_nodes(), edges).unwrap();
    let ids: Vec<&str> = g.nodes().iter().map(Node::id).collect();
    assert_eq!(ids, ["s/server", "s/tool/t"]);
    let keys: Vec<(&str, &str, &str)> =
        g.edges().iter().map(|e| (e.from.as_str(), e.kind.as_str(), e.provenance.as_str())).collect();
    // Kind by name: invoke < message < read (not the enum's declaration order).
    assert_eq!(
        keys,
        [
            ("s/server", "invoke", "declared"),
            ("s/server", "invoke", "observed"),
            ("s/server", "message", "declared"),
            ("s/server", "read", "declared"),
            ("s/tool/t", "invoke", "observed"),
        ]
    );
}

// ---------------------------------------------------------------------------------------------- CA-6

#[test]
fn ca6_consumer_assigns_sign_and_rebuilds() {
    let g = cc15_graph();
    let (nodes, mut edges) = g.clone().into_parts();
    edges[0].sign = Sign::Deny;
    let signed = Graph::new(nodes, edges).unwrap();
    let bytes = String::from_utf8(signed.to_canonical_bytes(Algorithm::Sha256).unwrap()).unwrap();
    assert_eq!(bytes, CC15_BYTES.replace(r#""sign":"unset""#, r#""sign":"deny""#));
    assert_ne!(signed.hash_hex(Algorithm::Sha256), g.hash_hex(Algorithm::Sha256));
}

// ---------------------------------------------------------------------------------------------- CC-15

const CC15_BYTES: &str = r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"s/server","kind":"server","labels":{},"level":"server"},{"id":"s/tool/t","kind":"tool","labels":{"mode":"read_only"},"level":"server"}],"edges":[{"from":"s/server","kind":"invoke","provenance":"declared","sign":"unset","to":"s/tool/t"}]}"#;

fn cc15_graph() -> Graph {
    let nodes = vec![
        Node::new(NodeKind::Tool, Level::Server, tool("s", "t"), labels([("mode", "read_only".into())]))
            .unwrap(),
        Node::new(NodeKind::Server, Level::Server, server("s"), Labels::new()).unwrap(),
    ];
    Graph::new(nodes, vec![edge("s/server", "s/tool/t", EdgeKind::Invoke, Provenance::Declared)]).unwrap()
}

#[test]
fn cc15_worked_example_through_the_graph_api() {
    let g = cc15_graph();
    assert_eq!(String::from_utf8(g.to_canonical_bytes(Algorithm::Sha256).unwrap()).unwrap(), CC15_BYTES);
    assert_eq!(
        g.hash_hex(Algorithm::Sha256).unwrap(),
        "a401cd47f0f0410d17248538eb8a3ef00018f6a31bf6fb6a7b9b0ba3377f570e"
    );
    assert_eq!(g.hash(Algorithm::Sha256).unwrap().len(), 32);
    assert_eq!(
        g.hash_hex(Algorithm::Sha384).unwrap(),
        "f5b9b2f4fe21a4bfe88721d804f4f82d167f73f7dd59b1a64ae0196f4cf78f05a6b9a3efa6d02e7362469796dbba53dd"
    );
    assert_eq!(
        g.hash_hex(Algorithm::Sha512).unwrap(),
        "26cacb025eeaeabb0c441a293882ab81ec2436b80559618fd700dc494f9a5d2e2c6d46cee69a68cbdc84746aa9d64a4a11da027df7b0bc733ba1091031ee2e78"
    );
}

// ---------------------------------------------------------------------------------------------- CC-16

pub(crate) fn golden_graph() -> Graph {
    let nested: BTreeMap<String, Value> = labels([("n", 2.into()), ("ok", true.into())]);
    let tool_labels = labels([
        ("nested", nested.into()),
        ("command_class", "observe".into()),
        ("mode", "read_only".into()),
        ("title", "cafe\u{301}".into()),
    ]);
    let boundary =
        Identity::Boundary { server: s("srv"), source: GroupSource::Application, name: s("beam_mcp") };
    let nodes = vec![
        Node::from_identity(server("srv"), Labels::new()),
        Node::from_identity(tool("srv", "\u{e9}cho"), tool_labels),
        Node::from_identity(Identity::Resource { server: s("srv"), uri: s("r://a") }, Labels::new()),
        Node::from_identity(Identity::Module { server: s("srv"), path: s("Enum") }, Labels::new()),
        Node::from_identity(boundary, Labels::new()),
    ];
    let w = |n| Some(Weight::Int(n));
    let edges = vec![
        Edge::new("srv/server", "srv/tool/\u{e9}cho", EdgeKind::Invoke, Provenance::Declared, None).unwrap(),
        Edge::new("srv/tool/\u{e9}cho", "srv/resource/r:%2F%2Fa", EdgeKind::Read, Provenance::Observed, w(3))
            .unwrap(),
        Edge::new("srv/tool/\u{e9}cho", "srv/module/Enum", EdgeKind::Invoke, Provenance::Declared, None)
            .unwrap(),
        Edge::new(
            "srv/module/Enum",
            "srv/boundary/application/beam_mcp",
            EdgeKind::Message,
            Provenance::Observed,
            w(1),
        )
        .unwrap(),
    ];
    Graph::new(nodes, edges).unwrap()
}

const CC16_BYTES: &str = r#"{"schema_version":3,"algorithm":"sha256","nodes":[{"id":"srv/boundary/application/beam_mcp","kind":"module","labels":{},"level":"boundary"},{"id":"srv/module/Enum","kind":"module","labels":{},"level":"module"},{"id":"srv/resource/r:%2F%2Fa","kind":"resource","labels":{},"level":"server"},{"id":"srv/server","kind":"server","labels":{},"level":"server"},{"id":"srv/tool/écho","kind":"tool","labels":{"command_class":"observe","mode":"read_only","nested":{"n":2,"ok":true},"title":"café"},"level":"server"}],"edges":[{"from":"srv/module/Enum","kind":"message","provenance":"observed","sign":"unset","to":"srv/boundary/application/beam_mcp"},{"from":"srv/server","kind":"invoke","provenance":"declared","sign":"unset","to":"srv/tool/écho"},{"from":"srv/tool/écho","kind":"invoke","provenance":"declared","sign":"unset","to":"srv/module/Enum"},{"from":"srv/tool/écho","kind":"read","provenance":"observed","sign":"unset","to":"srv/resource/r:%2F%2Fa"}]}"#;

#[test]
fn cc16_golden_graph_through_the_graph_api() {
    let g = golden_graph();
    let bytes = g.to_canonical_bytes(Algorithm::Sha256).unwrap();
    assert_eq!(bytes.len(), 955);
    assert_eq!(String::from_utf8(bytes).unwrap(), CC16_BYTES);
    assert_eq!(
        g.hash_hex(Algorithm::Sha256).unwrap(),
        "e442feaaccd752ddfe3a907a88bcfb19c1d31f4be3fc20a3125ba7b85584caf7"
    );
    assert_eq!(
        String::from_utf8(g.to_sidecar_bytes().unwrap()).unwrap(),
        r#"{"schema_version":3,"weights":[{"from":"srv/module/Enum","kind":"message","provenance":"observed","to":"srv/boundary/application/beam_mcp","weight":1},{"from":"srv/tool/écho","kind":"read","provenance":"observed","to":"srv/resource/r:%2F%2Fa","weight":3}]}"#
    );
}

#[test]
fn cc6_ids_equal_after_nfc_are_refused_by_the_writer() {
    let nodes = vec![
        Node::from_identity(tool("s", "cafe\u{301}"), Labels::new()),
        Node::from_identity(tool("s", "caf\u{e9}"), Labels::new()),
    ];
    let g = Graph::new(nodes, vec![]).unwrap();
    assert_eq!(
        g.to_canonical_bytes(Algorithm::Sha256),
        Err(Uncanonical::DuplicateIdAfterNfc { id: s("s/tool/caf\u{e9}") })
    );
}

// ---------------------------------------------------------------------------------------------- CB-8

const GOLDEN_DOT: &str = concat!(
    "digraph connectome {\n",
    "  \"srv/boundary/application/beam_mcp\" [kind=\"module\", level=\"boundary\"];\n",
    "  \"srv/module/Enum\" [kind=\"module\", level=\"module\"];\n",
    "  \"srv/resource/r:%2F%2Fa\" [kind=\"resource\", level=\"server\"];\n",
    "  \"srv/server\" [kind=\"server\", level=\"server\"];\n",
    "  \"srv/tool/\u{e9}cho\" [kind=\"tool\", level=\"server\", \"label_command_class\"=\"observe\", ",
    "\"label_mode\"=\"read_only\", \"label_nested\"=\"{\\\"n\\\":2,\\\"ok\\\":true}\", \"label_title\"=\"caf\u{e9}\"];\n",
    "  \"srv/module/Enum\" -> \"srv/boundary/application/beam_mcp\" [kind=\"message\", provenance=\"observed\", sign=\"unset\"];\n",
    "  \"srv/server\" -> \"srv/tool/\u{e9}cho\" [kind=\"invoke\", provenance=\"declared\", sign=\"unset\"];\n",
    "  \"srv/tool/\u{e9}cho\" -> \"srv/module/Enum\" [kind=\"invoke\", provenance=\"declared\", sign=\"unset\"];\n",
    "  \"srv/tool/\u{e9}cho\" -> \"srv/resource/r:%2F%2Fa\" [kind=\"read\", provenance=\"observed\", sign=\"unset\"];\n",
    "}\n",
);

#[test]
fn cb8_dot_golden_quotes_everything_and_prefixes_labels() {
    assert_eq!(golden_graph().to_dot().unwrap(), GOLDEN_DOT);
}

#[test]
fn cb8_dot_escapes_backslash_and_quote() {
    let node = Node::from_identity(tool("s", "a\"b\\c"), labels([("k\"", "v\\".into())]));
    let dot = Graph::new(vec![node], vec![]).unwrap().to_dot().unwrap();
    assert_eq!(
        dot,
        "digraph connectome {\n  \"s/tool/a\\\"b\\\\c\" [kind=\"tool\", level=\"server\", \"label_k\\\"\"=\"v\\\\\"];\n}\n"
    );
}

const GOLDEN_GRAPHML: &str = concat!(
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
    "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n",
    "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n",
    "  <key id=\"level\" for=\"node\" attr.name=\"level\" attr.type=\"string\"/>\n",
    "  <key id=\"l0\" for=\"node\" attr.name=\"command_class\" attr.type=\"string\"/>\n",
    "  <key id=\"l1\" for=\"node\" attr.name=\"mode\" attr.type=\"string\"/>\n",
    "  <key id=\"l2\" for=\"node\" attr.name=\"nested\" attr.type=\"string\"/>\n",
    "  <key id=\"l3\" for=\"node\" attr.name=\"title\" attr.type=\"string\"/>\n",
    "  <key id=\"ekind\" for=\"edge\" attr.name=\"kind\" attr.type=\"string\"/>\n",
    "  <key id=\"provenance\" for=\"edge\" attr.name=\"provenance\" attr.type=\"string\"/>\n",
    "  <key id=\"sign\" for=\"edge\" attr.name=\"sign\" attr.type=\"string\"/>\n",
    "  <graph id=\"connectome\" edgedefault=\"directed\">\n",
    "    <node id=\"srv/boundary/application/beam_mcp\">\n",
    "      <data key=\"kind\">module</data>\n",
    "      <data key=\"level\">boundary</data>\n",
    "    </node>\n",
    "    <node id=\"srv/module/Enum\">\n",
    "      <data key=\"kind\">module</data>\n",
    "      <data key=\"level\">module</data>\n",
    "    </node>\n",
    "    <node id=\"srv/resource/r:%2F%2Fa\">\n",
    "      <data key=\"kind\">resource</data>\n",
    "      <data key=\"level\">server</data>\n",
    "    </node>\n",
    "    <node id=\"srv/server\">\n",
    "      <data key=\"kind\">server</data>\n",
    "      <data key=\"level\">server</data>\n",
    "    </node>\n",
    "    <node id=\"srv/tool/\u{e9}cho\">\n",
    "      <data key=\"kind\">tool</data>\n",
    "      <data key=\"level\">server</data>\n",
    "      <data key=\"l0\">observe</data>\n",
    "      <data key=\"l1\">read_only</data>\n",
    "      <data key=\"l2\">{&quot;n&quot;:2,&quot;ok&quot;:true}</data>\n",
    "      <data key=\"l3\">caf\u{e9}</data>\n",
    "    </node>\n",
    "    <edge source=\"srv/module/Enum\" target=\"srv/boundary/application/beam_mcp\">\n",
    "      <data key=\"ekind\">message</data>\n",
    "      <data key=\"provenance\">observed</data>\n",
    "      <data key=\"sign\">unset</data>\n",
    "    </edge>\n",
    "    <edge source=\"srv/server\" target=\"srv/tool/\u{e9}cho\">\n",
    "      <data key=\"ekind\">invoke</data>\n",
    "      <data key=\"provenance\">declared</data>\n",
    "      <data key=\"sign\">unset</data>\n",
    "    </edge>\n",
    "    <edge source=\"srv/tool/\u{e9}cho\" target=\"srv/module/Enum\">\n",
    "      <data key=\"ekind\">invoke</data>\n",
    "      <data key=\"provenance\">declared</data>\n",
    "      <data key=\"sign\">unset</data>\n",
    "    </edge>\n",
    "    <edge source=\"srv/tool/\u{e9}cho\" target=\"srv/resource/r:%2F%2Fa\">\n",
    "      <data key=\"ekind\">read</data>\n",
    "      <data key=\"provenance\">observed</data>\n",
    "      <data key=\"sign\">unset</data>\n",
    "    </edge>\n",
    "  </graph>\n",
    "</graphml>\n",
);

#[test]
fn cb8_graphml_golden_with_label_keys_in_utf16_order() {
    assert_eq!(golden_graph().to_graphml().unwrap(), GOLDEN_GRAPHML);
}

#[test]
fn cb8_graphml_escapes_xml_and_tab_lf_cr() {
    let node = Node::from_identity(tool("s", "<&>"), labels([("k", "\"\t\n\r".into())]));
    let xml = Graph::new(vec![node], vec![]).unwrap().to_graphml().unwrap();
    assert!(xml.contains("<node id=\"s/tool/&lt;&amp;&gt;\">\n"));
    assert!(xml.contains("<data key=\"l0\">&quot;&#9;&#10;&#13;</data>\n"));
}

#[test]
fn cb8_graphml_label_keys_sort_by_utf16_code_units() {
    let node = Node::from_identity(tool("s", "t"), labels([("\u{ff01}", 1.into()), ("\u{1f600}", 2.into())]));
    let xml = Graph::new(vec![node], vec![]).unwrap().to_graphml().unwrap();
    assert!(xml.contains("<key id=\"l0\" for=\"node\" attr.name=\"\u{1f600}\""));
    assert!(xml.contains("<key id=\"l1\" for=\"node\" attr.name=\"\u{ff01}\""));
}

#[test]
fn cb8_graphml_refuses_a_character_outside_xml_char() {
    let node = Node::from_identity(tool("s", "t"), labels([("k", "a\u{1}".into())]));
    let g = Graph::new(vec![node], vec![]).unwrap();
    assert_eq!(g.to_graphml(), Err(Uncanonical::NotXml { id: s("s/tool/t"), cp: 1 }));
    let node = Node::from_identity(tool("s", "\u{fffe}"), Labels::new());
    let g = Graph::new(vec![node], vec![]).unwrap();
    assert_eq!(g.to_graphml(), Err(Uncanonical::NotXml { id: s("s/tool/\u{fffe}"), cp: 0xfffe }));
    // DOT has no such restriction.
    assert!(g.to_dot().is_ok());
}

#[test]
fn cb8_exports_refuse_what_has_no_canonical_bytes() {
    let nodes = vec![
        Node::from_identity(tool("s", "cafe\u{301}"), Labels::new()),
        Node::from_identity(tool("s", "caf\u{e9}"), Labels::new()),
    ];
    let g = Graph::new(nodes, vec![]).unwrap();
    let refusal = Uncanonical::DuplicateIdAfterNfc { id: s("s/tool/caf\u{e9}") };
    assert_eq!(g.to_dot(), Err(refusal.clone()));
    assert_eq!(g.to_graphml(), Err(refusal));
}

#[test]
fn cb8_array_label_flattens_to_canonical_json() {
    let value = Value::Array(vec![1.into(), "a".into(), Value::Null, false.into()]);
    let node = Node::from_identity(tool("s", "t"), labels([("list", value)]));
    let dot = Graph::new(vec![node], vec![]).unwrap().to_dot().unwrap();
    assert!(dot.contains(r#""label_list"="[1,\"a\",null,false]""#), "{dot}");
}
