//! The one writer: every response, every notification of a request that may be sent them (progress,
//! logs), every line of an open listen and every notification of a legacy session becomes one whole line
//! on the output, and nothing else ever does.

use std::io;

use mcp_kernel_wire::Response;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

/// How many queued lines one batch writes before it flushes.
const BATCH: usize = 64;

/// One encoded response: its compact JSON and the terminating `\n`.
#[derive(Debug)]
pub(crate) struct Line(Vec<u8>);

impl Line {
    /// Encodes a response as one line.
    pub(crate) fn encode(response: &Response) -> Self {
        let mut bytes = response.to_bytes();
        bytes.push(b'\n');
        Self(bytes)
    }

    /// Encodes a notification (progress, a log message, a listen's or a legacy session's) — or a
    /// request the server sends the client — as one line.
    pub(crate) fn notification(notification: &serde_json::Value) -> Self {
        let mut bytes = serde_json::to_vec(notification).unwrap_or_default();
        bytes.push(b'\n');
        Self(bytes)
    }

    /// The line's bytes (for tests).
    #[cfg(test)]
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Writes every line received, whole, in arrival order: all queued lines, then one flush.
///
/// Returns `Ok` once every sender is gone and the last batch is flushed, or the first output error.
pub(crate) async fn write_lines<W: AsyncWrite + Unpin>(
    output: W,
    mut lines: mpsc::Receiver<Line>,
) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(crate::framing::CHUNK, output);
    let mut batch = Vec::with_capacity(BATCH);
    while lines.recv_many(&mut batch, BATCH).await > 0 {
        for Line(bytes) in batch.drain(..) {
            output.write_all(&bytes).await?;
        }
        output.flush().await?;
    }
    output.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_kernel_wire::ErrorObject;
    use serde_json::{Value, json};

    #[test]
    fn writes_each_response_as_one_line_and_flushes() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        let written = runtime.block_on(async {
            let (tx, rx) = mpsc::channel(4);
            let mut out = Vec::new();
            tx.send(Line::encode(&Response::result(json!(1), json!({})))).await.unwrap();
            tx.send(Line::encode(&Response::error(Value::Null, ErrorObject::parse_error()))).await.unwrap();
            drop(tx);
            write_lines(&mut out, rx).await.expect("a vec accepts everything");
            out
        });
        let text = String::from_utf8(written).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(text.ends_with('\n'));
    }
}
