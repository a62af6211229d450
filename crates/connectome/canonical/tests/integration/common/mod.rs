//! The graphs of docs/connectome.md CC-15 and CC-16 and the builders they are written with, shared by the
//! vector tests and the document test.
#![allow(dead_code)] // each test file uses part of it

use std::collections::BTreeMap;

use connectome_canonical::{
    CanonicalEdge, CanonicalGraph, CanonicalNode, EdgeKind, Labels, Level, NodeKind, Provenance, Sign, Value,
    Weight,
};

/// A node as the writer takes it.
pub fn node(id: &str, kind: NodeKind, level: Level, labels: Labels) -> CanonicalNode {
    CanonicalNode { id: id.to_owned(), kind, level, labels }
}

/// An edge with sign `unset`.
pub fn edge(
    from: &str,
    to: &str,
    kind: EdgeKind,
    provenance: Provenance,
    weight: Option<Weight>,
) -> CanonicalEdge {
    CanonicalEdge { from: from.to_owned(), to: to.to_owned(), kind, provenance, sign: Sign::Unset, weight }
}

/// Labels from pairs.
pub fn labels<const N: usize>(entries: [(&str, Value); N]) -> Labels {
    entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// CC-15: server `s`, tool `t` with `mode: read_only`, one declared invoke edge.
pub fn cc15_graph() -> CanonicalGraph {
    CanonicalGraph {
        nodes: vec![
            node("s/server", NodeKind::Server, Level::Server, Labels::new()),
            node("s/tool/t", NodeKind::Tool, Level::Server, labels([("mode", "read_only".into())])),
        ],
        edges: vec![edge("s/server", "s/tool/t", EdgeKind::Invoke, Provenance::Declared, None)],
    }
}

/// The golden graph's tool id.
pub const ECHO: &str = "srv/tool/\u{e9}cho";

/// CC-16: the golden graph.
pub fn golden_graph() -> CanonicalGraph {
    let nested: BTreeMap<String, Value> = labels([("n", 2.into()), ("ok", true.into())]);
    CanonicalGraph {
        nodes: vec![
            node("srv/server", NodeKind::Server, Level::Server, Labels::new()),
            node(
                ECHO,
                NodeKind::Tool,
                Level::Server,
                labels([
                    ("nested", Value::Object(nested)),
                    ("command_class", "observe".into()),
                    ("mode", "read_only".into()),
                    ("title", "cafe\u{301}".into()),
                ]),
            ),
            node("srv/resource/r:%2F%2Fa", NodeKind::Resource, Level::Server, Labels::new()),
            node("srv/module/Enum", NodeKind::Module, Level::Module, Labels::new()),
            node("srv/boundary/application/beam_mcp", NodeKind::Module, Level::Boundary, Labels::new()),
        ],
        edges: vec![
            edge("srv/server", ECHO, EdgeKind::Invoke, Provenance::Declared, None),
            edge(ECHO, "srv/resource/r:%2F%2Fa", EdgeKind::Read, Provenance::Observed, Some(Weight::Int(3))),
            edge(ECHO, "srv/module/Enum", EdgeKind::Invoke, Provenance::Declared, None),
            edge(
                "srv/module/Enum",
                "srv/boundary/application/beam_mcp",
                EdgeKind::Message,
                Provenance::Observed,
                Some(Weight::Int(1)),
            ),
        ],
    }
}
