//! JSON the server encoded itself, held as text until it is written.
//!
//! A result written once and dropped is cheaper encoded straight to bytes than built as a
//! [`serde_json::Value`] first. Such bytes are made by serde_json's serializer ([`Encoded::to_json`])
//! or come from a [`RawValue`], so they are valid JSON by construction: the writers copy them as they
//! are, without reading them again.

use serde::Serialize;
use serde_json::value::RawValue;

/// JSON written by serde_json's serializer (compact) or taken from a [`RawValue`]: valid by
/// construction, written as it is.
///
/// [`Encoded::to_json`] starts its buffer at the size the caller expects, so that a large result is
/// written into one allocation instead of a buffer doubled past it and shrunk again: each doubling
/// copies what was written, and a megabyte buffer doubled to two and shrunk back is mapped afresh by
/// glibc's allocator on every call. A guess short enough that the buffer doubled anyway, leaving more
/// than a quarter of it and more than 2 KiB unused, is shrunk once written, so that the spare
/// room is not held for as long as the answer is; a small answer keeps its few hundred spare bytes
/// rather than pay a reallocation and a copy (about 1,300 instructions of a small HTTP `tools/call`,
/// `docs/performance.md`, "Fourteenth round") to give them back a moment before the answer is written
/// and dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded(String);

/// The unused room of an encoded buffer kept rather than given back (see [`Encoded`]): more than a
/// result's usual slack (the router's guess adds 512 bytes to a result's texts), less than a page.
const SPARE_KEPT: usize = 2048;

impl Encoded {
    /// `value` as compact JSON, in a buffer that starts with room for `capacity` bytes (it grows if
    /// the guess is short; a guess the allocator cannot meet is not taken, never a panic).
    pub fn to_json<T: Serialize + ?Sized>(value: &T, capacity: usize) -> serde_json::Result<Self> {
        let mut bytes = Vec::new();
        // Only a guess: a capacity the allocator refuses leaves the buffer to grow as it is written.
        let _ = bytes.try_reserve_exact(capacity);
        serde_json::to_writer(&mut bytes, value)?;
        let spare = bytes.capacity() - bytes.len();
        if spare > SPARE_KEPT && spare > bytes.len() / 4 {
            bytes.shrink_to_fit();
        }
        // serde_json writes UTF-8; checked here rather than assumed (no `unsafe` in this crate).
        String::from_utf8(bytes)
            .map(Self)
            .map_err(|_| serde::ser::Error::custom("the encoder wrote invalid UTF-8"))
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// The JSON text, with the buffer it was written into.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The same JSON as a [`RawValue`], for a serializer other than the transports' (read again to
    /// make one: its unchecked constructor is `unsafe`, which this crate forbids). An error only for
    /// text that is not JSON, which a [`RawValue`] or serde_json's serializer never gives.
    pub fn to_raw_value(&self) -> serde_json::Result<Box<RawValue>> {
        RawValue::from_string(self.0.clone())
    }
}

impl From<Box<RawValue>> for Encoded {
    fn from(raw: Box<RawValue>) -> Self {
        Self(String::from(Box::<str>::from(raw)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_large_result_is_written_into_one_buffer_of_the_expected_size() {
        let text = "x".repeat(1 << 20);
        let value = json!({"content": [{"type": "text", "text": text}], "isError": false});
        let expected = serde_json::to_string(&value).unwrap();
        let encoded = Encoded::to_json(&value, expected.len()).unwrap();
        assert_eq!(encoded.get(), expected);
        let written = encoded.into_string();
        assert_eq!(written.capacity(), expected.len(), "never regrown, never shrunk");
    }

    #[test]
    fn a_short_guess_that_doubled_is_not_held_with_its_spare_room() {
        let value = json!({"text": "y".repeat(100_000)});
        let written = Encoded::to_json(&value, 64).unwrap().into_string();
        assert_eq!(written, serde_json::to_string(&value).unwrap());
        assert!(written.capacity() - written.len() <= written.len() / 4, "{}", written.capacity());
    }

    #[test]
    fn a_small_answer_keeps_its_spare_room_instead_of_reallocating() {
        let value = json!({"content": [{"type": "text", "text": "hello"}], "isError": false});
        let written = Encoded::to_json(&value, 5 + 512).unwrap().into_string();
        assert_eq!(written, serde_json::to_string(&value).unwrap());
        assert_eq!(written.capacity(), 517, "the guess's buffer, not shrunk to {}", written.len());
    }

    #[test]
    fn a_guess_past_what_can_be_allocated_is_not_a_panic() {
        let encoded = Encoded::to_json(&json!([1]), usize::MAX).unwrap();
        assert_eq!(encoded.get(), "[1]");
    }

    #[test]
    fn a_short_guess_still_writes_every_byte() {
        let value = json!({"a": "é\"\\\n", "b": [1, 2.5, null]});
        let encoded = Encoded::to_json(&value, 0).unwrap();
        assert_eq!(encoded.get(), serde_json::to_string(&value).unwrap());
        assert_eq!(encoded.to_raw_value().unwrap().get(), encoded.get());
        let raw = serde_json::value::to_raw_value(&value).unwrap();
        assert_eq!(Encoded::from(raw), encoded);
    }
}
