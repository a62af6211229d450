//! The serving loop: read a message, serve it on its own task, cancel on request, stop on `shutdown`/`exit`
//! or end of input.
//!
//! A request carrying `_meta.progressToken` gets its `notifications/progress` lines written before its
//! response line, as does one log notifications may reach its `notifications/message` lines (other
//! requests' lines may interleave); a cancelled request writes nothing more. A `subscriptions/listen`
//! streams its tagged notifications until it is cancelled or completes ([`crate::listen`]); a legacy
//! session's untagged notifications are written as they come ([`crate::legacy`]).
//!
//! [`serve`] wires the process's stdin and stdout through [`crate::wiring`] (a pipe gets a private
//! non-blocking description, anything else is served blocking; no shared flag is changed) and ends
//! quietly when its output is gone; [`serve_io`] reports every failure.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mcp_kernel_router::transport::LiveServer;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinError;

use crate::drain::{Stoppable, cut_after, input_stop};
use crate::framing::{CHUNK, FrameReader};
use crate::legacy::LegacyWriter;
use crate::options::StdioOptions;
use crate::session::{Bounds, Ended, Session};
use crate::wiring;
use crate::writer::{Output, write_lines};

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

/// Serves `server` (a [`Server`](mcp_kernel_router::Server), or a [`LiveServer`] whose replacements the session then serves) over
/// the process's stdin and stdout with `options`: its bounds, and the extensions (the session's
/// principal) attached to every request. Ends as [`serve`] does, and also when the signal of
/// [`StdioOptions::shutdown_on`] completes, in this order (the crate docs, *Stopping*):
///
/// 1. nothing more is read from stdin (what was already taken in is served, as at end of input);
/// 2. every request read is answered, and its progress and log lines written before its answer;
///    then the tasks still running (a server built with tasks) get [`StdioOptions::task_grace`] to
///    finish, and each one still running is failed with the shutdown reason;
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
/// `server` is a [`Server`](mcp_kernel_router::Server) or a [`LiveServer`]: each message is served to its end by the server current
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
    let output = Arc::new(Output::new(output));
    let mut writer = tokio::spawn(write_lines(Arc::clone(&output), queue));
    let bounds = Bounds {
        extensions: options.extensions,
        max_in_flight: options.max_in_flight,
        max_listens: options.max_listens,
        max_client_requests: options.max_client_requests,
        client_wait: options.client_wait,
    };
    // What ends the tasks: the server current when the session ends.
    let tasks = TaskEnd { live: live.clone(), grace: options.task_grace };
    let (mut session, notifications) = Session::new(live, bounds, lines.clone(), output);
    // The legacy session's end (its change feed ended) ends the input too, as the host's signal does.
    let (session_ended, ended) = oneshot::channel();
    let legacy = LegacyWriter::start(notifications, lines, session_ended);
    // The host's signal ends the input where it stands, and the grace after it bounds the rest.
    let input = Stoppable::new(input, Some(input_stop(options.shutdown.clone(), ended)));
    let cut = cut_after(options.shutdown, options.shutdown_grace);
    tokio::pin!(cut);
    let mut frames = FrameReader::new(BufReader::with_capacity(CHUNK, input), options.max_line_bytes);

    let ended = tokio::select! {
        biased;
        written = &mut writer => Ended::OutputGone(Some(joined(written))),
        () = &mut cut => {
            session.cut(writer);
            tasks.fail_now().await;
            return Ok(());
        }
        ended = session.read(&mut frames) => ended,
    };
    drop(frames);
    // No answer can come any more: a request waiting for one is answered now, not at its bound.
    session.close_client();
    let read = match ended {
        Ended::OutputGone(written) => {
            let written = match written {
                Some(written) => written,
                None => joined(writer.await),
            };
            let failed = Failure::Output(session.output_failed(written));
            tasks.fail_now().await;
            return Err(failed);
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
            tasks.fail_now().await;
            return read;
        }
        () = session.drain() => None,
    };
    if let Some(written) = failed {
        let failed = Failure::Output(session.output_failed(written));
        tasks.fail_now().await;
        return Err(failed);
    }
    // Every request read is answered, so no call becomes a task any more: the tasks get their grace
    // (the cut, after a signal, still bounds it: it ends the session there, as it would below).
    if tasks.drain(cut.as_mut()).await {
        session.cut(writer);
        return read;
    }
    // Every sender gone, the writer flushes and ends.
    legacy.stop();
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

/// What ends a session's tasks (a server built with tasks): the tasks still running when it ends get
/// [`StdioOptions::task_grace`], then each one still running is failed with the shutdown reason
/// ([`Server::drain_tasks`](mcp_kernel_router::Server::drain_tasks)).
struct TaskEnd {
    live: LiveServer,
    grace: Duration,
}

impl TaskEnd {
    /// Gives the tasks their grace, or less if `cut` (the shutdown grace's end) comes first: then those
    /// still running are failed at once (the drain is cancel-safe: what the first did not fail, the
    /// second does). True when the cut came (it is then over: never to be polled again).
    async fn drain(&self, cut: Pin<&mut impl Future<Output = ()>>) -> bool {
        let server = self.live.current();
        tokio::select! {
            biased;
            () = server.drain_tasks(self.grace) => false,
            () = cut => {
                server.drain_tasks(Duration::ZERO).await;
                true
            }
        }
    }

    /// Fails every task still running, at once: the session was cut, or nobody is left to read.
    async fn fail_now(&self) {
        self.live.current().drain_tasks(Duration::ZERO).await;
    }
}

/// A writer task's outcome as an I/O result.
fn joined(written: Result<io::Result<()>, JoinError>) -> io::Result<()> {
    written.unwrap_or_else(|_| {
        tracing::error!("the output writer panicked");
        Err(io::Error::other("the output writer panicked"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_kernel_router::Server;
    use std::task::Poll;

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

    /// An output that keeps what it is given and, for each write, whether a spawned task made it (the
    /// writer task) or the session's own future did (the read loop, under `block_on`).
    #[derive(Clone, Default)]
    struct Recorder(Arc<std::sync::Mutex<(Vec<bool>, Vec<u8>)>>);

    impl Recorder {
        /// Who made each write so far, and every byte written.
        fn taken(&self) -> (Vec<bool>, Vec<u8>) {
            self.0.lock().expect("not poisoned").clone()
        }
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            bytes: &[u8],
        ) -> Poll<io::Result<usize>> {
            let mut seen = self.0.lock().expect("not poisoned");
            seen.0.push(tokio::task::try_id().is_some());
            seen.1.extend_from_slice(bytes);
            Poll::Ready(Ok(bytes.len()))
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

    #[test]
    fn answers_to_pipelined_requests_are_written_together_in_order() {
        const PINGS: usize = 200;
        let input: Vec<u8> = (0..PINGS)
            .flat_map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").into_bytes())
            .collect();
        let output = Recorder::default();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let server =
            Server::builder(mcp_kernel_router::Listing::default()).build().expect("an empty catalog builds");
        let served =
            runtime.block_on(serve_io(server, input.as_slice(), output.clone(), StdioOptions::default()));
        served.expect("served to the end of the input");
        let (writes, bytes) = output.taken();
        let ids: Vec<u64> = String::from_utf8(bytes)
            .expect("UTF-8")
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("one JSON answer a line"))
            .map(|answer| answer["id"].as_u64().expect("a numeric id"))
            .collect();
        assert_eq!(ids, (0..PINGS as u64).collect::<Vec<_>>(), "every answer, whole and in order");
        // One write an answer would be 200: the answers of requests read together leave together.
        let writes = writes.len();
        assert!(writes <= PINGS / 10, "{writes} writes for {PINGS} pipelined answers");
    }

    #[test]
    fn a_lone_request_is_answered_by_the_read_loop_itself() {
        let output = Recorder::default();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let server =
            Server::builder(mcp_kernel_router::Listing::default()).build().expect("an empty catalog builds");
        let (seen, record) = (output.clone(), output.clone());
        runtime.block_on(async move {
            let (mut client, input) = tokio::io::duplex(1024);
            let session = serve_io(server, input, output, StdioOptions::default());
            tokio::pin!(session);
            tokio::io::AsyncWriteExt::write_all(
                &mut client,
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            )
            .await
            .expect("the input takes a ping");
            // The input stays open: the session answers and waits for more, for 2 s at most.
            let waited = tokio::time::timeout(std::time::Duration::from_secs(2), async {
                while seen.taken().0.is_empty() {
                    tokio::select! {
                        biased;
                        ended = &mut session => panic!("the session ended early: {ended:?}"),
                        () = tokio::task::yield_now() => {}
                    }
                }
            });
            waited.await.expect("the ping was answered within 2 s");
            drop(client);
            session.await.expect("served to the end of the input");
        });
        let (writes, _) = record.taken();
        assert_eq!(writes.first(), Some(&false), "written by the read loop, not the writer task: {writes:?}");
    }

    #[test]
    fn an_input_failure_is_an_error_of_the_process_session() {
        let broken = io::Error::from(io::ErrorKind::BrokenPipe);
        let ended = process_ended(Err(Failure::Input(broken)));
        assert_eq!(ended.expect_err("an input failure").kind(), io::ErrorKind::BrokenPipe);
        assert!(output_gone(&io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(!output_gone(&io::Error::other("the output writer panicked")));
    }
}
