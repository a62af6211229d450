//! One stdio session, as the read loop owns it: what each message read becomes (a cancellation, an
//! inline `shutdown`/`exit`, a `subscriptions/listen` stream, or a request served on its own task), the
//! tasks serving them, and how they end (drained, cut at the grace, or aborted when the output fails).
//!
//! The connection is also a `2025-11-25` session: every message carries its [`LegacySession`], so a
//! legacy `initialize` opens its change notifications (written untagged by [`crate::legacy`]) and
//! `resources/subscribe` / `resources/unsubscribe` are answered for it; and its client channel
//! ([`crate::client`]), through which the core asks a legacy client for input, and to which the
//! client's JSON-RPC responses go.

use std::future::Future;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::FutureExt;
use futures_util::future::CatchUnwind;
use mcp_kernel_router::transport::{
    Control, Handled, Inbound, LegacyNotifications, LegacySession, LiveServer, Network, SharedChannel,
};
use mcp_kernel_router::{Extensions, Server};
use mcp_kernel_wire::{Envelope, ErrorObject, Method, Response, read_envelope, read_message};
use serde_json::Value;
use tokio::io::AsyncBufRead;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::{JoinError, JoinSet};

use crate::client::Client;
use crate::framing::{Buffered, Frame, FrameReader};
use crate::in_flight::InFlight;
use crate::listen::{Listens, Stream};
use crate::writer::{Direct, Gathered, Line, Offer};

/// Why the read loop stopped.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The input ended (or was ended: the host's signal, or the legacy session's end).
    Eof,
    /// `shutdown` or `exit` was answered.
    Shutdown,
    /// Reading the input failed.
    Input(io::Error),
    /// The writer stopped (the output failed); its result, when already collected.
    OutputGone(Option<io::Result<()>>),
}

/// What the loop does with one parsed message.
#[derive(Debug, PartialEq)]
enum Kind {
    /// `notifications/cancelled`: abort the request or end the listen whose id has this JSON text, if it
    /// is still running.
    Cancel(Option<String>),
    /// `shutdown` (a request) or `exit`: answered inline, then the loop may stop.
    Inline,
    /// Everything else: served (on its own task unless it finishes at once); a `subscriptions/listen`
    /// with a valid id on a listen place of its own.
    Spawn,
}

impl Kind {
    fn of(message: &Envelope) -> Self {
        let is_request = message.has_id();
        match message.method() {
            Some(Method::NotificationCancelled) if !is_request => {
                Kind::Cancel(message.params_object().and_then(|params| params.get("requestId")).map(id_key))
            }
            Some(Method::Exit) => Kind::Inline,
            Some(Method::Shutdown) if is_request => Kind::Inline,
            _ => Kind::Spawn,
        }
    }
}

/// The key of a request id in the in-flight map: its compact JSON text (`7` and `"7"` differ).
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// The id an answer of this message carries: `None` for a notification, `null` for an id the core refuses.
fn reply_id(message: &Envelope) -> Option<Value> {
    message.has_id().then(|| message.echoable_id())
}

/// The core's future behind the panic guard (defence in depth: the core already guards the host's code).
///
/// Awaited where the core's future is made (`server.handle_envelope(..)` as the argument), so that it is
/// built in place in the awaiting future: a future handed through an `async fn` of its own is moved, whole,
/// once more per request.
fn guard<F: Future<Output = Handled>>(core: F) -> CatchUnwind<AssertUnwindSafe<F>> {
    AssertUnwindSafe(core).catch_unwind()
}

/// What the guarded core came to. A panic is logged by names only (never its payload; the process's panic
/// hook runs first) and answered -32603 with the request's id; a notification gets no answer.
fn settle(handled: std::thread::Result<Handled>, id: Option<Value>) -> Handled {
    match handled {
        Ok(handled) => handled,
        Err(_) => {
            tracing::error!("the core panicked while serving a message; answered -32603");
            let response = id.map(|id| Response::error(id, ErrorObject::internal()));
            Handled { response, control: Control::Continue }
        }
    }
}

/// A message being served: the core's answer, with its panic guard.
type Handling = std::pin::Pin<Box<dyn Future<Output = Handled> + Send>>;

/// One stdio session's state, owned by the read loop.
pub(crate) struct Session {
    /// The server; each message reads the current one once, when it is read.
    live: LiveServer,
    /// Attached to every request (`StdioOptions::extensions`).
    extensions: Extensions,
    lines: mpsc::Sender<Line>,
    /// Every request and listen being served.
    tasks: JoinSet<()>,
    in_flight: Arc<InFlight>,
    permits: Arc<Semaphore>,
    /// The open listens: their places (`StdioOptions::max_listens`) and what a cancellation ends.
    listens: Arc<Listens>,
    /// Set when the session drains: every open listen then writes its completion and ends.
    draining: watch::Sender<bool>,
    /// The connection's legacy session, attached to every message.
    legacy: LegacySession,
    /// The connection's channel to its client, attached to every message (the core uses it for a
    /// legacy request whose host asks for input): its requests out, the client's answers in.
    client: Client,
    /// The same channel as the core holds it, made once: each message clones the handle, not the channel.
    channel: SharedChannel,
    /// The output itself, for an answer the loop writes at once when nothing is queued before it.
    output: Arc<dyn Direct>,
    /// The answers held back while the client's next message is read already ([`Session::send`]).
    gathered: Gathered,
}

/// What a session is made of: its bounds and what it attaches to every message.
pub(crate) struct Bounds {
    /// `StdioOptions::extensions`.
    pub(crate) extensions: Extensions,
    /// `StdioOptions::max_in_flight`.
    pub(crate) max_in_flight: usize,
    /// `StdioOptions::max_listens`.
    pub(crate) max_listens: usize,
    /// `StdioOptions::max_client_requests`.
    pub(crate) max_client_requests: usize,
    /// `StdioOptions::client_wait`.
    pub(crate) client_wait: std::time::Duration,
}

impl Session {
    /// A session writing to `lines`, and the reading half of its legacy session's notifications.
    pub(crate) fn new(
        live: LiveServer,
        bounds: Bounds,
        lines: mpsc::Sender<Line>,
        output: Arc<dyn Direct>,
    ) -> (Self, LegacyNotifications) {
        let (legacy, notifications) = LegacySession::new();
        let permits = Arc::new(Semaphore::new(bounds.max_in_flight));
        let client = Client::new(
            lines.clone(),
            legacy.clone(),
            Arc::clone(&permits),
            bounds.max_client_requests,
            bounds.client_wait,
        );
        let session = Self {
            live,
            extensions: bounds.extensions,
            lines,
            tasks: JoinSet::new(),
            in_flight: Arc::default(),
            permits,
            listens: Arc::new(Listens::new(bounds.max_listens)),
            draining: watch::Sender::new(false),
            legacy,
            channel: Arc::new(client.clone()),
            client,
            output,
            gathered: Gathered::default(),
        };
        (session, notifications)
    }

    /// Reads and dispatches messages until the input ends, a `shutdown`/`exit` is answered, or I/O fails.
    ///
    /// A message to be served waits for a permit before anything more is read, so at most `max_in_flight`
    /// requests are served and one more is held; cancellations, refusals, listens (which hold places of
    /// their own), `shutdown`/`exit` and the client's answers need none. A request waiting for the
    /// client's answer lends its permit back meanwhile ([`crate::client`]), so that the answer is never
    /// stuck behind a request waiting for a permit.
    pub(crate) async fn read<R: AsyncBufRead + Buffered + Unpin>(
        &mut self,
        frames: &mut FrameReader<R>,
    ) -> Ended {
        let ended = self.read_messages(frames).await;
        // What the loop held back goes out before anything the session does after reading.
        if !self.flush().await && !matches!(ended, Ended::OutputGone(_)) {
            if let Ended::Input(error) = &ended {
                tracing::error!(%error, "reading the input failed, and then the output");
            }
            return Ended::OutputGone(None);
        }
        ended
    }

    /// [`Session::read`]'s loop; answers it held back may remain ([`Session::flush`]).
    async fn read_messages<R: AsyncBufRead + Buffered + Unpin>(
        &mut self,
        frames: &mut FrameReader<R>,
    ) -> Ended {
        loop {
            self.reap();
            // Reading on may wait for the client, who may be waiting for these answers.
            if !frames.has_whole_message() && !self.flush().await {
                return Ended::OutputGone(None);
            }
            let bytes = match frames.next().await {
                Err(error) => return Ended::Input(error),
                Ok(Frame::Eof) => return Ended::Eof,
                Ok(Frame::Refused(error)) => {
                    tracing::debug!(code = error.code, "refused a message before parsing it");
                    let more = frames.has_whole_message();
                    if !self.send(Response::error(Value::Null, error), more).await {
                        return Ended::OutputGone(None);
                    }
                    continue;
                }
                Ok(Frame::Message(bytes)) => bytes,
            };
            let message = match read_envelope(&bytes) {
                // The client's answer to one of the server's requests: never answered itself. Read
                // again whole (the envelope keeps no `result`) only when a request waits for it; the
                // same bytes read the same way, so the second read cannot fail where the first did not.
                Ok(message) if message.is_response() => {
                    if self.client.awaits(message.id()) {
                        self.client.deliver(read_message(&bytes).unwrap_or_default());
                    } else {
                        tracing::debug!("dropped a response for no request the server is waiting on");
                    }
                    continue;
                }
                Ok(message) => message,
                Err(refusal) => {
                    tracing::debug!(code = refusal.code(), "refused an unreadable message");
                    let more = frames.has_whole_message();
                    if !self.send(Response::error(Value::Null, refusal.to_error_object()), more).await {
                        return Ended::OutputGone(None);
                    }
                    continue;
                }
            };
            drop(bytes);
            match Kind::of(&message) {
                Kind::Cancel(key) => {
                    if let Some(key) = key
                        && !self.listens.cancel(&key)
                    {
                        self.in_flight.cancel(&key);
                    }
                }
                Kind::Inline => {
                    let id = reply_id(&message);
                    let server = self.live.current();
                    let handled = settle(guard(server.handle_envelope(message, self.inbound())).await, id);
                    if let Some(response) = handled.response
                        && !self.send(response, frames.has_whole_message()).await
                    {
                        return Ended::OutputGone(None);
                    }
                    if handled.control == Control::Shutdown {
                        return Ended::Shutdown;
                    }
                }
                Kind::Spawn => {
                    // Read once: this message is served to its end by the server current now.
                    let server = self.live.current();
                    let (inbound, listens) = self.admitted(&server, &message);
                    if listens {
                        if !self.listen(server, message, inbound).await {
                            return Ended::OutputGone(None);
                        }
                        continue;
                    }
                    // The permit first: no more than `max_in_flight` requests are ever being served.
                    let permit = match Arc::clone(&self.permits).try_acquire_owned() {
                        Ok(permit) => Ok(permit),
                        Err(_) => {
                            // Waiting for a request to finish: what was held back goes out first.
                            if !self.flush().await {
                                return Ended::OutputGone(None);
                            }
                            Arc::clone(&self.permits).acquire_owned().await
                        }
                    };
                    let Ok(permit) = permit else {
                        // The semaphore is never closed; stop reading rather than serve unbounded.
                        return Ended::Eof;
                    };
                    let key = message.id().map(id_key);
                    let id = reply_id(&message);
                    // Allocated first, so that the optimizer can build the request's future in its
                    // allocation: `Box::pin` builds it on the stack and copies it in at its full size.
                    let boxed = Box::write(Box::new_uninit(), async move {
                        settle(guard(server.handle_envelope(message, inbound)).await, id)
                    });
                    let mut handling: Handling = Box::into_pin(boxed);
                    // Polled once here: most requests (a listing, a quick tool) finish at once and are
                    // answered without a task of their own. One that waits gets its own task, so that it
                    // holds up nothing read after it.
                    let first = std::future::poll_fn(|cx| Poll::Ready(handling.as_mut().poll(cx))).await;
                    if let Poll::Ready(handled) = first {
                        drop(permit);
                        if let Some(response) = handled.response
                            && !self.send(response, frames.has_whole_message()).await
                        {
                            return Ended::OutputGone(None);
                        }
                        continue;
                    }
                    self.spawn(handling, key, permit);
                }
            }
        }
    }

    /// What a request is served with: the session's [`Inbound`], what the core answered about it
    /// ([`Server::admit`]) and, when it may be sent notifications (a progress token, or log
    /// notifications), a sink queueing them on the writer's queue, ahead of its response (one queue, so
    /// a request's lines keep their order). A full queue drops a notification (progress and logs are
    /// advisory); the response is never dropped.
    ///
    /// Also whether the message is a `subscriptions/listen` request with an id a stream can be tagged
    /// with: it is then served as a listen ([`Session::listen`]), and gets no sink.
    fn admitted(&self, server: &Server, message: &Envelope) -> (Inbound, bool) {
        if !message.has_id() {
            return (self.inbound(), false);
        }
        let admitted = server.admit(message, &self.extensions);
        let inbound = self.inbound().admitted(&admitted);
        if admitted.listens() && message.has_valid_id() {
            return (inbound, true);
        }
        if !admitted.may_notify() {
            return (inbound, false);
        }
        let lines = self.lines.clone();
        let sink = Arc::new(move |notification: Value| {
            if lines.try_send(Line::notification(&notification)).is_err() {
                tracing::debug!("a notification was dropped: the output queue is full");
            }
        });
        (inbound.notifications(sink), false)
    }

    /// What every message of the session carries: the session's extensions, the connection's legacy
    /// session, and the network its span records (`network.transport` `pipe`).
    fn inbound(&self) -> Inbound {
        Inbound::new()
            .extensions(self.extensions.clone())
            .session(&self.legacy)
            .client(Arc::clone(&self.channel))
            .network(Network::stdio())
    }

    /// Nothing more is read: the requests waiting for the client's answers resolve `Closed`.
    pub(crate) fn close_client(&self) {
        self.client.close();
    }

    /// Serves the listen `message` on a task of its own, holding one of the session's listen places
    /// (never a `max_in_flight` permit); refused at once when every place is taken or its id names a
    /// listen still open. False when the writer is gone.
    async fn listen(&mut self, server: Server, message: Envelope, inbound: Inbound) -> bool {
        let id = message.echoable_id();
        let key = id_key(&id);
        let place = match self.listens.take(&key) {
            Ok(place) => place,
            Err(refusal) => {
                tracing::debug!(?refusal, "refused a listen");
                return self.send(Response::error(id, refusal.error(self.listens.max())), false).await;
            }
        };
        let ticket = place.ticket();
        let stream = Stream { lines: self.lines.clone(), draining: self.draining.subscribe(), place, id };
        let handle = self.tasks.spawn(stream.serve(server, message, inbound));
        self.listens.streamed_by(&ticket, handle);
        true
    }

    /// Answers one message. While the client's next message is read already (`more_input`, from
    /// [`FrameReader::has_whole_message`]) the answer is held back, to leave with the ones after it;
    /// else it leaves now with any held back before it ([`Session::write`]). False when the output
    /// failed or the writer is gone.
    ///
    /// An answer held back waits, at most, for the requests read after it to be handled as far as
    /// their first poll (a request that waits gets a task of its own), and for no read: the loop lets
    /// everything it holds go before it reads what may not have come yet, and before it waits for a
    /// permit. Lines other tasks queue meanwhile (a listen's, a legacy session's notifications, the
    /// answers and progress of requests on tasks of their own) may go out before it, as they may
    /// before any answer of a request read earlier: JSON-RPC orders nothing between messages of
    /// different requests, and a request's own progress lines still precede its answer.
    async fn send(&mut self, response: Response, more_input: bool) -> bool {
        let mut line = Line::answer(response);
        if more_input {
            match self.gathered.keep(line) {
                Ok(()) => return true,
                Err(full) => line = full,
            }
        }
        match self.gathered.then(line) {
            Ok(line) => self.write(line).await,
            Err((held, long)) => self.write(held).await && self.write(long).await,
        }
    }

    /// Lets go of the answers held back, if any; false when the output failed or the writer is gone.
    async fn flush(&mut self) -> bool {
        match self.gathered.take() {
            Some(line) => self.write(line).await,
            None => true,
        }
    }

    /// Writes `line` at once when nothing is queued or held before it (no hand-over to the writer task:
    /// the common case of one request at a time), or else queues it for the writer; false when the
    /// output failed or the writer is gone.
    async fn write(&self, line: Line) -> bool {
        let queue_empty = self.lines.capacity() == self.lines.max_capacity();
        // This task's waker: a write the output cannot take now is left to the writer task, which
        // registers its own, so this one is woken at most once more, for nothing.
        let waker = std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
        let offered = self.output.offer(line, queue_empty, &mut Context::from_waker(&waker));
        match offered {
            Offer::Taken => true,
            Offer::Failed => false,
            Offer::Queue(line) => self.lines.send(line).await.is_ok(),
        }
    }

    /// Finishes serving one message on its own task, which holds `permit` until its answer is queued.
    fn spawn(&mut self, handling: Handling, key: Option<String>, permit: OwnedSemaphorePermit) {
        let lines = self.lines.clone();
        let in_flight = Arc::clone(&self.in_flight);
        let own_key = key.clone();
        let task = async move {
            let handled = handling.await;
            if let Some(response) = handled.response
                && lines.send(Line::answer(response)).await.is_err()
            {
                tracing::debug!("the output is gone; a response was dropped");
            }
            if let Some(key) = own_key {
                in_flight.finished(&key);
            }
            drop(permit);
        };
        // Hold the map while spawning, so that a task finishing at once cannot look itself up too early.
        let mut map = self.in_flight.lock();
        let handle = self.tasks.spawn(task);
        if let Some(key) = key {
            map.insert(key, handle);
        }
    }

    /// Collects the tasks that have finished, logging any that panicked outside the guard.
    fn reap(&mut self) {
        while let Some(done) = self.tasks.try_join_next() {
            log_join(done);
        }
    }

    /// Waits until every task has finished; every open listen is told to complete first.
    pub(crate) async fn drain(&mut self) {
        self.draining.send_replace(true);
        while let Some(done) = self.tasks.join_next().await {
            log_join(done);
        }
    }

    /// The shutdown grace has passed: the requests still running are aborted (never answered) and
    /// the writer is stopped, whatever it still holds.
    pub(crate) fn cut(mut self, writer: tokio::task::JoinHandle<io::Result<()>>) {
        if !self.tasks.is_empty() {
            tracing::warn!(requests = self.tasks.len(), "cut at the shutdown grace, unanswered");
        }
        self.tasks.abort_all();
        writer.abort();
    }

    /// The output failed: nobody can receive an answer, so the requests in flight are aborted; the
    /// output's error.
    pub(crate) fn output_failed(&mut self, written: io::Result<()>) -> io::Error {
        self.tasks.abort_all();
        written
            .err()
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "the output writer stopped"))
    }
}

fn log_join(done: Result<(), JoinError>) {
    if let Err(error) = done
        && error.is_panic()
    {
        tracing::error!("a request or listen task panicked");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Envelope {
        Envelope::from_value(value).expect("tests pass objects")
    }

    #[test]
    fn classifies_cancel_stop_and_the_rest() {
        let cancel = object(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
        );
        assert_eq!(Kind::of(&cancel), Kind::Cancel(Some("7".into())));
        let cancel = object(json!({"method": "notifications/cancelled", "params": {"requestId": "7"}}));
        assert_eq!(Kind::of(&cancel), Kind::Cancel(Some("\"7\"".into())));
        let cancel = object(json!({"method": "notifications/cancelled"}));
        assert_eq!(Kind::of(&cancel), Kind::Cancel(None));
        let request = object(json!({"id": 1, "method": "notifications/cancelled"}));
        assert_eq!(Kind::of(&request), Kind::Spawn);
        assert_eq!(Kind::of(&object(json!({"id": 1, "method": "shutdown"}))), Kind::Inline);
        assert_eq!(Kind::of(&object(json!({"method": "shutdown"}))), Kind::Spawn);
        assert_eq!(Kind::of(&object(json!({"method": "exit"}))), Kind::Inline);
        assert_eq!(Kind::of(&object(json!({"id": 2, "method": "exit"}))), Kind::Inline);
        assert_eq!(Kind::of(&object(json!({"id": 3, "method": "tools/list"}))), Kind::Spawn);
    }

    #[test]
    fn reply_ids_follow_the_core() {
        assert_eq!(reply_id(&object(json!({"method": "x"}))), None);
        assert_eq!(reply_id(&object(json!({"id": 4}))), Some(json!(4)));
        assert_eq!(reply_id(&object(json!({"id": "a"}))), Some(json!("a")));
        assert_eq!(reply_id(&object(json!({"id": {"no": 1}}))), Some(Value::Null));
        assert_eq!(reply_id(&object(json!({"id": 1.5}))), Some(Value::Null));
    }

    #[test]
    fn a_panicking_core_is_answered_internal_error_with_the_id() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        runtime.block_on(async {
            let panicking = async { panic!("the core panicked") };
            let handled = settle(guard(panicking).await, Some(json!(9)));
            assert_eq!(handled.control, Control::Continue);
            assert_eq!(handled.response, Some(Response::error(json!(9), ErrorObject::internal())));
            let panicking = async { panic!("the core panicked") };
            assert_eq!(
                settle(guard(panicking).await, None).response,
                None,
                "a notification is never answered"
            );
        });
    }
}
