//! The serving loop: read a message, serve it on its own task, cancel on request, stop on `shutdown`/`exit`
//! or end of input.
//!
//! A request carrying `_meta.progressToken` gets its `notifications/progress` lines written before its
//! response line, as does one log notifications may reach its `notifications/message` lines (other requests' lines may interleave); a cancelled request writes nothing more.
//!
//! [`serve`] wires the process's stdin and stdout through [`crate::wiring`] (a pipe gets a private
//! non-blocking description, anything else is served blocking; no shared flag is changed) and ends
//! quietly when its output is gone; [`serve_io`] reports every failure.

use std::future::Future;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;

use futures_util::FutureExt;
use mcp_kernel_router::transport::{Control, Handled, Inbound, LiveServer, Network};
use mcp_kernel_router::{Extensions, Server};
use mcp_kernel_wire::{Envelope, ErrorObject, Method, Response, read_message};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::{JoinError, JoinSet};

use crate::drain::{Stoppable, cut_after};
use crate::framing::{CHUNK, Frame, FrameReader};
use crate::in_flight::InFlight;
use crate::options::StdioOptions;
use crate::wiring;
use crate::writer::{Line, write_lines};

/// How many encoded responses may wait for the writer (senders wait beyond it).
const QUEUED_LINES: usize = 64;

/// Serves `server` over the process's stdin and stdout with the default [`StdioOptions`]:
/// `serve_with(server, StdioOptions::default())`.
///
/// Returns when the input ends or a `shutdown`/`exit` arrives, after every request read has been answered,
/// or when the output is gone (a broken pipe, a closed stdout: nobody is left to read an answer), which is
/// the end of the session, not an error. Every other failure (reading the input, a full disk) is an error.
/// A pipe or FIFO is served non-blocking on the runtime's reactor through a private description of its
/// own, so no flag of the descriptor the parent shares is ever changed (see the crate docs); anything
/// else (a terminal, a file, `/dev/null`) is read on a thread of its own and written with Tokio's
/// blocking stdout. That thread may stay blocked in a read after this returns (a terminal nobody types
/// into); nothing waits for it, so the process exits when `main` returns.
///
/// No signal is handled: `SIGTERM` keeps its default action (the process ends, answers owed are lost).
/// To drain on it instead, serve with `StdioOptions::default().shutdown_on(mcp_kernel::shutdown_signal())`.
pub async fn serve(server: impl Into<LiveServer>) -> io::Result<()> {
    serve_with(server, StdioOptions::default()).await
}

/// Serves `server` (a [`Server`], or a [`LiveServer`] whose replacements the session then serves) over
/// the process's stdin and stdout with `options`: its bounds, and the extensions (the session's
/// principal) attached to every request. Ends as [`serve`] does, and also when the signal of
/// [`StdioOptions::shutdown_on`] completes, in this order (the crate docs, *Stopping*):
///
/// 1. nothing more is read from stdin (what was already taken in is served, as at end of input);
/// 2. every request read is answered, and its progress and log lines written before its answer;
/// 3. the output is flushed and this returns `Ok` (a process exits 0 when `main` then returns) —
///    or, at [`StdioOptions::shutdown_grace`] after the signal, what still runs is cut unanswered and
///    this returns `Ok` all the same.
///
/// Each message is served to its end by the server current when it was read, so a replacement never
/// splits a request, and the next message read sees it.
pub async fn serve_with(server: impl Into<LiveServer>, options: StdioOptions) -> io::Result<()> {
    let live = server.into();
    // The loop runs as a task of the runtime, not on the thread that awaits `serve` (often `main`,
    // outside the worker pool): then the reader and the writer wake each other on one worker instead
    // of handing every response across threads.
    let session = async move {
        // stdin and stdout are wired independently, each by what `fstat` says it is. A pipe (the usual
        // case: a client spawned this process) is read or written without blocking, on the runtime's own
        // reactor; anything else is read on a thread of its own and written on the blocking pool, which
        // costs a thread hop each way per request.
        let input = wiring::stdin();
        let output = wiring::stdout();
        process_ended(run(live, input, output, options).await)
    };
    tokio::spawn(session).await.unwrap_or_else(|_| Err(io::Error::other("the stdio session panicked")))
}

/// How a process-level session ends: an output nobody reads any more is the end of the session (logged
/// at debug), every other failure is handed on as an error.
fn process_ended(ended: Result<(), Failure>) -> io::Result<()> {
    match ended {
        Ok(()) => Ok(()),
        Err(Failure::Output(error)) if output_gone(&error) => {
            tracing::debug!(%error, "the output is gone (a broken pipe, a closed stdout): session over");
            Ok(())
        }
        Err(failure) => Err(failure.reported()),
    }
}

/// Whether an output failure means nobody is left to read: a broken pipe, or a closed stdout (`EBADF`).
///
/// A full disk (`ENOSPC`) or any other failure is not: the reader is there but the answers are lost.
fn output_gone(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe || wiring::is_closed(error)
}

/// Serves `server` over any byte streams: newline-delimited JSON-RPC in, one response line per request out.
///
/// `server` is a [`Server`] or a [`LiveServer`]: each message is served to its end by the server current
/// when it was read. `options` bounds the session and attaches its extensions to every request.
///
/// Must run inside a Tokio runtime: each message is served on its own task. Returns `Ok` after end of input
/// or `shutdown`/`exit`, once every request read has been answered and the output flushed; returns the
/// input's error after the same wait, or the output's error at once (in-flight requests are then aborted).
/// The signal of [`StdioOptions::shutdown_on`] ends `input` where it stands, as in [`serve_with`].
pub async fn serve_io<R, W>(
    server: impl Into<LiveServer>,
    input: R,
    output: W,
    options: StdioOptions,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    run(server.into(), input, output, options).await.map_err(Failure::reported)
}

/// Why a session failed: its input or its output.
#[derive(Debug)]
enum Failure {
    /// Reading the input failed (already reported: the requests in flight were still answered).
    Input(io::Error),
    /// Writing the output failed (not yet reported: [`serve`] ends quietly when the reader is gone).
    Output(io::Error),
}

impl Failure {
    /// The error, an output failure reported as it is handed on.
    fn reported(self) -> io::Error {
        match self {
            Failure::Input(error) => error,
            Failure::Output(error) => {
                tracing::error!(%error, "writing the output failed; stopped serving");
                error
            }
        }
    }
}

/// [`serve_io`], telling an input failure from an output one.
async fn run<R, W>(live: LiveServer, input: R, output: W, options: StdioOptions) -> Result<(), Failure>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (lines, queue) = mpsc::channel(QUEUED_LINES);
    let mut writer = tokio::spawn(write_lines(output, queue));
    // The host's signal ends the input where it stands, and the grace after it bounds the rest.
    let input = Stoppable::new(input, options.shutdown.clone());
    let cut = cut_after(options.shutdown, options.shutdown_grace);
    tokio::pin!(cut);
    let mut frames = FrameReader::new(BufReader::with_capacity(CHUNK, input), options.max_line_bytes);
    let mut session = Session::new(live, options.extensions, lines, options.max_in_flight);

    let ended = tokio::select! {
        biased;
        written = &mut writer => Ended::OutputGone(Some(joined(written))),
        () = &mut cut => {
            session.cut(writer);
            return Ok(());
        }
        ended = session.read(&mut frames) => ended,
    };
    drop(frames);
    let read = match ended {
        Ended::OutputGone(written) => {
            let written = match written {
                Some(written) => written,
                None => joined(writer.await),
            };
            return Err(session.output_failed(written));
        }
        Ended::Input(error) => {
            tracing::error!(%error, "reading the input failed; answering the requests in flight");
            Err(Failure::Input(error))
        }
        Ended::Eof | Ended::Shutdown => Ok(()),
    };

    let failed = tokio::select! {
        biased;
        written = &mut writer => Some(joined(written)),
        () = &mut cut => {
            session.cut(writer);
            return read;
        }
        () = session.drain() => None,
    };
    if let Some(written) = failed {
        return Err(session.output_failed(written));
    }
    drop(session);
    let written = tokio::select! {
        biased;
        written = &mut writer => joined(written),
        // Every answer is queued; an output nobody takes is not waited for past the grace.
        () = &mut cut => {
            tracing::warn!("the output was not taken within the shutdown grace; stopped writing");
            writer.abort();
            Ok(())
        }
    };
    read.and(written.map_err(Failure::Output))
}

/// Why the read loop stopped.
#[derive(Debug)]
enum Ended {
    /// The input ended.
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
    /// `notifications/cancelled`: abort the request whose id has this JSON text, if it is still running.
    Cancel(Option<String>),
    /// `shutdown` (a request) or `exit`: answered inline, then the loop may stop.
    Inline,
    /// Everything else: served on its own task.
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

/// Awaits the core, catching a panic (defence in depth: the core already guards the host's code).
///
/// A panic is logged by names only (never its payload; the process's panic hook runs first) and answered
/// -32603 with the request's id; a notification gets no answer.
async fn answer<F: Future<Output = Handled>>(handling: F, id: Option<Value>) -> Handled {
    match AssertUnwindSafe(handling).catch_unwind().await {
        Ok(handled) => handled,
        Err(_) => {
            tracing::error!("the core panicked while serving a message; answered -32603");
            let response = id.map(|id| Response::error(id, ErrorObject::internal()));
            Handled { response, control: Control::Continue }
        }
    }
}

/// A writer task's outcome as an I/O result.
fn joined(written: Result<io::Result<()>, JoinError>) -> io::Result<()> {
    written.unwrap_or_else(|_| {
        tracing::error!("the output writer panicked");
        Err(io::Error::other("the output writer panicked"))
    })
}

/// A message being served: the core's answer, with its panic guard.
type Handling = std::pin::Pin<Box<dyn Future<Output = Handled> + Send>>;

/// One stdio session's state, owned by the read loop.
struct Session {
    /// The server; each message reads the current one once, when it is read.
    live: LiveServer,
    /// Attached to every request (`StdioOptions::extensions`).
    extensions: Extensions,
    lines: mpsc::Sender<Line>,
    tasks: JoinSet<()>,
    in_flight: Arc<InFlight>,
    permits: Arc<Semaphore>,
}

impl Session {
    fn new(
        live: LiveServer,
        extensions: Extensions,
        lines: mpsc::Sender<Line>,
        max_in_flight: usize,
    ) -> Self {
        Self {
            live,
            extensions,
            lines,
            tasks: JoinSet::new(),
            in_flight: Arc::default(),
            permits: Arc::new(Semaphore::new(max_in_flight)),
        }
    }

    /// Reads and dispatches messages until the input ends, a `shutdown`/`exit` is answered, or I/O fails.
    ///
    /// A message to be served waits for a permit before anything more is read, so at most `max_in_flight`
    /// requests are served and one more is held; cancellations, refusals and `shutdown`/`exit` need none.
    async fn read<R: AsyncBufRead + Unpin>(&mut self, frames: &mut FrameReader<R>) -> Ended {
        loop {
            self.reap();
            let bytes = match frames.next().await {
                Err(error) => return Ended::Input(error),
                Ok(Frame::Eof) => return Ended::Eof,
                Ok(Frame::Refused(error)) => {
                    tracing::debug!(code = error.code, "refused a message before parsing it");
                    if !self.send(Response::error(Value::Null, error)).await {
                        return Ended::OutputGone(None);
                    }
                    continue;
                }
                Ok(Frame::Message(bytes)) => bytes,
            };
            let message = match read_message(&bytes) {
                Ok(message) => Envelope::from_object(message),
                Err(refusal) => {
                    tracing::debug!(code = refusal.code(), "refused an unreadable message");
                    if !self.send(Response::error(Value::Null, refusal.to_error_object())).await {
                        return Ended::OutputGone(None);
                    }
                    continue;
                }
            };
            drop(bytes);
            match Kind::of(&message) {
                Kind::Cancel(key) => {
                    if let Some(key) = key {
                        self.in_flight.cancel(&key);
                    }
                }
                Kind::Inline => {
                    let id = reply_id(&message);
                    let server = self.live.current();
                    let handling = server.handle_envelope(message, self.inbound());
                    let handled = answer(handling, id).await;
                    if let Some(response) = handled.response
                        && !self.send(response).await
                    {
                        return Ended::OutputGone(None);
                    }
                    if handled.control == Control::Shutdown {
                        return Ended::Shutdown;
                    }
                }
                Kind::Spawn => {
                    // The permit first: no more than `max_in_flight` requests are ever being served.
                    let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
                        // The semaphore is never closed; stop reading rather than serve unbounded.
                        return Ended::Eof;
                    };
                    let key = message.id().map(id_key);
                    let id = reply_id(&message);
                    // Read once: this message is served to its end by the server current now.
                    let server = self.live.current();
                    let inbound = self.admitted(&server, &message);
                    let mut handling: Handling =
                        Box::pin(async move { answer(server.handle_envelope(message, inbound), id).await });
                    // Polled once here: most requests (a listing, a quick tool) finish at once and are
                    // answered without a task of their own. One that waits gets its own task, so that it
                    // holds up nothing read after it.
                    let first = std::future::poll_fn(|cx| Poll::Ready(handling.as_mut().poll(cx))).await;
                    if let Poll::Ready(handled) = first {
                        drop(permit);
                        if let Some(response) = handled.response
                            && !self.send(response).await
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
    fn admitted(&self, server: &Server, message: &Envelope) -> Inbound {
        if !message.has_id() {
            return self.inbound();
        }
        let admitted = server.admit(message, &self.extensions);
        let inbound = self.inbound().admitted(&admitted);
        if !admitted.may_notify() {
            return inbound;
        }
        let lines = self.lines.clone();
        inbound.notifications(Arc::new(move |notification: Value| {
            if lines.try_send(Line::notification(&notification)).is_err() {
                tracing::debug!("a notification was dropped: the output queue is full");
            }
        }))
    }

    /// What every request of the session carries: the session's extensions, and the network its
    /// span records (`network.transport` `pipe`).
    fn inbound(&self) -> Inbound {
        Inbound::new().extensions(self.extensions.clone()).network(Network::stdio())
    }

    /// Queues one response for the writer; false when the writer is gone.
    async fn send(&self, response: Response) -> bool {
        self.lines.send(Line::encode(&response)).await.is_ok()
    }

    /// Finishes serving one message on its own task, which holds `permit` until its answer is queued.
    fn spawn(&mut self, handling: Handling, key: Option<String>, permit: OwnedSemaphorePermit) {
        let lines = self.lines.clone();
        let in_flight = Arc::clone(&self.in_flight);
        let own_key = key.clone();
        let task = async move {
            let handled = handling.await;
            if let Some(response) = handled.response
                && lines.send(Line::encode(&response)).await.is_err()
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

    /// Waits until every task has finished.
    async fn drain(&mut self) {
        while let Some(done) = self.tasks.join_next().await {
            log_join(done);
        }
    }

    /// The shutdown grace has passed: the requests still running are aborted (never answered) and
    /// the writer is stopped, whatever it still holds.
    fn cut(mut self, writer: tokio::task::JoinHandle<io::Result<()>>) {
        if !self.tasks.is_empty() {
            tracing::warn!(requests = self.tasks.len(), "cut at the shutdown grace, unanswered");
        }
        self.tasks.abort_all();
        writer.abort();
    }

    /// The output failed: nobody can receive an answer, so the requests in flight are aborted.
    fn output_failed(&mut self, written: io::Result<()>) -> Failure {
        self.tasks.abort_all();
        let error = written
            .err()
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "the output writer stopped"));
        Failure::Output(error)
    }
}

fn log_join(done: Result<(), JoinError>) {
    if let Err(error) = done
        && error.is_panic()
    {
        tracing::error!("a request task panicked");
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

    /// An output whose every write fails with this OS error.
    struct FailingOutput(i32);

    impl AsyncWrite for FailingOutput {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            _: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Ready(Err(io::Error::from_raw_os_error(self.0)))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    const EPIPE: i32 = 32;
    const EBADF: i32 = 9;
    const ENOSPC: i32 = 28;

    /// Serves two pings into an output failing with `errno`: what `serve` and `serve_io` make of it.
    fn ended_with_output_error(errno: i32) -> (io::Result<()>, io::Result<()>) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        runtime.block_on(async {
            let server = || {
                Server::builder(mcp_kernel_router::Listing::default())
                    .build()
                    .expect("an empty catalog builds")
            };
            let input: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
            let options = StdioOptions::default;
            let process = process_ended(run(server().into(), input, FailingOutput(errno), options()).await);
            let streams = serve_io(server(), input, FailingOutput(errno), options()).await;
            (process, streams)
        })
    }

    #[cfg(unix)]
    #[test]
    fn a_reader_gone_ends_the_process_session_quietly_but_is_an_error_of_serve_io() {
        for errno in [EPIPE, EBADF] {
            let (process, streams) = ended_with_output_error(errno);
            assert!(process.is_ok(), "os error {errno}: {process:?}");
            assert_eq!(streams.expect_err("serve_io reports it").raw_os_error(), Some(errno));
        }
    }

    #[test]
    fn a_full_disk_is_an_error_of_the_process_session_too() {
        let (process, streams) = ended_with_output_error(ENOSPC);
        assert_eq!(process.expect_err("answers were lost").raw_os_error(), Some(ENOSPC));
        assert_eq!(streams.expect_err("answers were lost").raw_os_error(), Some(ENOSPC));
    }

    #[test]
    fn an_input_failure_is_an_error_of_the_process_session() {
        let broken = io::Error::from(io::ErrorKind::BrokenPipe);
        let ended = process_ended(Err(Failure::Input(broken)));
        assert_eq!(ended.expect_err("an input failure").kind(), io::ErrorKind::BrokenPipe);
        assert!(output_gone(&io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(!output_gone(&io::Error::other("the output writer panicked")));
    }

    #[test]
    fn a_panicking_core_is_answered_internal_error_with_the_id() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        runtime.block_on(async {
            let panicking = async { panic!("the core panicked") };
            let handled = answer(panicking, Some(json!(9))).await;
            assert_eq!(handled.control, Control::Continue);
            assert_eq!(handled.response, Some(Response::error(json!(9), ErrorObject::internal())));
            let panicking = async { panic!("the core panicked") };
            assert_eq!(answer(panicking, None).await.response, None, "a notification is never answered");
        });
    }
}
