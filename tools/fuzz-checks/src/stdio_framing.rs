//! Target `stdio_framing`: the stdio transport's framing (newline-delimited lines and legacy
//! `Content-Length:` frames), directly and through `serve_io`.
//!
//! Laws: the framing reader never panics or fails on a byte slice; its items do not depend on how the
//! input is buffered; a message is never longer than the cap, and refusals are -32600 (too long) or
//! -32700 (a bad length, a header block refused, or a frame cut by end of input); there are never more
//! items than input bytes. Served end to end, the session ends `Ok` in bounded time, and every output
//! line is one JSON-RPC 2.0 object.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_kernel_router::Server;
use mcp_kernel_stdio::fuzzing::{Framed, read_frames};
use mcp_kernel_stdio::{StdioOptions, serve_io};
use mcp_kernel_wire::code;
use serde_json::Value;
use tokio::io::AsyncWrite;

use crate::runtime::block_on_bounded;

/// The line caps the framing reader is tried with (small, so that short inputs reach the refusals).
const CAPS: [usize; 2] = [16, 256];
/// The read-buffer sizes every cap is tried with; the items must not depend on them.
const BUFFERS: [usize; 3] = [1, 7, 64 * 1024];
/// The most output a session may write before the sink refuses more.
const MAX_OUTPUT: usize = 4 << 20;
/// The bound on one framing pass or one session.
const LIMIT: Duration = Duration::from_secs(5);

/// Checks the framing and serving laws on `data`; panics when one is broken.
pub fn stdio_framing(data: &[u8]) {
    let max_frames = data.len() + 1;
    for cap in CAPS {
        let mut first: Option<Vec<Framed>> = None;
        for buffer in BUFFERS {
            let framed = block_on_bounded("framing", LIMIT, read_frames(data, cap, buffer, max_frames))
                .expect("reading a byte slice cannot fail");
            assert!(framed.len() <= data.len(), "more items than input bytes");
            let mut message_bytes = 0usize;
            for item in &framed {
                match item {
                    Framed::Message(bytes) => {
                        assert!(bytes.len() <= cap, "a message longer than the cap");
                        message_bytes += bytes.len();
                    }
                    Framed::Refused { code, message } => {
                        assert!(
                            *code == code::INVALID_REQUEST || *code == code::PARSE_ERROR,
                            "refused {code}"
                        );
                        assert!(message.len() <= 64, "a refusal message that may carry input");
                    }
                }
            }
            assert!(message_bytes <= data.len(), "more message bytes than input bytes");
            match &first {
                None => first = Some(framed),
                Some(first) => assert_eq!(first, &framed, "framing depends on the read-buffer size {buffer}"),
            }
        }
    }
    serves(data);
}

/// Serves `data` to the fixture and checks every output line.
fn serves(data: &[u8]) {
    static SERVER: OnceLock<Server> = OnceLock::new();
    let server = SERVER.get_or_init(crate::fixture::server).clone();
    let sink = Sink::default();
    let options = StdioOptions::new().max_line_bytes(256).max_in_flight(4);
    let ended = block_on_bounded("serve_io", LIMIT, serve_io(server, data, sink.clone(), options));
    assert!(ended.is_ok(), "the session over a byte slice failed: {ended:?}");
    let output = std::mem::take(&mut *sink.0.lock().unwrap_or_else(PoisonError::into_inner));
    assert!(output.is_empty() || output.ends_with(b"\n"), "the output ends inside a line");
    for line in output.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
        let value: Value = serde_json::from_slice(line).expect("an output line is JSON");
        assert_eq!(value.get("jsonrpc").and_then(Value::as_str), Some("2.0"), "not a JSON-RPC 2.0 line");
    }
}

/// An in-memory output the session writes to, bounded by [`MAX_OUTPUT`].
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Sink {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let mut output = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if output.len() + buf.len() > MAX_OUTPUT {
            return Poll::Ready(Err(io::Error::other("the fuzzing sink is full")));
        }
        output.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
