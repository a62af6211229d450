//! An incremental reader of a `text/event-stream` body: bytes in as they arrive, whole events and
//! comment lines out. Only what a listen stream carries is kept: `data:` lines (joined by newlines)
//! and comments (lines starting with `:`, the keep-alives); other fields are skipped. A line longer
//! than `MAX_LINE_BYTES` is an error, so a server that never ends a line cannot grow the buffer.

/// The longest line read (a notification is a few hundred bytes).
const MAX_LINE_BYTES: usize = 1 << 20;

/// One item of the stream.
#[derive(Debug, PartialEq)]
pub(crate) enum Item {
    /// A comment line (`: keep-alive`).
    Comment,
    /// The data of one event.
    Event(String),
}

/// The part of the stream read so far that is not a whole line yet, and the event being built.
#[derive(Default)]
pub(crate) struct SseReader {
    pending: Vec<u8>,
    data: Option<String>,
}

impl SseReader {
    /// Takes `bytes` and returns the items they complete, in order.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<Item>, String> {
        self.pending.extend_from_slice(bytes);
        let mut items = Vec::new();
        let mut start = 0;
        while let Some(end) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let mut line = &self.pending[start..start + end];
            start += end + 1;
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            let line =
                std::str::from_utf8(line).map_err(|_| "an event-stream line is not UTF-8".to_owned())?;
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    items.push(Item::Event(data));
                }
            } else if line.starts_with(':') {
                items.push(Item::Comment);
            } else if let Some(rest) = line.strip_prefix("data:") {
                let value = rest.strip_prefix(' ').unwrap_or(rest);
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_owned()),
                }
            }
        }
        self.pending.drain(..start);
        if self.pending.len() > MAX_LINE_BYTES {
            return Err(format!("an event-stream line longer than {MAX_LINE_BYTES} bytes"));
        }
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_comments_are_read_across_chunks() {
        let mut reader = SseReader::default();
        assert_eq!(reader.push(b"data: {\"a\"").unwrap(), []);
        assert_eq!(reader.push(b":1}\n").unwrap(), []);
        assert_eq!(
            reader.push(b"\n: keep-alive\n\n").unwrap(),
            [Item::Event("{\"a\":1}".into()), Item::Comment]
        );
        assert_eq!(
            reader.push(b"event: message\r\ndata: x\r\ndata: y\r\n\r\n").unwrap(),
            [Item::Event("x\ny".into())]
        );
        assert_eq!(reader.push(b"\n\n").unwrap(), [], "empty events are not events");
    }

    #[test]
    fn an_endless_line_is_an_error() {
        let mut reader = SseReader::default();
        assert!(reader.push(&vec![b'x'; MAX_LINE_BYTES + 1]).is_err());
        assert!(SseReader::default().push(b"data: \xff\n").is_err());
    }
}
