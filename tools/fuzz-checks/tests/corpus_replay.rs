//! Replays the seed corpus of every fuzz target (`tools/fuzz/corpus/<target>/`) through its check, so that
//! `cargo test` on the stable toolchain re-runs every input the fuzzers kept, reproducers included.
//!
//! A missing or empty corpus directory fails the test: the replay can never pass by finding nothing.

use std::path::{Path, PathBuf};

/// The most files a corpus directory may hold (the corpus is kept under ~300 files per target).
const MAX_FILES: usize = 1_000;

/// The files of `tools/fuzz/corpus/<target>/`, sorted; panics when there are none.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("corpus {}: {error}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .take(MAX_FILES + 1)
        .map(|entry| entry.unwrap_or_else(|error| panic!("corpus {}: {error}", dir.display())).path())
        .filter(|path| path.is_file())
        .collect();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    assert!(
        files.len() <= MAX_FILES,
        "the corpus {} has more than {MAX_FILES} files: minimise it (`cargo fuzz cmin`, docs/fuzzing.md)",
        dir.display()
    );
    files.sort();
    files
}

/// Calls `check` on every file of the target's corpus, naming the file that fails.
fn replay(target: &str, check: fn(&[u8])) {
    for path in corpus(target) {
        let data = std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "the {target} check fails on {}", path.display());
    }
}

#[test]
fn replays_the_reader_corpus() {
    replay("reader", mcp_kernel_fuzz_checks::reader);
}

#[test]
fn replays_the_stdio_framing_corpus() {
    replay("stdio_framing", mcp_kernel_fuzz_checks::stdio_framing);
}

#[test]
fn replays_the_http_headers_corpus() {
    replay("http_headers", mcp_kernel_fuzz_checks::http_headers);
}

#[test]
fn replays_the_cursor_corpus() {
    replay("cursor", mcp_kernel_fuzz_checks::cursor);
}

#[test]
fn replays_the_canonical_corpus() {
    replay("canonical", mcp_kernel_fuzz_checks::canonical);
}

#[test]
fn replays_the_schema_corpus() {
    replay("schema", mcp_kernel_fuzz_checks::schema);
}
