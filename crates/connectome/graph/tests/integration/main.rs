//! The graph crate's integration tests, one module a file, in one test binary: one link instead of one a file
//! (about 38 MB of target/ each). `cargo test -p connectome-graph --test integration <module>::` runs one file.

mod declared_support;
mod observed_support;

mod declared;
mod declared_bound;
mod diff;
mod diff_properties;
mod effective;
mod federation;
mod federation_properties;
mod graph;
mod reach;
mod reach_properties;
mod read;
