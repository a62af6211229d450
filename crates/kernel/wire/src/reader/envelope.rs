//! A message read straight into its [`Envelope`], without the top-level object's map.
//!
//! [`read_message`](super::read_message) followed by [`Envelope::from_object`] builds the message's
//! top-level map only to take it apart at once: each of its keys allocated and hashed (SipHash, the
//! `preserve_order` map's hasher), the map's two tables allocated, and then all of it freed, with the
//! `"2.0"` of `jsonrpc` and the method's name. [`read_envelope`] keeps the members an envelope keeps
//! as the decoder reaches them: a key is compared where it lies in the bytes (copied only if it holds
//! an escape), `jsonrpc` and a known `method` are read without a copy, `params._meta` is set aside as
//! `params` is read (not put in its map to be found by hash and shifted out again), and only `id`,
//! `params` and the values an envelope drops are decoded into [`Value`]s, by the reader's own seed,
//! under the same bounds (`docs/performance.md`, "Fourteenth round", counts what it saves).
//!
//! The refusals and their order are the reader's (see [`super`]): a repeated top-level key is noted
//! out of band, like any other, and the body is read to its end; a top-level value that is not an
//! object is decoded whole, then refused by its kind. Top-level keys other than the seven an envelope
//! reads are remembered (in a set made at the first of them) only to find a repeat.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::{JsonKind, MAX_DEPTH, ReadError, ValueSeed, refusal_of_undecodable};
use crate::message::Members;
use crate::{Envelope, JSONRPC_VERSION, Method, RequestMeta};

/// Reads one JSON-RPC message into its [`Envelope`]: the same bounds, refusals and envelope as
/// [`read_message`](super::read_message) and then [`Envelope::from_object`], in one pass and without
/// the top-level map.
pub fn read_envelope(bytes: &[u8]) -> Result<Envelope, ReadError> {
    let duplicate = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let seed = TopSeed { value: ValueSeed::new(&duplicate) };
    let decoded = seed.deserialize(&mut deserializer).and_then(|top| deserializer.end().map(|()| top));
    match (decoded, duplicate.into_inner()) {
        (Ok(_), Some(key)) => Err(ReadError::DuplicateKey(key)),
        (Ok(Top::Message(members)), None) => Ok(members.into_envelope()),
        (Ok(Top::Other(kind)), None) => Err(ReadError::NotAnObject(kind)),
        (Err(_), _) => Err(refusal_of_undecodable(bytes)),
    }
}

/// What the top level held: a message's members, or the kind of a value that is not an object.
// Made and taken apart once a message, on the stack: boxing the members would allocate for every read.
#[allow(clippy::large_enum_variant)]
enum Top {
    Message(Members),
    Other(JsonKind),
}

/// The top-level value; an object is read member by member into [`Members`].
struct TopSeed<'a> {
    /// The reader's seed at the top level (depth 0), for everything decoded whole.
    value: ValueSeed<'a, MAX_DEPTH>,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Top;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Top, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = Top;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON-RPC message")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
        Ok(Top::Other(JsonKind::Bool))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
        Ok(Top::Other(JsonKind::Number))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
        Ok(Top::Other(JsonKind::Number))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
        Ok(Top::Other(JsonKind::Number))
    }

    fn visit_str<E>(self, _: &str) -> Result<Top, E> {
        Ok(Top::Other(JsonKind::String))
    }

    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::Other(JsonKind::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        // Decoded whole, under the same bounds: its syntax, depth and repeats are refused first.
        self.value.visit_seq(seq).map(|_| Top::Other(JsonKind::Array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Top, A::Error> {
        let inner = self.value.inner()?;
        let mut members = Members::default();
        let mut seen = Seen::default();
        while let Some(key) = access.next_key_seed(KeySeed)? {
            if !seen.first(&key) {
                self.value.note_repeat(&key);
                let _repeated: Value = access.next_value_seed(inner)?;
                continue;
            }
            match &*key {
                "jsonrpc" => {
                    let text = access.next_value_seed(StrSeed { value: inner })?;
                    members.jsonrpc = text.is_some_and(|text| text == JSONRPC_VERSION);
                }
                "id" => members.id = Some(access.next_value_seed(inner)?),
                "method" => {
                    members.method_sent = true;
                    let name = access.next_value_seed(StrSeed { value: inner })?;
                    members.method = name
                        .map(|name| Method::known(&name).unwrap_or_else(|| Method::Other(name.into_owned())));
                }
                "params" => {
                    let (params, meta) = access.next_value_seed(ParamsSeed { value: inner })?;
                    (members.params, members.meta) = (Some(params), Some(meta));
                }
                other => {
                    // Decoded for its bounds, then dropped: an envelope keeps only that it was there.
                    let _dropped: Value = access.next_value_seed(inner)?;
                    match other {
                        "_meta" => members.top_level_meta = true,
                        "result" => members.has_result = true,
                        "error" => members.has_error = true,
                        _ => {}
                    }
                }
            }
        }
        Ok(Top::Message(members))
    }
}

/// The top-level keys met so far, to find a repeat: the seven an envelope reads by bit, any other in
/// a set made when the first of them comes.
#[derive(Default)]
struct Seen {
    known: u8,
    others: Option<HashSet<String>>,
}

impl Seen {
    /// Whether `key` is met for the first time (and now remembered).
    fn first(&mut self, key: &str) -> bool {
        let bit = match key {
            "jsonrpc" => 1,
            "id" => 2,
            "method" => 4,
            "params" => 8,
            "_meta" => 16,
            "result" => 32,
            "error" => 64,
            other => return self.others.get_or_insert_with(HashSet::new).insert(other.to_owned()),
        };
        let first = self.known & bit == 0;
        self.known |= bit;
        first
    }
}

/// `params`, with an object's `_meta` set aside as it is read (rather than put in the map, then
/// found by hash and shifted out of it); any other value decoded whole, with no `_meta`.
struct ParamsSeed<'a> {
    value: ValueSeed<'a, MAX_DEPTH>,
}

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_> {
    type Value = (Value, RequestMeta);

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed<'_> {
    type Value = (Value, RequestMeta);

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(value), RequestMeta::default()))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        self.value.visit_i64(value).map(|value| (value, RequestMeta::default()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        self.value.visit_u64(value).map(|value| (value, RequestMeta::default()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        self.value.visit_f64(value).map(|value| (value, RequestMeta::default()))
    }

    fn visit_str<E>(self, value: &str) -> Result<Self::Value, E> {
        Ok((Value::String(value.to_owned()), RequestMeta::default()))
    }

    fn visit_string<E>(self, value: String) -> Result<Self::Value, E> {
        Ok((Value::String(value), RequestMeta::default()))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, RequestMeta::default()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.value.visit_seq(seq).map(|value| (value, RequestMeta::default()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let inner = self.value.inner()?;
        let (mut params, mut meta) = (Map::new(), None);
        while let Some(key) = access.next_key_seed(KeySeed)? {
            let repeated = if key == "_meta" {
                let first = meta.is_none();
                if first {
                    meta = Some(access.next_value_seed(inner)?);
                }
                !first
            } else {
                match params.entry(key.as_ref()) {
                    Entry::Vacant(slot) => {
                        slot.insert(access.next_value_seed(inner)?);
                        false
                    }
                    Entry::Occupied(_) => true,
                }
            };
            if repeated {
                self.value.note_repeat(&key);
                let _repeated: Value = access.next_value_seed(inner)?;
            }
        }
        Ok((Value::Object(params), RequestMeta::new(meta)))
    }
}

/// A member's key, borrowed from the bytes unless it holds an escape.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Cow<'de, str>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E>(self, key: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(key.to_owned()))
    }

    fn visit_string<E>(self, key: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(key))
    }
}

/// A member whose string is read where it lies (copied only if it holds an escape); any other value
/// is decoded whole by the reader's seed, for its bounds, and read as `None`.
struct StrSeed<'a> {
    value: ValueSeed<'a, MAX_DEPTH>,
}

impl<'de> DeserializeSeed<'de> for StrSeed<'_> {
    type Value = Option<Cow<'de, str>>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrSeed<'_> {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(text)))
    }

    fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(text)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.value.visit_seq(seq).map(|_| None)
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
        self.value.visit_map(access).map(|_| None)
    }
}

#[cfg(test)]
mod tests;
