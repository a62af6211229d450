//! The wire crate's integration tests, one module a file, in one test binary: one link instead of one a file
//! (about 38 MB of target/ each). `cargo test -p mcp-kernel-wire --test integration <module>::` runs one file.

mod examples;
mod reader;
mod types_serde;
