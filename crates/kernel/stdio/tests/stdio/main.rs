//! The stdio transport's rules, each pinned by a test named after it. Apart, in its own binary:
//! `live_server` (workspace-only, through `mcp-kernel-test-support`).

mod concurrency;
mod drain;
mod echo;
mod framing;
mod harness;
mod identity;
mod notify;
mod pipelining;
mod progress;
mod span;
mod tasks;
