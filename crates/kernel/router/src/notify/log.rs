//! Log notifications: `notifications/message` for a request that may receive them (MCP [S-52]).
//!
//! Threat: host code logging must not be able to speak out of turn. Logging is off unless the host
//! opted in ([`crate::ServerBuilder::log_notifications`]); then a `2026-07-28` request receives messages
//! only when its `_meta` set `io.modelcontextprotocol/logLevel`, and only at or above that level; a
//! 2025-11-25 request (which carries no level on a stateless server) receives those at or above the
//! host's minimum. Every other request gets a logger that does nothing (one branch, no allocation).
//! Messages travel through the request's own notification sink, as progress does, so they go only on
//! that request's stream; once the response is produced the logger is closed and sends nothing more.
//!
//! [S-52]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use mcp_kernel_wire::types::LoggingLevel;

use crate::notify::progress::NotificationSink;

/// A log message's severity (RFC 5424), least severe first: the order decides what is sent.
pub type LogLevel = LoggingLevel;

/// Reads a level name; anything but one of the eight lowercase names is `None`.
pub(crate) fn parse_level(value: &Value) -> Option<LogLevel> {
    LogLevel::deserialize(value).ok()
}

/// The level a request's `params._meta` names (`io.modelcontextprotocol/logLevel`), if it names one.
pub(crate) fn level_in(meta: &mcp_kernel_wire::RequestMeta) -> Option<LogLevel> {
    parse_level(meta.log_level()?)
}

/// A request's logger (see [`crate::RequestContext::log`]). Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Logger {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    threshold: LogLevel,
    /// `None` once closed.
    sink: Mutex<Option<NotificationSink>>,
}

impl Logger {
    /// A logger sending messages at or above `threshold` to `sink`.
    pub(crate) fn to(threshold: LogLevel, sink: NotificationSink) -> Self {
        Self { inner: Some(Arc::new(Inner { threshold, sink: Mutex::new(Some(sink)) })) }
    }

    /// Whether a message at `level` would be sent now.
    pub(crate) fn enabled(&self, level: LogLevel) -> bool {
        self.inner.as_ref().is_some_and(|inner| level >= inner.threshold && inner.lock().is_some())
    }

    /// Sends one `notifications/message` when the request may receive it; otherwise does nothing.
    pub(crate) fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        let Some(inner) = &self.inner else { return };
        if level < inner.threshold {
            return;
        }
        let sink = inner.lock();
        let Some(sink) = sink.as_ref() else { return };
        let mut params = Map::with_capacity(3);
        params.insert("level".into(), json!(level));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::from(logger));
        }
        params.insert("data".into(), data);
        // Sent under the lock: a concurrent `close` cannot slip between the check and the send.
        sink(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params}));
    }

    /// Closes the logger: nothing more is sent, and the sink is released.
    fn close(&self) {
        if let Some(inner) = &self.inner {
            *inner.lock() = None;
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<NotificationSink>> {
        self.sink.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logger").field("threshold", &self.inner.as_ref().map(|i| i.threshold)).finish()
    }
}

impl PartialEq for Logger {
    fn eq(&self, other: &Self) -> bool {
        crate::notify::progress::same_handle(&self.inner, &other.inner)
    }
}

impl crate::notify::progress::Closable for Logger {
    fn close_channel(&self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::progress::collecting;
    use mcp_kernel_wire::version::META_LOG_LEVEL;

    #[test]
    fn only_messages_at_or_above_the_threshold_are_sent() {
        let (sink, seen) = collecting();
        let logger = Logger::to(LogLevel::Warning, sink);
        logger.log(LogLevel::Info, None, json!("quiet"));
        logger.log(LogLevel::Warning, Some("db"), json!("w"));
        logger.log(LogLevel::Emergency, None, json!({"k": 1}));
        assert!(!logger.enabled(LogLevel::Notice));
        assert!(logger.enabled(LogLevel::Error));
        let seen = seen.lock().unwrap();
        assert_eq!(
            *seen,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "warning", "logger": "db", "data": "w"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "emergency", "data": {"k": 1}}}),
            ]
        );
    }

    #[test]
    fn a_closed_logger_sends_nothing_after_the_response() {
        let (sink, seen) = collecting();
        let logger = Logger::to(LogLevel::Debug, sink);
        let kept = logger.clone();
        drop(crate::notify::progress::CloseOnDrop(logger));
        kept.log(LogLevel::Emergency, None, json!("late"));
        assert!(!kept.enabled(LogLevel::Emergency));
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn an_inert_logger_sends_nothing() {
        let logger = Logger::default();
        logger.log(LogLevel::Emergency, None, json!("x"));
        assert!(!logger.enabled(LogLevel::Emergency));
    }

    #[test]
    fn levels_are_the_eight_lowercase_names_in_rfc_5424_order() {
        let names = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
        let levels: Vec<LogLevel> = names.iter().map(|n| parse_level(&json!(n)).unwrap()).collect();
        assert!(levels.windows(2).all(|w| w[0] < w[1]));
        for bad in [json!("INFO"), json!("loud"), json!(3), json!(null)] {
            assert_eq!(parse_level(&bad), None);
        }
        let meta = mcp_kernel_wire::RequestMeta::new(Some(json!({META_LOG_LEVEL: "notice"})));
        assert_eq!(level_in(&meta), Some(LogLevel::Notice));
    }
}
