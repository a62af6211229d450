//! The future a host hands its transport as "stop now": Ctrl-C, or `SIGTERM` on Unix.
//!
//! Purpose: a rolling deploy stops a process with `SIGTERM`, waits, then sends `SIGKILL`; an MCP client
//! stopping a stdio server escalates the same way. Left at its default action, `SIGTERM` ends the
//! process at once and every answer it owed is lost. Handed to `http::serve` or to
//! `stdio::StdioOptions::shutdown_on`, [`shutdown_signal`] turns the signal into a drain: the transport stops taking work, answers what it has, and returns, so that
//! `main` returns and the process exits 0 before the `SIGKILL`.

/// Completes when the process is asked to stop: Ctrl-C (`SIGINT`) or, on Unix, `SIGTERM`.
///
/// Pass it as the shutdown future of `http::serve` or `http::serve_with` (which then drain: see their
/// docs) and to `stdio::StdioOptions::shutdown_on` (feature `http`, feature `stdio`):
///
/// ```no_run
/// # async fn run(service: mcp_kernel::http::McpService, server: mcp_kernel::Server) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:4000").await?;
/// mcp_kernel::http::serve(listener, service, mcp_kernel::shutdown_signal()).await?;
///
/// // Over stdio, the one line that drains on SIGTERM and Ctrl-C:
/// let options = mcp_kernel::stdio::StdioOptions::default().shutdown_on(mcp_kernel::shutdown_signal());
/// mcp_kernel::stdio::serve_with(server, options).await
/// # }
/// ```
///
/// The signals are caught from the first time the future is polled (both transports poll it at
/// once), inside a Tokio runtime with its I/O driver enabled (`#[tokio::main]` has it). From then on,
/// for the rest of the process's life, these signals no longer end the process by themselves: the host
/// decides, by returning from `main` once the transport has returned. A second signal during the drain
/// changes nothing (the transport's grace bounds it; `SIGKILL` remains the way to stop at once). Each
/// call catches the signals anew, so one future can be given to each transport. A signal that cannot
/// be caught (no runtime driver, the platform refuses) is logged as a warning and never completes the
/// future: the process then stops as it would have without it.
pub async fn shutdown_signal() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "Ctrl-C cannot be caught; it will end the process at once");
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = interrupt => tracing::info!("Ctrl-C: shutting down"),
        () = terminate() => tracing::info!("SIGTERM: shutting down"),
    }
}

/// Completes at `SIGTERM`.
#[cfg(unix)]
async fn terminate() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            if terminate.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        Err(error) => {
            tracing::warn!(%error, "SIGTERM cannot be caught; it will end the process at once");
            std::future::pending::<()>().await;
        }
    }
}

/// There is no `SIGTERM` here: never completes.
#[cfg(not(unix))]
async fn terminate() {
    std::future::pending::<()>().await;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::Duration;

    use rustix::process::{Pid, Signal, getpid, kill_process};

    /// Polls a fresh `shutdown_signal` until it has caught its signals, sends `signal` to this process,
    /// and says whether the future completed.
    async fn completes_on(signal: Signal) -> bool {
        let mut stopped = Box::pin(super::shutdown_signal());
        let early = tokio::time::timeout(Duration::from_millis(50), &mut stopped).await;
        assert!(early.is_err(), "nothing asked the process to stop yet");
        let me: Pid = getpid();
        kill_process(me, signal).expect("a signal to this process");
        tokio::time::timeout(Duration::from_secs(5), stopped).await.is_ok()
    }

    // One test for both signals: each future listens for both, so two tests side by side would each
    // see the other's signal.
    #[tokio::test]
    async fn completes_on_sigterm_and_on_ctrl_c() {
        assert!(completes_on(Signal::TERM).await, "SIGTERM");
        assert!(completes_on(Signal::INT).await, "Ctrl-C (SIGINT)");
    }

    #[test]
    fn is_send_so_that_a_spawned_transport_can_hold_it() {
        fn assert_send<T: Send + 'static>(_: &T) {}
        assert_send(&super::shutdown_signal());
    }
}
