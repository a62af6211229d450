//! The two list headers: `tracestate` (W3C Trace Context level 1, §3.3) and `baggage` (W3C Baggage),
//! each checked member by member against its grammar and kept normalized (members joined by `,`,
//! without the optional white space around them), or dropped whole.

use std::borrow::Cow;
use std::fmt;

use super::{MAX_BAGGAGE_BYTES, MAX_BAGGAGE_MEMBERS, MAX_TRACESTATE_BYTES, MAX_TRACESTATE_MEMBERS};

/// Optional white space around list members (RFC 9110 `OWS`: spaces and tabs).
fn trim_ows(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !matches!(b, b' ' | b'\t')).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !matches!(b, b' ' | b'\t')).map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// The values of one list field joined with `,`, or `None` when no value came at all, or when together
/// they are over `cap` bytes (the separators counted).
fn joined<T: AsRef<[u8]>>(values: impl IntoIterator<Item = T>, cap: usize) -> Option<Vec<u8>> {
    let mut all: Vec<u8> = Vec::new();
    let mut any = false;
    for value in values {
        let value = value.as_ref();
        let extra = value.len() + usize::from(any);
        if all.len() + extra > cap {
            return None;
        }
        if any {
            all.push(b',');
        }
        all.extend_from_slice(value);
        any = true;
    }
    any.then_some(all)
}

/// Bytes that passed a grammar of printable ASCII, as a `str`.
fn ascii(bytes: Vec<u8>) -> Option<Box<str>> {
    String::from_utf8(bytes).ok().map(String::into_boxed_str)
}

/// A valid `tracestate`: at most 32 `key=value` members, keys unique, at most 512 bytes as sent.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TraceState(Box<str>);

impl TraceState {
    /// Parses one `tracestate` value (see [`TraceState::parse_all`]).
    pub fn parse(value: impl AsRef<[u8]>) -> Option<TraceState> {
        TraceState::parse_all([value])
    }

    /// Parses every value of a `tracestate` field as one list, or `None` when it is over
    /// [`MAX_TRACESTATE_BYTES`](super::MAX_TRACESTATE_BYTES) or
    /// [`MAX_TRACESTATE_MEMBERS`](super::MAX_TRACESTATE_MEMBERS), repeats a key, or has a member that
    /// is not `key=value` by level 1's grammar: a key of lowercase letters, digits and `_-*/`, starting
    /// with a letter, at most 256 long, or `tenant@system` (a tenant of at most 241 starting with a
    /// letter or digit, a system of at most 14 starting with a letter); a value of 1 to 256 printable
    /// characters without `,` or `=`, not ending in a space. Empty members are allowed and dropped.
    pub fn parse_all<T: AsRef<[u8]>>(values: impl IntoIterator<Item = T>) -> Option<TraceState> {
        let all = joined(values, MAX_TRACESTATE_BYTES)?;
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut normalized = Vec::with_capacity(all.len());
        for member in all.split(|b| *b == b',').map(trim_ows).filter(|m| !m.is_empty()) {
            let at = member.iter().position(|b| *b == b'=')?;
            let (key, value) = (&member[..at], &member[at + 1..]);
            if !is_state_key(key) || !is_state_value(value) || keys.contains(&key) {
                return None;
            }
            keys.push(key);
            if keys.len() > MAX_TRACESTATE_MEMBERS {
                return None;
            }
            if !normalized.is_empty() {
                normalized.push(b',');
            }
            normalized.extend_from_slice(member);
        }
        ascii(normalized).map(TraceState)
    }

    /// The list, normalized: members joined by `,` (may be empty: a valid `tracestate` of no member).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The members, in order, as `(key, value)`.
    pub fn members(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.split(',').filter(|m| !m.is_empty()).filter_map(|m| m.split_once('='))
    }
}

impl fmt::Debug for TraceState {
    /// The member count only: a `tracestate` holds other vendors' data.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceState({} members)", self.members().count())
    }
}

fn is_state_key_char(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-' | b'*' | b'/')
}

/// A word of `first` then up to `most - 1` key characters.
fn is_state_word(word: &[u8], first: fn(u8) -> bool, most: usize) -> bool {
    match word.split_first() {
        Some((head, rest)) => {
            word.len() <= most && first(*head) && rest.iter().all(|c| is_state_key_char(*c))
        }
        None => false,
    }
}

fn is_state_key(key: &[u8]) -> bool {
    let lower = |c: u8| c.is_ascii_lowercase();
    let lower_or_digit = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match key.iter().position(|b| *b == b'@') {
        None => is_state_word(key, lower, 256),
        Some(at) => {
            is_state_word(&key[..at], lower_or_digit, 241) && is_state_word(&key[at + 1..], lower, 14)
        }
    }
}

fn is_state_value(value: &[u8]) -> bool {
    let nblk = |c: u8| matches!(c, 0x21..=0x2b | 0x2d..=0x3c | 0x3e..=0x7e);
    match value.last() {
        Some(last) => value.len() <= 256 && nblk(*last) && value.iter().all(|c| *c == b' ' || nblk(*c)),
        None => false,
    }
}

/// A valid W3C `baggage`: at most 64 members, at most 8192 bytes as sent.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Baggage(Box<str>);

/// One member of a [`Baggage`]: its key, its value as sent (percent-encoded) and its properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaggageMember<'a> {
    /// The key (an RFC 9110 token).
    pub key: &'a str,
    /// The value as sent, percent-encoded (see [`BaggageMember::value`]).
    pub raw_value: &'a str,
    /// The properties after the value, as `;`-separated text (empty when there are none).
    pub properties: &'a str,
}

impl BaggageMember<'_> {
    /// The value, percent-decoded (checked UTF-8 when the baggage was parsed).
    pub fn value(&self) -> Cow<'_, str> {
        match percent_decode(self.raw_value.as_bytes()) {
            Some(Cow::Owned(bytes)) => Cow::Owned(String::from_utf8(bytes).unwrap_or_default()),
            _ => Cow::Borrowed(self.raw_value),
        }
    }
}

impl Baggage {
    /// Parses one `baggage` value (see [`Baggage::parse_all`]).
    pub fn parse(value: impl AsRef<[u8]>) -> Option<Baggage> {
        Baggage::parse_all([value])
    }

    /// Parses every value of a `baggage` field as one list, or `None` when it is over
    /// [`MAX_BAGGAGE_BYTES`](super::MAX_BAGGAGE_BYTES) or [`MAX_BAGGAGE_MEMBERS`](super::MAX_BAGGAGE_MEMBERS),
    /// or has a member that is not `key=value` followed by `;property` or `;key=value` properties by
    /// W3C Baggage's grammar: keys are tokens, values printable ASCII without space, `"`, `,`, `;` or
    /// `\`, each `%` starts an escape of two hex digits and the decoded value is UTF-8.
    pub fn parse_all<T: AsRef<[u8]>>(values: impl IntoIterator<Item = T>) -> Option<Baggage> {
        let all = joined(values, MAX_BAGGAGE_BYTES)?;
        let mut normalized = Vec::with_capacity(all.len());
        for (count, member) in all.split(|b| *b == b',').enumerate() {
            if count >= MAX_BAGGAGE_MEMBERS {
                return None;
            }
            if count > 0 {
                normalized.push(b',');
            }
            let mut parts = member.split(|b| *b == b';').map(trim_ows);
            let (key, Some(value)) = pair(parts.next()?)? else { return None };
            if !is_token(key) || !is_baggage_value(value) {
                return None;
            }
            normalized.extend_from_slice(key);
            normalized.push(b'=');
            normalized.extend_from_slice(value);
            for property in parts {
                let (key, value) = pair(property)?;
                if !is_token(key) || value.is_some_and(|v| !is_baggage_value(v)) {
                    return None;
                }
                normalized.push(b';');
                normalized.extend_from_slice(key);
                if let Some(value) = value {
                    normalized.push(b'=');
                    normalized.extend_from_slice(value);
                }
            }
        }
        ascii(normalized).map(Baggage)
    }

    /// The list, normalized: members joined by `,`, properties by `;`, without optional white space.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The members, in order.
    pub fn members(&self) -> impl Iterator<Item = BaggageMember<'_>> {
        self.0.split(',').filter_map(|member| {
            let (pair, properties) = member.split_once(';').unwrap_or((member, ""));
            let (key, raw_value) = pair.split_once('=')?;
            Some(BaggageMember { key, raw_value, properties })
        })
    }
}

impl fmt::Debug for Baggage {
    /// The member count only: baggage may hold what its sender knows of the user.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Baggage({} members)", self.members().count())
    }
}

/// `key OWS "=" OWS value` as `(key, Some(value))`, or a bare `key` as `(key, None)`.
fn pair(text: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    match text.iter().position(|b| *b == b'=') {
        Some(at) => Some((trim_ows(&text[..at]), Some(trim_ows(&text[at + 1..])))),
        None if !text.is_empty() => Some((text, None)),
        None => None,
    }
}

/// An RFC 9110 token: one or more `tchar`.
fn is_token(text: &[u8]) -> bool {
    !text.is_empty() && text.iter().all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(c))
}

/// `*baggage-octet` whose escapes decode to UTF-8.
fn is_baggage_value(value: &[u8]) -> bool {
    let octet = |c: u8| matches!(c, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e);
    value.iter().all(|c| octet(*c))
        && match percent_decode(value) {
            Some(Cow::Owned(bytes)) => std::str::from_utf8(&bytes).is_ok(),
            Some(Cow::Borrowed(_)) => true,
            None => false,
        }
}

/// The percent-decoded bytes (borrowed when there is no escape), or `None` for a `%` not followed by
/// two hex digits.
fn percent_decode(value: &[u8]) -> Option<Cow<'_, [u8]>> {
    if !value.contains(&b'%') {
        return Some(Cow::Borrowed(value));
    }
    let mut out = Vec::with_capacity(value.len());
    let mut rest = value;
    while let Some((&c, tail)) = rest.split_first() {
        if c == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            let (high, low) = (hex(*tail.first()?)?, hex(*tail.get(1)?)?);
            out.push((high * 16 + low) as u8);
            rest = &tail[2..];
        } else {
            out.push(c);
            rest = tail;
        }
    }
    Some(Cow::Owned(out))
}
