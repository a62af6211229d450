//! The writer of section C: envelope ([CC-1]), node and edge order ([CC-2], [CC-3]), label objects ([CC-4]…[CC-9]), the
//! record encoder ([CC-10]) and the sidecar ([CB-5], [CC-11]).
//!
//! [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CC-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use crate::digest::{Algorithm, digest, to_hex};
use crate::error::{GraphReason, HashValueError, Uncanonical};
use crate::float::format_float;
use crate::model::{CanonicalEdge, CanonicalGraph, CanonicalNode, SCHEMA_VERSION, Value, Weight};

/// NFC, not NFKC ([CC-6]), as the writer applies it; borrows when the quick check proves the text
/// already is (ASCII always is).
///
/// [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn nfc(s: &str) -> Cow<'_, str> {
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.nfc().collect())
    }
}

/// Compares keys by UTF-16 code units ([CC-4], RFC 8785). The orders differ only between a character above
/// U+FFFF and one in U+E000…U+FFFF, so when either side is ASCII the byte order is the same.
///
/// [CC-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() || b.is_ascii() { a.cmp(b) } else { a.encode_utf16().cmp(b.encode_utf16()) }
}

/// Writes a JSON string with the [CC-8] escaping set; `s` must already be NFC. Every byte of a multi-byte
/// UTF-8 sequence is 0x80 or above, so the text is scanned byte-wise and copied in unescaped runs.
///
/// [CC-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0x00..=0x1f => &[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0x0f)]],
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..i]);
        out.extend_from_slice(escape);
        run = i + 1;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// How deep arrays and objects may nest in the bytes written, counted in the document: a record's
/// top-level object is level 1, a node's labels object level 4. It is the deepest
/// nesting `serde_json` parses (127: its recursion limit of 128 refuses the 128th level), so that
/// [`verify`](fn@crate::verify) can read back every document the writer produces; and the writer recurses
/// once per level, so an unbounded depth built in code could exhaust the stack instead of being refused.
pub const MAX_LABEL_DEPTH: usize = 127;

/// The level of a node's labels object in the graph document: the envelope, `nodes`, the node, the labels.
const NODE_LABELS_DEPTH: usize = 4;

/// Writes a label value ([CC-9]) for owner `id` at nesting `depth`; refusals name `id` and the NFC key.
///
/// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn write_value(out: &mut Vec<u8>, id: &str, value: &Value, depth: usize) -> Result<(), Uncanonical> {
    if depth > MAX_LABEL_DEPTH && matches!(value, Value::Array(_) | Value::Object(_)) {
        return Err(Uncanonical::TooDeep { id: id.to_owned() });
    }
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(n) => out.extend_from_slice(n.as_str().as_bytes()),
        Value::Str(s) => write_str(out, &nfc(s)),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, id, item, depth + 1)?;
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(out, id, map, depth)?,
    }
    Ok(())
}

/// Writes an object: keys NFC'd, refused when equal after NFC, sorted by UTF-16 code units ([CC-4], [CC-6]).
///
/// [CC-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CC-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn write_object(
    out: &mut Vec<u8>,
    id: &str,
    map: &BTreeMap<String, Value>,
    depth: usize,
) -> Result<(), Uncanonical> {
    let mut entries: Vec<(Cow<'_, str>, &Value)> = map.iter().map(|(k, v)| (nfc(k), v)).collect();
    entries.sort_by(|a, b| utf16_cmp(&a.0, &b.0));
    if let Some(pair) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Uncanonical::DuplicateLabelKey {
            id: id.to_owned(),
            key: pair[0].0.clone().into_owned(),
        });
    }
    out.push(b'{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, key);
        out.push(b':');
        write_value(out, id, value, depth + 1)?;
    }
    out.push(b'}');
    Ok(())
}

/// The raw edge key of [CB-2].
///
/// [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn raw_key(e: &CanonicalEdge) -> (&str, &str, &'static str, &'static str) {
    (&e.from, &e.to, e.kind.as_str(), e.provenance.as_str())
}

/// The [CB-3] checks the writer repeats, in the graph's own order: each edge's weight, then a duplicate
/// id, a duplicate edge key and a dangling endpoint.
///
/// [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
fn check_graph(graph: &CanonicalGraph) -> Result<(), GraphReason> {
    for e in &graph.edges {
        if let Some(Weight::Float(f)) = e.weight
            && (!f.is_finite() || f < 0.0)
        {
            return Err(GraphReason::InvalidWeight {
                from: e.from.clone(),
                to: e.to.clone(),
                kind: e.kind,
                provenance: e.provenance,
            });
        }
    }
    let mut ids: Vec<&str> = graph.nodes.iter().map(|n| n.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(GraphReason::DuplicateNode(w[0].to_owned()));
    }
    let mut edges: Vec<&CanonicalEdge> = graph.edges.iter().collect();
    edges.sort_by(|a, b| raw_key(a).cmp(&raw_key(b)));
    if let Some(w) = edges.windows(2).find(|w| raw_key(w[0]) == raw_key(w[1])) {
        let e = w[0];
        return Err(GraphReason::DuplicateEdge {
            from: e.from.clone(),
            to: e.to.clone(),
            kind: e.kind,
            provenance: e.provenance,
        });
    }
    for e in &edges {
        for end in [&e.from, &e.to] {
            if ids.binary_search(&end.as_str()).is_err() {
                return Err(GraphReason::DanglingEdge(end.clone()));
            }
        }
    }
    Ok(())
}

/// An edge with its NFC'd endpoints, in canonical order.
struct SortedEdge<'g> {
    from: Cow<'g, str>,
    to: Cow<'g, str>,
    edge: &'g CanonicalEdge,
}

/// Nodes with their NFC ids, in canonical order.
type SortedNodes<'g> = Vec<(Cow<'g, str>, &'g CanonicalNode)>;

/// Checks the graph and returns nodes (NFC id) and edges in canonical order.
fn prepare(graph: &CanonicalGraph) -> Result<(SortedNodes<'_>, Vec<SortedEdge<'_>>), Uncanonical> {
    check_graph(graph).map_err(Uncanonical::InvalidGraph)?;
    let mut nodes: SortedNodes<'_> = graph.nodes.iter().map(|n| (nfc(&n.id), n)).collect();
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = nodes.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Uncanonical::DuplicateIdAfterNfc { id: w[0].0.clone().into_owned() });
    }
    let mut edges: Vec<SortedEdge<'_>> =
        graph.edges.iter().map(|e| SortedEdge { from: nfc(&e.from), to: nfc(&e.to), edge: e }).collect();
    edges.sort_by(|a, b| {
        (&*a.from, &*a.to, a.edge.kind.as_str(), a.edge.provenance.as_str()).cmp(&(
            &*b.from,
            &*b.to,
            b.edge.kind.as_str(),
            b.edge.provenance.as_str(),
        ))
    });
    Ok((nodes, edges))
}

/// The canonical bytes of `graph` under `algorithm` ([CC-1]…[CC-9]): the document that is the contract.
///
/// [CC-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CC-9]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn encode(graph: &CanonicalGraph, algorithm: Algorithm) -> Result<Vec<u8>, Uncanonical> {
    let (nodes, edges) = prepare(graph)?;
    let mut out = Vec::with_capacity(256 + 160 * (nodes.len() + edges.len()));
    out.extend_from_slice(format!("{{\"schema_version\":{SCHEMA_VERSION},\"algorithm\":").as_bytes());
    write_str(&mut out, algorithm.name());
    out.extend_from_slice(b",\"nodes\":[");
    for (i, (id, node)) in nodes.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        write_str(&mut out, id);
        out.extend_from_slice(b",\"kind\":");
        write_str(&mut out, node.kind.as_str());
        out.extend_from_slice(b",\"labels\":");
        write_object(&mut out, id, &node.labels, NODE_LABELS_DEPTH)?;
        out.extend_from_slice(b",\"level\":");
        write_str(&mut out, node.level.as_str());
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"edges\":[");
    for (i, e) in edges.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_edge_head(&mut out, e);
        out.extend_from_slice(b",\"sign\":");
        write_str(&mut out, e.edge.sign.as_str());
        out.extend_from_slice(b",\"to\":");
        write_str(&mut out, &e.to);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
    Ok(out)
}

/// Opens an edge's object with the fields every edge record starts with, in key order:
/// `{"from":…,"kind":…,"provenance":…`.
fn write_edge_head(out: &mut Vec<u8>, e: &SortedEdge<'_>) {
    out.extend_from_slice(b"{\"from\":");
    write_str(out, &e.from);
    out.extend_from_slice(b",\"kind\":");
    write_str(out, e.edge.kind.as_str());
    out.extend_from_slice(b",\"provenance\":");
    write_str(out, e.edge.provenance.as_str());
}

/// Answers whether `graph` has canonical bytes, with the same refusal [`encode`] would give.
pub fn check(graph: &CanonicalGraph) -> Result<(), Uncanonical> {
    encode(graph, Algorithm::default()).map(drop)
}

/// The digest named by `algorithm` over the canonical bytes of `graph` ([CC-12]).
///
/// [CC-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn hash(graph: &CanonicalGraph, algorithm: Algorithm) -> Result<Vec<u8>, Uncanonical> {
    encode(graph, algorithm).map(|bytes| digest(algorithm, &bytes))
}

/// [`hash`] as lowercase hex.
pub fn hash_hex(graph: &CanonicalGraph, algorithm: Algorithm) -> Result<String, Uncanonical> {
    hash(graph, algorithm).map(|d| to_hex(&d))
}

/// Writes a plain map with the label grammar ([CC-10]), e.g. the diff record; refusals name `"record"`.
///
/// [CC-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn encode_value(record: &BTreeMap<String, Value>) -> Result<Vec<u8>, Uncanonical> {
    let mut out = Vec::new();
    write_object(&mut out, "record", record, 1)?;
    Ok(out)
}

/// The digest named by `algorithm` over [`encode_value`]'s bytes of `record` ([CC-12]), refusing first a
/// record whose own `"algorithm"` member is not exactly that algorithm's name (nothing is hashed then).
///
/// [CC-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn hash_value(record: &BTreeMap<String, Value>, algorithm: Algorithm) -> Result<Vec<u8>, HashValueError> {
    if let Some(named) = record.get("algorithm")
        && *named != Value::Str(algorithm.name().to_owned())
    {
        return Err(HashValueError::AlgorithmMismatch { requested: algorithm });
    }
    let bytes = encode_value(record).map_err(HashValueError::Uncanonical)?;
    Ok(digest(algorithm, &bytes))
}

/// The unsigned weight sidecar ([CB-5]): one entry per weighted edge, in edge order ([CC-3]); integers as
/// integers, floats per [CC-11]. Refused with the graph's own reason when the graph cannot be encoded.
///
/// [CB-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CC-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CC-11]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn encode_sidecar(graph: &CanonicalGraph) -> Result<Vec<u8>, Uncanonical> {
    check(graph)?;
    let (_, edges) = prepare(graph)?;
    let mut out = format!("{{\"schema_version\":{SCHEMA_VERSION},\"weights\":[").into_bytes();
    let mut first = true;
    for e in &edges {
        let Some(weight) = e.edge.weight else { continue };
        if !first {
            out.push(b',');
        }
        first = false;
        write_edge_head(&mut out, e);
        out.extend_from_slice(b",\"to\":");
        write_str(&mut out, &e.to);
        out.extend_from_slice(b",\"weight\":");
        let text = match weight {
            Weight::Int(n) => n.to_string(),
            Weight::Float(f) => format_float(f).ok_or_else(|| {
                Uncanonical::InvalidGraph(GraphReason::InvalidWeight {
                    from: e.edge.from.clone(),
                    to: e.edge.to.clone(),
                    kind: e.edge.kind,
                    provenance: e.edge.provenance,
                })
            })?,
        };
        out.extend_from_slice(text.as_bytes());
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
    Ok(out)
}
