//! Non-canonical exports ([CB-8]): Graphviz DOT and GraphML. Never hashed; they may change in any release.
//!
//! Both read the canonical order and never choose one of their own: nodes by the bytes of the NFC id,
//! edges by (NFC from, NFC to, kind, provenance), label keys by UTF-16 code units after NFC. A label
//! value is flattened to text: a string as itself (NFC), an integer in decimal, `true`/`false`/`null`,
//! and an array or object as its canonical JSON. Weights are not exported. A graph without canonical
//! bytes is refused with the same [`Uncanonical`] reason before anything is written.
//!
//! [CB-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use connectome_canonical::{Labels, Uncanonical, Value};
use unicode_normalization::UnicodeNormalization;

use crate::graph::Graph;

fn nfc(s: &str) -> String {
    s.nfc().collect()
}

/// A node in export form: NFC id, kind, level, flattened labels in UTF-16 key order.
struct FlatNode {
    id: String,
    kind: &'static str,
    level: &'static str,
    labels: Vec<(String, String)>,
}

/// An edge in export form: NFC endpoints and the vocabulary names.
struct FlatEdge {
    from: String,
    to: String,
    kind: &'static str,
    provenance: &'static str,
    sign: &'static str,
}

fn flat(value: &Value) -> Result<String, Uncanonical> {
    Ok(match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Str(s) => nfc(s),
        Value::Object(map) => utf8(connectome_canonical::encode_value(map)?),
        Value::Array(_) => {
            let wrapped = Labels::from([("a".to_owned(), value.clone())]);
            let text = utf8(connectome_canonical::encode_value(&wrapped)?);
            // `{"a":` … `}` around the array's canonical JSON.
            text[5..text.len() - 1].to_owned()
        }
    })
}

fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_default()
}

fn flatten(graph: &Graph) -> Result<(Vec<FlatNode>, Vec<FlatEdge>), Uncanonical> {
    connectome_canonical::check(&graph.to_canonical())?;
    let mut nodes = Vec::with_capacity(graph.nodes().len());
    for node in graph.nodes() {
        let mut labels = Vec::with_capacity(node.labels().len());
        for (key, value) in node.labels() {
            labels.push((nfc(key), flat(value)?));
        }
        labels.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
        nodes.push(FlatNode {
            id: nfc(node.id()),
            kind: node.kind().as_str(),
            level: node.level().as_str(),
            labels,
        });
    }
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let mut edges: Vec<FlatEdge> = graph
        .edges()
        .iter()
        .map(|e| FlatEdge {
            from: nfc(&e.from),
            to: nfc(&e.to),
            kind: e.kind.as_str(),
            provenance: e.provenance.as_str(),
            sign: e.sign.as_str(),
        })
        .collect();
    edges.sort_by(|a, b| (&a.from, &a.to, a.kind, a.provenance).cmp(&(&b.from, &b.to, b.kind, b.provenance)));
    Ok((nodes, edges))
}

/// Writes a DOT quoted string. `"` is escaped; `\` is written as `\\`, so a trailing backslash cannot
/// swallow the closing quote — Graphviz shows such a backslash doubled (DOT has no escape for it).
fn dot_q(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn xml(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
}

/// XML 1.0 `Char`: `#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]`.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

fn check_xml(nodes: &[FlatNode]) -> Result<(), Uncanonical> {
    for node in nodes {
        let strings = std::iter::once(node.id.as_str())
            .chain(node.labels.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]));
        for s in strings {
            if let Some(c) = s.chars().find(|c| !xml_char(*c)) {
                return Err(Uncanonical::NotXml { id: node.id.clone(), cp: u32::from(c) });
            }
        }
    }
    Ok(())
}

impl Graph {
    /// The Graphviz DOT export ([CB-8]): `digraph connectome {…}`, every id and value quoted, node attributes
    /// `kind`, `level` and `"label_<key>"`, edge attributes `kind`, `provenance`, `sign`.
    ///
    /// [CB-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn to_dot(&self) -> Result<String, Uncanonical> {
        let (nodes, edges) = flatten(self)?;
        let mut out = String::from("digraph connectome {\n");
        for node in &nodes {
            out.push_str("  ");
            dot_q(&mut out, &node.id);
            out.push_str(" [kind=");
            dot_q(&mut out, node.kind);
            out.push_str(", level=");
            dot_q(&mut out, node.level);
            for (key, value) in &node.labels {
                out.push_str(", ");
                dot_q(&mut out, &format!("label_{key}"));
                out.push('=');
                dot_q(&mut out, value);
            }
            out.push_str("];\n");
        }
        for edge in &edges {
            out.push_str("  ");
            dot_q(&mut out, &edge.from);
            out.push_str(" -> ");
            dot_q(&mut out, &edge.to);
            out.push_str(" [kind=");
            dot_q(&mut out, edge.kind);
            out.push_str(", provenance=");
            dot_q(&mut out, edge.provenance);
            out.push_str(", sign=");
            dot_q(&mut out, edge.sign);
            out.push_str("];\n");
        }
        out.push_str("}\n");
        Ok(out)
    }

    /// The GraphML export ([CB-8]): keys `kind`, `level`, `l0..ln` (label keys in UTF-16 order), `ekind`,
    /// `provenance`, `sign`; XML escapes plus `&#9; &#10; &#13;`; a character outside XML 1.0 `Char` is
    /// refused as [`Uncanonical::NotXml`].
    ///
    /// [CB-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn to_graphml(&self) -> Result<String, Uncanonical> {
        let (nodes, edges) = flatten(self)?;
        check_xml(&nodes)?;
        let mut label_keys: Vec<&str> =
            nodes.iter().flat_map(|n| n.labels.iter().map(|(k, _)| k.as_str())).collect();
        label_keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        label_keys.dedup();
        let key_id = |key: &str| {
            label_keys.binary_search_by(|k| connectome_canonical::utf16_cmp(k, key)).unwrap_or_default()
        };

        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.push_str("<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n");
        out.push_str("  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n");
        out.push_str("  <key id=\"level\" for=\"node\" attr.name=\"level\" attr.type=\"string\"/>\n");
        for (i, key) in label_keys.iter().enumerate() {
            out.push_str(&format!("  <key id=\"l{i}\" for=\"node\" attr.name=\""));
            xml(&mut out, key);
            out.push_str("\" attr.type=\"string\"/>\n");
        }
        out.push_str("  <key id=\"ekind\" for=\"edge\" attr.name=\"kind\" attr.type=\"string\"/>\n");
        out.push_str(
            "  <key id=\"provenance\" for=\"edge\" attr.name=\"provenance\" attr.type=\"string\"/>\n",
        );
        out.push_str("  <key id=\"sign\" for=\"edge\" attr.name=\"sign\" attr.type=\"string\"/>\n");
        out.push_str("  <graph id=\"connectome\" edgedefault=\"directed\">\n");
        for node in &nodes {
            out.push_str("    <node id=\"");
            xml(&mut out, &node.id);
            out.push_str("\">\n      <data key=\"kind\">");
            xml(&mut out, node.kind);
            out.push_str("</data>\n      <data key=\"level\">");
            xml(&mut out, node.level);
            out.push_str("</data>\n");
            for (key, value) in &node.labels {
                out.push_str(&format!("      <data key=\"l{}\">", key_id(key)));
                xml(&mut out, value);
                out.push_str("</data>\n");
            }
            out.push_str("    </node>\n");
        }
        for edge in &edges {
            out.push_str("    <edge source=\"");
            xml(&mut out, &edge.from);
            out.push_str("\" target=\"");
            xml(&mut out, &edge.to);
            out.push_str("\">\n      <data key=\"ekind\">");
            xml(&mut out, edge.kind);
            out.push_str("</data>\n      <data key=\"provenance\">");
            xml(&mut out, edge.provenance);
            out.push_str("</data>\n      <data key=\"sign\">");
            xml(&mut out, edge.sign);
            out.push_str("</data>\n    </edge>\n");
        }
        out.push_str("  </graph>\n</graphml>\n");
        Ok(out)
    }
}
