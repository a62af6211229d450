//! The capped reader: newline-delimited messages, and legacy `Content-Length` frames (D-27).
//!
//! Nothing here knows about the server: [`FrameReader::next`] turns bytes into [`Frame`]s, and every
//! bound is enforced with `fill_buf`/`consume`, so at most one line (or one frame body) of at most the
//! cap is ever buffered. A longer line is drained to its newline without being kept, and an oversized
//! frame's body is skipped in [`CHUNK`]-sized steps.

use std::io;

use mcp_kernel_wire::{ErrorObject, code};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The read-buffer size and the largest step an oversized frame body is skipped in.
pub(crate) const CHUNK: usize = 64 * 1024;

/// `content-length:`, the prefix (compared case-insensitively) that switches one message to legacy framing.
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// What the reader found next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Frame {
    /// The bytes of one message, to be parsed (at most the cap, `\r\n` or `\n` removed).
    Message(Vec<u8>),
    /// The next message was refused before parsing; answered with this error and id `null`.
    Refused(ErrorObject),
    /// The input ended (possibly in the middle of a frame, which is then dropped).
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

/// Reads capped lines and legacy frames from a buffered input.
#[derive(Debug)]
pub(crate) struct FrameReader<R> {
    input: R,
    cap: usize,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    /// A reader admitting lines and frame bodies of at most `cap` bytes.
    pub(crate) fn new(input: R, cap: usize) -> Self {
        Self { input, cap }
    }

    /// The next message, refusal or end of input. Blank lines are skipped.
    ///
    /// Not cancel-safe: a call dropped midway loses the partly read message.
    pub(crate) async fn next(&mut self) -> io::Result<Frame> {
        let mut line = Vec::new();
        loop {
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
                return self.read_frame(&line[CONTENT_LENGTH.len()..]).await;
            }
            return Ok(Frame::Message(line));
        }
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
    /// A longer line is consumed to its newline and never kept.
    async fn read_line(&mut self, buf: &mut Vec<u8>) -> io::Result<Line> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                if buf.is_empty() {
                    return Ok(Line::Eof);
                }
                trim_cr(buf);
                return Ok(Line::Read { terminated: false });
            }
            match available.iter().position(|&b| b == b'\n') {
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
                return Ok(false);
            }
            match available.iter().position(|&b| b == b'\n') {
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

    /// Reads a legacy frame whose first header line was `Content-Length:` followed by `value`.
    ///
    /// The remaining header lines are read (each capped) up to a blank line; then exactly the declared
    /// length is read. A frame whose length cannot be known (invalid, missing or repeated) is refused
    /// -32700 after its header lines, and its body is not consumed: the bytes that follow are read as
    /// lines again.
    async fn read_frame(&mut self, value: &[u8]) -> io::Result<Frame> {
        let declared = parse_length(value);
        let mut header_too_long = false;
        let mut repeated = false;
        let mut line = Vec::new();
        loop {
            line.clear();
            match self.read_line(&mut line).await? {
                Line::Read { terminated: true } if is_blank(&line) => break,
                Line::Read { terminated: true } => repeated |= starts_with_content_length(&line),
                Line::TooLong { terminated: true } => header_too_long = true,
                Line::Eof | Line::Read { terminated: false } | Line::TooLong { terminated: false } => {
                    return Ok(Frame::Eof);
                }
            }
        }
        let length = match declared {
            Ok(_) if repeated => return Ok(Frame::Refused(LengthError::Invalid.to_error_object())),
            Err(error) => return Ok(Frame::Refused(error.to_error_object())),
            Ok(length) => length,
        };
        let within_cap = usize::try_from(length).ok().filter(|&length| length <= self.cap);
        match within_cap {
            Some(length) if !header_too_long => Ok(match self.read_body(length).await? {
                Some(body) => Frame::Message(body),
                None => Frame::Eof,
            }),
            _ => Ok(if self.skip_bytes(length).await? {
                Frame::Refused(self.frame_refusal())
            } else {
                Frame::Eof
            }),
        }
    }

    /// Reads exactly `length` bytes; `None` when the input ends first.
    async fn read_body(&mut self, length: usize) -> io::Result<Option<Vec<u8>>> {
        let mut body = Vec::with_capacity(length.min(CHUNK));
        while body.len() < length {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(None);
            }
            let take = available.len().min(length - body.len());
            body.extend_from_slice(&available[..take]);
            self.input.consume(take);
        }
        Ok(Some(body))
    }

    /// Consumes `remaining` bytes, at most [`CHUNK`] at a time, keeping none; false if the input ends first.
    async fn skip_bytes(&mut self, mut remaining: u64) -> io::Result<bool> {
        while remaining > 0 {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let take = available.len().min(CHUNK);
            let take = usize::try_from(remaining).map_or(take, |remaining| take.min(remaining));
            self.input.consume(take);
            remaining -= take as u64;
        }
        Ok(true)
    }
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

    async fn frames(input: &[u8], cap: usize) -> Vec<Frame> {
        let mut reader = FrameReader::new(input, cap);
        let mut out = Vec::new();
        loop {
            let frame = reader.next().await.expect("reading a slice cannot fail");
            if frame == Frame::Eof {
                return out;
            }
            out.push(frame);
        }
    }

    fn message(bytes: &[u8]) -> Frame {
        Frame::Message(bytes.to_vec())
    }

    fn refused(message: &str) -> Frame {
        Frame::Refused(ErrorObject::refused(message))
    }

    fn run<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().expect("a runtime").block_on(future)
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
            let parse = |m: &str| Frame::Refused(ErrorObject::new(code::PARSE_ERROR, m));
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
    fn drains_oversized_frames_and_frames_with_long_headers() {
        run(async {
            let frame = refused("Request frame exceeds 20 bytes");
            let oversized = b"Content-Length: 21\r\n\r\n{\"a\":\n1}\n\n12345678901z\n";
            assert_eq!(frames(oversized, 20).await, vec![frame.clone(), message(b"z")]);
            let long_header = b"Content-Length: 2\r\nX-Long: 1234567890123\r\n\r\n{}z\n";
            assert_eq!(frames(long_header, 20).await, vec![frame, message(b"z")]);
        });
    }

    #[test]
    fn ends_on_eof_inside_a_frame() {
        run(async {
            assert_eq!(frames(b"Content-Length: 4\r\n\r\nab", 20).await, vec![]);
            assert_eq!(frames(b"Content-Length: 4\r\n", 20).await, vec![]);
            assert_eq!(frames(b"Content-Length: 99\r\n\r\nab", 20).await, vec![]);
        });
    }

    #[test]
    fn parses_lengths() {
        assert_eq!(parse_length(b" 007 "), Ok(7));
        assert_eq!(parse_length(b"\t"), Err(LengthError::Missing));
        assert_eq!(parse_length(b"+1"), Err(LengthError::Invalid));
        assert_eq!(parse_length(b"1 2"), Err(LengthError::Invalid));
    }
}
