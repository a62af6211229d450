//! The one output: every response, every notification of a request that may be sent them (progress,
//! logs), every line of an open listen and every notification of a legacy session becomes one whole line
//! on the output, and nothing else ever does.
//!
//! Two parties write it, one at a time, under one lock: the writer task, which takes lines from the
//! queue every other sender uses, and the read loop, which writes an answer it made itself at once
//! ([`Direct::offer`]) instead of waking the writer task for it, as long as nothing is queued or held.
//! While the client's next message is read already, the loop keeps its answers back ([`Gathered`]) and
//! offers them together when it is about to wait for the client: a pipelining client's answers leave
//! many to a write, where one each would cost a system call each.
//!
//! Threat: a torn or reordered line. Two writers of one stream could interleave the bytes of two lines,
//! or put a request's answer ahead of the progress lines it queued first. Here every byte is written
//! holding the lock; what the writer task takes from the queue stays in [`State`] (under that lock) until
//! it is written; and the read loop writes only when the queue is empty and nothing is held — so nothing
//! handed over before its line can come after it. A line the read loop could not finish at once (the
//! reader of the output is slow) is held, and the writer task writes it before anything else.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker, ready};

use mcp_kernel_wire::{Pieces, Response};
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

/// How many queued lines the writer task takes at once.
const BATCH: usize = 64;

/// Lines up to this many bytes in all are gathered into one write; a longer line is written on its own
/// (never copied).
const GATHER: usize = crate::framing::CHUNK;

/// An answer whose result was encoded to this many bytes or more is written from the result's own
/// buffer, behind the envelope's head in the same vectored write, rather than copied behind it — unless
/// the output takes one buffer a write, or the answer is gathered with others ([`Gathered`], at most
/// [`GATHER`] bytes together), where it is copied as any line is.
const COPY_BELOW: usize = 16 * 1024;

/// The most buffers one write of the writer task hands the output.
const MAX_SLICES: usize = 16;

/// One encoded message and its terminating `\n`: in one buffer, or — an answer whose result was encoded
/// large ([`Line::answer`]) — in two, the envelope's head and then the result's own buffer with the
/// rest of the line, written together by one vectored write (joined first for an output that takes one
/// buffer a write, [`Line::joined`]).
#[derive(Debug)]
pub(crate) struct Line {
    first: Vec<u8>,
    /// The result's buffer, with the envelope's end and the `\n`; empty for a line in one buffer.
    rest: Vec<u8>,
}

impl Line {
    /// A line in one buffer.
    fn whole(bytes: Vec<u8>) -> Self {
        Self { first: bytes, rest: Vec::new() }
    }

    /// Encodes a response as one line, in one buffer.
    pub(crate) fn encode(response: &Response) -> Self {
        let mut bytes = response.to_bytes();
        bytes.push(b'\n');
        Self::whole(bytes)
    }

    /// Encodes an answer as one line: a result encoded to [`COPY_BELOW`] bytes or more stays in the
    /// buffer it was encoded into, which takes the envelope's end and the `\n` when it has room for
    /// them (the encoder's guess leaves some); otherwise, as [`Line::encode`], one buffer.
    pub(crate) fn answer(response: Response) -> Self {
        match response.into_pieces(COPY_BELOW) {
            Pieces::Whole(mut bytes) => {
                bytes.push(b'\n');
                Self::whole(bytes)
            }
            Pieces::Around { head, result, tail } => {
                let mut result = result.into_bytes();
                if result.capacity() - result.len() > tail.len() {
                    result.extend_from_slice(tail);
                    result.push(b'\n');
                    return Self { first: head, rest: result };
                }
                let mut bytes = Vec::with_capacity(head.len() + result.len() + tail.len() + 1);
                for piece in [head.as_slice(), &result, tail, b"\n"] {
                    bytes.extend_from_slice(piece);
                }
                Self::whole(bytes)
            }
        }
    }

    /// Encodes a notification (progress, a log message, a listen's or a legacy session's) — or a
    /// request the server sends the client — as one line.
    pub(crate) fn notification(notification: &serde_json::Value) -> Self {
        let mut bytes = serde_json::to_vec(notification).unwrap_or_default();
        bytes.push(b'\n');
        Self::whole(bytes)
    }

    /// The line in one buffer (a copy of its second buffer, if it has one): for an output that writes
    /// one buffer at a time (tokio's blocking stdout), which would otherwise make two writes of it.
    fn joined(mut self) -> Self {
        if !self.rest.is_empty() {
            self.first.extend_from_slice(&self.rest);
            self.rest = Vec::new();
        }
        self
    }

    /// How many bytes the line holds.
    fn len(&self) -> usize {
        self.first.len() + self.rest.len()
    }

    /// Copies the line's bytes behind `bytes`.
    fn append_to(&self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(&self.first);
        bytes.extend_from_slice(&self.rest);
    }

    /// The line's buffers, in order, without an empty one.
    fn buffers(self) -> impl Iterator<Item = Vec<u8>> {
        [self.first, self.rest].into_iter().filter(|buffer| !buffer.is_empty())
    }

    /// The line's bytes (for tests).
    #[cfg(test)]
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        let mut bytes = self.first;
        bytes.extend_from_slice(&self.rest);
        bytes
    }
}

/// Answers the read loop holds back while the client's next message is read already: written together,
/// as one line's worth of bytes, when the loop is about to wait for the client or the batch is full
/// ([`BATCH`] answers, [`GATHER`] bytes). They take no place in the writer's queue, which stays free for
/// the progress and log lines of the requests being served.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    bytes: Vec<u8>,
    lines: usize,
}

impl Gathered {
    /// Keeps `line` back if the batch has room for it; else gives it back.
    pub(crate) fn keep(&mut self, line: Line) -> Result<(), Line> {
        if self.lines < BATCH && self.bytes.len() + line.len() <= GATHER {
            line.append_to(&mut self.bytes);
            self.lines += 1;
            Ok(())
        } else {
            Err(line)
        }
    }

    /// Everything kept back, then `line`, as one write's worth (whole lines, in order); or, when `line`
    /// is longer than a gathered write ([`GATHER`]), the two apart, so that a long line is never copied.
    pub(crate) fn then(&mut self, line: Line) -> Result<Line, (Line, Line)> {
        let Some(mut held) = self.take() else { return Ok(line) };
        if line.len() > GATHER {
            return Err((held, line));
        }
        line.append_to(&mut held.first);
        Ok(held)
    }

    /// Everything kept back, if anything is.
    pub(crate) fn take(&mut self) -> Option<Line> {
        (self.lines > 0).then(|| {
            self.lines = 0;
            Line::whole(std::mem::take(&mut self.bytes))
        })
    }
}

/// What became of a line the read loop offered to write itself.
#[derive(Debug)]
pub(crate) enum Offer {
    /// Written, or held for the writer task to finish (ahead of anything else).
    Taken,
    /// Not taken (something is queued or held, or the writer task is writing): queue it.
    Queue(Line),
    /// The output failed; the writer task ends with the error.
    Failed,
}

/// The read loop's way to the output, without naming its type.
pub(crate) trait Direct: Send + Sync {
    /// Writes `line` now if nothing queued before it is still unwritten (`queue_empty`: the caller saw
    /// the writer's queue empty) and the writer task is not writing; what the output does not take at
    /// once is held for the writer task, which is woken. `cx` is the read loop's.
    fn offer(&self, line: Line, queue_empty: bool, cx: &mut Context<'_>) -> Offer;
}

/// The output and what is owed to it, behind the one lock.
pub(crate) struct Output<W> {
    state: Mutex<State<W>>,
}

/// What the lock guards.
struct State<W> {
    output: W,
    /// Bytes taken from the queue or left by the read loop, not yet written, in order; the front
    /// segment is written from `at`.
    held: VecDeque<Vec<u8>>,
    at: usize,
    /// Something was written since the last flush.
    unflushed: bool,
    /// The error the read loop met writing; the writer task ends with it.
    failed: Option<io::Error>,
    /// The writer task's waker, for when the read loop leaves it something to write or report.
    writer: Option<Waker>,
    /// The output failed (the error is reported once): nothing is written to it any more.
    broken: bool,
}

impl<W: AsyncWrite + Unpin> Output<W> {
    /// The output `output`, nothing owed yet.
    pub(crate) fn new(output: W) -> Self {
        let state = State {
            output,
            held: VecDeque::new(),
            at: 0,
            unflushed: false,
            failed: None,
            writer: None,
            broken: false,
        };
        Self { state: Mutex::new(state) }
    }

    /// Every section holding the lock leaves the state whole, so a poisoned lock is taken as it is.
    fn lock(&self) -> MutexGuard<'_, State<W>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The writer task's one poll: writes what is held, then takes more from the queue; ready once every
    /// sender is gone and all is written and flushed, or at the first output error.
    fn poll_write_task(
        &self,
        cx: &mut Context<'_>,
        lines: &mut mpsc::Receiver<Line>,
        batch: &mut Vec<Line>,
    ) -> Poll<io::Result<()>> {
        let mut state = self.lock();
        if !state.writer.as_ref().is_some_and(|waker| waker.will_wake(cx.waker())) {
            state.writer = Some(cx.waker().clone());
        }
        let written = state.poll_lines(cx, lines, batch);
        if let Poll::Ready(Err(_)) = written {
            state.broken = true;
        }
        written
    }
}

impl<W: AsyncWrite + Unpin> State<W> {
    /// Writes what is held, then takes more from the queue, until the queue is done or an error.
    fn poll_lines(
        &mut self,
        cx: &mut Context<'_>,
        lines: &mut mpsc::Receiver<Line>,
        batch: &mut Vec<Line>,
    ) -> Poll<io::Result<()>> {
        loop {
            if let Some(error) = self.failed.take() {
                return Poll::Ready(Err(error));
            }
            ready!(self.poll_drain(cx))?;
            // Taken while the lock is held: a line leaves the queue only into `held`.
            if ready!(lines.poll_recv_many(cx, batch, BATCH)) == 0 {
                return Poll::Ready(Ok(()));
            }
            let vectored = self.output.is_write_vectored();
            for line in batch.drain(..) {
                let line = if vectored { line } else { line.joined() };
                for buffer in line.buffers() {
                    self.hold(buffer);
                }
            }
        }
    }

    /// Queues `bytes` behind what is held: gathered with the last segment while that stays small — but,
    /// for an output that takes several buffers a write, a result's own buffer ([`COPY_BELOW`] bytes or
    /// more) is neither copied behind the last segment nor grown to take the next, so that it is never
    /// copied.
    fn hold(&mut self, bytes: Vec<u8>) {
        let vectored = self.output.is_write_vectored();
        match self.held.back_mut() {
            Some(last)
                if last.len() + bytes.len() <= GATHER
                    && (!vectored || (last.len() < COPY_BELOW && bytes.len() < COPY_BELOW)) =>
            {
                last.extend_from_slice(&bytes);
            }
            _ => self.held.push_back(bytes),
        }
    }

    /// Writes everything held, up to [`MAX_SLICES`] buffers a write, then flushes; pending while the
    /// output does not take it.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.held.is_empty() {
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let mut count = 0;
            for (slice, buffer) in slices.iter_mut().zip(&self.held) {
                let from = if count == 0 { self.at } else { 0 };
                *slice = IoSlice::new(buffer.get(from..).unwrap_or_default());
                count += 1;
            }
            let n = ready!(Pin::new(&mut self.output).poll_write_vectored(cx, &slices[..count]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.unflushed = true;
            self.advance(n);
        }
        if self.unflushed {
            ready!(Pin::new(&mut self.output).poll_flush(cx))?;
            self.unflushed = false;
        }
        Poll::Ready(Ok(()))
    }

    /// Counts `n` bytes of what is held as written.
    fn advance(&mut self, mut n: usize) {
        while let Some(front) = self.held.front() {
            let left = front.len() - self.at;
            if n < left {
                self.at += n;
                return;
            }
            n -= left;
            self.held.pop_front();
            self.at = 0;
        }
    }

    /// Holds what the output did not take of `line`, of which it took `written` bytes (nothing is held
    /// before it).
    fn hold_rest(&mut self, line: Line, written: usize) {
        self.held.extend(line.buffers());
        self.at = 0;
        self.advance(written);
    }

    /// Leaves the writer task something to do (bytes to write, a flush, an error): wakes it.
    fn hand_over(&mut self) {
        if let Some(writer) = &self.writer {
            writer.wake_by_ref();
        }
    }
}

impl<W: AsyncWrite + Unpin + Send> Direct for Output<W> {
    fn offer(&self, line: Line, queue_empty: bool, cx: &mut Context<'_>) -> Offer {
        if !queue_empty {
            return Offer::Queue(line);
        }
        // The writer task holds the lock only while it writes: then the line waits its turn.
        let Ok(mut state) = self.state.try_lock() else { return Offer::Queue(line) };
        if state.broken {
            return Offer::Failed;
        }
        if !state.held.is_empty() || state.unflushed || state.failed.is_some() {
            return Offer::Queue(line);
        }
        let line = if state.output.is_write_vectored() { line } else { line.joined() };
        let length = line.len();
        let output = Pin::new(&mut state.output);
        let written = if line.rest.is_empty() {
            output.poll_write(cx, &line.first)
        } else {
            output.poll_write_vectored(cx, &[IoSlice::new(&line.first), IoSlice::new(&line.rest)])
        };
        match written {
            Poll::Ready(Ok(n)) if n == length => {}
            Poll::Ready(Ok(0)) => {
                state.failed = Some(io::ErrorKind::WriteZero.into());
                state.hand_over();
                return Offer::Failed;
            }
            Poll::Ready(Ok(n)) => {
                state.hold_rest(line, n);
                state.unflushed = true;
                state.hand_over();
                return Offer::Taken;
            }
            Poll::Ready(Err(error)) => {
                state.failed = Some(error);
                state.hand_over();
                return Offer::Failed;
            }
            Poll::Pending => {
                state.hold_rest(line, 0);
                state.hand_over();
                return Offer::Taken;
            }
        }
        match Pin::new(&mut state.output).poll_flush(cx) {
            Poll::Ready(Ok(())) => Offer::Taken,
            Poll::Ready(Err(error)) => {
                state.failed = Some(error);
                state.hand_over();
                Offer::Failed
            }
            Poll::Pending => {
                state.unflushed = true;
                state.hand_over();
                Offer::Taken
            }
        }
    }
}

/// Writes every line received, whole, in arrival order (behind what the read loop left held), flushing
/// whenever nothing more is waiting.
///
/// Returns `Ok` once every sender is gone and the last line is written and flushed, or the first output
/// error (its own, or the one the read loop met).
pub(crate) async fn write_lines<W: AsyncWrite + Unpin>(
    output: Arc<Output<W>>,
    mut lines: mpsc::Receiver<Line>,
) -> io::Result<()> {
    let mut batch = Vec::with_capacity(BATCH);
    poll_fn(|cx| output.poll_write_task(cx, &mut lines, &mut batch)).await
}

#[cfg(test)]
mod tests;
