//! W3C Trace Context (level 1) and W3C Baggage as a request carries them, parsed strictly and written
//! once for every transport: MCP `2026-07-28` reserves the `params._meta` keys `traceparent`,
//! `tracestate` and `baggage` for them (`basic/index`, "OpenTelemetry trace context"), and an HTTP
//! client may send the headers of the same names. [`TraceCarrier`] is what one source carried;
//! [`TraceCarrier::or`] puts two sources in their order (the core: `_meta` first, then the headers).
//!
//! Threat: every byte here is the client's. A value is kept only when it parses; one that does not is
//! dropped whole, silently, and never stored, so no part of it can reach a response, a log line or a
//! span field. What is kept is bounded and re-encoded: a trace id, a parent id and the flags (25 bytes),
//! a `tracestate` of at most [`MAX_TRACESTATE_BYTES`] and [`MAX_TRACESTATE_MEMBERS`], a `baggage` of at
//! most [`MAX_BAGGAGE_BYTES`] and [`MAX_BAGGAGE_MEMBERS`], both of printable ASCII that passed their
//! grammar. A `tracestate` travels with the `traceparent` it came with and is dropped with it.
//!
//! ```
//! use mcp_kernel_wire::trace::TraceParent;
//!
//! let parent = TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01").unwrap();
//! assert_eq!(parent.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
//! assert_eq!(parent.parent_id().to_string(), "00f067aa0ba902b7");
//! assert!(parent.is_sampled());
//! // Uppercase hex, an all-zero id, a wrong length: not a traceparent.
//! assert!(TraceParent::parse("00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01").is_none());
//! assert!(TraceParent::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_none());
//! assert!(TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-").is_none());
//! ```

mod list;
#[cfg(test)]
mod tests;

use std::fmt;

use serde_json::Value;

pub use list::{Baggage, BaggageMember, TraceState};

use crate::message::RequestMeta;

/// The `_meta` key and HTTP header of the W3C `traceparent`.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key and HTTP header of the W3C `tracestate`.
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` key and HTTP header of the W3C `baggage`.
pub const BAGGAGE: &str = "baggage";
/// The longest `tracestate` kept, in bytes as sent (all values of the header together); a longer one
/// is dropped whole.
pub const MAX_TRACESTATE_BYTES: usize = 512;
/// The most `tracestate` members kept (W3C level 1: 32); a list with more is dropped whole.
pub const MAX_TRACESTATE_MEMBERS: usize = 32;
/// The longest `baggage` kept, in bytes as sent (W3C Baggage: 8192); a longer one is dropped whole.
pub const MAX_BAGGAGE_BYTES: usize = 8192;
/// The most `baggage` members kept (W3C Baggage: 64); a list with more is dropped whole.
pub const MAX_BAGGAGE_MEMBERS: usize = 64;

/// The `sampled` bit of the trace flags.
const SAMPLED: u8 = 0x01;
/// The length of a version `00` `traceparent`, and the least of any version.
const TRACEPARENT_LEN: usize = 55;

/// A 16-byte trace id, never all zero; shown as 32 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId([u8; 16]);

impl TraceId {
    /// The id's bytes.
    pub fn to_bytes(self) -> [u8; 16] {
        self.0
    }
}

/// An 8-byte span id (a `traceparent`'s parent id), never all zero; shown as 16 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId([u8; 8]);

impl SpanId {
    /// The id's bytes.
    pub fn to_bytes(self) -> [u8; 8] {
        self.0
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    bytes.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Debug for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceId({self})")
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl fmt::Debug for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SpanId({self})")
    }
}

/// A valid W3C `traceparent`: the caller's trace id, its span's id (the parent of the span that
/// continues the trace here) and the trace flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceParent {
    version: u8,
    trace_id: TraceId,
    parent_id: SpanId,
    flags: u8,
}

impl TraceParent {
    /// Parses a `traceparent` value by W3C Trace Context level 1, or `None`:
    ///
    /// * `version-traceid-parentid-flags`, every field lowercase hex (`0-9a-f`): a version of 2 digits
    ///   other than `ff`, a trace id of 32 not all `0`, a parent id of 16 not all `0`, flags of 2;
    /// * version `00` is exactly 55 bytes;
    /// * a later version is at least 55 bytes, and after the flags comes either the end or a `-`
    ///   (what follows it is that version's and is not read); of its flags only `sampled` is kept.
    ///
    /// Nothing is trimmed: a value with surrounding white space is not a `traceparent`.
    pub fn parse(value: impl AsRef<[u8]>) -> Option<TraceParent> {
        let bytes = value.as_ref();
        if bytes.len() < TRACEPARENT_LEN {
            return None;
        }
        let version = hex_byte(bytes[0], bytes[1])?;
        if version == 0xff || bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let trace_id: [u8; 16] = hex_array(&bytes[3..35])?;
        let parent_id: [u8; 8] = hex_array(&bytes[36..52])?;
        let flags = hex_byte(bytes[53], bytes[54])?;
        let rest_ok = match version {
            0 => bytes.len() == TRACEPARENT_LEN,
            _ => bytes.len() == TRACEPARENT_LEN || bytes[TRACEPARENT_LEN] == b'-',
        };
        if !rest_ok || trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        let flags = if version == 0 { flags } else { flags & SAMPLED };
        Some(TraceParent { version, trace_id: TraceId(trace_id), parent_id: SpanId(parent_id), flags })
    }

    /// The version the value was written in (`0` for `00`).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The trace id.
    pub fn trace_id(&self) -> TraceId {
        self.trace_id
    }

    /// The caller's span id: the parent of the span that continues the trace.
    pub fn parent_id(&self) -> SpanId {
        self.parent_id
    }

    /// The trace flags (of a later version's, only `sampled`).
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// Whether the caller sampled the trace (flag `01`).
    pub fn is_sampled(&self) -> bool {
        self.flags & SAMPLED != 0
    }
}

impl fmt::Display for TraceParent {
    /// The value as this crate would send it: version `00` (a later version is written as `00`, which is
    /// what W3C asks of a vendor that passes it on).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "00-{}-{}-{:02x}", self.trace_id, self.parent_id, self.flags)
    }
}

/// One lowercase hex digit's value.
fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

fn hex_byte(high: u8, low: u8) -> Option<u8> {
    Some(hex_digit(high)? << 4 | hex_digit(low)?)
}

/// `2 * N` lowercase hex digits as `N` bytes.
fn hex_array<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    let mut out = [0; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = hex_byte(pair[0], pair[1])?;
    }
    Some(out)
}

/// A trace to continue: a valid `traceparent` and the `tracestate` that came with it, if that was
/// valid too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    parent: TraceParent,
    state: Option<TraceState>,
}

impl TraceContext {
    /// A context of `parent` and, when given, its `state`.
    pub fn new(parent: TraceParent, state: Option<TraceState>) -> TraceContext {
        TraceContext { parent, state }
    }

    /// The caller's `traceparent`.
    pub fn parent(&self) -> &TraceParent {
        &self.parent
    }

    /// The caller's `tracestate`, when it sent a valid one.
    pub fn state(&self) -> Option<&TraceState> {
        self.state.as_ref()
    }
}

/// What one source of a request carried of W3C Trace Context and Baggage, each part validated (an
/// invalid part is absent). `TraceCarrier::default()` carries nothing. One pointer wide, allocating only
/// when something valid came, so that a request without trace context pays for none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceCarrier(Option<Box<Carried>>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Carried {
    context: Option<TraceContext>,
    baggage: Option<Baggage>,
    /// A second source's valid `traceparent` of another span, which lost to this one.
    linked: Option<TraceParent>,
}

impl TraceCarrier {
    fn of(context: Option<TraceContext>, baggage: Option<Baggage>, linked: Option<TraceParent>) -> Self {
        match (&context, &baggage) {
            (None, None) => TraceCarrier(None),
            _ => TraceCarrier(Some(Box::new(Carried { context, baggage, linked }))),
        }
    }

    /// What a request's `params._meta` carries: its `traceparent`, `tracestate` and `baggage` members,
    /// each a string or ignored. The members are found in one pass over `_meta`.
    pub fn from_meta(meta: &RequestMeta) -> TraceCarrier {
        let Some(Value::Object(meta)) = meta.value() else { return TraceCarrier::default() };
        let (mut parent, mut state, mut baggage) = (None, None, None);
        for (key, value) in meta {
            let slot = match key.as_str() {
                TRACEPARENT => &mut parent,
                TRACESTATE => &mut state,
                BAGGAGE => &mut baggage,
                _ => continue,
            };
            *slot = value.as_str();
        }
        if parent.is_none() && baggage.is_none() {
            return TraceCarrier::default();
        }
        TraceCarrier::from_values(parent, state, baggage)
    }

    /// What one source carries, each field given as every value it had (an HTTP header may be sent more
    /// than once): a `traceparent` sent more than once is invalid; the values of `tracestate` and of
    /// `baggage` are each one list, joined in order (RFC 9110 §5.3), and bounded as a whole.
    ///
    /// ```
    /// use mcp_kernel_wire::trace::TraceCarrier;
    ///
    /// let carrier = TraceCarrier::from_values(
    ///     ["00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"],
    ///     ["rojo=00f067aa0ba902b7", "congo=t61rcWkgMzE"],
    ///     ["userId=alice"],
    /// );
    /// let context = carrier.context().expect("a valid traceparent");
    /// assert_eq!(context.state().map(|s| s.as_str()), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
    /// assert_eq!(carrier.baggage().map(|b| b.as_str()), Some("userId=alice"));
    /// ```
    pub fn from_values<P, S, B>(
        traceparent: impl IntoIterator<Item = P>,
        tracestate: impl IntoIterator<Item = S>,
        baggage: impl IntoIterator<Item = B>,
    ) -> TraceCarrier
    where
        P: AsRef<[u8]>,
        S: AsRef<[u8]>,
        B: AsRef<[u8]>,
    {
        let mut parents = traceparent.into_iter();
        let parent = match (parents.next(), parents.next()) {
            (Some(only), None) => TraceParent::parse(only),
            _ => None,
        };
        let context = parent.map(|parent| TraceContext { parent, state: TraceState::parse_all(tracestate) });
        TraceCarrier::of(context, Baggage::parse_all(baggage), None)
    }

    /// The trace to continue, when a valid `traceparent` came.
    pub fn context(&self) -> Option<&TraceContext> {
        self.0.as_ref()?.context.as_ref()
    }

    /// The valid `baggage`, when one came.
    pub fn baggage(&self) -> Option<&Baggage> {
        self.0.as_ref()?.baggage.as_ref()
    }

    /// When two sources each carried a valid `traceparent` of different spans ([`TraceCarrier::or`]),
    /// the one that lost: the span continuing the trace may link to it.
    pub fn linked(&self) -> Option<&TraceParent> {
        self.0.as_ref()?.linked.as_ref()
    }

    /// Whether nothing valid came.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// This source first, then `fallback`: the trace context (`traceparent` with its `tracestate`) of
    /// the first source whose `traceparent` is valid, and the first valid `baggage`. When both carried a
    /// valid `traceparent` of different spans, the fallback's is kept as [`TraceCarrier::linked`].
    pub fn or(self, fallback: TraceCarrier) -> TraceCarrier {
        let (mine, theirs) = match (self.0, fallback.0) {
            (None, theirs) => return TraceCarrier(theirs),
            (mine, None) => return TraceCarrier(mine),
            (Some(mine), Some(theirs)) => (*mine, *theirs),
        };
        let (context, linked) = match (mine.context, theirs.context) {
            (Some(mine_context), Some(their_context)) => {
                let linked = (their_context.parent != mine_context.parent).then_some(their_context.parent);
                (Some(mine_context), linked.or(mine.linked))
            }
            (Some(mine_context), None) => (Some(mine_context), mine.linked),
            (None, their_context) => (their_context, theirs.linked),
        };
        TraceCarrier::of(context, mine.baggage.or(theirs.baggage), linked)
    }
}
