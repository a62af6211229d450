//! The progress reporter: `notifications/progress` for a request that asked for it (MCP [S-52]).
//!
//! Threat: host code reporting progress must not be able to speak out of turn. A request without
//! `_meta.progressToken` (or with one over [`MAX_PROGRESS_TOKEN_BYTES`]) gets a reporter that does
//! nothing (one branch, no allocation), so nothing is ever sent to a client that did not ask. With a
//! token, only strictly increasing, finite `progress` values are sent (a non-increasing or non-finite
//! report is dropped, never clamped, so the client sees the values the host reported); the token is
//! the client's own, echoed unchanged. Once the request's
//! response is produced, the reporter is closed: a clone kept by a spawned host task sends nothing more
//! ([S-52]: notifications stop at completion), and the transport's sink is released.
//!
//! [S-52]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::sync::{Arc, Mutex, PoisonError};

use mcp_kernel_wire::message::member;
use serde_json::{Map, Value};

/// Where a transport receives the notifications of one request while it runs: called synchronously,
/// in order, each time with one whole JSON-RPC notification; never after the response is produced.
pub type NotificationSink = Arc<dyn Fn(Value) + Send + Sync>;

/// The longest string progress token served, in bytes. A token is copied into every notification of
/// its request, so a client-chosen megabyte would be multiplied by every report the host makes; a
/// longer token gets no notifications (a receiver may always send none, [S-52]).
///
/// [S-52]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub const MAX_PROGRESS_TOKEN_BYTES: usize = 256;

/// The request's `params._meta.progressToken`, when it is an integer or a string of at most
/// [`MAX_PROGRESS_TOKEN_BYTES`] (anything else is ignored: such a request gets no notifications).
pub fn progress_token(params: Option<&Value>) -> Option<&Value> {
    token_of(params?.get("_meta"))
}

/// [`progress_token`] of a request's `params._meta`, as an [`mcp_kernel_wire::Envelope`] holds it.
pub(crate) fn progress_token_in(meta: &mcp_kernel_wire::RequestMeta) -> Option<&Value> {
    token_of(meta.value())
}

/// The served progress token in a `_meta` value: an integer, or a string of at most
/// [`MAX_PROGRESS_TOKEN_BYTES`].
pub(crate) fn token_of(meta: Option<&Value>) -> Option<&Value> {
    let token = member(meta?.as_object()?, "progressToken")?;
    let served = match token {
        Value::String(text) => text.len() <= MAX_PROGRESS_TOKEN_BYTES,
        other => other.is_i64() || other.is_u64(),
    };
    served.then_some(token)
}

/// A request's progress reporter (see [`crate::RequestContext::progress`]). Cheap to clone.
#[derive(Clone, Default)]
pub struct Progress {
    inner: Option<Arc<Reporter>>,
}

struct Reporter {
    token: Value,
    state: Mutex<State>,
}

struct State {
    /// `None` once closed.
    sink: Option<NotificationSink>,
    last: Option<f64>,
}

impl Progress {
    /// A reporter sending to `sink` under `token`.
    pub(crate) fn to(token: Value, sink: NotificationSink) -> Self {
        let state = Mutex::new(State { sink: Some(sink), last: None });
        Self { inner: Some(Arc::new(Reporter { token, state })) }
    }

    /// Whether reports are delivered (the request carried a progress token and is still running).
    pub fn is_enabled(&self) -> bool {
        self.inner.as_ref().is_some_and(|r| r.lock().sink.is_some())
    }

    /// Reports progress: sent only when the request asked for it, the value is finite and greater than
    /// the last one sent, and the request has not been answered yet; otherwise dropped.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(reporter) = &self.inner else { return };
        let mut state = reporter.lock();
        let Some(sink) = state.sink.clone() else { return };
        if !progress.is_finite() || state.last.is_some_and(|last| progress <= last) {
            return;
        }
        state.last = Some(progress);
        let mut params = Map::with_capacity(4);
        params.insert("progressToken".into(), reporter.token.clone());
        params.insert("progress".into(), Value::from(progress));
        if let Some(total) = total.filter(|t| t.is_finite()) {
            params.insert("total".into(), Value::from(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::from(message));
        }
        let mut notification = Map::with_capacity(3);
        notification.insert("jsonrpc".into(), Value::from("2.0"));
        notification.insert("method".into(), Value::from("notifications/progress"));
        notification.insert("params".into(), Value::Object(params));
        // Sent under the lock: a concurrent `close` cannot slip between the check and the send.
        sink(Value::Object(notification));
    }

    /// Closes the reporter: nothing more is sent, and the sink is released.
    pub(crate) fn close(&self) {
        if let Some(reporter) = &self.inner {
            reporter.lock().sink = None;
        }
    }
}

impl Reporter {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress").field("token", &self.inner.as_ref().map(|r| &r.token)).finish()
    }
}

impl PartialEq for Progress {
    fn eq(&self, other: &Self) -> bool {
        same_handle(&self.inner, &other.inner)
    }
}

/// Whether two optional shared handles are the same one (both absent counts as the same).
pub(crate) fn same_handle<T>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// A per-request notification channel, closed once the request is answered.
pub(crate) trait Closable {
    /// Drops the sink: nothing more is sent through this channel.
    fn close_channel(&self);
}

impl Closable for Progress {
    fn close_channel(&self) {
        self.close();
    }
}

/// Closes a request's channel when the request is answered or its future dropped.
pub(crate) struct CloseOnDrop<T: Closable>(pub(crate) T);

impl<T: Closable> Drop for CloseOnDrop<T> {
    fn drop(&mut self) {
        self.0.close_channel();
    }
}

/// A sink that keeps what it is given, for the unit tests of the notification channels.
#[cfg(test)]
pub(crate) fn collecting() -> (NotificationSink, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    (Arc::new(move |v| kept.lock().unwrap().push(v)), seen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn progress_must_increase_so_non_increasing_reports_are_dropped() {
        let (sink, seen) = collecting();
        let progress = Progress::to(json!("t"), sink);
        progress.report(0.0, Some(100.0), None);
        progress.report(0.0, Some(100.0), None);
        progress.report(50.0, Some(100.0), Some("half"));
        progress.report(f64::NAN, None, None);
        progress.report(40.0, None, None);
        progress.report(100.0, Some(100.0), None);
        let seen = seen.lock().unwrap();
        let values: Vec<f64> = seen.iter().map(|n| n["params"]["progress"].as_f64().unwrap()).collect();
        assert_eq!(values, [0.0, 50.0, 100.0]);
        assert_eq!(
            seen[1],
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "t", "progress": 50.0, "total": 100.0, "message": "half"}})
        );
    }

    #[test]
    fn a_closed_reporter_sends_nothing_after_the_response() {
        let (sink, seen) = collecting();
        let progress = Progress::to(json!(7), sink);
        let kept = progress.clone();
        drop(CloseOnDrop(progress));
        kept.report(1.0, None, None);
        assert!(!kept.is_enabled());
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn without_a_token_reports_cost_nothing_and_send_nothing() {
        let progress = Progress::default();
        progress.report(1.0, None, None);
        assert!(!progress.is_enabled());
    }

    #[test]
    fn only_string_and_integer_tokens_count() {
        assert_eq!(progress_token(Some(&json!({"_meta": {"progressToken": "a"}}))), Some(&json!("a")));
        assert_eq!(progress_token(Some(&json!({"_meta": {"progressToken": 3}}))), Some(&json!(3)));
        for bad in [json!(1.5), json!(null), json!({}), json!([1])] {
            assert_eq!(progress_token(Some(&json!({"_meta": {"progressToken": bad}}))), None);
        }
        assert_eq!(progress_token(None), None);
    }

    #[test]
    fn a_string_token_longer_than_the_bound_gets_no_notifications() {
        let longest = json!({"_meta": {"progressToken": "t".repeat(MAX_PROGRESS_TOKEN_BYTES)}});
        assert!(progress_token(Some(&longest)).is_some());
        let longer = json!({"_meta": {"progressToken": "t".repeat(MAX_PROGRESS_TOKEN_BYTES + 1)}});
        assert_eq!(progress_token(Some(&longer)), None);
        // Bytes, not characters: 129 two-byte characters are 258 bytes.
        let wide = json!({"_meta": {"progressToken": "é".repeat(129)}});
        assert_eq!(progress_token(Some(&wide)), None);
    }
}
