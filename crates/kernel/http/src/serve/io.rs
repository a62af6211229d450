//! The connection's byte stream as hyper sees it: the bytes the protocol decision read, replayed first,
//! then the socket — with a deadline on every write that cannot proceed.
//!
//! Threat: a client that stops reading. Its socket's send buffer fills, every write the server tries
//! returns "not now", and without a deadline the connection (its task, its buffers, the response it
//! holds) waits for as long as the client keeps the TCP connection open, answering HTTP/2 pings all the
//! while. Here a write or flush that stays blocked for the write timeout fails with `TimedOut`; hyper
//! then closes the connection. The connection's [`Watch`] is told when a write starts waiting and when
//! it goes through, so that it does not time the next request's head while the response is still on
//! its way.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

use super::watch::Watch;

/// A stream with replayed leading bytes and a write deadline.
#[derive(Debug)]
pub(crate) struct ConnIo<S> {
    inner: S,
    replay: Vec<u8>,
    replayed: usize,
    write_timeout: Duration,
    /// Armed while a write is blocked: when it fires, the write fails.
    blocked: Option<Pin<Box<Sleep>>>,
    /// The connection's watch, told when a write blocks and when it goes through.
    watch: Arc<Watch>,
}

impl<S> ConnIo<S> {
    /// `inner`, read after `replay`, with writes bounded by `write_timeout` and reported to `watch`.
    pub(crate) fn new(inner: S, replay: Vec<u8>, write_timeout: Duration, watch: Arc<Watch>) -> Self {
        Self { inner, replay, replayed: 0, write_timeout, blocked: None, watch }
    }

    /// Called when a write returned `Pending`: arms the deadline (once) and fails if it has passed.
    fn still_blocked(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        let timeout = self.write_timeout;
        let sleep = self.blocked.get_or_insert_with(|| {
            self.watch.write_blocked();
            Box::pin(tokio::time::sleep(timeout))
        });
        ready!(sleep.as_mut().poll(cx));
        self.blocked = None;
        Poll::Ready(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client did not read within the write timeout",
        ))
    }

    /// Called when a write made progress: the deadline starts over at the next block.
    fn unblocked(&mut self) {
        if self.blocked.take().is_some() {
            self.watch.write_unblocked();
        }
    }

    /// Runs one write-side operation under the deadline.
    fn bounded<T>(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(Pin<&mut S>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>>
    where
        S: Unpin,
    {
        match op(Pin::new(&mut self.inner), cx) {
            Poll::Ready(result) => {
                self.unblocked();
                Poll::Ready(result)
            }
            Poll::Pending => self.still_blocked(cx).map(Err),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ConnIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.replayed < this.replay.len() {
            let rest = &this.replay[this.replayed..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.replayed += n;
            if this.replayed == this.replay.len() {
                this.replay = Vec::new();
                this.replayed = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ConnIo<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.bounded(cx, |inner, cx| inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.bounded(cx, |inner, cx| inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.bounded(cx, AsyncWrite::poll_flush)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.bounded(cx, AsyncWrite::poll_shutdown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::time::Instant;

    #[tokio::test]
    async fn replays_the_decided_bytes_before_the_stream() {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b" rest").await.unwrap();
        drop(client);
        let mut io = ConnIo::new(server, b"PO".to_vec(), Duration::from_secs(5), Watch::new());
        let mut all = Vec::new();
        io.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"PO rest");
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_blocked_past_the_deadline_fails_timed_out() {
        // A peer that never reads: the 16-byte pipe fills and the next write blocks.
        let (_client, server) = tokio::io::duplex(16);
        let mut io = ConnIo::new(server, Vec::new(), Duration::from_secs(3), Watch::new());
        let started = Instant::now();
        let error = io.write_all(&[0u8; 64]).await.expect_err("the write cannot finish");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_that_makes_progress_starts_the_deadline_over() {
        let (mut client, server) = tokio::io::duplex(16);
        let mut io = ConnIo::new(server, Vec::new(), Duration::from_secs(3), Watch::new());
        let reader = tokio::spawn(async move {
            let mut sink = [0u8; 16];
            let mut total = 0;
            while total < 64 {
                // Two seconds between reads: each block is shorter than the deadline.
                tokio::time::sleep(Duration::from_secs(2)).await;
                total += client.read(&mut sink).await.unwrap();
            }
            total
        });
        io.write_all(&[0u8; 64]).await.expect("a slow reader that keeps reading is served");
        assert_eq!(reader.await.unwrap(), 64);
    }
}
