//! stdin read the blocking way, on a thread of its own, for a stdin that cannot be read on the reactor
//! (a terminal, a regular file, `/dev/null`, a socket, a pipe that could not be reopened).
//!
//! The threat is a process that cannot exit. A blocking read of a terminal returns only when someone
//! types; Tokio's own `stdin()` runs each read as a task of the runtime's blocking pool, and dropping the
//! runtime waits for the tasks of that pool. So a session that ended for another reason — its stdout's
//! reader went away, `shutdown` arrived — left `main` stuck in the runtime's drop until one more line was
//! typed. Here the read runs on a plain thread that nothing waits for: when `main` returns, the process
//! exits, whatever that thread is blocked in. What it reads goes to the loop through a channel of one
//! chunk, so a loop that stops reading stops the thread too (at its next chunk), and at most two chunks
//! are ever held.

use std::io::{self, Read};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// The most one read takes from stdin.
const CHUNK: usize = 64 * 1024;

/// stdin, read by a thread of its own.
#[derive(Debug)]
pub(crate) struct ThreadStdin {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    at: usize,
}

impl ThreadStdin {
    /// Starts the reading thread; an error when no thread can be started.
    pub(crate) fn spawn() -> io::Result<Self> {
        Self::spawn_reading(std::io::stdin())
    }

    /// Starts a thread reading `input` (the process's stdin, or a test's pipe).
    pub(crate) fn spawn_reading(mut input: impl Read + Send + 'static) -> io::Result<Self> {
        let (chunks, received) = mpsc::channel(1);
        std::thread::Builder::new().name("mcp-kernel-stdin".into()).spawn(move || {
            let mut buffer = vec![0u8; CHUNK];
            loop {
                let chunk = match input.read(&mut buffer) {
                    Ok(0) => return,
                    Ok(n) => Ok(buffer[..n].to_vec()),
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                    Err(error) => Err(error),
                };
                let failed = chunk.is_err();
                // The loop is gone, or the read failed: either way nothing more is read.
                if chunks.blocking_send(chunk).is_err() || failed {
                    return;
                }
            }
        })?;
        Ok(Self { chunks: received, pending: Vec::new(), at: 0 })
    }
}

impl AsyncRead for ThreadStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at == this.pending.len() {
            match this.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // The thread is done: end of input (after an error it sent, or at end of file).
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(error)),
                Poll::Ready(Some(Ok(chunk))) => {
                    this.pending = chunk;
                    this.at = 0;
                }
            }
        }
        let rest = &this.pending[this.at..];
        let n = rest.len().min(buf.remaining());
        buf.put_slice(&rest[..n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use tokio::io::AsyncReadExt;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime")
    }

    #[test]
    fn carries_every_byte_in_order_and_ends_with_the_input() {
        let (reader, mut writer) = std::io::pipe().expect("a pipe");
        let mut input = ThreadStdin::spawn_reading(reader).expect("a thread");
        let sent: Vec<u8> = (0..200_000u32).map(|n| (n % 251) as u8).collect();
        let sending = {
            let sent = sent.clone();
            std::thread::spawn(move || writer.write_all(&sent))
        };
        let mut read = Vec::new();
        runtime().block_on(input.read_to_end(&mut read)).expect("read to the end");
        sending.join().expect("the writer").expect("written");
        assert_eq!(read, sent);
    }

    #[test]
    fn a_runtime_dropped_while_the_thread_is_blocked_does_not_wait_for_it() {
        // A pipe whose writer stays open: the thread's read never returns.
        let (reader, writer) = std::io::pipe().expect("a pipe");
        let started = std::time::Instant::now();
        let runtime = runtime();
        runtime.block_on(async {
            let mut input = ThreadStdin::spawn_reading(reader).expect("a thread");
            let mut byte = [0u8; 1];
            let waited = tokio::time::timeout(std::time::Duration::from_millis(50), input.read(&mut byte));
            assert!(waited.await.is_err(), "nothing to read yet");
        });
        drop(runtime);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "the runtime's drop waited for stdin");
        drop(writer);
    }
}
