//! Stopping on the host's signal ([`StdioOptions::shutdown_on`](crate::StdioOptions::shutdown_on)):
//! the input ends where it stands, the requests read are answered, and the grace bounds the wait.
//!
//! Purpose: a rolling deploy, or a client escalating to `SIGTERM`, asks the process to stop while
//! requests are in flight. Killed outright, the process loses every answer it owed; waiting forever, it
//! is killed anyway (`SIGKILL`) and loses them the same way. Here the signal turns into end of input —
//! [`Stoppable`] reads nothing more from the input once it has completed, so the framing serves the
//! bytes already taken in and then meets the end, exactly as when the client closes stdin — and
//! [`cut_after`] completes [`StdioOptions::shutdown_grace`](crate::StdioOptions::shutdown_grace) after
//! the signal, when the session cuts what still runs instead of waiting for it.
//!
//! The signal is checked before every read of the input, so no byte written after it completed is ever
//! taken in, and a read waiting for input is woken by it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::oneshot;

use crate::options::ShutdownSignal;

/// An input that ends when the shutdown signal completes.
///
/// The signal is this input's own future (not a shared one, whose every poll takes a lock), polled
/// before each read.
pub(crate) struct Stoppable<R> {
    inner: R,
    /// The signal, until it has completed (a completed future may not be polled again).
    signal: Option<BoxFuture<'static, ()>>,
    stopped: bool,
}

impl<R> std::fmt::Debug for Stoppable<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stoppable").field("stopped", &self.stopped).finish_non_exhaustive()
    }
}

impl<R> Stoppable<R> {
    /// `inner`, ended by `signal` (never, without one).
    pub(crate) fn new(inner: R, signal: Option<BoxFuture<'static, ()>>) -> Self {
        Self { inner, signal, stopped: false }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Stoppable<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(signal) = this.signal.as_mut()
            && signal.as_mut().poll(cx).is_ready()
        {
            tracing::debug!("the shutdown signal completed: reading stopped, answering the requests read");
            this.signal = None;
            this.stopped = true;
        }
        if this.stopped {
            // End of input: nothing is put in `buf`.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

/// What ends a session's input: the host's `signal`, or the session's own end (its legacy change feed
/// ended, [`crate::legacy`]), whichever comes first. A dropped `ended` sender is no end.
pub(crate) fn input_stop(
    signal: Option<ShutdownSignal>,
    ended: oneshot::Receiver<()>,
) -> BoxFuture<'static, ()> {
    let ended = async move {
        if ended.await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let stop = async move {
        match signal {
            Some(signal) => {
                tokio::select! {
                    () = signal.0 => {}
                    () = ended => {}
                }
            }
            None => ended.await,
        }
    };
    stop.boxed()
}

/// Completes `grace` after `signal` does; never without a signal.
pub(crate) async fn cut_after(signal: Option<ShutdownSignal>, grace: Duration) {
    match signal {
        Some(signal) => {
            signal.0.await;
            tokio::time::sleep(grace).await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn signal_of(receiver: tokio::sync::oneshot::Receiver<()>) -> ShutdownSignal {
        ShutdownSignal(
            async move {
                let _ = receiver.await;
            }
            .boxed()
            .shared(),
        )
    }

    #[tokio::test]
    async fn bytes_sent_after_the_signal_are_never_read() {
        let (mut client, server) = tokio::io::duplex(64);
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let mut input = Stoppable::new(server, Some(signal_of(stopped).0.boxed()));
        client.write_all(b"before").await.unwrap();
        let mut read = [0u8; 6];
        input.read_exact(&mut read).await.unwrap();
        assert_eq!(&read, b"before");
        stop.send(()).unwrap();
        client.write_all(b"after").await.unwrap();
        let mut rest = Vec::new();
        input.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "the input ended at the signal: {rest:?}");
    }

    #[tokio::test]
    async fn a_read_waiting_for_input_is_ended_by_the_signal() {
        let (_client, server) = tokio::io::duplex(64);
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let mut input = Stoppable::new(server, Some(signal_of(stopped).0.boxed()));
        let reading = tokio::spawn(async move {
            let mut rest = Vec::new();
            input.read_to_end(&mut rest).await.map(|_| rest)
        });
        tokio::task::yield_now().await;
        stop.send(()).unwrap();
        let rest = tokio::time::timeout(Duration::from_secs(5), reading).await.expect("ended").unwrap();
        assert!(rest.unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_input_stops_at_the_host_signal_or_the_session_end_but_not_at_a_dropped_end() {
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let (_end, ended) = oneshot::channel();
        let signal = input_stop(Some(signal_of(stopped)), ended);
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), signal).await.expect("the host signal stops it");

        let (end, ended) = oneshot::channel();
        let signal = input_stop(None, ended);
        end.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), signal).await.expect("the session end stops it");

        let (end, ended) = oneshot::channel::<()>();
        let signal = input_stop(None, ended);
        drop(end);
        let never = tokio::time::timeout(Duration::from_millis(50), signal).await;
        assert!(never.is_err(), "a writer that stopped without an end is no end");
    }

    #[tokio::test(start_paused = true)]
    async fn the_cut_comes_the_grace_after_the_signal_and_never_without_one() {
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let started = tokio::time::Instant::now();
        let cut = cut_after(Some(signal_of(stopped)), Duration::from_secs(3));
        let signalled = async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            stop.send(()).unwrap();
        };
        tokio::join!(cut, signalled);
        assert_eq!(started.elapsed(), Duration::from_secs(5), "2 s to the signal, then the 3 s grace");
        let never = tokio::time::timeout(Duration::from_secs(3600), cut_after(None, Duration::ZERO)).await;
        assert!(never.is_err(), "no signal, no cut");
    }
}
