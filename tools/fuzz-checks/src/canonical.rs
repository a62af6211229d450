//! Target `canonical`: the canonical writer of the connectome graph (`encode`, `hash_value`, `verify`).
//!
//! Input: a JSON description of a graph, `{"algorithm":"sha256","nodes":[{"id","kind","level","labels"}],
//! "edges":[{"from","to","kind","provenance","sign","weight"}],"deep":N,"record":{…}}` (every member
//! optional, unknown vocabulary mapped to a fixed default); `deep` wraps the first node's labels in `N`
//! nested arrays. The raw bytes are also given to `verify`. Laws: nothing panics (a refusal is an error);
//! encoding is deterministic and independent of node and edge order; `check`, `hash` and the sidecar
//! refuse exactly what `encode` refuses; accepted bytes are JSON, verify against their own hash, and are
//! a fixed point (reading them back and encoding again gives the same bytes); `hash_value` refuses a
//! record naming another algorithm and otherwise agrees with `encode_value`.

use std::collections::BTreeMap;

use connectome_canonical::{
    Algorithm, CanonicalEdge, CanonicalGraph, CanonicalNode, EdgeKind, HashValueError, Integer, Labels,
    Level, NodeKind, Provenance, SCHEMA_VERSION, Sign, Value, Verified, Weight, check, digest, encode,
    encode_sidecar, encode_value, hash, hash_hex, hash_value, labels_from_json, record_algorithm, to_hex,
    verify,
};
use serde_json::{Map, Value as Json};

/// The deepest `deep` wrapping honoured (past the writer's `MAX_LABEL_DEPTH`, to reach its refusal).
const MAX_WRAP: u64 = 160;
/// The most nodes and edges read from one input.
const MAX_ITEMS: usize = 256;

/// Checks the canonical writer's laws on `data`; panics when one is broken.
pub fn canonical(data: &[u8]) {
    raw_bytes(data);
    let Ok(Json::Object(input)) = serde_json::from_slice::<Json>(data) else { return };
    let algorithm = input
        .get("algorithm")
        .and_then(Json::as_str)
        .and_then(|name| Algorithm::from_name(name).ok())
        .unwrap_or_default();
    if let Some(Json::Object(record)) = input.get("record") {
        record_laws(record, algorithm);
    }
    let Some(mut graph) = graph_of(&input) else { return };
    let wrap = input.get("deep").and_then(Json::as_u64).unwrap_or(0).min(MAX_WRAP);
    if let Some(node) = graph.nodes.first_mut() {
        for _ in 0..wrap {
            let inner = Value::Object(std::mem::take(&mut node.labels));
            node.labels = Labels::from([("deep".to_owned(), Value::Array(vec![inner]))]);
        }
    }
    graph_laws(&graph, algorithm);
}

/// Held bytes of any shape: the verifier answers without panicking, and agrees with its own digest.
fn raw_bytes(data: &[u8]) {
    if let Ok(Verified { algorithm, schema_version }) = record_algorithm(data) {
        assert!((1..=3).contains(&schema_version));
        let hex = to_hex(&digest(algorithm, data));
        assert_eq!(verify(data, &hex), Ok(Verified { algorithm, schema_version }));
    } else {
        assert!(verify(data, "").is_err());
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Some(integer) = Integer::parse(text)
    {
        assert_eq!(integer.as_str(), text, "Integer::parse accepted non-canonical text");
    }
}

fn record_laws(record: &Map<String, Json>, algorithm: Algorithm) {
    let Ok(record) = labels_from_json("record", record) else { return };
    let encoded = encode_value(&record);
    assert_eq!(encoded, encode_value(&record), "encode_value is not deterministic");
    if let Ok(bytes) = &encoded {
        assert!(
            serde_json::from_slice::<Json>(bytes).is_ok_and(|json| json.is_object()),
            "not a JSON object"
        );
    }
    let named_other = record.get("algorithm").is_some_and(|named| *named != Value::from(algorithm.name()));
    match hash_value(&record, algorithm) {
        Err(HashValueError::AlgorithmMismatch { requested }) => {
            assert!(named_other && requested == algorithm, "a mismatch refusal for a matching record");
        }
        Err(HashValueError::Uncanonical(error)) => {
            assert!(!named_other, "the algorithm member must be checked first");
            assert_eq!(encoded, Err(error));
        }
        Ok(digest_bytes) => {
            assert!(!named_other, "hashed a record naming another algorithm");
            let bytes = encoded.expect("hash_value hashed what encode_value refuses");
            assert_eq!(digest_bytes, digest(algorithm, &bytes));
        }
    }
}

fn graph_laws(graph: &CanonicalGraph, algorithm: Algorithm) {
    let encoded = encode(graph, algorithm);
    assert_eq!(encoded, encode(graph, algorithm), "encode is not deterministic");
    let mut reordered = graph.clone();
    reordered.nodes.reverse();
    reordered.edges.reverse();
    assert_eq!(encoded, encode(&reordered, algorithm), "the order of nodes or edges changed the bytes");
    assert_eq!(check(graph), encoded.as_ref().map(drop).map_err(Clone::clone), "check disagrees with encode");
    let bytes = match encoded {
        Err(refusal) => {
            assert_eq!(hash(graph, algorithm), Err(refusal.clone()), "hash disagrees with encode");
            assert_eq!(encode_sidecar(graph), Err(refusal), "the sidecar disagrees with encode");
            return;
        }
        Ok(bytes) => bytes,
    };
    let _ = encode_sidecar(graph);
    let hex = hash_hex(graph, algorithm).expect("hash_hex of an encodable graph");
    assert_eq!(
        verify(&bytes, &hex),
        Ok(Verified { schema_version: SCHEMA_VERSION, algorithm }),
        "the writer's bytes do not verify against their own hash"
    );
    let json: Json = serde_json::from_slice(&bytes).expect("the writer's bytes are JSON");
    let Json::Object(document) = json else { panic!("the writer's bytes are not a JSON object") };
    let again = graph_of(&document).expect("the writer's bytes read back as a graph");
    assert_eq!(encode(&again, algorithm).as_ref(), Ok(&bytes), "the canonical bytes are not a fixed point");
}

/// The graph an input describes; `None` when its labels hold a float (refused before the writer).
fn graph_of(input: &Map<String, Json>) -> Option<CanonicalGraph> {
    let items = |name: &str| -> Vec<Map<String, Json>> {
        let Some(Json::Array(items)) = input.get(name) else { return Vec::new() };
        items.iter().take(MAX_ITEMS).filter_map(|item| item.as_object().cloned()).collect()
    };
    let text = |item: &Map<String, Json>, key: &str| {
        item.get(key).and_then(Json::as_str).unwrap_or_default().to_owned()
    };
    let mut nodes = Vec::new();
    for item in items("nodes") {
        let id = text(&item, "id");
        let labels = match item.get("labels") {
            Some(Json::Object(labels)) => labels_from_json(&id, labels).ok()?,
            _ => BTreeMap::new(),
        };
        let kind = node_kind(&text(&item, "kind"));
        let level = level(&text(&item, "level"));
        nodes.push(CanonicalNode { id, kind, level, labels });
    }
    let edges = items("edges")
        .iter()
        .map(|item| CanonicalEdge {
            from: text(item, "from"),
            to: text(item, "to"),
            kind: edge_kind(&text(item, "kind")),
            provenance: if text(item, "provenance") == "observed" {
                Provenance::Observed
            } else {
                Provenance::Declared
            },
            sign: sign(&text(item, "sign")),
            weight: item.get("weight").and_then(|w| match w.as_u64() {
                Some(n) => Some(Weight::Int(n)),
                None => w.as_f64().map(Weight::Float),
            }),
        })
        .collect();
    Some(CanonicalGraph { nodes, edges })
}

fn node_kind(name: &str) -> NodeKind {
    [NodeKind::Server, NodeKind::Resource, NodeKind::Prompt, NodeKind::Process, NodeKind::Module]
        .into_iter()
        .find(|kind| kind.as_str() == name)
        .unwrap_or(NodeKind::Tool)
}

fn level(name: &str) -> Level {
    [Level::Mfa, Level::Module, Level::Boundary]
        .into_iter()
        .find(|level| level.as_str() == name)
        .unwrap_or(Level::Server)
}

fn edge_kind(name: &str) -> EdgeKind {
    [EdgeKind::Read, EdgeKind::Message, EdgeKind::Supervise]
        .into_iter()
        .find(|kind| kind.as_str() == name)
        .unwrap_or(EdgeKind::Invoke)
}

fn sign(name: &str) -> Sign {
    [Sign::Allow, Sign::Deny, Sign::Hold, Sign::Ungoverned]
        .into_iter()
        .find(|sign| sign.as_str() == name)
        .unwrap_or_default()
}
