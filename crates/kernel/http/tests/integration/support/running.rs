//! The running server: the fixture's builder, a server on 127.0.0.1 stopped when dropped, and the
//! bound of every test.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use mcp_kernel_http::{AllowedOrigins, Authorize, Builder, McpHttp, McpService, NoAuthorize, ServeOptions};

use super::{ALLOWED_ORIGIN, ALLOWED_ORIGIN_2, TEST_TIMEOUT, server};

/// A builder over the fixture server with the fixture's origins, before `authorize`.
pub fn builder() -> Builder<AllowedOrigins, NoAuthorize> {
    McpHttp::builder(server()).allowed_origins(AllowedOrigins::list([ALLOWED_ORIGIN, ALLOWED_ORIGIN_2]))
}

/// A server on 127.0.0.1 (port 0), stopped when dropped.
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// Asks the server to stop and waits (bounded) for its accept loop to end.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
    }
}

impl Running {
    /// Asks the server to stop; true when `serve` returned (its drain over) within `within`.
    pub async fn stop_within(mut self, within: Duration) -> bool {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => tokio::time::timeout(within, task).await.is_ok(),
            None => true,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Serves `service` with `mcp_kernel_http::serve` on 127.0.0.1, port 0.
pub async fn serve(service: McpService) -> Running {
    serve_with(service, ServeOptions::default()).await
}

/// Serves `service` with `mcp_kernel_http::serve_with` and `options` on 127.0.0.1, port 0.
pub async fn serve_with(service: McpService, options: ServeOptions) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("the bound address");
    let (tx, rx) = oneshot::channel::<()>();
    let shutdown = async move {
        let _ = rx.await;
    };
    let task = tokio::spawn(mcp_kernel_http::serve_with(listener, service, shutdown, options));
    Running { addr, shutdown: Some(tx), task: Some(task) }
}

/// Starts the fixture with `authorize` admitting everyone and `tweak` applied to the builder.
pub async fn start(
    tweak: impl FnOnce(Builder<AllowedOrigins, Authorize>) -> Builder<AllowedOrigins, Authorize>,
) -> Running {
    serve(tweak(builder().authorize(|_| Ok(()))).build()).await
}

/// Starts the fixture as is.
pub async fn start_default() -> Running {
    start(|b| b).await
}

/// Runs `test` within [`TEST_TIMEOUT`].
pub async fn bounded<F: Future>(test: F) -> F::Output {
    tokio::time::timeout(TEST_TIMEOUT, test).await.expect("the test did not finish within its bound")
}
