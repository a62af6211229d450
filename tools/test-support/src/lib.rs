//! Test harnesses shared by the workspace's test targets, one module per concern, so that no test crate
//! copies another's harness or reaches into another crate's files.
//!
//! - [`live`]: the versioned servers the transports' `LiveServer` tests replace one by another.
//! - [`spans`]: the OpenTelemetry SDK exporting into memory behind a `tracing-opentelemetry` layer, and
//!   the finished spans it holds.
//! - [`redis`]: a real `redis-server` per test, on a free port, that a test can stop, pause and restart.
//! - [`relay`]: a TCP relay a test can freeze (a partition of the clients behind it alone), thaw and cut.
//!
//! **Workspace-only.** This crate is `publish = false` and is only ever a dev-dependency. Cargo drops a
//! path dev-dependency that has no `version` from a packaged manifest, so a published crate's test that
//! uses this crate would not compile from the `.crate` file (which `cargo xtask package` builds and
//! tests alone). Each such test is therefore a test target of its own that the crate leaves out of its
//! package (`exclude` in its `Cargo.toml`), beside the other workspace-only tests; the tests a package
//! carries never use this crate. A harness used by the big `integration` binary of a published crate
//! stays in that crate's `tests/integration/support/`.
#![forbid(unsafe_code)]

pub mod live;
pub mod redis;
pub mod relay;
pub mod spans;
