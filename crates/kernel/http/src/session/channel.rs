//! The HTTP transport's [`ClientChannel`]: how a legacy request of a session asks its client something
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) and reads the answer.
//!
//! The request goes out on the stream of the POST that needs it (`dispatch/sse.rs`: the POST is then
//! answered as an SSE stream, the server-to-client request before the POST's own response); the
//! client's answer comes back as a POST of its own (`post.rs`), possibly to another instance, and
//! reaches the one waiting through the session store. Threats, each closed here:
//!
//! * **A forged or misdirected answer.** Each request id is 128 fresh random bits, registered with
//!   the store (`SessionStore::expect`) for this session **before** the request is sent, so only the
//!   client the request was sent to can know it, and the store hands an answer only to its own
//!   session's waiting request (`post.rs` refuses the rest).
//! * **A client that never answers.** Waiting requests are bounded per session (the store refuses past
//!   [`SessionLimits::pending_per_session`]: `ClientFault::Busy`) and each waits at most the answer
//!   wait (`ClientFault::TimedOut`; the client is then sent `notifications/cancelled` for it, on the
//!   same stream). Dropping the request — the POST's stream closed, the request cancelled — drops its
//!   wait, which forgets it in the store.
//! * **An answer too large.** Refused 413 where it is POSTed; the waiting request is told
//!   (`ClientFault::TooLarge`) rather than left to time out.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use mcp_kernel_router::BoxFuture;
use mcp_kernel_router::sessions::{SessionError, SessionLimits, SessionStore, StoredSession, new_session_id};
use mcp_kernel_router::transport::{ClientChannel, ClientFault, SharedChannel};
use mcp_kernel_wire::ErrorObject;

/// The member of a delivered message saying the client's answer was refused as too large: the
/// transport's own mark, never a client's. The mark carries neither `result` nor `error`, which every
/// delivered client answer carries exactly one of, so a client's answer naming it is read as the answer
/// it is ([`read_answer`] reads `result` and `error` first).
pub(crate) const TOO_LARGE: &str = "mcp-kernel/answerTooLarge";

/// One POST's channel to its session's client.
pub(crate) struct SessionChannel {
    session: String,
    capabilities: Arc<Value>,
    store: Arc<dyn SessionStore>,
    limits: SessionLimits,
    wait: Duration,
    /// The POST's SSE stream.
    outbound: mpsc::Sender<Value>,
}

impl SessionChannel {
    /// The channel of a request of `session`, writing to `outbound` (its stream), each answer awaited
    /// at most `wait`.
    pub(crate) fn new(session: &StoredSession, wait: Duration, outbound: mpsc::Sender<Value>) -> Self {
        Self {
            session: session.id().to_owned(),
            capabilities: Arc::clone(session.capabilities()),
            store: Arc::clone(session.store()),
            limits: *session.limits(),
            wait,
            outbound,
        }
    }

    /// The same, shared as the core holds it.
    pub(crate) fn shared(self) -> SharedChannel {
        Arc::new(self)
    }
}

impl ClientChannel for SessionChannel {
    fn capabilities(&self) -> Option<Arc<Value>> {
        Some(Arc::clone(&self.capabilities))
    }

    fn request(&self, method: &'static str, params: Value) -> BoxFuture<'static, Result<Value, ClientFault>> {
        let session = self.session.clone();
        let store = Arc::clone(&self.store);
        let limits = self.limits;
        let wait = self.wait;
        let outbound = self.outbound.clone();
        Box::pin(async move {
            let Some(id) = new_session_id() else { return Err(ClientFault::Unavailable) };
            // Registered before it is sent: an answer as fast as the client can give it finds its wait.
            let reply = store.expect(&session, &id, &limits).await.map_err(|error| match error {
                SessionError::PendingFull => ClientFault::Busy,
                other => {
                    tracing::warn!(error = %other, "a server-to-client request could not be registered");
                    ClientFault::Unavailable
                }
            })?;
            let request = json!({"jsonrpc": "2.0", "id": &id, "method": method, "params": params});
            let exchange = async {
                outbound.send(request).await.map_err(|_| ClientFault::Closed)?;
                reply.await.ok_or(ClientFault::Closed)
            };
            match tokio::time::timeout(wait, exchange).await {
                Ok(answer) => read_answer(answer?),
                Err(_) => {
                    let cancelled = json!({
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": &id, "reason": "no answer within the server's bound"},
                    });
                    // Advisory: a stream too full to take it is one the client is not reading.
                    let _ = outbound.try_send(cancelled);
                    Err(ClientFault::TimedOut)
                }
            }
        })
    }
}

/// The `result` of a client's answer (a whole JSON-RPC response), or why there is none.
pub(crate) fn read_answer(answer: Value) -> Result<Value, ClientFault> {
    let Value::Object(mut answer) = answer else { return Err(ClientFault::Closed) };
    if let Some(result) = answer.remove("result") {
        return Ok(result);
    }
    if let Some(error) = answer.remove("error") {
        let error = serde_json::from_value::<ErrorObject>(error).ok();
        return Err(ClientFault::Refused(error.unwrap_or_else(ErrorObject::invalid_request)));
    }
    if answer.get(TOO_LARGE).is_some_and(|mark| mark == &Value::Bool(true)) {
        return Err(ClientFault::TooLarge);
    }
    Err(ClientFault::Refused(ErrorObject::invalid_request()))
}

/// The message delivered in place of an answer refused as too large.
pub(crate) fn too_large(id: &str) -> Value {
    let mut mark = Map::new();
    mark.insert("jsonrpc".into(), Value::from("2.0"));
    mark.insert("id".into(), Value::from(id));
    mark.insert(TOO_LARGE.into(), Value::Bool(true));
    Value::Object(mark)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_kernel_router::sessions::{InProcessSessionStore, SessionRecord};
    use mcp_kernel_router::tasks::now_ms;

    const LIMITS: SessionLimits = SessionLimits::new(16, 100, Duration::from_secs(3600), 2);

    async fn session(store: &Arc<InProcessSessionStore>, id: &str) -> StoredSession {
        let record =
            SessionRecord::new(id, None, "2025-11-25", json!({"elicitation": {}}), now_ms(), LIMITS.idle);
        store.create(record, &LIMITS).await.expect("stored");
        let record = store.resume(id, None, now_ms(), &LIMITS).await.expect("reachable").expect("live");
        StoredSession::new(record, Arc::clone(store) as Arc<dyn SessionStore>, LIMITS)
    }

    #[tokio::test]
    async fn a_request_is_registered_before_it_is_sent_and_its_answer_is_the_result() {
        let store = Arc::new(InProcessSessionStore::new());
        let stored = session(&store, "s").await;
        let (outbound, mut stream) = mpsc::channel(8);
        let channel = SessionChannel::new(&stored, Duration::from_secs(5), outbound).shared();
        assert_eq!(channel.capabilities().as_deref(), Some(&json!({"elicitation": {}})));
        let asked = tokio::spawn(channel.request("elicitation/create", json!({"message": "name?"})));
        let sent = tokio::time::timeout(Duration::from_secs(5), stream.recv()).await.unwrap().unwrap();
        assert_eq!(sent["method"], "elicitation/create");
        let id = sent["id"].as_str().expect("a string id").to_owned();
        assert_eq!(id.len(), 32, "128 random bits");
        let answer = json!({"jsonrpc": "2.0", "id": &id, "result": {"action": "accept"}});
        assert!(!store.deliver("t", &id, answer.clone()).await.unwrap(), "another session's answer");
        assert!(store.deliver("s", &id, answer).await.unwrap(), "registered before it was sent");
        assert_eq!(asked.await.unwrap(), Ok(json!({"action": "accept"})));
    }

    #[tokio::test]
    async fn a_request_past_the_pending_bound_is_busy_and_one_unanswered_times_out_cancelled() {
        let store = Arc::new(InProcessSessionStore::new());
        let stored = session(&store, "s").await;
        let (outbound, mut stream) = mpsc::channel(8);
        let channel = SessionChannel::new(&stored, Duration::from_millis(200), outbound).shared();
        let first = tokio::spawn(channel.request("roots/list", json!({})));
        let second = tokio::spawn(channel.request("roots/list", json!({})));
        for _ in 0..2 {
            tokio::time::timeout(Duration::from_secs(5), stream.recv()).await.unwrap().unwrap();
        }
        assert_eq!(channel.request("roots/list", json!({})).await, Err(ClientFault::Busy), "2 wait already");
        assert_eq!(first.await.unwrap(), Err(ClientFault::TimedOut));
        assert_eq!(second.await.unwrap(), Err(ClientFault::TimedOut));
        let cancelled = stream.recv().await.unwrap();
        assert_eq!(cancelled["method"], "notifications/cancelled");
        drop(stream);
        let again = channel.request("roots/list", json!({})).await;
        assert_eq!(again, Err(ClientFault::Closed), "the stream is gone");
    }

    #[test]
    fn an_answer_is_its_result_its_error_or_the_too_large_mark() {
        assert_eq!(
            read_answer(json!({"jsonrpc": "2.0", "id": "x", "result": {"roots": []}})),
            Ok(json!({"roots": []}))
        );
        let refused =
            read_answer(json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "no"}}));
        assert_eq!(refused, Err(ClientFault::Refused(ErrorObject::new(-1, "no"))));
        assert_eq!(read_answer(too_large("x")), Err(ClientFault::TooLarge));
        let garbled = read_answer(json!({"jsonrpc": "2.0", "id": "x", "error": 7}));
        assert_eq!(garbled, Err(ClientFault::Refused(ErrorObject::invalid_request())));
        let forged = json!({"jsonrpc": "2.0", "id": "x", "result": {"roots": []}, TOO_LARGE: true});
        assert_eq!(read_answer(forged), Ok(json!({"roots": []})), "a client's answer is what it says");
    }
}
