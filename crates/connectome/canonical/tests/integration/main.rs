//! The canonical writer's integration tests, one module a file, in one test binary: one link instead of one a
//! file (about 38 MB of target/ each). `cargo test -p connectome-canonical --test integration <module>::` runs one
//! file. Apart: `document` (the repository's docs, left out of the package).

mod common;

mod label_depth_verifies;
mod no_signature;
mod properties;
mod vectors;
