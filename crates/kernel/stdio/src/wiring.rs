//! Wiring the process's stdin and stdout to the serving loop without changing any shared descriptor.
//!
//! # The threat
//!
//! A descriptor's flags (`O_NONBLOCK` among them) live on its *open file description*, which every
//! process holding a copy shares: the parent that spawned this server, its siblings, whoever inherits
//! the same stdin. Setting `O_NONBLOCK` on stdin or stdout (what turning a descriptor into a reactor pipe
//! end does) changes it for all of them, and for any code in this process that reads the descriptor in
//! the ordinary, blocking way: such a read, or a write, then fails with `EAGAIN` (`WouldBlock`, "os error
//! 11") as soon as no data is ready, and a server falling back to blocking I/O on that descriptor stops
//! after its first request.
//!
//! # What is done instead
//!
//! Each descriptor is classified with `fstat` before anything is opened or changed, stdin and stdout
//! independently:
//!
//! * **A pipe or FIFO** is opened again through `/proc/self/fd/N` (Linux and Android), which creates a
//!   *new* open file description of the same pipe, non-blocking from the start and private to this
//!   process; it is served on the runtime's reactor. The shared description is never touched.
//!   Opening stdout's FIFO fails with `ENXIO` when no reader is left (an anonymous pipe opens, and its
//!   first write fails with `EPIPE`); any failure (that, no `/proc`, a permission check, another
//!   platform) falls back to the blocking path.
//! * **Anything else** (a regular file, a terminal, `/dev/null`, another character device, a socket) takes
//!   the blocking path, which never changes a flag: stdin is read on a thread of its own
//!   ([`ThreadStdin`], which the runtime's shutdown does not wait for), stdout written with Tokio's
//!   `stdout()`.
//! * **A closed descriptor** (`EBADF`; the Rust runtime normally reopens a closed stdin, stdout or stderr
//!   as `/dev/null` at start-up) is never used: a closed stdin reads as empty input, a closed stdout fails
//!   its first write with `EBADF`, which [`serve()`](crate::serve()) takes as the end of the session.
//!
//! Nothing here sets, clears or restores a flag, so nothing is left changed on any path.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::blocking::ThreadStdin;

/// `EBADF`, the same number on every Unix: the descriptor is not open (for this direction).
#[cfg(unix)]
const EBADF: i32 = 9;

/// Whether an I/O error says the descriptor is closed (`EBADF`).
pub(crate) fn is_closed(error: &io::Error) -> bool {
    #[cfg(unix)]
    {
        error.raw_os_error() == Some(EBADF)
    }
    #[cfg(not(unix))]
    {
        let _ = error;
        false
    }
}

/// What a standard descriptor turned out to be.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// A pipe or a FIFO: worth a private non-blocking description.
    Pipe,
    /// Anything that is not a pipe, or could not be examined: served blocking.
    Other,
    /// Not open.
    Closed,
}

/// The server's input: stdin, wired by [`stdin`].
#[derive(Debug)]
pub(crate) enum Input {
    /// A private non-blocking description of the pipe stdin is, on the reactor.
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Receiver),
    /// Blocking reads on a thread of its own, which the runtime's shutdown does not wait for.
    Blocking(ThreadStdin),
    /// Tokio's stdin, when no thread of its own could be started.
    Pool(tokio::io::Stdin),
    /// stdin is closed: the input is empty.
    #[cfg_attr(not(unix), allow(dead_code))]
    Closed,
}

/// The server's output: stdout, wired by [`stdout`].
#[derive(Debug)]
pub(crate) enum Output {
    /// A private non-blocking description of the pipe stdout is, on the reactor.
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Sender),
    /// Tokio's stdout: blocking writes on a blocking thread.
    Blocking(tokio::io::Stdout),
    /// stdout is closed: every write fails with `EBADF`.
    #[cfg_attr(not(unix), allow(dead_code))]
    Closed,
}

/// Wires stdin: a pipe gets a private non-blocking description, anything else is read blocking.
pub(crate) fn stdin() -> Input {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let stdin = std::io::stdin();
        match examine(stdin.as_fd()) {
            Found::Closed => {
                tracing::debug!("stdin is closed: the input is empty");
                return Input::Closed;
            }
            Found::Pipe => match reopen::receiver(stdin.as_fd()) {
                Ok(receiver) => {
                    tracing::debug!("stdin is a pipe: reading a private non-blocking description of it");
                    return Input::Pipe(receiver);
                }
                Err(error) => {
                    tracing::debug!(%error, "stdin is a pipe not reopened: reading it blocking");
                }
            },
            Found::Other => tracing::debug!("stdin is not a pipe: reading it blocking"),
        }
    }
    match ThreadStdin::spawn() {
        Ok(thread) => Input::Blocking(thread),
        Err(error) => {
            tracing::debug!(%error, "no thread for stdin: reading it on the runtime's blocking pool");
            Input::Pool(tokio::io::stdin())
        }
    }
}

/// Wires stdout: a pipe gets a private non-blocking description, anything else is written blocking.
pub(crate) fn stdout() -> Output {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let stdout = std::io::stdout();
        match examine(stdout.as_fd()) {
            Found::Closed => {
                tracing::debug!("stdout is closed: the first write ends the session");
                return Output::Closed;
            }
            Found::Pipe => match reopen::sender(stdout.as_fd()) {
                Ok(sender) => {
                    tracing::debug!("stdout is a pipe: writing a private non-blocking description of it");
                    return Output::Pipe(sender);
                }
                Err(error) => {
                    tracing::debug!(%error, "stdout is a pipe not reopened: writing it blocking");
                }
            },
            Found::Other => tracing::debug!("stdout is not a pipe: writing it blocking"),
        }
    }
    Output::Blocking(tokio::io::stdout())
}

/// Classifies a descriptor by `fstat` on a duplicate (which shares the description and changes nothing).
#[cfg(unix)]
fn examine(fd: std::os::fd::BorrowedFd<'_>) -> Found {
    use std::os::unix::fs::FileTypeExt;
    let duplicate = match fd.try_clone_to_owned() {
        Ok(duplicate) => duplicate,
        Err(error) if is_closed(&error) => return Found::Closed,
        Err(_) => return Found::Other,
    };
    match std::fs::File::from(duplicate).metadata() {
        Ok(metadata) if metadata.file_type().is_fifo() => Found::Pipe,
        Ok(_) => Found::Other,
        Err(error) if is_closed(&error) => Found::Closed,
        Err(_) => Found::Other,
    }
}

/// Opening a new, private description of the pipe a descriptor is.
#[cfg(unix)]
mod reopen {
    use std::io;
    use std::os::fd::BorrowedFd;

    use tokio::net::unix::pipe::{Receiver, Sender};

    /// A new non-blocking read description of the pipe `fd` is.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(super) fn receiver(fd: BorrowedFd<'_>) -> io::Result<Receiver> {
        tokio::net::unix::pipe::OpenOptions::new().open_receiver(path(fd))
    }

    /// A new non-blocking write description of the pipe `fd` is (`ENXIO` when no reader is left).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(super) fn sender(fd: BorrowedFd<'_>) -> io::Result<Sender> {
        tokio::net::unix::pipe::OpenOptions::new().open_sender(path(fd))
    }

    /// The name under which opening `fd` opens its file anew (rather than duplicating the descriptor).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn path(fd: BorrowedFd<'_>) -> String {
        use std::os::fd::AsRawFd;
        format!("/proc/self/fd/{}", fd.as_raw_fd())
    }

    /// Elsewhere `/dev/fd/N` may duplicate the descriptor (sharing its flags) rather than reopen it.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(super) fn receiver(_fd: BorrowedFd<'_>) -> io::Result<Receiver> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "no private reopening on this platform"))
    }

    /// Elsewhere `/dev/fd/N` may duplicate the descriptor (sharing its flags) rather than reopen it.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(super) fn sender(_fd: BorrowedFd<'_>) -> io::Result<Sender> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "no private reopening on this platform"))
    }
}

/// The error a write to a closed stdout gets.
fn closed_output() -> io::Error {
    #[cfg(unix)]
    {
        io::Error::from_raw_os_error(EBADF)
    }
    #[cfg(not(unix))]
    {
        io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed")
    }
}

impl AsyncRead for Input {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Input::Pipe(receiver) => Pin::new(receiver).poll_read(cx, buf),
            Input::Blocking(stdin) => Pin::new(stdin).poll_read(cx, buf),
            Input::Pool(stdin) => Pin::new(stdin).poll_read(cx, buf),
            Input::Closed => Poll::Ready(Ok(())),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            Output::Pipe(sender) => Pin::new(sender).poll_write(cx, buf),
            Output::Blocking(stdout) => Pin::new(stdout).poll_write(cx, buf),
            Output::Closed => Poll::Ready(Err(closed_output())),
        }
    }

    /// A pipe takes several buffers in one `writev` (an answer's head and its result's own buffer);
    /// tokio's blocking stdout takes the first (the writer joins a line's buffers for it).
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            Output::Pipe(sender) => Pin::new(sender).poll_write_vectored(cx, bufs),
            Output::Blocking(stdout) => Pin::new(stdout).poll_write_vectored(cx, bufs),
            Output::Closed => Poll::Ready(Err(closed_output())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            #[cfg(unix)]
            Output::Pipe(sender) => sender.is_write_vectored(),
            Output::Blocking(stdout) => stdout.is_write_vectored(),
            Output::Closed => false,
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Output::Pipe(sender) => Pin::new(sender).poll_flush(cx),
            Output::Blocking(stdout) => Pin::new(stdout).poll_flush(cx),
            Output::Closed => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Output::Pipe(sender) => Pin::new(sender).poll_shutdown(cx),
            Output::Blocking(stdout) => Pin::new(stdout).poll_shutdown(cx),
            Output::Closed => Poll::Ready(Ok(())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn a_closed_output_fails_every_write_as_a_closed_descriptor() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        runtime.block_on(async {
            let mut output = Output::Closed;
            let error = output.write_all(b"{}\n").await.expect_err("nothing can be written");
            assert!(is_closed(&error), "{error}");
            output.flush().await.expect("nothing is buffered, so flushing succeeds");
        });
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_output_takes_an_answer_head_and_result_in_one_write() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().expect("a runtime");
        runtime.block_on(async {
            let (sender, mut receiver) = tokio::net::unix::pipe::pipe().expect("a pipe");
            let mut output = Output::Pipe(sender);
            assert!(output.is_write_vectored());
            let (head, result) = (&b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"[..], &b"{}}\n"[..]);
            let slices = [io::IoSlice::new(head), io::IoSlice::new(result)];
            let written = std::future::poll_fn(|cx| Pin::new(&mut output).poll_write_vectored(cx, &slices))
                .await
                .expect("an empty pipe takes a short line");
            assert_eq!(written, head.len() + result.len(), "both buffers in one write");
            drop(output);
            let mut read = Vec::new();
            receiver.read_to_end(&mut read).await.expect("read to the end");
            assert_eq!(read, [head, result].concat());
        });
    }

    #[test]
    fn a_closed_input_reads_as_empty() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        runtime.block_on(async {
            let mut read = Vec::new();
            assert_eq!(Input::Closed.read_to_end(&mut read).await.expect("an empty input"), 0);
        });
    }

    #[cfg(unix)]
    #[test]
    fn only_a_closed_descriptor_counts_as_closed() {
        assert!(is_closed(&io::Error::from_raw_os_error(EBADF)));
        assert!(!is_closed(&io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(!is_closed(&io::Error::from_raw_os_error(28)), "ENOSPC is a real failure");
    }

    #[cfg(unix)]
    #[test]
    fn pipes_are_told_from_files() {
        use std::os::fd::AsFd;
        let (reader, writer) = std::io::pipe().expect("a pipe");
        assert_eq!(examine(reader.as_fd()), Found::Pipe);
        assert_eq!(examine(writer.as_fd()), Found::Pipe);
        let file = std::fs::File::open(env!("CARGO_MANIFEST_PATH")).expect("the manifest");
        assert_eq!(examine(file.as_fd()), Found::Other);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_reopened_pipe_carries_the_same_bytes_and_ends_with_its_writers() {
        use std::io::Write;
        use std::os::fd::AsFd;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().expect("a runtime");
        runtime.block_on(async {
            let (reader, mut writer) = std::io::pipe().expect("a pipe");
            let (mut collected, output) = std::io::pipe().expect("a pipe");
            let mut receiver = reopen::receiver(reader.as_fd()).expect("a new read description");
            let mut sender = reopen::sender(output.as_fd()).expect("a new write description");
            writer.write_all(b"in\n").expect("the pipe has room");
            drop(writer);
            let mut read = Vec::new();
            receiver.read_to_end(&mut read).await.expect("read until every writer is gone");
            assert_eq!(read, b"in\n");
            sender.write_all(b"out\n").await.expect("the pipe has a reader");
            drop(sender);
            drop(output);
            let mut written = Vec::new();
            std::io::Read::read_to_end(&mut collected, &mut written)
                .expect("read until every writer is gone");
            assert_eq!(written, b"out\n");
        });
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_reopened_pipe_without_a_reader_fails_its_first_write_as_a_broken_pipe() {
        use std::os::fd::AsFd;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().expect("a runtime");
        runtime.block_on(async {
            let (reader, writer) = std::io::pipe().expect("a pipe");
            drop(reader);
            // An anonymous pipe opens without a reader (a named FIFO would refuse with ENXIO).
            let mut sender = reopen::sender(writer.as_fd()).expect("a new write description");
            let error = sender.write_all(b"{}\n").await.expect_err("nobody reads");
            assert_eq!(error.kind(), io::ErrorKind::BrokenPipe, "{error}");
        });
    }
}
