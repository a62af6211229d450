//! The observer's integration tests, one module a file, in one test binary: one link instead of one a file
//! (about 38 MB of target/ each). `cargo test -p connectome-observe --test integration <module>::` runs one file.
//! Apart: `tracer`, whose tracer is one per process, and `payload_markers`, which swaps the panic hook.

mod support;

mod bound;
mod collector;
mod timings;
