//! The capped reader: newline-delimited messages, and legacy `Content-Length` frames ([D-27]).
//!
//! Nothing here knows about the server: [`FrameReader::next`] turns bytes into [`Frame`]s, and every
//! bound is enforced with `fill_buf`/`consume`, so at most one line (or one frame body) of at most the
//! cap is ever buffered. A longer line is drained to its newline without being kept, and an oversized
//! frame's body is skipped in [`CHUNK`]-sized steps.
//!
//! A legacy frame can never swallow what follows it. Its header block is bounded
//! ([`MAX_HEADER_BYTES`], [`MAX_HEADER_LINES`]); a line that begins a JSON text (`{` or `[`) is never a
//! header, so it ends the block and is then read as a message of its own; and every frame begun is
//! answered exactly once, even when the input ends inside it.
//!
//! [D-27]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

use std::io;

use mcp_kernel_wire::{ErrorObject, code};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::options::MAX_LINE_BYTES;

/// The read-buffer size and the largest step an oversized frame body is skipped in.
pub(crate) const CHUNK: usize = 64 * 1024;

/// The most bytes a legacy header block may hold: the bytes of its lines, without their line endings,
/// the `Content-Length` line included and the blank line that ends the block not.
///
/// A real LSP-style client sends one or two short headers; 8 KiB is far beyond that, and small enough
/// that a stray `Content-Length:` line can hold up only a bounded stretch of the input.
pub(crate) const MAX_HEADER_BYTES: usize = 8 * 1024;

/// The most lines a legacy header block may hold, the `Content-Length` line included and the blank line
/// not.
pub(crate) const MAX_HEADER_LINES: usize = 32;

/// `content-length:`, the prefix (compared case-insensitively) that switches one message to legacy framing.
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// -32700: the header block went past [`MAX_HEADER_BYTES`] or [`MAX_HEADER_LINES`] (or one of its lines
/// past the line cap) before its blank line.
const HEADER_TOO_LARGE: &str = "Parse error: frame header block too large";

/// -32700: a line beginning a JSON text came where a header line or the blank line was expected.
const HEADER_UNTERMINATED: &str = "Parse error: frame header ended without a blank line";

/// -32700: the input ended inside a header block or inside a body of at most the cap.
const INPUT_ENDED: &str = "Parse error: input ended inside a frame";

/// What the reader found next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Frame {
    /// The bytes of one message, to be parsed (at most the cap, `\r\n` or `\n` removed).
    Message(Vec<u8>),
    /// The next message was refused before parsing; answered with this error and id `null`.
    Refused(ErrorObject),
    /// The input ended. A frame it cut short was refused first, so every frame begun is answered once.
    Eof,
}

/// How one capped line read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// A line of at most the cap is in the buffer; `terminated` is false when the input ended first.
    Read { terminated: bool },
    /// The line exceeded the cap and was drained; `terminated` is false when the input ended first.
    TooLong { terminated: bool },
    /// The input ended before any byte of a line.
    Eof,
}

/// A buffered input that shows the bytes it holds unread (without reading more).
pub(crate) trait Buffered {
    /// The bytes read from the input and not consumed yet.
    fn unread(&self) -> &[u8];
}

impl<T: tokio::io::AsyncRead> Buffered for tokio::io::BufReader<T> {
    fn unread(&self) -> &[u8] {
        self.buffer()
    }
}

/// Reads capped lines and legacy frames from a buffered input.
#[derive(Debug)]
pub(crate) struct FrameReader<R> {
    input: R,
    cap: usize,
    /// A line that ended a header block (it begins a JSON text): the next message, read already.
    pending: Option<Vec<u8>>,
    /// The input has ended: nothing more is read.
    ended: bool,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    /// A reader admitting lines and frame bodies of at most `cap` bytes.
    pub(crate) fn new(input: R, cap: usize) -> Self {
        Self { input, cap, pending: None, ended: false }
    }

    /// The next message, refusal or end of input. Blank lines are skipped.
    ///
    /// Not cancel-safe: a call dropped midway loses the partly read message.
    pub(crate) async fn next(&mut self) -> io::Result<Frame> {
        if let Some(line) = self.pending.take() {
            return Ok(Frame::Message(line));
        }
        let mut line = Vec::new();
        loop {
            if self.ended {
                return Ok(Frame::Eof);
            }
            line.clear();
            match self.read_line(&mut line).await? {
                Line::Eof => return Ok(Frame::Eof),
                Line::TooLong { .. } => return Ok(Frame::Refused(self.line_refusal())),
                Line::Read { .. } => {}
            }
            if is_blank(&line) {
                continue;
            }
            if starts_with_content_length(&line) {
                return self.read_frame(line).await;
            }
            return Ok(Frame::Message(line));
        }
    }

    /// Whether [`next`](Self::next) has its message without reading more: the message after a header
    /// block, or a whole line in the buffer that is neither blank nor a `Content-Length` header. A
    /// client that pipelines its requests has sent more, and an answer can wait to be written with the
    /// ones after it (`Session::send`). A part of a line, a blank line (skipped, so the next one is
    /// read) and a frame's header (its body is read after it) do not count: reading on may wait for the
    /// client.
    pub(crate) fn has_whole_message(&self) -> bool
    where
        R: Buffered,
    {
        if self.pending.is_some() {
            return true;
        }
        let unread = self.input.unread();
        memchr::memchr(b'\n', unread)
            .map(|at| &unread[..at])
            .is_some_and(|line| !is_blank(line) && !starts_with_content_length(line))
    }

    fn line_refusal(&self) -> ErrorObject {
        ErrorObject::refused(format!("Request line exceeds {} bytes", self.cap))
    }

    fn frame_refusal(&self) -> ErrorObject {
        ErrorObject::refused(format!("Request frame exceeds {} bytes", self.cap))
    }

    /// Reads one line into `buf` (cleared by the caller), keeping at most `cap` bytes.
    ///
    /// The bytes before the `\n` count toward the cap, a trailing `\r` included; the `\r` is then trimmed.
    /// A longer line is consumed to its newline and never kept. A line the read buffer does not hold whole
    /// is given room for the cap (at most [`MAX_LINE_BYTES`]) when its first part is kept: up to that size
    /// one allocation and no copy of the kept bytes however many reads the line takes, where growing by
    /// doubling copies about its length once more. The room is not trimmed: a message's bytes are
    /// dropped as soon as they are decoded, and trimming would hand the allocator a block of another size
    /// each time (a fresh mapping, and its page faults, per long line with glibc).
    async fn read_line(&mut self, buf: &mut Vec<u8>) -> io::Result<Line> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                self.ended = true;
                if buf.is_empty() {
                    return Ok(Line::Eof);
                }
                trim_cr(buf);
                return Ok(Line::Read { terminated: false });
            }
            match memchr::memchr(b'\n', available) {
                Some(at) => {
                    let fits = buf.len() + at <= self.cap;
                    if fits {
                        buf.extend_from_slice(&available[..at]);
                    }
                    self.input.consume(at + 1);
                    if !fits {
                        buf.clear();
                        return Ok(Line::TooLong { terminated: true });
                    }
                    trim_cr(buf);
                    return Ok(Line::Read { terminated: true });
                }
                None => {
                    let len = available.len();
                    let fits = buf.len() + len <= self.cap;
                    if fits {
                        if buf.is_empty() {
                            buf.reserve(self.cap.min(MAX_LINE_BYTES));
                        }
                        buf.extend_from_slice(available);
                    }
                    self.input.consume(len);
                    if !fits {
                        buf.clear();
                        let terminated = self.skip_line().await?;
                        return Ok(Line::TooLong { terminated });
                    }
                }
            }
        }
    }

    /// Consumes the rest of a line without keeping it; false when the input ends first.
    async fn skip_line(&mut self) -> io::Result<bool> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                self.ended = true;
                return Ok(false);
            }
            match memchr::memchr(b'\n', available) {
                Some(at) => {
                    self.input.consume(at + 1);
                    return Ok(true);
                }
                None => {
                    let len = available.len();
                    self.input.consume(len);
                }
            }
        }
    }

    /// Reads a legacy frame whose first header line, `first`, begins `Content-Length:`.
    ///
    /// The header block is read up to its blank line, each line under the line cap and the block under
    /// [`MAX_HEADER_BYTES`] and [`MAX_HEADER_LINES`]. It is refused -32700, and what follows is read as
    /// lines again, when it goes past a bound (the line that does so is consumed), when a line beginning
    /// a JSON text comes before the blank line (that line is kept as the next message), or when the input
    /// ends inside it. After the blank line, a frame whose length cannot be known (invalid, missing or
    /// repeated) is refused -32700 and its body is not consumed; a frame over the cap is skipped and
    /// refused -32600, even when the input ends before its declared length; a body of at most the cap
    /// cut short by the end of the input is refused -32700.
    async fn read_frame(&mut self, first: Vec<u8>) -> io::Result<Frame> {
        let declared = parse_length(&first[CONTENT_LENGTH.len()..]);
        let mut bytes = first.len();
        let mut lines = 1usize;
        let mut repeated = false;
        let mut line = first;
        loop {
            if bytes > MAX_HEADER_BYTES || lines > MAX_HEADER_LINES {
                return Ok(refused_parse(HEADER_TOO_LARGE));
            }
            line.clear();
            match self.read_line(&mut line).await? {
                Line::Eof => return Ok(refused_parse(INPUT_ENDED)),
                Line::TooLong { .. } => return Ok(refused_parse(HEADER_TOO_LARGE)),
                Line::Read { .. } if begins_json(&line) => {
                    self.pending = Some(line);
                    return Ok(refused_parse(HEADER_UNTERMINATED));
                }
                Line::Read { terminated: false } => return Ok(refused_parse(INPUT_ENDED)),
                Line::Read { terminated: true } if is_blank(&line) => break,
                Line::Read { terminated: true } => {
                    bytes += line.len();
                    lines += 1;
                    repeated |= starts_with_content_length(&line);
                }
            }
        }
        let length = match declared {
            Ok(_) if repeated => return Ok(Frame::Refused(LengthError::Invalid.to_error_object())),
            Err(error) => return Ok(Frame::Refused(error.to_error_object())),
            Ok(length) => length,
        };
        match usize::try_from(length).ok().filter(|&length| length <= self.cap) {
            Some(length) => Ok(match self.read_body(length).await? {
                Some(body) => Frame::Message(body),
                None => refused_parse(INPUT_ENDED),
            }),
            None => {
                // Answered whether or not the whole declared body arrives.
                self.skip_bytes(length).await?;
                Ok(Frame::Refused(self.frame_refusal()))
            }
        }
    }

    /// Reads exactly `length` bytes; `None` when the input ends first.
    ///
    /// Room for at most one read is taken up front; a body that needs more gets its whole declared length
    /// (at most the cap) at once, so its bytes are never copied to a larger buffer.
    async fn read_body(&mut self, length: usize) -> io::Result<Option<Vec<u8>>> {
        let mut body = Vec::with_capacity(length.min(CHUNK));
        while body.len() < length {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                self.ended = true;
                return Ok(None);
            }
            let take = available.len().min(length - body.len());
            if body.len() + take > body.capacity() {
                body.reserve_exact(length - body.len());
            }
            body.extend_from_slice(&available[..take]);
            self.input.consume(take);
        }
        Ok(Some(body))
    }

    /// Consumes `remaining` bytes, at most [`CHUNK`] at a time, keeping none, or up to the end of the input.
    async fn skip_bytes(&mut self, mut remaining: u64) -> io::Result<()> {
        while remaining > 0 {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                self.ended = true;
                return Ok(());
            }
            let take = available.len().min(CHUNK);
            let take = usize::try_from(remaining).map_or(take, |remaining| take.min(remaining));
            self.input.consume(take);
            remaining -= take as u64;
        }
        Ok(())
    }
}

/// A -32700 refusal of a frame with one of the fixed messages above.
fn refused_parse(message: &'static str) -> Frame {
    Frame::Refused(ErrorObject::new(code::PARSE_ERROR, message))
}

/// Why a `Content-Length` value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LengthError {
    /// Nothing but whitespace after the colon.
    Missing,
    /// Not a decimal number that fits in 64 bits (or the header was repeated).
    Invalid,
}

impl LengthError {
    fn to_error_object(self) -> ErrorObject {
        match self {
            LengthError::Missing => {
                ErrorObject::new(code::PARSE_ERROR, "Parse error: missing_content_length")
            }
            LengthError::Invalid => {
                ErrorObject::new(code::PARSE_ERROR, "Parse error: invalid_content_length")
            }
        }
    }
}

/// Parses the value of a `Content-Length` header: ASCII digits between optional whitespace.
fn parse_length(value: &[u8]) -> Result<u64, LengthError> {
    let value = value.trim_ascii();
    if value.is_empty() {
        return Err(LengthError::Missing);
    }
    value.iter().try_fold(0u64, |length, &b| {
        if !b.is_ascii_digit() {
            return Err(LengthError::Invalid);
        }
        length.checked_mul(10).and_then(|l| l.checked_add(u64::from(b - b'0'))).ok_or(LengthError::Invalid)
    })
}

/// True when the first 15 bytes are `content-length:` in any case (the rest of the line is not looked at).
fn starts_with_content_length(line: &[u8]) -> bool {
    line.get(..CONTENT_LENGTH.len()).is_some_and(|prefix| prefix.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// True when the first byte after any spaces, tabs and carriage returns opens a JSON object or array: such a line is a
/// message, never a header.
fn begins_json(line: &[u8]) -> bool {
    matches!(line.iter().find(|&&b| !matches!(b, b' ' | b'\t' | b'\r')), Some(b'{' | b'['))
}

/// True for an empty or whitespace-only line.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

fn trim_cr(buf: &mut Vec<u8>) {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The read-buffer sizes every input is framed with: the items must not depend on them.
    const BUFFERS: [usize; 3] = [1, 7, CHUNK];

    /// The most items one test input may produce (every loop here is bounded).
    const MAX_ITEMS: usize = 1_000;

    /// The items of `input` up to end of input, checked to be the same through every buffer size.
    async fn frames(input: &[u8], cap: usize) -> Vec<Frame> {
        let mut first: Option<Vec<Frame>> = None;
        for buffer in BUFFERS {
            let mut reader = FrameReader::new(tokio::io::BufReader::with_capacity(buffer, input), cap);
            let mut out = Vec::new();
            loop {
                let frame = reader.next().await.expect("reading a slice cannot fail");
                if frame == Frame::Eof {
                    assert_eq!(reader.next().await.unwrap(), Frame::Eof, "the end stays the end");
                    break;
                }
                out.push(frame);
                assert!(out.len() <= MAX_ITEMS, "more items than any test input holds");
            }
            match &first {
                None => first = Some(out),
                Some(first) => assert_eq!(first, &out, "framing depends on the buffer size {buffer}"),
            }
        }
        first.unwrap_or_default()
    }

    fn message(bytes: &[u8]) -> Frame {
        Frame::Message(bytes.to_vec())
    }

    fn refused(message: &str) -> Frame {
        Frame::Refused(ErrorObject::refused(message))
    }

    fn parse(message: &str) -> Frame {
        Frame::Refused(ErrorObject::new(code::PARSE_ERROR, message))
    }

    fn run<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().expect("a runtime").block_on(future)
    }

    /// `Content-Length: 2` and `extra` header lines `X-N: <pad>` (each `line_len` bytes without `\r\n`).
    fn header_block(extra: usize, line_len: usize) -> Vec<u8> {
        let mut block = b"Content-Length: 2\r\n".to_vec();
        for n in 0..extra {
            let mut line = format!("X-{n}: ").into_bytes();
            assert!(line.len() <= line_len, "room for the header name");
            line.resize(line_len, b'p');
            block.extend_from_slice(&line);
            block.extend_from_slice(b"\r\n");
        }
        block
    }

    #[test]
    fn caps_lines_counting_the_carriage_return() {
        run(async {
            assert_eq!(
                frames(b"abcd\nabcde\nab\r\n", 4).await,
                vec![message(b"abcd"), refused("Request line exceeds 4 bytes"), message(b"ab")]
            );
            assert_eq!(
                frames(b"abc\r\nabcd\r\nx", 4).await,
                vec![message(b"abc"), refused("Request line exceeds 4 bytes"), message(b"x")]
            );
        });
    }

    #[test]
    fn a_next_message_counts_as_read_only_when_its_whole_line_is_buffered() {
        run(async {
            let input: &[u8] = b"{\"a\":1}\n{\"b\":2}\n \r\n{\"c\":3}\nContent-Length: 2\r\n\r\n{}{\"d\":";
            let mut reader = FrameReader::new(tokio::io::BufReader::with_capacity(256, input), 64);
            assert_eq!(reader.next().await.unwrap(), message(b"{\"a\":1}"));
            assert!(reader.has_whole_message(), "the second line is in the buffer, whole");
            assert_eq!(reader.next().await.unwrap(), message(b"{\"b\":2}"));
            assert!(
                !reader.has_whole_message(),
                "a blank line is skipped: the line after it may not be there"
            );
            assert_eq!(reader.next().await.unwrap(), message(b"{\"c\":3}"));
            assert!(!reader.has_whole_message(), "a frame's header: its body is read after it");
            assert_eq!(reader.next().await.unwrap(), message(b"{}"));
            assert!(!reader.has_whole_message(), "a part of a line may wait on the client for the rest");
        });
    }

    #[test]
    fn the_message_after_a_header_block_counts_as_read() {
        run(async {
            // A header block cut short by a JSON line: refused, and that line is the next message, read
            // already (the buffer itself is empty by then).
            let input: &[u8] = b"Content-Length: 2\n{\"a\":1}\n";
            let mut reader = FrameReader::new(tokio::io::BufReader::with_capacity(256, input), 64);
            assert!(matches!(reader.next().await.unwrap(), Frame::Refused(_)));
            assert!(reader.has_whole_message(), "the message after the header block is read, whole");
            assert_eq!(reader.next().await.unwrap(), message(b"{\"a\":1}"));
            assert!(!reader.has_whole_message());
        });
    }

    #[test]
    fn refuses_a_long_line_once_across_many_buffer_fills() {
        run(async {
            let mut input = vec![b'x'; 10 * CHUNK];
            input.extend_from_slice(b"\nok\n");
            let reader = tokio::io::BufReader::with_capacity(16, &input[..]);
            let mut reader = FrameReader::new(reader, 8);
            assert_eq!(reader.next().await.unwrap(), refused("Request line exceeds 8 bytes"));
            assert_eq!(reader.next().await.unwrap(), message(b"ok"));
            assert_eq!(reader.next().await.unwrap(), Frame::Eof);
        });
    }

    #[test]
    fn a_line_spanning_many_reads_is_kept_in_one_buffer_of_the_cap() {
        run(async {
            let mut input = vec![b'x'; 5 * CHUNK + 7];
            input.extend_from_slice(b"\r\nok\n");
            let reader = tokio::io::BufReader::with_capacity(CHUNK, &input[..]);
            let mut reader = FrameReader::new(reader, 6 * CHUNK);
            let Frame::Message(line) = reader.next().await.unwrap() else { panic!("a message") };
            assert_eq!(line.len(), 5 * CHUNK + 7);
            assert!(line.capacity() <= 6 * CHUNK, "room for the cap, given once: never grown past it");
            assert_eq!(reader.next().await.unwrap(), message(b"ok"));
        });
    }

    #[test]
    fn skips_blank_lines_and_reads_a_last_unterminated_line() {
        run(async {
            assert_eq!(frames(b"\n \t\r\n\r\na\n\nb", 4).await, vec![message(b"a"), message(b"b")]);
        });
    }

    #[test]
    fn reads_frames_in_any_case_with_extra_headers() {
        run(async {
            let input = b"Content-Length: 2\r\n\r\n{}CONTENT-LENGTH:3\r\nContent-Type: x\r\n\r\nabc\nz\n";
            assert_eq!(frames(input, 20).await, vec![message(b"{}"), message(b"abc"), message(b"z")]);
        });
    }

    #[test]
    fn refuses_bad_lengths() {
        run(async {
            let invalid = parse("Parse error: invalid_content_length");
            let missing = parse("Parse error: missing_content_length");
            assert_eq!(frames(b"Content-Length: x1\r\n\r\n", 20).await, vec![invalid.clone()]);
            assert_eq!(frames(b"Content-Length: -1\r\n\r\n", 20).await, vec![invalid.clone()]);
            assert_eq!(
                frames(b"Content-Length:99999999999999999999\r\n\r\n", 40).await,
                vec![invalid.clone()]
            );
            assert_eq!(frames(b"Content-Length: 1\r\ncontent-length: 1\r\n\r\n", 20).await, vec![invalid]);
            assert_eq!(frames(b"Content-Length:  \r\n\r\nz\n", 20).await, vec![missing, message(b"z")]);
        });
    }

    #[test]
    fn drains_oversized_frames() {
        run(async {
            let frame = refused("Request frame exceeds 20 bytes");
            let oversized = b"Content-Length: 21\r\n\r\n{\"a\":\n1}\n\n12345678901z\n";
            assert_eq!(frames(oversized, 20).await, vec![frame, message(b"z")]);
        });
    }

    #[test]
    fn a_header_line_over_the_line_cap_refuses_the_block_and_lines_follow() {
        run(async {
            // The block ends at the over-long line: the blank line is skipped, the body is a line.
            let long_header = b"Content-Length: 2\r\nX-Long: 1234567890123\r\n\r\n{}z\n";
            assert_eq!(frames(long_header, 20).await, vec![parse(HEADER_TOO_LARGE), message(b"{}z")]);
        });
    }

    #[test]
    fn a_line_beginning_json_ends_the_header_block_and_is_read_as_a_message() {
        run(async {
            let unterminated = parse(HEADER_UNTERMINATED);
            let stray = b"Content-Length: 52\n{\"a\":1}\n{\"b\":2}\r\n[3]\n";
            assert_eq!(
                frames(stray, 64).await,
                vec![unterminated.clone(), message(b"{\"a\":1}"), message(b"{\"b\":2}"), message(b"[3]")]
            );
            // After other header lines, after leading whitespace, and as a last unterminated line.
            let input = b"content-length: 9\r\nContent-Type: x\r\n \t[1]\r\nz\n";
            assert_eq!(
                frames(input, 64).await,
                vec![unterminated.clone(), message(b" \t[1]"), message(b"z")]
            );
            let input = b"Content-Length: 9\r\n{\"c\":3}";
            assert_eq!(frames(input, 64).await, vec![unterminated.clone(), message(b"{\"c\":3}")]);
            // A carriage return is JSON whitespace too: a line of `\r{…}` is a message, not a header.
            let input = b"Content-Length: 9\r\n\r{\"d\":4}\n";
            assert_eq!(frames(input, 64).await, vec![unterminated, message(b"\r{\"d\":4}")]);
        });
    }

    #[test]
    fn a_header_block_is_bounded_in_lines() {
        run(async {
            // 32 lines, the `Content-Length` line included: a frame.
            let mut input = header_block(MAX_HEADER_LINES - 1, 8);
            input.extend_from_slice(b"\r\n{}z\n");
            assert_eq!(frames(&input, 64).await, vec![message(b"{}"), message(b"z")]);
            // 33 lines: refused once, after the 33rd; what follows is read as lines.
            let mut input = header_block(MAX_HEADER_LINES, 8);
            input.extend_from_slice(b"X-next: 1\r\n\r\n{}\nz\n");
            assert_eq!(
                frames(&input, 64).await,
                vec![parse(HEADER_TOO_LARGE), message(b"X-next: 1"), message(b"{}"), message(b"z")]
            );
        });
    }

    #[test]
    fn a_header_block_is_bounded_in_bytes() {
        run(async {
            let first = b"Content-Length: 2".len();
            let line = (MAX_HEADER_BYTES - first) / 4;
            let last = MAX_HEADER_BYTES - first - 3 * line;
            let mut exact = header_block(3, line);
            exact.extend_from_slice(&header_block(1, last)[first + 2..]);
            let mut input = exact.clone();
            input.extend_from_slice(b"\r\n{}z\n");
            assert_eq!(frames(&input, 4 * MAX_HEADER_BYTES).await, vec![message(b"{}"), message(b"z")]);
            // One byte more: refused once, after the line that goes past; what follows is read as lines.
            let mut input = header_block(3, line);
            input.extend_from_slice(&header_block(1, last + 1)[first + 2..]);
            input.extend_from_slice(b"X-next: 1\r\n\r\n{}\nz\n");
            assert_eq!(
                frames(&input, 4 * MAX_HEADER_BYTES).await,
                vec![parse(HEADER_TOO_LARGE), message(b"X-next: 1"), message(b"{}"), message(b"z")]
            );
            // A `Content-Length` line alone over the bound.
            let mut input = b"Content-Length: 2".to_vec();
            input.resize(MAX_HEADER_BYTES + 1, b' ');
            input.extend_from_slice(b"\r\n\r\n{}\n");
            assert_eq!(
                frames(&input, 4 * MAX_HEADER_BYTES).await,
                vec![parse(HEADER_TOO_LARGE), message(b"{}")]
            );
        });
    }

    #[test]
    fn every_frame_cut_by_eof_is_answered_once() {
        run(async {
            let ended = parse(INPUT_ENDED);
            assert_eq!(frames(b"Content-Length: 4\r\n\r\nab", 20).await, vec![ended.clone()]);
            assert_eq!(frames(b"Content-Length: 4\r\n\r\n", 20).await, vec![ended.clone()]);
            assert_eq!(frames(b"Content-Length: 4\r\n", 20).await, vec![ended.clone()]);
            assert_eq!(frames(b"Content-Length: 4", 20).await, vec![ended.clone()]);
            assert_eq!(frames(b"Content-Length: 4\r\nContent-Type: x", 20).await, vec![ended.clone()]);
            assert_eq!(frames(b"Content-Length: 4\r\n\r", 20).await, vec![ended.clone()]);
            assert_eq!(
                frames(b"Content-Length: 4\r\nX: 12345678901234567890", 20).await,
                vec![parse(HEADER_TOO_LARGE)]
            );
            assert_eq!(frames(b"Content-Length: 0\r\n\r\n", 20).await, vec![message(b"")]);
        });
    }

    #[test]
    fn an_oversized_frame_is_refused_even_at_eof() {
        run(async {
            let frame = refused("Request frame exceeds 20 bytes");
            assert_eq!(frames(b"Content-Length: 99\r\n\r\nab", 20).await, vec![frame.clone()]);
            assert_eq!(frames(b"Content-Length: 99\r\n\r\n", 20).await, vec![frame.clone()]);
            assert_eq!(frames(b"Content-Length: 21\r\n\r\n12345678901234567890", 20).await, vec![frame]);
        });
    }

    #[test]
    fn the_refusal_messages_are_fixed_and_short() {
        for message in [HEADER_TOO_LARGE, HEADER_UNTERMINATED, INPUT_ENDED] {
            assert!(message.starts_with("Parse error: ") && message.len() <= 64, "{message}");
        }
    }

    #[test]
    fn parses_lengths() {
        assert_eq!(parse_length(b" 007 "), Ok(7));
        assert_eq!(parse_length(b"\t"), Err(LengthError::Missing));
        assert_eq!(parse_length(b"+1"), Err(LengthError::Invalid));
        assert_eq!(parse_length(b"1 2"), Err(LengthError::Invalid));
    }
}
