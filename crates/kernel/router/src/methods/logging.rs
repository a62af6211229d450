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
use crate::session::store::{SessionEdit, SessionError};
use crate::session::stored::StoredSession;

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
    /// 2025-11-25 at the host's minimum, or at the stricter of it and the level a stored session's
    /// client set (`session`).
    pub(crate) fn logger(
        &self,
        sink: Option<&NotificationSink>,
        modern: bool,
        requested: Option<LogLevel>,
        session: Option<LogLevel>,
    ) -> Logger {
        let (Some(sink), Some(minimum)) = (sink, self.inner.injected.log_level) else {
            return Logger::default();
        };
        let threshold = match modern {
            true => requested.map(|level| level.max(minimum)),
            false => Some(session.map_or(minimum, |level| level.max(minimum))),
        };
        threshold.map_or_else(Logger::default, |level| Logger::to(level, Arc::clone(sink)))
    }

    /// `logging/setLevel` on 2025-11-25 with the opt-in: a valid level is answered `{}`. A stateless
    /// server keeps no per-client level: the level in force stays the host's minimum. In a stored
    /// session (and with log notifications on) the level is stored in the session, and every later
    /// request of the session is sent its logs at the stricter of it and the host's minimum.
    pub(crate) async fn set_level(&self, params: Option<&Value>, stored: Option<&StoredSession>) -> Answer {
        let Some(level) = params.and_then(|p| p.get("level")).filter(|level| parse_level(level).is_some())
        else {
            return Err(ErrorObject::invalid_params(
                "logging/setLevel requires params.level, a logging level",
            ));
        };
        if let (Some(stored), Some(_)) = (stored, self.inner.injected.log_level) {
            let level = level.as_str().unwrap_or_default().to_owned();
            let edit = SessionEdit::LogLevel(level);
            edited(stored.store().edit(stored.id(), edit, stored.limits()).await)?;
        }
        encoded(&EmptyResult::default())
    }
}

/// The answer to a request whose session edit came to `outcome`: an ended session (the transport
/// resumed it for this very request, so it ended since) is -32600; a store that cannot be reached is
/// retryable; a bound met is -32602 naming it.
pub(crate) fn edited(outcome: Result<bool, SessionError>) -> Result<(), ErrorObject> {
    match outcome {
        Ok(true) => Ok(()),
        Ok(false) => Err(ErrorObject::refused("the session ended")),
        Err(SessionError::SubscriptionsFull) => Err(ErrorObject::invalid_params(
            "the session holds as many resource subscriptions as its bound allows",
        )),
        Err(SessionError::Store(error)) if !error.is_unavailable() => {
            tracing::error!(%error, "the session store failed; answered -32603");
            Err(ErrorObject::internal())
        }
        Err(error) => {
            tracing::warn!(%error, "the session store is unreachable; answered retry-later");
            Err(ErrorObject::unavailable(1))
        }
    }
}
