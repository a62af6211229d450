//! The schema crate's integration tests, one module a file, in one test binary: one link instead of one a file
//! (about 38 MB of target/ each). `cargo test -p mcp-kernel-schema --test integration <module>::` runs one file.

mod compile_refusals;
mod declared_keys;
mod header_annotations;
mod json_schema_test_suite;
mod prompt_schema;
mod validation_reasons;
