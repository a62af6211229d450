//! The protocol decision: HTTP/2 with prior knowledge, or HTTP/1.1.
//!
//! Threat: a client that sends part of the 24-byte HTTP/2 preface (`PRI * HTTP/2.0…`) and stops, or
//! drips an HTTP/1.1 `POST` one byte at a time (its first byte, `P`, is also the preface's). A decision
//! made by peeking at the socket cannot wait for *more* bytes: the bytes already there keep the socket
//! readable, so a peek loop wakes again at once and spins (or sleeps and polls). Here the bytes are
//! read, not peeked: each wake-up is a new byte, and the deadline the caller gives (the one that
//! started at accept) bounds the whole wait. The bytes read are handed back, to be replayed to hyper
//! in front of the rest of the stream ([`super::io::ConnIo`]).

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;

/// The HTTP/2 connection preface (RFC 9113 §3.4).
pub(crate) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The protocol a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// Anything that is not the HTTP/2 preface (hyper's HTTP/1.1 parser judges it).
    Http1,
    /// The whole HTTP/2 preface arrived.
    Http2,
}

/// Reads until the bytes either are the whole preface or cannot begin it, before `deadline`.
///
/// Returns the protocol and the bytes read (at most 24), or `None` when the connection closes, fails
/// or misses the deadline first.
pub(crate) async fn decide<S: AsyncRead + Unpin>(
    stream: &mut S,
    deadline: Instant,
) -> Option<(Protocol, Vec<u8>)> {
    let mut read = [0u8; PREFACE.len()];
    let mut filled = 0;
    loop {
        let more = tokio::time::timeout_at(deadline, stream.read(&mut read[filled..])).await;
        match more {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return None,
            Ok(Ok(n)) => filled += n,
        }
        if read[..filled] != PREFACE[..filled] {
            return Some((Protocol::Http1, read[..filled].to_vec()));
        }
        if filled == PREFACE.len() {
            return Some((Protocol::Http2, read.to_vec()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[tokio::test]
    async fn the_whole_preface_is_http2_and_its_bytes_are_kept() {
        let mut input: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00";
        let (protocol, read) = decide(&mut input, soon()).await.expect("decided");
        assert_eq!(protocol, Protocol::Http2);
        assert_eq!(read, PREFACE);
        assert_eq!(input, b"\x00\x00", "nothing past the preface is read");
    }

    #[tokio::test]
    async fn a_request_line_is_http1_at_its_first_differing_byte() {
        let (client, mut server) = tokio::io::duplex(64);
        let mut client = client;
        client.write_all(b"P").await.unwrap();
        let decision = tokio::spawn(async move { decide(&mut server, soon()).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        client.write_all(b"OST / HTTP/1.1\r\n").await.unwrap();
        let (protocol, read) = decision.await.unwrap().expect("decided");
        assert_eq!(protocol, Protocol::Http1);
        assert!(read.starts_with(b"PO"), "{read:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_partial_preface_waits_only_until_the_deadline() {
        let (mut client, mut server) = tokio::io::duplex(64);
        client.write_all(&PREFACE[..16]).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        assert_eq!(decide(&mut server, deadline).await, None);
        assert!(Instant::now() >= deadline);
    }

    #[tokio::test]
    async fn a_closed_connection_decides_nothing() {
        let mut input: &[u8] = b"PRI * HT";
        assert_eq!(decide(&mut input, soon()).await, None);
    }
}
