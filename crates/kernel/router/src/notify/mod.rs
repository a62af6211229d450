//! Notifications a request may be sent while it runs (MCP [S-52]): progress
//! (`notifications/progress`, reported through [`RequestContext::progress`](crate::RequestContext::progress))
//! and logs (`notifications/message`, through [`RequestContext::log`](crate::RequestContext::log), opted
//! in with [`ServerBuilder::log_notifications`](crate::ServerBuilder::log_notifications)), each
//! delivered to the sink the transport attached, never after the response.
//!
//! [S-52]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

pub(crate) mod log;
pub(crate) mod progress;

pub use log::LogLevel;
pub use progress::{MAX_PROGRESS_TOKEN_BYTES, Progress};
