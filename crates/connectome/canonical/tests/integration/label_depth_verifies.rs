//! Regression (found by the `canonical` fuzz target): every graph the writer encodes verifies against
//! its own hash, even with labels nested as deep as the writer admits. The writer used to admit node labels
//! 128 levels deep counted from the labels object, i.e. 131 levels in the document, which `serde_json`
//! (and so `verify`) cannot read back: `verify` refused the writer's own bytes as `NotAnObject`.

use std::collections::BTreeMap;

use connectome_canonical::{
    Algorithm, CanonicalGraph, CanonicalNode, Labels, Level, MAX_LABEL_DEPTH, NodeKind, SCHEMA_VERSION,
    Uncanonical, Value, Verified, encode, encode_value, hash_hex, verify,
};

/// `levels` nested arrays around an integer.
fn nested(levels: usize) -> Value {
    (0..levels).fold(Value::from(1), |inner, _| Value::Array(vec![inner]))
}

/// One node whose labels hold `levels` nested arrays under the key `deep`.
fn graph(levels: usize) -> CanonicalGraph {
    let labels: Labels = BTreeMap::from([("deep".to_owned(), nested(levels))]);
    CanonicalGraph {
        nodes: vec![CanonicalNode {
            id: "s/server".into(),
            kind: NodeKind::Server,
            level: Level::Server,
            labels,
        }],
        edges: Vec::new(),
    }
}

#[test]
fn the_writers_bytes_verify_at_the_deepest_label_nesting_admitted() {
    // The envelope, `nodes`, the node and the labels object are four levels; the arrays fill the rest.
    let deepest = MAX_LABEL_DEPTH - 4;
    for algorithm in Algorithm::ALL {
        let bytes = encode(&graph(deepest), algorithm).expect("the deepest admitted labels encode");
        let hex = hash_hex(&graph(deepest), algorithm).expect("and hash");
        assert_eq!(verify(&bytes, &hex), Ok(Verified { schema_version: SCHEMA_VERSION, algorithm }));
    }
    assert_eq!(
        encode(&graph(deepest + 1), Algorithm::Sha256),
        Err(Uncanonical::TooDeep { id: "s/server".into() }),
        "one level more would be a document verify cannot read"
    );
}

#[test]
fn a_record_at_the_deepest_nesting_admitted_is_json_serde_json_reads() {
    let record: Labels = BTreeMap::from([("deep".to_owned(), nested(MAX_LABEL_DEPTH - 1))]);
    let bytes = encode_value(&record).expect("the record object and the arrays are MAX_LABEL_DEPTH levels");
    assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
    let record: Labels = BTreeMap::from([("deep".to_owned(), nested(MAX_LABEL_DEPTH))]);
    assert_eq!(encode_value(&record), Err(Uncanonical::TooDeep { id: "record".into() }));
}
