//! The stdio floor: one sequential line loop, in the flavour `BENCH_FLOOR_STDIO` names.
//!
//! The floor must be the fastest way to do the job, not merely one way, so the flavours a server
//! could pick are all here and the fastest is the default:
//!
//! | `BENCH_FLOOR_STDIO` | what it is |
//! |---|---|
//! | `blocking` (default) | no runtime: `std::io::stdin().lock()` read line by line, answers written to a buffered `stdout().lock()`. Per request one blocking `read` and one `write`: the fewest system calls and thread wake-ups there are |
//! | `current-thread` | a `current_thread` Tokio runtime reading `tokio::io::stdin()` and writing `tokio::io::stdout()` (each read and write a task of the blocking pool) |
//! | `reactor` | a `current_thread` Tokio runtime with stdin and stdout reopened through `/proc/self/fd` as non-blocking pipes on the reactor (when both are FIFOs) |
//! | `reactor-main` | the same pipes on a multi-thread runtime, the loop run by `block_on` on the main thread, outside the worker pool (what `#[tokio::main]` does): every readiness event is handed from the worker that polls the reactor to the main thread |
//!
//! In every flavour output is buffered and flushed whenever no further input is already read.

use std::io::{BufRead, Write};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use crate::answer;

/// How the line loop is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavour {
    /// Blocking std I/O, no runtime.
    Blocking,
    /// `current_thread` runtime, Tokio's stdin and stdout (the blocking pool).
    CurrentThread,
    /// `current_thread` runtime, the pipes on the reactor.
    Reactor,
    /// Multi-thread runtime, the pipes on the reactor, the loop on the main thread.
    ReactorMain,
}

impl Flavour {
    /// The flavour `BENCH_FLOOR_STDIO` names; `blocking` when it is unset.
    pub(crate) fn from_env() -> Result<Self, String> {
        match std::env::var("BENCH_FLOOR_STDIO").as_deref() {
            Err(_) | Ok("blocking") => Ok(Flavour::Blocking),
            Ok("current-thread") => Ok(Flavour::CurrentThread),
            Ok("reactor") => Ok(Flavour::Reactor),
            Ok("reactor-main") => Ok(Flavour::ReactorMain),
            Ok(other) => {
                Err(format!("BENCH_FLOOR_STDIO={other:?}: blocking, current-thread, reactor or reactor-main"))
            }
        }
    }
}

/// Serves stdio in `flavour` until end of input.
pub(crate) fn serve(flavour: Flavour) -> std::io::Result<()> {
    let current_thread = || tokio::runtime::Builder::new_current_thread().enable_all().build();
    match flavour {
        Flavour::Blocking => serve_blocking(),
        Flavour::CurrentThread => current_thread()?
            .block_on(serve_async(Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))),
        Flavour::Reactor => current_thread()?.block_on(async {
            let (input, output) = fifo_pipes().ok_or_else(not_fifos)?;
            serve_async(input, output).await
        }),
        Flavour::ReactorMain => {
            tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(async {
                let (input, output) = fifo_pipes().ok_or_else(not_fifos)?;
                serve_async(input, output).await
            })
        }
    }
}

fn not_fifos() -> std::io::Error {
    std::io::Error::other("the reactor flavours need stdin and stdout to be FIFOs")
}

/// The loop with no runtime at all.
fn serve_blocking() -> std::io::Result<()> {
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty()
            && let Some(mut json) = answer(trimmed)
        {
            json.push(b'\n');
            output.write_all(&json)?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

type Reader = Box<dyn AsyncRead + Unpin + Send>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// stdin and stdout as non-blocking pipes of their own (new open file descriptions, so the process's
/// standard streams keep their flags) when both are FIFOs.
#[cfg(target_os = "linux")]
fn fifo_pipes() -> Option<(Reader, Writer)> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    const O_NONBLOCK: i32 = 0o4000; // Linux, every architecture tokio supports
    let open = |path: &str, write: bool| {
        std::fs::OpenOptions::new().read(!write).write(write).custom_flags(O_NONBLOCK).open(path).ok()
    };
    let input = open("/proc/self/fd/0", false)?;
    let output = open("/proc/self/fd/1", true)?;
    if !input.metadata().ok()?.file_type().is_fifo() || !output.metadata().ok()?.file_type().is_fifo() {
        return None;
    }
    let input = tokio::net::unix::pipe::Receiver::from_file(input).ok()?;
    let output = tokio::net::unix::pipe::Sender::from_file(output).ok()?;
    Some((Box::new(input), Box::new(output)))
}

#[cfg(not(target_os = "linux"))]
fn fifo_pipes() -> Option<(Reader, Writer)> {
    None
}

/// The loop on a runtime, over any byte streams.
async fn serve_async(input: Reader, output: Writer) -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut output = BufWriter::with_capacity(64 * 1024, output);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty()
            && let Some(mut json) = answer(trimmed)
        {
            json.push(b'\n');
            output.write_all(&json).await?;
        }
        if input.buffer().is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await
}
