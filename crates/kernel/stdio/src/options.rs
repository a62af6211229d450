//! The stdio transport's bounds, what it attaches to every request of a session, and when it stops.

use std::future::Future;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use mcp_kernel_router::Extensions;

use crate::listen::DEFAULT_MAX_LISTENS;

/// The longest line (or legacy frame body) admitted, in bytes, a trailing `\r` included ([D-27]).
///
/// [D-27]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
pub const MAX_LINE_BYTES: usize = 1_048_576;

/// How many requests are served at once unless the host chooses otherwise.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// How long a session waits, once its shutdown signal has completed, for the requests it has read
/// (see [`StdioOptions::shutdown_on`]).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How long the tasks still running when a session ends may take to finish before they are failed
/// (see [`StdioOptions::task_grace`]).
pub const DEFAULT_TASK_GRACE: Duration = Duration::from_secs(5);

/// How many server-to-client requests wait for the client's answers at once unless the host chooses
/// otherwise (see [`StdioOptions::max_client_requests`]).
pub const DEFAULT_MAX_CLIENT_REQUESTS: usize = 16;

/// How long a server-to-client request waits for the client's answer unless the host chooses otherwise
/// (see [`StdioOptions::client_wait`]): 5 minutes, since a person answers an elicitation.
pub const DEFAULT_CLIENT_WAIT: Duration = Duration::from_secs(5 * 60);

/// The most requests [`StdioOptions::max_in_flight`] admits (the runtime's semaphore bound).
const MAX_IN_FLIGHT_CEILING: usize = tokio::sync::Semaphore::MAX_PERMITS;

/// The bounds of one stdio session, and the extensions attached to each of its requests:
/// `StdioOptions::default().max_in_flight(8).principal(Caller::local())`.
///
/// Whoever writes to stdin runs with the host's privileges (see the crate's threat model), so there
/// is no one to authenticate: the host says who the session's caller is when it starts serving, and
/// the host's code reads it as `RequestContext::principal::<P>()`, as it would over HTTP.
#[derive(Clone, Debug)]
pub struct StdioOptions {
    pub(crate) max_line_bytes: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) max_listens: usize,
    pub(crate) extensions: Extensions,
    pub(crate) shutdown: Option<ShutdownSignal>,
    pub(crate) shutdown_grace: Duration,
    pub(crate) task_grace: Duration,
    pub(crate) max_client_requests: usize,
    pub(crate) client_wait: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: MAX_LINE_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_listens: DEFAULT_MAX_LISTENS,
            extensions: Extensions::new(),
            shutdown: None,
            shutdown_grace: SHUTDOWN_GRACE,
            task_grace: DEFAULT_TASK_GRACE,
            max_client_requests: DEFAULT_MAX_CLIENT_REQUESTS,
            client_wait: DEFAULT_CLIENT_WAIT,
        }
    }
}

/// The host's shutdown future, shared by every clone of the options that hold it: each session served
/// with them polls its own handle and sees it complete once.
#[derive(Clone)]
pub(crate) struct ShutdownSignal(pub(crate) Shared<BoxFuture<'static, ()>>);

impl std::fmt::Debug for ShutdownSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShutdownSignal")
    }
}

impl StdioOptions {
    /// The defaults: [`MAX_LINE_BYTES`], [`DEFAULT_MAX_IN_FLIGHT`] and [`DEFAULT_MAX_LISTENS`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The longest line or frame body admitted, in bytes (default [`MAX_LINE_BYTES`]).
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// How many requests are served at once; reading pauses while that many are (default 64, at least 1).
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.clamp(1, MAX_IN_FLIGHT_CEILING);
        self
    }

    /// How many `subscriptions/listen` streams the session holds open at once (default
    /// [`DEFAULT_MAX_LISTENS`], 16). A listen never takes one of the
    /// [`max_in_flight`](Self::max_in_flight) places, so open listens never hold up requests; it
    /// holds one of these from when it is read until it ends, and a listen read while every one is
    /// taken is answered at once with the JSON-RPC error [`TOO_MANY_LISTENS`](crate::TOO_MANY_LISTENS)
    /// (-32000, "Too many open subscriptions/listen streams on this connection", `data`
    /// `{"maxListens": n}`). `0` refuses every listen.
    pub fn max_listens(mut self, listens: usize) -> Self {
        self.max_listens = listens;
        self
    }

    /// Attaches `extensions` to every request of the session (replacing those attached before): the
    /// host reads them from `RequestContext::extensions`.
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Attaches `principal` to every request of the session, beside the extensions already attached
    /// (replacing a value of the same type): the host reads it as `RequestContext::principal::<P>()`.
    pub fn principal<P: Clone + Send + Sync + 'static>(mut self, principal: P) -> Self {
        self.extensions.insert(principal);
        self
    }

    /// Stops the session when `signal` completes, as a rolling deploy's `SIGTERM` asks: nothing more is
    /// read, every request already read is answered, the output is flushed and the session returns
    /// `Ok` — at most [`shutdown_grace`](Self::shutdown_grace) after the signal, when what still runs
    /// is cut. The host's one line for "SIGTERM and Ctrl-C drain the session" is
    /// `.shutdown_on(mcp_kernel::shutdown_signal())`.
    ///
    /// "Read" means taken off the input: the signal ends the input where it stands, so lines already
    /// taken in are served (a line cut short there is answered as one that end of input cuts short), and
    /// nothing sent after it is. Without a signal the session stops only at end of input, `shutdown` or
    /// `exit`, as before; the transport installs no signal handler of its own, since that changes how
    /// the whole process answers the signal, for as long as it runs. Cloned options share the signal:
    /// every session served with them stops when it completes. It is polled only while a session runs.
    ///
    /// ```
    /// # async fn run(server: mcp_kernel_router::Server) -> std::io::Result<()> {
    /// use std::time::Duration;
    /// use mcp_kernel_stdio::StdioOptions;
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let options = StdioOptions::default()
    ///     .shutdown_on(async move { let _ = stopped.await; })
    ///     .shutdown_grace(Duration::from_secs(5));
    /// # drop(stop);
    /// mcp_kernel_stdio::serve_with(server, options).await
    /// # }
    /// ```
    pub fn shutdown_on(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(ShutdownSignal(signal.boxed().shared()));
        self
    }

    /// How long the session waits for the requests it has read once the signal of
    /// [`shutdown_on`](Self::shutdown_on) has completed (default [`SHUTDOWN_GRACE`]); then what still
    /// runs is cut: those requests are never answered, and an output nobody takes is not waited for.
    /// End of input alone sets no deadline: a signal that completes during the wait starts it.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// How long the tasks still running when the session ends may take to finish (a server built with
    /// tasks, the tasks extension; default [`DEFAULT_TASK_GRACE`], 5 s). A task's handler runs on after
    /// the `CreateTaskResult`, outside every request, so when the session ends — end of input,
    /// `shutdown`/`exit`, the signal of [`shutdown_on`](Self::shutdown_on) — and every request read has
    /// been answered, its tasks get this long; each one still running then is failed, with a JSON-RPC
    /// error saying the server shut down, and its handler cancelled
    /// ([`Server::drain_tasks`](mcp_kernel_router::Server::drain_tasks)). After a signal the
    /// [`shutdown_grace`](Self::shutdown_grace) still bounds the whole: at its cut the tasks still
    /// running are failed at once. The session also fails them at once when its output is gone. Keep it
    /// below the time a client waits, after closing stdin, before it signals the process.
    pub fn task_grace(mut self, grace: Duration) -> Self {
        self.task_grace = grace;
        self
    }

    /// How many requests the server's bridge may have waiting for a `2025-11-25` client's answers at
    /// once (default [`DEFAULT_MAX_CLIENT_REQUESTS`], 16; at least 1). When a legacy client's request
    /// reaches a host that asks for input (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`), the core sends those requests to the client over this connection; one past the
    /// bound is not sent, and the request that needed it is answered -32000 with `data`
    /// `{"fault": "busy"}`. A request waiting for an answer lends its
    /// [`max_in_flight`](Self::max_in_flight) place back while it waits, and the client's answer needs
    /// none: answers are read in order, and one behind a request waiting for a place would never be
    /// read. So at most `max_in_flight` plus this many requests are served at once.
    pub fn max_client_requests(mut self, requests: usize) -> Self {
        self.max_client_requests = requests.max(1);
        self
    }

    /// How long one server-to-client request waits for the client's answer (default
    /// [`DEFAULT_CLIENT_WAIT`], 5 minutes: a person answers an elicitation). Past it the request is
    /// forgotten, the client is sent `notifications/cancelled` naming it, and the request that needed
    /// it is answered -32000 with `data` `{"fault": "timedOut"}`. When the input ends every request
    /// still waiting is answered at once (`{"fault": "closed"}`) rather than at this bound.
    pub fn client_wait(mut self, wait: Duration) -> Self {
        self.client_wait = wait;
        self
    }

    /// How many server-to-client requests may wait at once (set by
    /// [`StdioOptions::max_client_requests`]).
    pub fn get_max_client_requests(&self) -> usize {
        self.max_client_requests
    }

    /// How long a server-to-client request waits for its answer (set by [`StdioOptions::client_wait`]).
    pub fn get_client_wait(&self) -> Duration {
        self.client_wait
    }

    /// How long the tasks still running when the session ends may take to finish (set by
    /// [`StdioOptions::task_grace`]).
    pub fn get_task_grace(&self) -> Duration {
        self.task_grace
    }

    /// How long a session waits for its requests after its shutdown signal (set by
    /// [`StdioOptions::shutdown_grace`]).
    pub fn get_shutdown_grace(&self) -> Duration {
        self.shutdown_grace
    }

    /// Whether a shutdown signal is set ([`StdioOptions::shutdown_on`]).
    pub fn has_shutdown_signal(&self) -> bool {
        self.shutdown.is_some()
    }

    /// The extensions attached to every request (set by [`StdioOptions::extensions`] and
    /// [`StdioOptions::principal`]).
    pub fn get_extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The longest line or frame body admitted, in bytes (set by [`StdioOptions::max_line_bytes`]).
    pub fn get_max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// How many requests are served at once (set by [`StdioOptions::max_in_flight`]).
    pub fn get_max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// How many listens the session holds open at once (set by [`StdioOptions::max_listens`]).
    pub fn get_max_listens(&self) -> usize {
        self.max_listens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_setters() {
        let options = StdioOptions::default();
        assert_eq!(options.get_max_line_bytes(), MAX_LINE_BYTES);
        assert_eq!(options.get_max_in_flight(), DEFAULT_MAX_IN_FLIGHT);
        assert_eq!(options.get_max_listens(), DEFAULT_MAX_LISTENS);
        assert_eq!(DEFAULT_MAX_LISTENS, 16);
        assert_eq!(StdioOptions::new().max_listens(0).get_max_listens(), 0, "zero refuses every listen");
        let options = StdioOptions::new().max_line_bytes(10).max_in_flight(0);
        assert_eq!(options.get_max_line_bytes(), 10);
        assert_eq!(options.get_max_in_flight(), 1, "zero would never admit a request");
        assert!(options.get_extensions().is_empty());
        assert_eq!(options.get_shutdown_grace(), SHUTDOWN_GRACE);
        assert_eq!(options.get_task_grace(), DEFAULT_TASK_GRACE);
        assert_eq!(options.get_max_client_requests(), DEFAULT_MAX_CLIENT_REQUESTS);
        assert_eq!(options.get_client_wait(), DEFAULT_CLIENT_WAIT);
        assert_eq!(
            options.clone().max_client_requests(0).get_max_client_requests(),
            1,
            "zero would ask nothing"
        );
        assert_eq!(options.clone().client_wait(Duration::ZERO).get_client_wait(), Duration::ZERO);
        assert_eq!(options.clone().task_grace(Duration::ZERO).get_task_grace(), Duration::ZERO);
        assert!(!options.has_shutdown_signal(), "no signal unless the host names one");
        let options = options.shutdown_on(std::future::pending()).shutdown_grace(Duration::from_millis(5));
        assert!(options.has_shutdown_signal());
        assert!(options.clone().has_shutdown_signal(), "clones share the signal");
        assert_eq!(options.get_shutdown_grace(), Duration::from_millis(5));
    }

    #[test]
    fn principal_adds_to_the_extensions_and_extensions_replaces_them() {
        let mut first = Extensions::new();
        first.insert(1_u8);
        let options = StdioOptions::new().extensions(first).principal("alice");
        assert_eq!(options.get_extensions().get::<u8>(), Some(&1));
        assert_eq!(options.get_extensions().get::<&str>(), Some(&"alice"));
        let options = options.extensions(Extensions::new());
        assert!(options.get_extensions().is_empty());
    }
}
