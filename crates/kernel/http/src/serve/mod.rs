//! A ready-made server: one listener speaking HTTP/1.1 and HTTP/2 cleartext (prior knowledge), with
//! graceful shutdown and every connection bounded. Any tower service over `Request<Incoming>` can be
//! served — the bare [`McpService`](crate::McpService), or an axum `Router` that mounts it at a path.
//!
//! What a connection goes through, and which module guards each step:
//!
//! | step | bound | module | when it is passed |
//! |---|---|---|---|
//! | 1a | a share per client (its address prefix, [`ServeOptions::client_prefixes`]) | `limits.rs` | closed at `accept` ([`ServeOptions::max_connections_per_peer`]) |
//! | 1b | a slot in total; when all are held, the biggest holder gives one up to a smaller client | `limits.rs`, `evict.rs` | the newcomer is admitted and the biggest holder's longest-idle (else oldest) connection is told to close; a newcomer from a client holding as many as the biggest is closed at `accept`; past 1 in 16 connections on their way out, `serve` waits before `accept` ([`ServeOptions::max_connections`]) |
//! | 2 | the protocol decision, reading (never peeking) under the first-bytes deadline | `sniff.rs` | closed, no response |
//! | 3 | the first request's head, under the same deadline from accept | `watch.rs` | closed (`GOAWAY` first over HTTP/2) |
//! | 4 | each later HTTP/1.1 head, idle time before it included | `watch.rs` | closed |
//! | 5 | HTTP/2 streams open at once, and request bytes sent before the service reads them (the receive window, 64 KiB per connection and per stream) | hyper (`SETTINGS_MAX_CONCURRENT_STREAMS`, the initial windows) | the client queues; a stream opened anyway is refused (`REFUSED_STREAM`); DATA past the window is a flow-control error |
//! | 6 | no open request for the idle timeout, pings or not | `watch.rs` | closed politely (`GOAWAY`) |
//! | 7 | a write blocked for the write timeout; a response whose waits on the client add up to it | `io.rs`, `tracked.rs`, `watch.rs` | abandoned, closed |
//! | 8 | shutdown: open connections finish within the grace period (the drain, on [`serve_with`]); every `subscriptions/listen` stream is sent its completion result and ends (each request carries the drain's signal in its extensions); then the tasks of the servers it served a `tools/call` for get what is left of the grace period, and a task still running is failed | here, `dispatch/listen/ending.rs`, `tasks.rs` | ended |
//!
//! A connection told to close (step 1b) goes the way of one closed at a deadline: `GOAWAY` over HTTP/2;
//! over HTTP/1.1 closed if idle, else after the request in flight, answered with `connection: close`.
//! Its `subscriptions/listen` streams are sent their completion result and end (as at step 8), so that
//! it does go.

mod evict;
mod io;
mod limits;
mod options;
mod sniff;
mod tasks;
mod tracked;
mod watch;
mod woken;

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use http::header::CONNECTION;
use http::{HeaderValue, Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch as signal;
use tokio::time::Instant;
use tower::ServiceExt;

pub use options::{
    DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER,
    FIRST_BYTES_TIMEOUT, HEADER_READ_TIMEOUT, HTTP1_READ_BUFFER, HTTP2_KEEP_ALIVE, HTTP2_RECEIVE_WINDOW,
    IDLE_TIMEOUT, SHUTDOWN_GRACE, ServeOptions, WRITE_TIMEOUT,
};

use crate::body::read::deadline_after;
use crate::client::{ClientNetwork, PeerAddr};
pub(crate) use evict::Notice;
use io::ConnIo;
use limits::{Refusal, Slots};
use sniff::Protocol;
pub(crate) use tasks::TaskDrain;
use tracked::{Handover, Tracked};
use watch::{Deadlines, Verdict, Watch};
use woken::OnWake;

/// How long a connection closed at a deadline may take to send its `GOAWAY` before it is dropped.
const GOODBYE: Duration = Duration::from_secs(1);

/// How long, once shutdown has begun, a connection accepted before it may take to deliver its first
/// request head (it was likely on its way: a client sends it right after connecting).
const LATE_FIRST_REQUEST: Duration = Duration::from_millis(500);

/// Serves `service` on `listener` with the default [`ServeOptions`] until `shutdown` completes, then
/// drains: new connections are refused, every request already read is answered, and this returns
/// when the last connection has closed and the last task (of a server built with tasks) has ended, or
/// at [`SHUTDOWN_GRACE`] (30 s) at the latest, when a task still running is failed. The steps are those
/// of [`serve_with`].
///
/// For a rolling deploy, pass `mcp_kernel::shutdown_signal()` (Ctrl-C or `SIGTERM`), as below; any
/// future will do (a oneshot the host fires, a deadline).
///
/// ```no_run
/// # async fn run(service: mcp_kernel_http::McpService) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:4000").await?;
/// // With the facade: `mcp_kernel::http::serve(listener, service, mcp_kernel::shutdown_signal())`.
/// mcp_kernel_http::serve(listener, service, async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    serve_with(listener, service, shutdown, ServeOptions::default()).await
}

/// Serves `service` on `listener` under `options` until `shutdown` completes, then drains within
/// [`ServeOptions::shutdown_grace`]. Returns `Ok` once the drain is over; accept failures are logged and
/// retried, never returned.
///
/// # The drain
///
/// 1. **Nothing new is accepted.** The moment `shutdown` completes, the accept loop stops; the
///    connections the kernel had completed but `serve` had not yet taken (the listen backlog) are
///    taken, while [`ServeOptions::max_connections`] allow, and the listener is closed: a new
///    connection is *refused* (`ECONNREFUSED`) by the kernel.
/// 2. **Every request already read is answered.** A response made from now on over HTTP/1.1 carries
///    `connection: close` and is the connection's last; a response already under way — an SSE stream
///    of progress notifications — runs to its final message. A `subscriptions/listen` stream of an
///    [`McpService`](crate::McpService), which would never end by itself, is sent its pending
///    notifications and its completion result, and ends. Over HTTP/2 the connection gets `GOAWAY`
///    (no error): the streams it had opened run to their end, the client opens no more, and the
///    connection closes. A connection accepted before shutdown that has not yet delivered its first
///    request head (it may be sending it right now) gets 500 ms to, and is then served the same way,
///    or closed.
/// 3. **Idle HTTP/1.1 connections are left to their peer.** HTTP/1.1 has no way to tell an idle
///    connection that it is going: closing it would race a request the peer may be writing that
///    instant (below). So an idle keep-alive connection stays open: the next request on it is
///    answered, with `connection: close`; otherwise the peer closes it, or its idle limit does
///    ([`ServeOptions::header_read_timeout`] for the next head, [`ServeOptions::idle_timeout`]). An
///    idle HTTP/2 connection gets `GOAWAY`, then is closed.
/// 4. **The grace bounds it all.** `serve` returns when the last connection has closed, or at
///    `shutdown_grace` after `shutdown`: what still runs then is cut — its connection dropped without a
///    response, its handler's future dropped, as when a client disconnects.
/// 5. **Tasks get the rest of the grace.** A server built with tasks (the tasks extension) runs each
///    task's handler on after its `CreateTaskResult`, outside every connection. Once the connections
///    are done, the tasks of every server this `serve` served a `tools/call` for get what is left of
///    `shutdown_grace` to finish; each one still running then is failed, with a JSON-RPC error saying
///    the server shut down, and its handler cancelled
///    ([`Server::drain_tasks`](mcp_kernel_router::Server::drain_tasks)), so that no poller — of a
///    store shared with other instances — waits on a task left `working`.
///
/// # What a proxy in front sees
///
/// * A refused connection (step 1): nothing was sent, so retrying on another instance is always safe,
///   and proxies do (nginx `proxy_next_upstream error`, Envoy's connect-failure retry).
/// * Responses in flight complete normally; HTTP/1.1 ones say `connection: close`, so the proxy drops
///   that upstream connection instead of pooling it.
/// * **No keep-alive race, if the proxy closes first.** A server that closed its idle pooled
///   connections at shutdown would lose the request a proxy sent on one of them an instant before
///   the close arrived: never read here, and a `POST`, which proxies do not resend once sent (nginx
///   answers 502). Step 3 never closes a connection the peer may be writing on — as long as the
///   proxy's upstream keep-alive timeout is below `header_read_timeout` (15 s), so that an idle
///   pooled connection is always closed by the proxy first. The same rule holds outside shutdown.
///   The price: with idle pooled connections and no traffic, a drain lasts up to the proxy's
///   keep-alive timeout; under load the pooled connections are used, told and closed at once.
///   `docs/deploy.md` has the tested nginx configuration and the rolling restart that loses nothing.
///
/// ```no_run
/// # async fn run(service: mcp_kernel_http::McpService) -> std::io::Result<()> {
/// use std::time::Duration;
/// use mcp_kernel_http::ServeOptions;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:4000").await?;
/// // Behind a proxy every connection comes from one address; the orchestrator kills after 30 s.
/// let options = ServeOptions::new()
///     .max_connections(2_000)
///     .max_connections_per_peer(2_000)
///     .shutdown_grace(Duration::from_secs(25));
/// mcp_kernel_http::serve_with(listener, service, async { let _ = tokio::signal::ctrl_c().await; }, options).await
/// # }
/// ```
pub async fn serve_with<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> std::io::Result<()>
where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let builders = Arc::new(Builders::new(&options));
    let slots = Slots::new(options.max_connections, options.max_connections_per_peer);
    let mut connections = tokio::task::JoinSet::new();
    let (stopping, stop_signal) = signal::channel(false);
    let draining = Arc::new(AtomicBool::new(false));
    let task_drain = Arc::new(TaskDrain::default());
    let mut shutdown = std::pin::pin!(shutdown);
    let mut last_warned = None;
    let admit =
        |connections: &mut tokio::task::JoinSet<()>, stream: TcpStream, peer: SocketAddr, may_tell| {
            let accepted_at = Instant::now();
            // An answer is written whole or as a stream of events, never as a small write waiting on a
            // larger one: Nagle's algorithm would hold a response's last segment until the client's
            // delayed ACK (40 ms on Linux), which a 1 MiB answer on one connection hit about one time in ten.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "TCP_NODELAY could not be set");
            }
            while connections.try_join_next().is_some() {}
            let network = options.client_prefixes.network(peer.ip());
            let watch = Watch::new();
            let slot = match slots.admit(network, Arc::clone(&watch), may_tell) {
                Ok(slot) => slot,
                Err(refusal) => {
                    let why = match refusal {
                        Refusal::OverShare => "its client holds its share",
                        Refusal::Outnumbered => "every slot is held and its client holds as many as any",
                        Refusal::Full => "every slot is held",
                    };
                    tracing::debug!(%network, why, "a connection was closed at accept");
                    return;
                }
            };
            let connection = Connection {
                stream,
                peer,
                network,
                watch,
                notice: Arc::clone(slot.notice()),
                accepted_at,
                builders: Arc::clone(&builders),
                options: options.clone(),
                stop: stop_signal.clone(),
                draining: Arc::clone(&draining),
                tasks: Arc::clone(&task_drain),
            };
            let service = service.clone();
            connections.spawn(async move {
                connection.run(service).await;
                drop(slot);
            });
        };
    loop {
        // Room: a free slot, or one a smaller client may take from the biggest holder (limits.rs).
        tokio::select! {
            () = slots.room() => {}
            () = &mut shutdown => break,
        }
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait a little rather than spin, and say so
                    // at most once a second.
                    if last_warned.is_none_or(|at: Instant| at.elapsed() >= Duration::from_secs(1)) {
                        tracing::warn!(%error, "accept failed");
                        last_warned = Some(Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        admit(&mut connections, stream, peer, true);
    }
    // Every HTTP/1.1 response made from now on says it is the connection's last. The connections the
    // kernel completed that were not yet taken (the listen backlog) are taken now, while free slots
    // last (nobody is told to close for them): closing the listener would reset them, perhaps after
    // their client sent a request. Then new connections are refused (the listener is closed), and
    // every connection is told.
    draining.store(true, Ordering::Release);
    loop {
        if !slots.has_free() {
            break;
        }
        let Some(Ok((stream, peer))) = listener.accept().now_or_never() else { break };
        admit(&mut connections, stream, peer, false);
    }
    drop(listener);
    let began = Instant::now();
    let _ = stopping.send(true);
    let _ = tokio::time::timeout(options.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    // What did not finish within the grace period is ended.
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    // No request runs any more, so no call becomes a task now: the tasks get what is left of the grace
    // period (they ran on all through it), then each one still running is failed (`tasks.rs`).
    task_drain.run(options.shutdown_grace.saturating_sub(began.elapsed())).await;
    Ok(())
}

/// What ends a connection's listen streams, in each of its requests' extensions (behind an `Arc`, one
/// per connection): the drain of the `serve` that accepted it, and the notice telling the connection to make room for another client. A
/// listen stream watches both and ends with its completion result at either (`dispatch/listen/ending.rs`).
#[derive(Debug, Clone)]
pub(crate) struct Draining {
    /// Becomes true when the drain begins.
    pub(crate) stop: signal::Receiver<bool>,
    /// Told when the connection must close.
    pub(crate) notice: Arc<Notice>,
    /// The servers whose tasks the drain ends: a `tools/call` names its service's here.
    pub(crate) tasks: Arc<TaskDrain>,
}

/// Completes once shutdown has begun (or `serve` is gone).
async fn stopping(stop: &mut signal::Receiver<bool>) {
    // The guard the wait returns is dropped here, not held across the caller's next await.
    let _ = stop.wait_for(|stop| *stop).await;
}

/// What ended a connection's wait, besides the connection itself.
enum Signal {
    /// A deadline passed (`watch.rs`).
    Deadline(Verdict),
    /// Shutdown began.
    Shutdown,
    /// The connection was told to make room for another client (`evict.rs`).
    Told,
}

/// The two connection builders, made once per listener.
struct Builders {
    http1: auto::Builder<TokioExecutor>,
    http2: auto::Builder<TokioExecutor>,
}

impl Builders {
    fn new(options: &ServeOptions) -> Self {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        // The next head's deadline is the connection's watch's (`watch.rs`), not a timer hyper would
        // arm and cancel for every request.
        builder.http1().header_read_timeout(None).max_buf_size(HTTP1_READ_BUFFER);
        builder
            .http2()
            .timer(TokioTimer::new())
            .keep_alive_interval(Some(HTTP2_KEEP_ALIVE))
            .keep_alive_timeout(HTTP2_KEEP_ALIVE)
            .max_concurrent_streams(options.http2_max_concurrent_streams)
            .initial_connection_window_size(HTTP2_RECEIVE_WINDOW)
            .initial_stream_window_size(HTTP2_RECEIVE_WINDOW);
        Self { http1: builder.clone().http1_only(), http2: builder.http2_only() }
    }
}

/// One accepted connection, before its protocol is known.
struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    /// Its client, put in every request's extensions.
    network: ClientNetwork,
    /// Its open requests (the slots read it to find a client's longest-idle connection).
    watch: Arc<Watch>,
    /// Told when another client needs its slot.
    notice: Arc<Notice>,
    accepted_at: Instant,
    builders: Arc<Builders>,
    options: ServeOptions,
    stop: signal::Receiver<bool>,
    /// Set when shutdown begins, read as each response is made.
    draining: Arc<AtomicBool>,
    /// The servers whose tasks the drain ends.
    tasks: Arc<TaskDrain>,
}

impl Connection {
    /// Decides the protocol, then serves the connection until it ends, a deadline passes, or shutdown.
    async fn run<S, B>(mut self, service: S)
    where
        S: tower_service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn StdError + Send + Sync>>,
    {
        let first_request = deadline_after(self.accepted_at, self.options.first_bytes_timeout);
        // Shutdown while the protocol is being decided: a connection accepted before it began may be
        // sending its first request right now, and gets a moment to show it (served below, as the
        // connection's last); one that stays silent is closed then.
        let mut drain_began = None;
        let notice = Arc::clone(&self.notice);
        let decided = {
            let decide = sniff::decide(&mut self.stream, first_request);
            tokio::pin!(decide);
            tokio::select! {
                decided = &mut decide => decided,
                () = stopping(&mut self.stop) => {
                    drain_began = Some(Instant::now());
                    tokio::time::timeout(LATE_FIRST_REQUEST, decide).await.ok().flatten()
                }
                // Told to close before it has sent a request: nothing to finish.
                () = notice.told() => None,
            }
        };
        // Nothing useful before the deadline, or the peer left: there is no one to answer.
        let Some((protocol, read)) = decided else { return };
        let io =
            TokioIo::new(ConnIo::new(self.stream, read, self.options.write_timeout, Arc::clone(&self.watch)));
        let watch = Arc::clone(&self.watch);
        let handover = match protocol {
            Protocol::Http1 => Handover::Whole,
            Protocol::Http2 => Handover::Frames,
        };
        let (peer, network, tracker) = (self.peer, self.network, Arc::clone(&watch));
        // One per connection, shared by its requests: a request's copy is one reference count.
        let draining = Arc::new(Draining {
            stop: self.stop.clone(),
            notice: Arc::clone(&notice),
            tasks: Arc::clone(&self.tasks),
        });
        // Over HTTP/1.1 a response made once shutdown has begun carries `connection: close`, and
        // hyper closes the connection after it: graceful shutdown alone says so only when it lands
        // before the response's head is written. (HTTP/2 has `GOAWAY`, and no `connection` field.) The
        // same holds for a response made once the connection has been told to close.
        let last = (protocol == Protocol::Http1)
            .then(|| Arc::new((Arc::clone(&self.draining), Arc::clone(&notice))));
        let hyper_service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(PeerAddr(peer));
            request.extensions_mut().insert(network);
            request.extensions_mut().insert(Arc::clone(&draining));
            let open = tracker.request_started();
            let answer = service.clone().oneshot(request);
            let last = last.clone();
            async move {
                let mut response = answer.await?;
                let closing = |last: Arc<(Arc<AtomicBool>, Arc<Notice>)>| {
                    let (draining, notice) = &*last;
                    draining.load(Ordering::Acquire) || notice.is_told()
                };
                if last.is_some_and(closing) {
                    response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
                }
                Ok::<_, Infallible>(response.map(|body| Tracked::new(body, open, handover)))
            }
        });
        let builder = match protocol {
            Protocol::Http1 => &self.builders.http1,
            Protocol::Http2 => &self.builders.http2,
        };
        let connection = builder.serve_connection(io, hyper_service);
        tokio::pin!(connection);
        let deadlines = Deadlines {
            first_request,
            next_head: (protocol == Protocol::Http1).then_some(self.options.header_read_timeout),
            idle: self.options.idle_timeout,
            write: self.options.write_timeout,
        };
        // What may end the connection is polled only when it wakes the task (`woken.rs`), not at each
        // of the connection's own wake-ups (every request read, every response written); it is
        // dropped (its timer with it) as soon as one of the two has ended the wait.
        let signal = {
            let signals = OnWake::new(async {
                tokio::select! {
                    verdict = watch.verdict(deadlines) => Signal::Deadline(verdict),
                    () = stopping(&mut self.stop) => Signal::Shutdown,
                    () = notice.told() => Signal::Told,
                }
            });
            tokio::pin!(signals);
            tokio::select! {
                biased;
                ended = connection.as_mut() => {
                    if let Err(error) = ended {
                        tracing::debug!(%error, "connection ended with an error");
                    }
                    return;
                }
                signal = &mut signals => signal,
            }
        };
        let verdict = match signal {
            Signal::Deadline(verdict) => Some(verdict),
            Signal::Shutdown => None,
            Signal::Told => {
                // Another client needs the slot (limits.rs): the requests open run to their end under
                // the connection's deadlines, then it has a moment to close (evict.rs).
                tracing::debug!("closing a connection told to make room for another client");
                let told_at = Instant::now();
                connection.as_mut().graceful_shutdown();
                tokio::select! {
                    ended = connection.as_mut() => {
                        if let Err(error) = ended {
                            tracing::debug!(%error, "connection ended with an error");
                        }
                    }
                    verdict = watch.verdict(deadlines) => {
                        tracing::debug!(?verdict, "closed a told connection at its deadline");
                    }
                    () = evict::quiet(&watch, told_at, GOODBYE) => {
                        tracing::debug!("closed a told connection that did not close by itself");
                    }
                }
                return;
            }
        };
        match verdict {
            // Over HTTP/1.1 a connection without a request head, or whose response was not taken, has
            // nobody to say goodbye to.
            Some(verdict @ (Verdict::NoRequest | Verdict::Stalled)) if protocol == Protocol::Http1 => {
                tracing::debug!(?verdict, "closed an HTTP/1.1 connection at its deadline");
            }
            // Otherwise goodbye first — `GOAWAY` over HTTP/2 (RFC 9113 §6.8), the end of keep-alive over
            // HTTP/1.1 — given a moment; a stalled stream is not waited for beyond it.
            Some(verdict) => {
                tracing::debug!(?verdict, "closing a connection at its deadline");
                connection.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(GOODBYE, connection.as_mut()).await;
            }
            // Shutdown: open requests finish, then the connection closes (the caller bounds the wait
            // with the grace period). hyper closes an idle HTTP/1.1 connection at once, marks the
            // response in flight `connection: close` if its head is not yet written, and sends HTTP/2
            // `GOAWAY` (streams already opened are served).
            None => {
                // hyper also closes at once an HTTP/1.1 connection it has read nothing from, the
                // request a client sent right after connecting included: that one gets a moment to
                // deliver its first head, and is told after it (its response says `connection: close`).
                if protocol == Protocol::Http1 {
                    let began = drain_began.unwrap_or_else(Instant::now);
                    let late = deadline_after(began, LATE_FIRST_REQUEST).min(first_request);
                    let shown = tokio::select! {
                        ended = connection.as_mut() => {
                            if let Err(error) = ended {
                                tracing::debug!(%error, "connection ended with an error");
                            }
                            return;
                        }
                        shown = watch.first_request_by(late) => shown,
                    };
                    if !shown {
                        tracing::debug!("closed a connection that sent no request at shutdown");
                        return;
                    }
                    // An idle HTTP/1.1 connection cannot be told: closing it would race a request its
                    // peer may be sending that moment (the keep-alive race), which the peer could not
                    // safely retry. It is left to its peer: its next request is answered `connection:
                    // close` and is its last; otherwise the peer closes it, or its deadlines do.
                    tokio::select! {
                        ended = connection.as_mut() => {
                            if let Err(error) = ended {
                                tracing::debug!(%error, "connection ended with an error");
                            }
                        }
                        verdict = watch.verdict(deadlines) => {
                            tracing::debug!(?verdict, "closed a draining HTTP/1.1 connection at its deadline");
                        }
                    }
                    return;
                }
                connection.as_mut().graceful_shutdown();
                if let Err(error) = connection.as_mut().await {
                    tracing::debug!(%error, "connection ended with an error");
                }
            }
        }
    }
}
