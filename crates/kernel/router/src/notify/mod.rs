//! Notifications a request may be sent while it runs (MCP [S-52]): progress
//! (`notifications/progress`, reported through [`RequestContext::progress`](crate::RequestContext::progress))
//! and logs (`notifications/message`, through [`RequestContext::log`](crate::RequestContext::log), opted
//! in with [`ServerBuilder::log_notifications`](crate::ServerBuilder::log_notifications)), each
//! delivered to the sink the transport attached, never after the response.
//!
//! Change notifications are the other kind: a server built with [`Notifications`]
//! ([`ServerBuilder::notifications`](crate::ServerBuilder::notifications)) tells `subscriptions/listen`
//! streams (and, on stdio, legacy sessions) of the changes the host announces through its
//! [`Notifier`] ([`Server::notifier`](crate::Server::notifier)). Changes travel through a
//! [`ChangeHub`]: [`InProcessHub`] by default, or one shared by many instances.
//!
//! [S-52]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

pub(crate) mod announce;
pub(crate) mod change;
pub(crate) mod hub;
pub(crate) mod listen;
pub(crate) mod log;
pub(crate) mod notifier;
pub(crate) mod progress;
pub(crate) mod session;

pub use change::{Audience, Change, ChangeKind};
pub use hub::{ChangeFeed, ChangeHub, DEFAULT_HUB_CAPACITY, HubUnavailable, InProcessHub};
pub use listen::MAX_LISTEN_ID_BYTES;
pub use listen::filter::{MAX_RESOURCE_SUBSCRIPTIONS, MAX_SUBSCRIBED_URI_BYTES};
pub use log::LogLevel;
pub use notifier::{CallerNotifier, Notifications, Notifier};
pub use progress::{MAX_PROGRESS_TOKEN_BYTES, Progress};
pub use session::MAX_SESSION_SUBSCRIPTIONS;
