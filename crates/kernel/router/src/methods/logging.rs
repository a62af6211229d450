//! The logging methods of the server: whether a request may be sent notifications, the logger a
//! request gets, and `logging/setLevel` (2025-11-25, with the host's opt-in). The logger itself is
//! `log.rs`.

use std::sync::Arc;

use serde_json::Value;

use mcp_kernel_wire::ErrorObject;
use mcp_kernel_wire::types::EmptyResult;
use mcp_kernel_wire::version::{META_LOG_LEVEL, META_PROTOCOL_VERSION};

use crate::methods::encoded;
use crate::notify::log::{LogLevel, Logger, parse_level};
use crate::notify::progress::{NotificationSink, token_of};
use crate::server::{Answer, Server};

impl Server {
    /// Whether a request whose `params._meta` is `meta` may be sent notifications while it runs: it
    /// carries a progress token, or the host opted in to log notifications and the request may receive
    /// them (a 2025-11-25 request, or one that set `io.modelcontextprotocol/logLevel`). A transport
    /// passes a sink only then ([`Admitted::may_notify`](crate::transport::Admitted::may_notify)).
    pub(crate) fn notifies(&self, meta: Option<&Value>) -> bool {
        if token_of(meta).is_some() {
            return true;
        }
        if self.inner.injected.log_level.is_none() {
            return false;
        }
        let modern = meta.is_some_and(|m| m.get(META_PROTOCOL_VERSION).is_some());
        !modern || meta.is_some_and(|m| m.get(META_LOG_LEVEL).is_some())
    }

    /// The logger of a request in `era`: live only with the host's opt-in and a sink; on `2026-07-28`
    /// at the stricter of the request's own level and the host's minimum (none requested: no logs), on
    /// 2025-11-25 at the host's minimum.
    pub(crate) fn logger(
        &self,
        sink: Option<&NotificationSink>,
        modern: bool,
        requested: Option<LogLevel>,
    ) -> Logger {
        let (Some(sink), Some(minimum)) = (sink, self.inner.injected.log_level) else {
            return Logger::default();
        };
        let threshold = if modern { requested.map(|level| level.max(minimum)) } else { Some(minimum) };
        threshold.map_or_else(Logger::default, |level| Logger::to(level, Arc::clone(sink)))
    }

    /// `logging/setLevel` on 2025-11-25 with the opt-in: a valid level is answered `{}`; the level in
    /// force stays the host's minimum (a stateless server keeps no per-client level).
    pub(crate) fn set_level(&self, params: Option<&Value>) -> Answer {
        match params.and_then(|p| p.get("level")).and_then(parse_level) {
            Some(_) => encoded(&EmptyResult::default()),
            None => {
                Err(ErrorObject::invalid_params("logging/setLevel requires params.level, a logging level"))
            }
        }
    }
}
