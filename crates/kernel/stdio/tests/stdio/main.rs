//! The stdio transport's rules, each pinned by a test named after it.

mod concurrency;
mod drain;
mod echo;
mod framing;
mod harness;
mod identity;
mod progress;
mod span;
