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
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
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
        let connection = builder.serve_connection(TokioIo::new(stream), hyper_service).into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    Ok(())
}
