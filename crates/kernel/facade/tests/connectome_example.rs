//! The committed example exports under `docs/connectome-example/` are what the weather host writes
//! today (`cargo run --features connectome --example connectome_export -- docs/connectome-example` refreshes them).
#![cfg(feature = "connectome")]

#[allow(dead_code)]
#[path = "../examples/weather/catalog.rs"]
mod catalog;
#[path = "../examples/weather/export.rs"]
mod export;

#[test]
fn committed_weather_exports_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/connectome-example");
    for (name, bytes) in export::exports().expect("the weather host exports") {
        let committed = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            committed == bytes,
            "{name} is stale: run `cargo run --features connectome --example connectome_export -- docs/connectome-example`"
        );
    }
}

/// The digests of the committed exports, pinned: a change to the weather host's connectome shows here
/// as well as in the bytes.
const PINNED: [(&str, &str); 3] = [
    ("weather.declared.json", "cdaef61546002e3ca0951ea51eb5147137667f19a4cd2ccdcdbc53d228766b0e"),
    ("weather.observed.json", "8e79cf35a8ae3b24ce19991cae9b0b500f2d769f4f75fc0bd45bfa6475552c5b"),
    ("weather.diff.json", "d1e6245d50fdd33f68aa77de2db19e499c415f90cc383f4be4a328e2c7b3a636"),
];

#[test]
fn committed_exports_verify_against_their_pinned_digests() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/connectome-example");
    for (name, hex) in PINNED {
        let bytes = std::fs::read(dir.join(name)).expect("committed");
        let verified = mcp_kernel::connectome::canonical::verify(&bytes, hex).expect("the pinned digest");
        assert_eq!(verified.schema_version, 3, "{name}");
    }
}
