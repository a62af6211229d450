//! The package never signs (`docs/will-not-implement.md` H-3): an export names its digest and carries
//! nothing else — no signature, key id or scheme member — in the graph envelope or in its sidecar, and
//! its digest is of exactly its bytes, under no key.

use crate::common;

use connectome_canonical::{Algorithm, digest, encode, encode_sidecar, hash};
use serde_json::Value;

/// The top-level member names of a JSON object, in document order.
fn members(bytes: &[u8]) -> Vec<String> {
    let value: Value = serde_json::from_slice(bytes).expect("an export is JSON");
    value.as_object().expect("an export is an object").keys().cloned().collect()
}

#[test]
fn an_export_names_its_digest_and_carries_no_signature() {
    let graph = common::golden_graph();
    for algorithm in Algorithm::ALL {
        let bytes = encode(&graph, algorithm).expect("the golden graph encodes");
        assert_eq!(members(&bytes), ["schema_version", "algorithm", "nodes", "edges"]);
        assert_eq!(hash(&graph, algorithm).expect("hashes"), digest(algorithm, &bytes));
    }
    let sidecar = encode_sidecar(&graph).expect("the golden sidecar encodes");
    assert_eq!(members(&sidecar), ["schema_version", "weights"]);
}
