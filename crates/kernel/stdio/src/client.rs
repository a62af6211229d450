//! The connection's [`ClientChannel`]: the requests the core's bridge sends a `2025-11-25` client
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) go out as lines among the others, and
//! the client's JSON-RPC responses come back on the input.
//!
//! * **Ids.** Every request the server sends gets an id the transport mints: a string,
//!   `mcp-kernel-<16 hex digits>-<n>` — a random nonce drawn once per connection, then a counter. JSON-RPC
//!   ids are per direction (the client's own requests have ids of their own, which these never need to
//!   avoid), so the nonce is not a secret: the connection has one peer, and it only keeps an answer of a
//!   previous connection or process from ever matching a request of this one.
//! * **Answers.** A message with an `id`, `"jsonrpc": "2.0"`, no `method` and exactly one of `result`
//!   and `error` is a response: it goes to the waiting request with that id and is never answered
//!   (JSON-RPC forbids answering a response). One for an id not waiting — never issued, already
//!   answered, given up — is dropped with a debug log. An answer is bounded by the frame cap like any
//!   line (an oversized one is refused as a line, unread, so its request waits out its bound).
//! * **Bounds.** At most [`StdioOptions::max_client_requests`](crate::StdioOptions::max_client_requests)
//!   wait at once (past it: [`ClientFault::Busy`]), each for at most
//!   [`StdioOptions::client_wait`](crate::StdioOptions::client_wait) (then [`ClientFault::TimedOut`]).
//! * **Places.** The answer is read in order, so a request waiting for it must not hold one of the
//!   session's [`max_in_flight`](crate::StdioOptions::max_in_flight) places: with every place held by a
//!   request waiting for the client, the next request read would wait for a place, and the answers
//!   behind it would never be read. While it waits, a request lends its place back; when the wait
//!   ends it takes one again (when none is free at once, the next free one is forgotten instead), so
//!   at most `max_in_flight + max_client_requests` requests are ever served.
//! * **Giving up.** A request whose waiter is dropped (the client cancelled the request that needed
//!   it) or whose wait ran out is forgotten and the client told with `notifications/cancelled` naming
//!   its id and why. When the connection ends (end of input, `shutdown`, a failed output) every waiting
//!   request resolves [`ClientFault::Closed`], and later ones are refused the same way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mcp_kernel_router::BoxFuture;
use mcp_kernel_router::transport::{ClientChannel, ClientFault, LegacySession};
use mcp_kernel_wire::ErrorObject;
use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::writer::Line;

/// What a waiting request is resolved with.
type Answer = Result<Value, ClientFault>;

/// One connection's channel to its client (cheap to clone: one shared state).
#[derive(Clone)]
pub(crate) struct Client {
    shared: Arc<Shared>,
}

struct Shared {
    /// The writer's queue; `None` once the connection has ended.
    lines: Mutex<Option<mpsc::Sender<Line>>>,
    /// The requests waiting for an answer, by id.
    waiting: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    /// `mcp-kernel-<nonce>-`.
    prefix: String,
    next: AtomicU64,
    max_waiting: usize,
    wait: Duration,
    /// Where `initialize` left the client's capabilities.
    session: LegacySession,
    /// The session's `max_in_flight` places: a request waiting for its answer lends one back.
    places: Arc<Semaphore>,
    /// Places lent and due back that were not free when they were due: the next free ones are forgotten.
    owed: Mutex<usize>,
}

impl Shared {
    /// A request waits for its answer: its place is lent back (first against a place still owed).
    fn lend(&self) {
        let mut owed = lock(&self.owed);
        if *owed > 0 {
            *owed -= 1;
        } else {
            self.places.add_permits(1);
        }
    }

    /// The wait is over: a free place is taken back, or owed until one is.
    fn take_back(&self) {
        let mut owed = lock(&self.owed);
        *owed += 1;
        *owed -= self.places.forget_permits(*owed);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// 64 random bits as 16 hex digits; a fixed value when the system's random source fails (the nonce is
/// not a secret, see the module's docs).
fn nonce() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        tracing::debug!("the system's random source failed; server-to-client ids use a fixed nonce");
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("waiting", &lock(&self.shared.waiting).len()).finish_non_exhaustive()
    }
}

impl Client {
    /// The channel of a connection writing to `lines`, within its bounds; `places` are the session's
    /// `max_in_flight` places.
    pub(crate) fn new(
        lines: mpsc::Sender<Line>,
        session: LegacySession,
        places: Arc<Semaphore>,
        max_waiting: usize,
        wait: Duration,
    ) -> Self {
        let shared = Shared {
            lines: Mutex::new(Some(lines)),
            waiting: Mutex::default(),
            prefix: format!("mcp-kernel-{}-", nonce()),
            next: AtomicU64::new(1),
            max_waiting,
            wait,
            session,
            places,
            owed: Mutex::new(0),
        };
        Self { shared: Arc::new(shared) }
    }

    /// Whether a request of the server's waits for an answer with this id (the read loop asks before it
    /// reads an answer whole).
    pub(crate) fn awaits(&self, id: Option<&Value>) -> bool {
        id.and_then(Value::as_str).is_some_and(|id| lock(&self.shared.waiting).contains_key(id))
    }

    /// Hands a response the client sent to the request waiting for its id; drops it otherwise.
    pub(crate) fn deliver(&self, mut message: Map<String, Value>) {
        let id = message.get("id").and_then(Value::as_str);
        let waiter = id.and_then(|id| lock(&self.shared.waiting).remove(id));
        let Some(waiter) = waiter else {
            tracing::debug!("dropped a response for no request the server is waiting on");
            return;
        };
        let answer = match message.remove("result") {
            Some(result) => Ok(result),
            None => Err(ClientFault::Refused(refusal(message.remove("error")))),
        };
        // The waiter may have gone in between: then the answer has nobody to reach.
        let _ = waiter.send(answer);
    }

    /// The connection has ended: every waiting request resolves `Closed`, later ones are refused so,
    /// and the writer's queue is released.
    pub(crate) fn close(&self) {
        lock(&self.shared.lines).take();
        let waiting: Vec<_> = lock(&self.shared.waiting).drain().map(|(_, waiter)| waiter).collect();
        for waiter in waiting {
            let _ = waiter.send(Err(ClientFault::Closed));
        }
    }

    /// How many requests wait for an answer (for tests).
    #[cfg(test)]
    fn waiting(&self) -> usize {
        lock(&self.shared.waiting).len()
    }
}

/// The client's JSON-RPC error, kept for the log (its code only is ever logged).
fn refusal(error: Option<Value>) -> ErrorObject {
    let error = error.unwrap_or(Value::Null);
    serde_json::from_value(error.clone()).unwrap_or_else(|_| {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        ErrorObject::new(code, "")
    })
}

impl ClientChannel for Client {
    fn capabilities(&self) -> Option<Arc<Value>> {
        self.shared.session.client_capabilities()
    }

    fn request(&self, method: &'static str, params: Value) -> BoxFuture<'static, Answer> {
        let shared = Arc::clone(&self.shared);
        let id = format!("{}{}", shared.prefix, shared.next.fetch_add(1, Ordering::Relaxed));
        let (waiter, answered) = oneshot::channel();
        let lines = {
            let Some(lines) = lock(&shared.lines).clone() else {
                return Box::pin(std::future::ready(Err(ClientFault::Closed)));
            };
            let mut waiting = lock(&shared.waiting);
            if waiting.len() >= shared.max_waiting {
                return Box::pin(std::future::ready(Err(ClientFault::Busy)));
            }
            // Registered before the line is written: an answer can never arrive first.
            waiting.insert(id.clone(), waiter);
            lines
        };
        let line =
            Line::notification(&json!({"jsonrpc": "2.0", "id": &id, "method": method, "params": params}));
        let wait = shared.wait;
        // Nothing to tell the client until the request is written (a cancellation names only a request
        // the client was sent).
        let pending = Pending { shared, id, reason: "", lent: false };
        Box::pin(async move {
            // The whole guard moves into the future: it goes when the future does.
            let mut pending = pending;
            if lines.send(line).await.is_err() {
                return Err(ClientFault::Closed);
            }
            drop(lines);
            pending.reason = "the request that needed the answer was cancelled";
            // Its place is lent back while it waits: the answer may be read after another request.
            pending.shared.lend();
            pending.lent = true;
            match tokio::time::timeout(wait, answered).await {
                Ok(Ok(answer)) => answer,
                // The connection ended (`close`).
                Ok(Err(_)) => Err(ClientFault::Closed),
                Err(_) => {
                    tracing::debug!(method, "the client did not answer within the bound");
                    pending.reason = "the server stopped waiting for the answer";
                    Err(ClientFault::TimedOut)
                }
            }
        })
    }
}

/// A request sent and not yet settled: when it goes (answered, given up or dropped) its id is
/// forgotten, its place taken back, and if it was still waiting the client is told it was cancelled.
struct Pending {
    shared: Arc<Shared>,
    id: String,
    /// Why it is cancelled, when it is (empty: never queued for the client, tell nobody).
    reason: &'static str,
    /// Whether the request's place was lent while it waited.
    lent: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.lent {
            self.shared.take_back();
        }
        if lock(&self.shared.waiting).remove(&self.id).is_none() || self.reason.is_empty() {
            return;
        }
        let Some(lines) = lock(&self.shared.lines).clone() else { return };
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": &self.id, "reason": self.reason}});
        if lines.try_send(Line::notification(&cancelled)).is_err() {
            tracing::debug!("a cancellation was not written: the output queue is full");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(lines: mpsc::Sender<Line>, max: usize, wait: Duration) -> Client {
        Client::new(lines, LegacySession::new().0, Arc::new(Semaphore::new(1)), max, wait)
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("tests pass objects"),
        }
    }

    fn sent(line: Option<Line>) -> Value {
        serde_json::from_slice(&line.expect("a line").into_bytes()).expect("JSON")
    }

    #[test]
    fn only_a_jsonrpc_response_is_an_answer() {
        // What the read loop delivers here rather than serves: the envelope's rule.
        let answer = |message: Value| {
            mcp_kernel_wire::read_envelope(&serde_json::to_vec(&message).expect("JSON"))
                .expect("read")
                .is_response()
        };
        assert!(answer(json!({"jsonrpc": "2.0", "id": "a", "result": {}})));
        assert!(answer(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": ""}})));
        assert!(!answer(json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}})));
        assert!(!answer(json!({"jsonrpc": "2.0", "id": 1, "method": "x", "result": {}})));
        assert!(!answer(json!({"jsonrpc": "2.0", "result": {}})));
        assert!(!answer(json!({"id": 1, "result": {}})));
    }

    #[tokio::test]
    async fn an_answer_reaches_its_request_and_an_unknown_one_is_dropped() {
        let (lines, mut queue) = mpsc::channel(8);
        let client = client(lines, 4, Duration::from_secs(30));
        let asking = tokio::spawn(client.request("roots/list", json!({})));
        let request = sent(queue.recv().await);
        let id = request["id"].as_str().expect("a string id").to_owned();
        assert!(id.starts_with("mcp-kernel-") && id.ends_with("-1"), "{id}");
        client.deliver(object(json!({"jsonrpc": "2.0", "id": "mcp-kernel-0-1", "result": {"roots": 1}})));
        client.deliver(object(json!({"jsonrpc": "2.0", "id": 1, "result": {}})));
        client.deliver(object(json!({"jsonrpc": "2.0", "id": &id, "result": {"roots": []}})));
        assert_eq!(asking.await.unwrap(), Ok(json!({"roots": []})));
        assert_eq!(client.waiting(), 0);
        assert!(queue.try_recv().is_err(), "nothing more is written");
    }

    #[tokio::test]
    async fn an_error_answer_is_a_refusal_and_busy_past_the_bound() {
        let (lines, mut queue) = mpsc::channel(8);
        let client = client(lines, 1, Duration::from_secs(30));
        let first = tokio::spawn(client.request("roots/list", json!({})));
        let id = sent(queue.recv().await)["id"].clone();
        assert_eq!(client.request("roots/list", json!({})).await, Err(ClientFault::Busy));
        client
            .deliver(object(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})));
        assert_eq!(first.await.unwrap(), Err(ClientFault::Refused(ErrorObject::new(-32601, "no"))));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_given_up_is_cancelled_to_the_client_and_forgotten() {
        let (lines, mut queue) = mpsc::channel(8);
        let client = client(lines, 4, Duration::from_secs(5));
        assert_eq!(client.request("roots/list", json!({})).await, Err(ClientFault::TimedOut));
        let request = sent(queue.recv().await);
        let cancelled = sent(queue.recv().await);
        assert_eq!(cancelled["method"], "notifications/cancelled");
        assert_eq!(cancelled["params"]["requestId"], request["id"]);
        assert_eq!(cancelled["params"]["reason"], "the server stopped waiting for the answer");
        let dropped = tokio::spawn(client.request("roots/list", json!({})));
        let request = sent(queue.recv().await);
        dropped.abort();
        let cancelled = sent(queue.recv().await);
        assert_eq!(cancelled["params"]["requestId"], request["id"]);
        assert_eq!(client.waiting(), 0);
        // A late answer for a forgotten request is dropped.
        client.deliver(object(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}})));
    }

    #[tokio::test]
    async fn the_end_of_the_connection_resolves_every_waiting_request_closed() {
        let (lines, mut queue) = mpsc::channel(8);
        let client = client(lines, 4, Duration::from_secs(30));
        let waiting = tokio::spawn(client.request("elicitation/create", json!({})));
        sent(queue.recv().await);
        client.close();
        assert_eq!(waiting.await.unwrap(), Err(ClientFault::Closed));
        assert_eq!(client.request("roots/list", json!({})).await, Err(ClientFault::Closed));
        assert_eq!(
            queue.recv().await.map(Line::into_bytes),
            None,
            "the queue is released, nothing cancelled"
        );
    }
    #[tokio::test(start_paused = true)]
    async fn a_request_lends_its_place_while_it_waits_and_takes_one_back() {
        let (lines, mut queue) = mpsc::channel(8);
        let places = Arc::new(Semaphore::new(1));
        let client =
            Client::new(lines, LegacySession::new().0, Arc::clone(&places), 4, Duration::from_secs(5));
        let held = Arc::clone(&places).try_acquire_owned().expect("the request's own place");
        let asking = tokio::spawn(client.request("roots/list", json!({})));
        let id = sent(queue.recv().await)["id"].clone();
        assert_eq!(places.available_permits(), 1, "lent while it waits");
        let other = Arc::clone(&places).try_acquire_owned().expect("another request takes the lent place");
        client.deliver(object(json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}})));
        assert_eq!(asking.await.unwrap(), Ok(json!({"roots": []})));
        assert_eq!(places.available_permits(), 0, "nothing was free: the place is owed");
        drop(other);
        drop(held);
        // The next place due back settles the debt first: one request waits, no place is added.
        let waiting = tokio::spawn(client.request("roots/list", json!({})));
        sent(queue.recv().await);
        assert_eq!(places.available_permits(), 2, "two freed, the lend paid the one owed");
        waiting.abort();
        let _ = waiting.await;
        assert_eq!(places.available_permits(), 1, "the bound again: one place");
        assert_eq!(client.waiting(), 0);
    }
    #[tokio::test]
    async fn a_question_never_written_is_never_cancelled_to_the_client() {
        // The writer's queue is full: the question waits to be queued, and its request is cancelled.
        let (lines, mut queue) = mpsc::channel(1);
        lines.try_send(Line::notification(&json!({"first": true}))).expect("room for one line");
        let client = client(lines, 4, Duration::from_secs(30));
        let asking = tokio::spawn(client.request("roots/list", json!({})));
        tokio::task::yield_now().await;
        assert_eq!(sent(queue.recv().await), json!({"first": true}));
        asking.abort();
        assert!(asking.await.is_err(), "aborted");
        assert_eq!(client.waiting(), 0);
        assert!(queue.try_recv().is_err(), "no notifications/cancelled names a request never sent");
    }
}
