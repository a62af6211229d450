//! The HTTP transport's integration tests, one module a file, in one test binary: one link instead of one a
//! file (about 38 MB of target/ each). `cargo test -p mcp-kernel-http --test integration <module>::` runs one
//! file. Apart, each in its own binary: `accept_path` and `body_budget_memory` (they measure the process),
//! `drip`, `connection_limits` and `held_connections` (they hold many connections open), `listen`,
//! `listen_limits` and `listen_memory` (`subscriptions/listen` streams held open; the last measures a
//! server in a process of its own), `trace_headers`
//! (it records through a scoped subscriber), `browser` (Chromium,
//! `cargo xtask edge browser`), `trace_opentelemetry` (feature `opentelemetry`) and `live_server` (both
//! workspace-only, through `mcp-kernel-test-support`).

mod support;

mod axum;
mod challenges;
mod cors;
mod deadline;
mod drain;
mod echo_bound;
mod empty_answers;
mod happy_path;
mod hidden_tools;
mod hooks;
mod host_check;
mod identity;
mod large_answers;
mod legacy;
mod legacy_encoded_answers;
mod legacy_stateless_wire;
mod log_notifications;
mod no_oauth;
mod no_session;
mod path;
mod progress;
mod refusals;
mod sealed_state_across_instances;
mod serve;
mod session_bounds;
mod session_bridge;
mod session_hostile;
mod session_quota;
mod session_streams;
mod sessions;
mod tasks;
