//! Shared fixture of the HTTP integration tests: a catalog, a real server on 127.0.0.1, and real
//! clients (hyper over HTTP/1.1 and HTTP/2 with prior knowledge, a raw `TcpStream`, the `h2` crate).
//!
//! The `integration` test binary and the test files apart from it each use part of this module only.
//!
//! The parts, each in its own file and re-exported here so that `use support::*;` reaches all of them:
//! `catalog` (the fixture catalog and server), `running` (a server on 127.0.0.1), `messages` (messages
//! and headers), `client` (the hyper clients), `raw` (the raw HTTP/1.1 client), `h2_client` (the `h2`
//! client), `instances` (several servers on their own listeners), `listen` (a `subscriptions/listen`
//! client reading its stream event by event, and a GET's), `log_capture`, `reporting` (a host that reports progress), `sessions` (the legacy sessions' fixture
//! and client), `tasks` (the tasks extension's fixture) and `edge` (what the edge tests measure and
//! hold).
#![allow(dead_code)]

use std::time::Duration;

mod catalog;
mod client;
mod h2_client;
mod instances;
mod listen;
mod log_capture;
mod messages;
mod raw;
mod reporting;
mod running;
mod sessions;
mod tasks;

// Each test crate uses a part of the fixture only (as `dead_code` above).
#[allow(unused_imports)]
pub use {
    catalog::*, client::*, h2_client::*, instances::*, listen::*, log_capture::*, messages::*, raw::*,
    reporting::*, running::*, sessions::*, tasks::*,
};

/// The one revision served over HTTP.
pub const MODERN: &str = "2026-07-28";
/// The legacy revision (never served over HTTP).
pub const LEGACY: &str = "2025-11-25";
/// The origin the fixture admits.
pub const ALLOWED_ORIGIN: &str = "http://localhost:4000";
/// A second admitted origin.
pub const ALLOWED_ORIGIN_2: &str = "http://127.0.0.1:4000";
/// The bound of every test.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(20);
/// The bound of one client exchange.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);
/// `_meta` key of the declared revision.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities.
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

pub mod edge;
