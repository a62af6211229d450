//! The renderer's integration tests, one module a file, in one test binary: one link instead of one a file
//! (about 38 MB of target/ each). `cargo test -p connectome-render --test integration <module>::` runs one file.
//! Apart: `browser` (Chromium) and `example` (the repository's docs/connectome-example/, left out of the package).

mod common;

mod cli;
mod dot;
mod effective;
mod explore;
mod html;
mod layout;
mod mermaid;
mod refusals;
