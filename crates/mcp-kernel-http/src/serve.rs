//! A ready-made server: one listener speaking HTTP/1.1 and HTTP/2 cleartext (prior knowledge), with
//! graceful shutdown. Any tower service over `Request<Incoming>` can be served — the bare
//! [`McpService`](crate::McpService), or an axum `Router` that mounts it at a path.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// The peer's address, inserted into every request's extensions by [`serve`] (visible to `authorize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// How long [`serve`] waits for open connections to finish once shutdown is asked.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The largest read buffer an HTTP/1.1 connection keeps (hyper's default is about 400 KiB, held for
/// the connection's life; a request body streams through it in pieces of this size).
pub const HTTP1_READ_BUFFER: usize = 64 * 1024;

/// How long a new connection may take to show which protocol it speaks (the 24-byte HTTP/2 preface,
/// or the start of an HTTP/1.1 request); a connection that sends nothing is closed then.
pub const FIRST_BYTES_TIMEOUT: Duration = Duration::from_secs(15);

/// How often an idle HTTP/2 connection is pinged; a peer that does not answer within the same time
/// is disconnected.
pub const HTTP2_KEEP_ALIVE: Duration = Duration::from_secs(30);

/// The time a client has to send a request's headers over HTTP/1.1.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);

/// Serves `service` on `listener` until `shutdown` completes, then lets open connections finish (at
/// most [`SHUTDOWN_GRACE`]).
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
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(HTTP1_READ_BUFFER);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(HTTP2_KEEP_ALIVE))
        .keep_alive_timeout(HTTP2_KEEP_ALIVE);
    let graceful = GracefulShutdown::new();
    let mut connections = tokio::task::JoinSet::new();
    let (stopping, stop_signal) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = service.clone();
        let hyper_service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(PeerAddr(peer));
            service.clone().oneshot(request)
        });
        while connections.try_join_next().is_some() {}
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let mut stop_signal = stop_signal.clone();
        connections.spawn(async move {
            // A connection that never shows its protocol would otherwise wait forever: hyper's own
            // header timer starts only once the connection is known to be HTTP/1.1. A shutdown
            // ends the wait too.
            tokio::select! {
                shown = shows_its_protocol(&stream) => if !shown { return },
                _ = stop_signal.wait_for(|stop| *stop) => return,
            }
            let connection = builder.serve_connection(TokioIo::new(stream), hyper_service);
            if let Err(error) = watcher.watch(connection).await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    // What did not finish within the grace period is ended.
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// Waits (at most [`FIRST_BYTES_TIMEOUT`]) until the connection has sent either the whole HTTP/2
/// preface or bytes that cannot begin it; false when it sends nothing useful in time or closes.
async fn shows_its_protocol(stream: &tokio::net::TcpStream) -> bool {
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let sniff = async {
        let mut buffer = [0u8; 24];
        loop {
            let n = match stream.peek(&mut buffer).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => n,
            };
            if n == PREFACE.len() || buffer[..n] != PREFACE[..n] {
                return true;
            }
            // Part of the preface so far: wait for more bytes rather than spin on the same ones.
            if stream.readable().await.is_err() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(FIRST_BYTES_TIMEOUT, sniff).await.unwrap_or(false)
}
