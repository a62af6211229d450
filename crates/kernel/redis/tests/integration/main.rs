//! The Redis store and hub against a real `redis-server` (one per test, on a free 127.0.0.1 port, from
//! `mcp-kernel-test-support`). Every test here needs the binary, so each is `#[ignore]`d with the
//! reason and run by `cargo xtask edge redis` (or `cargo test -p mcp-kernel-redis -- --ignored`).
//! Two `Redis` values in one process are two instances: each has its own connections.

mod acl;
mod faults;
mod hostile;
mod hub;
mod losses;
mod partition;
mod races;
mod replies;
mod router;
mod security;
mod session_clients;
mod sessions;
mod store;
mod support;
