//! The bounded body read (`protocol.md` [D-5], [D-7]).
//!
//! Threats: a slow client that drips a body a byte (or an empty HTTP/2 DATA frame) at a time to hold a
//! task and its buffer forever; a client that sends, or declares, more than the server will ever
//! accept. One deadline covers the whole body, whatever the framing: every frame is awaited with only
//! the time that remains. The buffer never holds more than the cap: the frame that would cross it is
//! refused, so at most the cap plus one frame is ever in memory. A declared `Content-Length` over the
//! cap is refused before a byte is read.
//!
//! [D-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html

use bytes::{Buf, Bytes};
use http::header::{CONNECTION, CONTENT_LENGTH, HeaderValue};
use http::request::Parts;
use http::{HeaderMap, Version};
use http_body::Body;
use http_body_util::BodyExt;
use tokio::time::Instant;

use crate::body::budget::{Full, Reserved};
use crate::response::body::ResponseBody;

/// Why the body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadFailure {
    /// More than the cap (413).
    TooLarge,
    /// The deadline passed before the body was complete (408).
    TimedOut,
    /// The connection failed while reading (400).
    Failed,
    /// The body budget, or the client's share of it, has no room for the bytes that arrived (503).
    Busy(Full),
}

/// The instant a deadline of `timeout` from `start` falls on; a timeout too large to represent is as
/// good as none, and a year is the same in practice.
pub(crate) fn deadline_after(start: Instant, timeout: std::time::Duration) -> Instant {
    start.checked_add(timeout).unwrap_or_else(|| start + std::time::Duration::from_secs(365 * 86_400))
}

/// True when any `Content-Length` value declares more than `cap` bytes.
pub(crate) fn declares_more_than(headers: &HeaderMap, cap: usize) -> bool {
    headers.get_all(CONTENT_LENGTH).iter().any(|value| {
        std::str::from_utf8(value.as_bytes())
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            .is_none_or(|length| length > cap as u64)
    })
}

/// True when the head declares a body: a `transfer-encoding`, or a `Content-Length` other than 0.
pub(crate) fn declares_body(headers: &HeaderMap) -> bool {
    headers.contains_key(http::header::TRANSFER_ENCODING) || declares_more_than(headers, 0)
}

/// Marks an answer given without reading the request's body: an HTTP/1.x connection whose request
/// declared one is closed after it (the unread bytes would be read as the next request); HTTP/2, where
/// a stream simply ends, and a request without a body keep theirs.
pub(crate) fn close_when_body_unread(response: &mut http::Response<ResponseBody>, parts: &Parts) {
    if declares_body(&parts.headers) && parts.version < Version::HTTP_2 {
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
}

/// The most bytes `body` can hold, at most `cap`: what it declares (hyper's exact length for a
/// `Content-Length`, zero for an HTTP/1.1 request with no length and no `transfer-encoding`), or its
/// upper bound, or `cap` when nothing bounds it (an HTTP/2 request without `content-length`).
pub(crate) fn most_bytes<B: Body>(body: &B, cap: usize) -> usize {
    body.size_hint().upper().map_or(cap, |upper| usize::try_from(upper).unwrap_or(cap).min(cap))
}

/// The capacity a body's buffer grows to when `need` bytes must fit and it holds `capacity`: double
/// what it had, at least what must fit, never past the declared length (or the cap without one). So
/// a buffer is never more than twice the bytes that arrived: holding budget takes sending bytes — a
/// byte buys a byte — and a body that arrives whole in one frame (most do) is one exact allocation.
fn next_capacity(capacity: usize, need: usize, declared: Option<usize>, cap: usize) -> usize {
    let limit = declared.filter(|&declared| need <= declared).unwrap_or(cap);
    need.max(capacity.saturating_mul(2)).min(limit)
}

/// Reads the whole body before `deadline`, refusing it once it exceeds `cap` bytes. Its buffer is
/// allocated as bytes arrive — nothing for a head alone — and `reserved` is grown to the buffer's
/// capacity before each allocation (refused as [`ReadFailure::Busy`] when the budget or the client's
/// share has no room).
pub(crate) async fn read_bounded<B>(
    body: B,
    cap: usize,
    deadline: Instant,
    reserved: &mut Reserved,
) -> Result<Bytes, ReadFailure>
where
    B: Body,
{
    let mut body = std::pin::pin!(body);
    // The buffer doubles as bytes arrive, up to the declared length (already checked against the
    // cap), which it then fits exactly.
    let declared = body.size_hint().exact().map(|n| usize::try_from(n).unwrap_or(cap).min(cap));
    let mut buffer: Vec<u8> = Vec::new();
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_elapsed) => return Err(ReadFailure::TimedOut),
            Ok(None) => {
                // Spare capacity would stay allocated behind the `Bytes` once the charge shrinks to
                // the bytes that arrived (a body shorter than its doubled buffer).
                if buffer.len() < buffer.capacity() {
                    buffer.shrink_to_fit();
                }
                return Ok(Bytes::from(buffer));
            }
            Ok(Some(Err(_))) => return Err(ReadFailure::Failed),
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(mut data) = frame.into_data() {
            let need = buffer.len() + data.remaining();
            if need > cap {
                return Err(ReadFailure::TooLarge);
            }
            if need > buffer.capacity() {
                let capacity = next_capacity(buffer.capacity(), need, declared, cap);
                reserved.grow_to(capacity).map_err(ReadFailure::Busy)?;
                buffer.reserve_exact(capacity - buffer.len());
            }
            while data.has_remaining() {
                let chunk = data.chunk();
                let n = chunk.len();
                buffer.extend_from_slice(chunk);
                data.advance(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Client;
    use http::HeaderValue;
    use http_body_util::{Full, StreamBody};
    use std::convert::Infallible;
    use std::time::Duration;

    fn who() -> Client {
        Client::Unknown
    }

    fn room() -> Reserved {
        crate::body::budget::BodyBudget::new(1 << 20, 1 << 20).open(who())
    }

    #[tokio::test]
    async fn bytes_past_the_budget_are_refused_busy() {
        let budget = crate::body::budget::BodyBudget::new(50, 50);
        let mut reserved = budget.open(who());
        let body = Full::new(Bytes::from(vec![b'x'; 60]));
        assert_eq!(
            read_bounded(body, 100, far(), &mut reserved).await,
            Err(ReadFailure::Busy(crate::body::budget::Full::Budget))
        );
        assert_eq!(reserved.len(), 0, "a refused body holds nothing");
        let body = Full::new(Bytes::from(vec![b'x'; 40]));
        assert_eq!(read_bounded(body, 100, far(), &mut reserved).await.map(|b| b.len()), Ok(40));
        assert_eq!(reserved.len(), 40, "the charge covers the buffer, the declared length exactly");
    }

    #[tokio::test]
    async fn a_head_whose_body_never_arrives_is_charged_nothing() {
        let budget = crate::body::budget::BodyBudget::new(100, 100);
        let mut reserved = budget.open(who());
        let silent =
            StreamBody::new(futures_util::stream::pending::<Result<http_body::Frame<Bytes>, Infallible>>());
        let soon = Instant::now() + Duration::from_millis(20);
        assert_eq!(read_bounded(silent, 100, soon, &mut reserved).await, Err(ReadFailure::TimedOut));
        assert_eq!(reserved.len(), 0);
    }

    #[test]
    fn a_buffer_doubles_as_bytes_arrive_up_to_the_declared_length_or_the_cap() {
        let cap = 1 << 20;
        assert_eq!(next_capacity(0, 1, Some(700_000), cap), 1, "a byte buys a byte");
        assert_eq!(next_capacity(0, 300, Some(300), cap), 300, "a body in one frame: one exact buffer");
        assert_eq!(next_capacity(1, 2, Some(700_000), cap), 2);
        assert_eq!(next_capacity(65_536, 65_537, Some(700_000), cap), 131_072);
        assert_eq!(next_capacity(524_288, 524_289, Some(700_000), cap), 700_000, "never past the declared");
        assert_eq!(next_capacity(600_000, 600_001, None, cap), cap, "never past the cap");
        assert_eq!(next_capacity(0, 200_000, None, cap), 200_000, "at least what must fit");
        for received in [1, 10, 1_000, 70_000, 500_000, cap] {
            let mut capacity = 0;
            for need in (1..=received).step_by(997).chain([received]) {
                if need > capacity {
                    capacity = next_capacity(capacity, need, None, cap);
                }
            }
            assert!(capacity <= 2 * received, "a buffer of {capacity} for {received} bytes");
        }
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[tokio::test]
    async fn reads_a_body_up_to_exactly_the_cap() {
        let body = Full::new(Bytes::from(vec![b'x'; 100]));
        assert_eq!(read_bounded(body, 100, far(), &mut room()).await.unwrap().len(), 100);
        let body = Full::new(Bytes::from(vec![b'x'; 101]));
        assert_eq!(read_bounded(body, 100, far(), &mut room()).await, Err(ReadFailure::TooLarge));
    }

    #[tokio::test(start_paused = true)]
    async fn one_deadline_covers_every_frame() {
        // Ten frames, each arriving 100 ms after the last: no single wait is long, the whole is.
        let frames = futures_util::stream::unfold(0, |n| async move {
            if n == 10 {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            Some((Ok::<_, Infallible>(http_body::Frame::data(Bytes::from_static(b"x"))), n + 1))
        });
        let deadline = Instant::now() + Duration::from_millis(550);
        assert_eq!(
            read_bounded(StreamBody::new(frames), 100, deadline, &mut room()).await,
            Err(ReadFailure::TimedOut)
        );
    }

    #[test]
    fn a_body_is_checked_for_what_it_can_hold_and_the_cap_only_when_unbounded() {
        assert_eq!(most_bytes(&Full::new(Bytes::from_static(b"12345")), 100), 5);
        assert_eq!(most_bytes(&Full::new(Bytes::from(vec![0u8; 500])), 100), 100);
        assert_eq!(most_bytes(&http_body_util::Empty::<Bytes>::new(), 100), 0);
        let unbounded =
            StreamBody::new(futures_util::stream::empty::<Result<http_body::Frame<Bytes>, Infallible>>());
        assert_eq!(most_bytes(&unbounded, 100), 100);
    }

    #[test]
    fn a_declared_length_over_the_cap_or_unreadable_is_refused() {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_LENGTH, HeaderValue::from_static("100"));
        assert!(!declares_more_than(&h, 100));
        h.insert(CONTENT_LENGTH, HeaderValue::from_static("33554432"));
        assert!(declares_more_than(&h, 1_048_576));
        h.insert(CONTENT_LENGTH, HeaderValue::from_static("ten"));
        assert!(declares_more_than(&h, 100));
        assert!(!declares_more_than(&HeaderMap::new(), 100));
    }
}
