//! `cargo xtask connectome facts` is a thin call of `connectome_facts::extract` (docs/connectome.md
//! CK-13): on `crates/connectome/fixture`, with `--manifest-path` and `--target-dir`, the file the task
//! writes is the bytes the library returns for the same request.
//!
//! Offline and bounded: the fixture has no dependencies. Its exact facts are pinned by
//! `crates/connectome/facts/tests/fixture.rs`.

use std::path::Path;
use std::process::Command;

use connectome_facts::{FactsRequest, extract};

#[test]
fn ck13_the_task_writes_the_bytes_the_library_extracts() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("the workspace root");
    let manifest = workspace.join("Cargo.toml");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("connectome-facts");
    let (out, ir) = (scratch.join("task.json"), scratch.join("ir"));
    // Started elsewhere than the workspace: `--manifest-path` names it.
    let status = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(std::env::temp_dir())
        .env("CARGO", env!("CARGO"))
        .args(["connectome", "facts", "--crate", "connectome-fixture", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&ir)
        .arg("--out")
        .arg(&out)
        .status()
        .expect("xtask runs");
    assert!(status.success(), "xtask connectome facts failed: {status}");
    let written = std::fs::read(&out).expect("the facts file");

    let request = FactsRequest::new(["connectome-fixture"]).manifest_path(&manifest).target_dir(&ir);
    let facts = extract(&request, &mut |_| {}).unwrap_or_else(|e| panic!("extract: {e}"));
    assert_eq!(written, facts.to_json(), "the task and the library differ");
    assert_eq!(facts.crates, ["connectome_fixture"]);
    assert!(ir.join("debug").is_dir(), "the IR build went to --target-dir");
}
