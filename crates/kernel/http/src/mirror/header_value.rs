//! Reading header values: all of them, as UTF-8, with the `Mcp-Name` / `Mcp-Param-*` encodings.
//!
//! Headers are what gateways, load balancers and firewalls route on; the body is what the server
//! executes. If the two can be read differently, a gateway and the server see different requests
//! (request smuggling). So a header is never read as "the first value": every value of a repeated
//! header is returned and must pass the same rule (`protocol.md` [D-12]). Values are decoded as UTF-8,
//! not as visible ASCII (`HeaderValue::to_str` would refuse a UTF-8 value a proxy passed through),
//! and a value that is not UTF-8 is refused by the header's name, never echoed.
//!
//! The base64 sentinel `=?base64?<B>?=` ([D-18], MCP 2026-07-28 [S-22]) is honoured only in its
//! canonical form: a value that two encoders could spell differently would again let two readers
//! disagree, so a non-canonical value is compared as the raw text it is.
//!
//! [D-12]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [D-18]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
//! [S-22]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::header::AsHeaderName;
use http::{HeaderMap, HeaderValue};
use serde_json::Number;

/// Opening marker of a base64-encoded header value (case-sensitive).
const SENTINEL_OPEN: &str = "=?base64?";
/// Closing marker of a base64-encoded header value.
const SENTINEL_CLOSE: &str = "?=";
/// The largest integer an IEEE double holds exactly (2^53): the bound for an integral f64 body value.
const MAX_EXACT_F64: f64 = 9_007_199_254_740_992.0;

/// A header value that is not valid UTF-8 (the value itself is deliberately not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotUtf8;

/// Every value of one header, each known to be UTF-8 (what [`values`] returns). A header sent once —
/// nearly every one — is held as it is, nothing collected.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Values<'a> {
    /// Absent (`None`) or sent once.
    One(Option<&'a str>),
    /// Sent more than once: every value, in order.
    Many(Vec<&'a str>),
}

impl<'a> Values<'a> {
    /// Whether the header is absent.
    pub(crate) fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// The values, in order, as text.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.as_slice().iter().copied()
    }

    fn as_slice(&self) -> &[&'a str] {
        match self {
            Values::One(one) => one.as_slice(),
            Values::Many(many) => many,
        }
    }
}

/// Every value of header `name`, in order, each checked to be UTF-8 (none when it is absent).
pub(crate) fn values<K: AsHeaderName>(headers: &HeaderMap, name: K) -> Result<Values<'_>, NotUtf8> {
    let mut all = headers.get_all(name).into_iter();
    let Some(first) = all.next() else { return Ok(Values::One(None)) };
    let first = text(first)?;
    let Some(second) = all.next() else { return Ok(Values::One(Some(first))) };
    let mut many = vec![first, text(second)?];
    for value in all {
        many.push(text(value)?);
    }
    Ok(Values::Many(many))
}

/// A header value as text: visible ASCII (checked the cheap way first), else any UTF-8.
fn text(value: &HeaderValue) -> Result<&str, NotUtf8> {
    match value.to_str() {
        Ok(text) => Ok(text),
        Err(_) => std::str::from_utf8(value.as_bytes()).map_err(|_| NotUtf8),
    }
}

/// The text a `mcp-name` or `mcp-param-*` value stands for: decoded when it is canonical base64.
/// True for a value shaped like the base64 sentinel that does not decode canonically to UTF-8.
///
/// Clients MUST encode any value that itself looks like the sentinel ([S-22]), so such a value is
/// malformed: comparing it raw would let a lenient decoder in a gateway read another value.
///
/// [S-22]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
pub(crate) fn is_malformed_sentinel(raw: &str) -> bool {
    raw.starts_with(SENTINEL_OPEN)
        && raw.ends_with(SENTINEL_CLOSE)
        && matches!(decoded(raw), Cow::Borrowed(_))
}

pub(crate) fn decoded(raw: &str) -> Cow<'_, str> {
    let Some(encoded) = raw.strip_prefix(SENTINEL_OPEN).and_then(|rest| rest.strip_suffix(SENTINEL_CLOSE))
    else {
        return Cow::Borrowed(raw);
    };
    let Ok(bytes) = STANDARD.decode(encoded) else {
        return Cow::Borrowed(raw);
    };
    if STANDARD.encode(&bytes) != encoded {
        return Cow::Borrowed(raw);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Cow::Owned(text),
        Err(_) => Cow::Borrowed(raw),
    }
}

/// Whether an integer header value names the same integer as the body number ([D-19]).
///
/// The header must be `-?(0|[1-9][0-9]*)(\.0+)?`; no `+`, leading zeros, exponents, hex or
/// fractions. The body must be an integer: an `i64`/`u64`, or an integral `f64` within ±2^53.
///
/// [D-19]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/protocol/index.html
pub(crate) fn integer_matches(header: &str, body: &Number) -> bool {
    match (canonical_integer(header), body_integer(body)) {
        (Some(header), Some(body)) => header == body,
        _ => false,
    }
}

/// The canonical decimal text (`-0` is `0`) of a header integer, or `None` if it is malformed.
fn canonical_integer(text: &str) -> Option<String> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (digits, fraction) = match unsigned.split_once('.') {
        Some((digits, fraction)) => (digits, Some(fraction)),
        None => (unsigned, None),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    if let Some(fraction) = fraction
        && (fraction.is_empty() || !fraction.bytes().all(|b| b == b'0'))
    {
        return None;
    }
    if negative && digits != "0" { Some(format!("-{digits}")) } else { Some(digits.to_owned()) }
}

/// The decimal text of an integral body number, or `None` for a fraction or an inexact double.
fn body_integer(number: &Number) -> Option<String> {
    if let Some(i) = number.as_i64() {
        return Some(i.to_string());
    }
    if let Some(u) = number.as_u64() {
        return Some(u.to_string());
    }
    let f = number.as_f64()?;
    if f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_EXACT_F64 {
        // Exact: the value is integral and within ±2^53, so it fits an i64 without rounding.
        #[allow(clippy::cast_possible_truncation)]
        let i = f as i64;
        Some(i.to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Number {
        serde_json::from_str(text).expect("a JSON number")
    }

    /// Every value of `name`, collected, or the refusal.
    fn all<'a>(headers: &'a HeaderMap, name: &str) -> Result<Vec<&'a str>, NotUtf8> {
        values(headers, name).map(|values| values.iter().collect())
    }

    #[test]
    fn values_returns_every_value_in_order() {
        let mut headers = HeaderMap::new();
        headers.append("mcp-method", HeaderValue::from_static("a"));
        headers.append("mcp-method", HeaderValue::from_static("b"));
        assert_eq!(all(&headers, "mcp-method"), Ok(vec!["a", "b"]));
        headers.append("mcp-method", HeaderValue::from_static("c\td"));
        assert_eq!(all(&headers, "mcp-method"), Ok(vec!["a", "b", "c\td"]));
        assert_eq!(all(&headers, "mcp-name"), Ok(vec![]));
        assert!(values(&headers, "mcp-name").is_ok_and(|values| values.is_empty()));
        assert!(values(&headers, "mcp-method").is_ok_and(|values| !values.is_empty()));
    }

    #[test]
    fn values_accepts_utf8_and_refuses_other_bytes_in_any_position() {
        let mut headers = HeaderMap::new();
        headers.append("mcp-name", HeaderValue::from_bytes("caf\u{e9}".as_bytes()).unwrap());
        assert_eq!(all(&headers, "mcp-name"), Ok(vec!["caf\u{e9}"]));
        headers.append("mcp-name", HeaderValue::from_bytes(b"\xff\xfe").unwrap());
        assert_eq!(all(&headers, "mcp-name"), Err(NotUtf8));
        headers.append("mcp-name", HeaderValue::from_static("b"));
        assert_eq!(all(&headers, "mcp-name"), Err(NotUtf8), "a bad value before a good one");
    }

    #[test]
    fn sentinel_shaped_values_that_do_not_decode_are_malformed() {
        assert!(is_malformed_sentinel("=?base64?dXMtd2VzdDE?="));
        assert!(is_malformed_sentinel("=?base64?dXMtd2VzdDF=?="));
        assert!(!is_malformed_sentinel("=?base64?dXMtd2VzdDE=?="));
        assert!(!is_malformed_sentinel("us-west1"));
    }

    #[test]
    fn decoded_honours_only_canonical_utf8_base64() {
        assert_eq!(decoded("=?base64?SGVsbG8sIOS4lueVjA==?="), "Hello, 世界");
        assert_eq!(decoded("=?base64??="), "");
        // Non-canonical trailing bits, missing padding, a bad alphabet, non-UTF-8 bytes: raw.
        for raw in ["=?base64?SGVsbG9=?=", "=?base64?SGVsbG8?=", "=?base64?SGVs*G8=?=", "=?base64?//4=?="] {
            assert_eq!(decoded(raw), raw);
        }
        // The markers are case-sensitive and must both be present.
        for raw in ["=?BASE64?SGVsbG8=?=", "=?base64?SGVsbG8=", "SGVsbG8=?=", "=?base64?="] {
            assert_eq!(decoded(raw), raw);
        }
    }

    #[test]
    fn integer_matches_follows_the_d19_grammar() {
        assert!(integer_matches("42", &number("42")));
        assert!(integer_matches("42.0", &number("42")));
        assert!(integer_matches("42", &number("42.0")));
        assert!(integer_matches("-7.000", &number("-7")));
        assert!(integer_matches("-0", &number("0")));
        assert!(integer_matches("0", &number("-0.0")));
        assert!(integer_matches("18446744073709551615", &number("18446744073709551615")));
        assert!(integer_matches("9007199254740992", &number("9007199254740992.0")));
        for bad in ["042", "+42", "4.2e1", "0x2a", "42.", "42.5", ".0", "", "-", "--42", " 42", "42 "] {
            assert!(!integer_matches(bad, &number("42")), "{bad:?}");
        }
        assert!(!integer_matches("42", &number("42.5")));
        assert!(!integer_matches("43", &number("42")));
        assert!(!integer_matches("18014398509481984", &number("18014398509481984.0")));
    }
}
