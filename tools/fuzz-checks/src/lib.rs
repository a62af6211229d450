//! The checks (oracles) of the cargo-fuzz targets in `tools/fuzz/`: one module per target, each exposing
//! `pub fn <target>(data: &[u8])`, which panics exactly when a rule is broken.
//!
//! The fuzz targets are one-line wrappers around these functions, and `tests/corpus_replay.rs` calls
//! them on every file of `tools/fuzz/corpus/<target>/`, so the corpus is replayed by a plain `cargo test`
//! on the stable toolchain. Besides "never panics", each check asserts the laws of its target; see
//! `docs/fuzzing.md`.
#![forbid(unsafe_code)]

pub mod canonical;
pub mod cursor;
mod fixture;
pub mod http_headers;
pub mod reader;
mod runtime;
pub mod schema;
pub mod stdio_framing;

pub use canonical::canonical;
pub use cursor::cursor;
pub use http_headers::http_headers;
pub use reader::reader;
pub use schema::schema;
pub use stdio_framing::stdio_framing;
