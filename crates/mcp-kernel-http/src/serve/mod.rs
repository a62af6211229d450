//! A ready-made server: one listener speaking HTTP/1.1 and HTTP/2 cleartext (prior knowledge), with
//! graceful shutdown and every connection bounded. Any tower service over `Request<Incoming>` can be
//! served — the bare [`McpService`](crate::McpService), or an axum `Router` that mounts it at a path.
//!
//! What a connection goes through, and which module guards each step:
//!
//! | step | bound | module | when it is passed |
//! |---|---|---|---|
//! | 1 | a slot in total (waits before `accept`) and per peer address (closed at `accept`) | `limits.rs` | [`ServeOptions::max_connections`], [`ServeOptions::max_connections_per_peer`] |
//! | 2 | the protocol decision, reading (never peeking) under the first-bytes deadline | `sniff.rs` | closed, no response |
//! | 3 | the first request's head, under the same deadline from accept | `watch.rs` | closed (`GOAWAY` first over HTTP/2) |
//! | 4 | each later HTTP/1.1 head (hyper's header timer) | hyper | closed |
//! | 5 | HTTP/2 streams open at once | hyper (`SETTINGS_MAX_CONCURRENT_STREAMS`) | the client queues; a stream opened anyway is refused (`REFUSED_STREAM`) |
//! | 6 | no open request for the idle timeout, pings or not | `watch.rs` | closed politely (`GOAWAY`) |
//! | 7 | a write blocked for the write timeout; a response whose waits on the client add up to it | `io.rs`, `tracked.rs`, `watch.rs` | abandoned, closed |
//! | 8 | shutdown: open connections finish within the grace period | here | ended |

mod io;
mod limits;
mod options;
mod sniff;
mod tracked;
mod watch;

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
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
    FIRST_BYTES_TIMEOUT, HEADER_READ_TIMEOUT, HTTP1_READ_BUFFER, HTTP2_KEEP_ALIVE, IDLE_TIMEOUT,
    SHUTDOWN_GRACE, ServeOptions, WRITE_TIMEOUT,
};

use crate::read::deadline_after;
use io::ConnIo;
use limits::Slots;
use sniff::Protocol;
use tracked::Tracked;
use watch::{Deadlines, Verdict, Watch};

/// The peer's address, inserted into every request's extensions by [`serve`] (visible to `authorize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// How long a connection closed at a deadline may take to send its `GOAWAY` before it is dropped.
const GOODBYE: Duration = Duration::from_secs(1);

/// Serves `service` on `listener` with the default [`ServeOptions`] until `shutdown` completes, then
/// lets open connections finish (at most [`SHUTDOWN_GRACE`]).
///
/// ```no_run
/// # async fn run(service: mcp_kernel_http::McpService) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:4000").await?;
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

/// Serves `service` on `listener` under `options` until `shutdown` completes, then lets open
/// connections finish (at most [`ServeOptions::shutdown_grace`]).
///
/// ```no_run
/// # async fn run(service: mcp_kernel_http::McpService) -> std::io::Result<()> {
/// use mcp_kernel_http::ServeOptions;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:4000").await?;
/// // Behind a proxy every connection comes from one address.
/// let options = ServeOptions::new().max_connections(2_000).max_connections_per_peer(2_000);
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
    let mut shutdown = std::pin::pin!(shutdown);
    let mut last_warned = None;
    loop {
        let free = tokio::select! {
            free = slots.free() => free,
            () = &mut shutdown => break,
        };
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
        let accepted_at = Instant::now();
        // An answer is written whole or as a stream of events, never as a small write waiting on a
        // larger one: Nagle's algorithm would hold a response's last segment until the client's
        // delayed ACK (40 ms on Linux), which a 1 MiB answer on one connection hit about one time in ten.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY could not be set");
        }
        while connections.try_join_next().is_some() {}
        let Some(slot) = slots.admit(free, peer.ip()) else {
            tracing::debug!("a peer over its connection share was closed at accept");
            continue;
        };
        let connection = Connection {
            stream,
            peer,
            accepted_at,
            builders: Arc::clone(&builders),
            options: options.clone(),
            stop: stop_signal.clone(),
        };
        let service = service.clone();
        connections.spawn(async move {
            connection.run(service).await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    let _ = tokio::time::timeout(options.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    // What did not finish within the grace period is ended.
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// The two connection builders, made once per listener.
struct Builders {
    http1: auto::Builder<TokioExecutor>,
    http2: auto::Builder<TokioExecutor>,
}

impl Builders {
    fn new(options: &ServeOptions) -> Self {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(options.header_read_timeout)
            .max_buf_size(HTTP1_READ_BUFFER);
        builder
            .http2()
            .timer(TokioTimer::new())
            .keep_alive_interval(Some(HTTP2_KEEP_ALIVE))
            .keep_alive_timeout(HTTP2_KEEP_ALIVE)
            .max_concurrent_streams(options.http2_max_concurrent_streams);
        Self { http1: builder.clone().http1_only(), http2: builder.http2_only() }
    }
}

/// One accepted connection, before its protocol is known.
struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    accepted_at: Instant,
    builders: Arc<Builders>,
    options: ServeOptions,
    stop: signal::Receiver<bool>,
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
        let decided = tokio::select! {
            decided = sniff::decide(&mut self.stream, first_request) => decided,
            _ = self.stop.wait_for(|stop| *stop) => return,
        };
        // Nothing useful before the deadline, or the peer left: there is no one to answer.
        let Some((protocol, read)) = decided else { return };
        let io = TokioIo::new(ConnIo::new(self.stream, read, self.options.write_timeout));
        let watch = Watch::new();
        let hold_end = protocol == Protocol::Http2;
        let (peer, tracker) = (self.peer, Arc::clone(&watch));
        let hyper_service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(PeerAddr(peer));
            let open = tracker.request_started();
            let answer = service.clone().oneshot(request);
            async move {
                let response = answer.await?;
                Ok::<_, Infallible>(response.map(|body| Tracked::new(body, open, hold_end)))
            }
        });
        let builder = match protocol {
            Protocol::Http1 => &self.builders.http1,
            Protocol::Http2 => &self.builders.http2,
        };
        let connection = builder.serve_connection(io, hyper_service);
        tokio::pin!(connection);
        let deadlines =
            Deadlines { first_request, idle: self.options.idle_timeout, write: self.options.write_timeout };
        let verdict = tokio::select! {
            ended = connection.as_mut() => {
                if let Err(error) = ended {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            verdict = watch.verdict(deadlines) => Some(verdict),
            _ = self.stop.wait_for(|stop| *stop) => None,
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
            // Shutdown: open requests finish (the caller bounds the wait with the grace period).
            None => {
                connection.as_mut().graceful_shutdown();
                if let Err(error) = connection.as_mut().await {
                    tracing::debug!(%error, "connection ended with an error");
                }
            }
        }
    }
}
