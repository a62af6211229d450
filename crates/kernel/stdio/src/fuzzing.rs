//! Not API: a window on the internal framing reader for the fuzz targets (`tools/fuzz/`), behind the `fuzzing`
//! feature. Nothing here is covered by semver; do not use it outside fuzzing and its corpus replay.

use crate::framing::{Frame, FrameReader};

/// One item the framing reader produced (a copy of the internal `Frame`, minus end of input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framed {
    /// The bytes of one message (a line without its `\n`/`\r\n`, or a frame body).
    Message(Vec<u8>),
    /// A refusal before parsing, with its JSON-RPC error code and message.
    Refused {
        /// The JSON-RPC error code.
        code: i64,
        /// The error message.
        message: String,
    },
}

/// Frames `input` with a line cap of `cap` bytes, read through a buffer of `buffer` bytes (at least 1),
/// stopping after `max_frames` items; returns the items in order, or the read error's text.
pub async fn read_frames(
    input: &[u8],
    cap: usize,
    buffer: usize,
    max_frames: usize,
) -> Result<Vec<Framed>, String> {
    let reader = tokio::io::BufReader::with_capacity(buffer.max(1), input);
    let mut frames = FrameReader::new(reader, cap);
    let mut out = Vec::new();
    while out.len() < max_frames {
        match frames.next().await.map_err(|error| error.to_string())? {
            Frame::Eof => break,
            Frame::Message(bytes) => out.push(Framed::Message(bytes)),
            Frame::Refused(error) => out.push(Framed::Refused { code: error.code, message: error.message }),
        }
    }
    Ok(out)
}
