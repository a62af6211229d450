//! Sealing `requestState`: the host's sealer, and [`HmacSealer`], the one this package ships.
//!
//! Threat: `requestState` travels through the client, which may read it, keep it, replay it or change
//! it (MCP [S-50]). A sealer makes any change detectable: what it opens is exactly what it sealed, or
//! nothing. What the sealed bytes are bound to (method, parameters, expiry) is the core's business
//! (`state.rs`); the sealer only protects bytes. The package holds no key: the host supplies it, and
//! with it the list of keys a state may have been sealed under while the host rotates them. A key list
//! is bounded (at most [`HmacSealer::MAX_KEYS`]), so a refused state never costs more than one MAC per
//! key, and no key is ever printed or carried by an error.
//!
//! [S-50]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Protects opaque bytes on their way through the client and back.
///
/// `open(&seal(p)) == Some(p)` must hold, and `open` must return `None` for every string it did not
/// produce (with the same key). A host that needs confidentiality too supplies an AEAD sealer here.
pub trait StateSealer: Send + Sync + 'static {
    /// Seals `payload` into a string that can travel as JSON.
    fn seal(&self, payload: &[u8]) -> String;
    /// The payload of a string this sealer produced; `None` for anything else.
    fn open(&self, sealed: &str) -> Option<Vec<u8>>;
}

/// The key given to [`HmacSealer::new`] is shorter than [`HmacSealer::MIN_KEY_LEN`] bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an HMAC-SHA-256 request-state key must be at least 32 bytes")]
pub struct KeyTooShort;

/// Where a key stands in the list given to [`HmacSealer::with_keys`]: the current key, or the previous
/// key at this index (from 0, in the order given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPosition {
    /// The key states are sealed with.
    Current,
    /// The previous key at this index (from 0).
    Previous(usize),
}

impl std::fmt::Display for KeyPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Current => f.write_str("the current key"),
            Self::Previous(index) => write!(f, "previous key {index}"),
        }
    }
}

/// Why a key list was refused. It says where the faulty key stands, never what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A key is shorter than [`HmacSealer::MIN_KEY_LEN`] bytes.
    #[error("request-state key list: {0} is shorter than 32 bytes")]
    TooShort(KeyPosition),
    /// More than [`HmacSealer::MAX_KEYS`] keys in all (the current key and at most seven previous ones).
    #[error("request-state key list: more than 8 keys (the current key and at most 7 previous ones)")]
    TooMany,
    /// The key at the first position repeats the key at the second.
    #[error("request-state key list: {0} repeats {1}")]
    Repeated(KeyPosition, KeyPosition),
    /// A key given as text ([`HmacSealer::from_hex_keys`]) is not an even number of hex digits.
    #[error("request-state key list: {0} is not hexadecimal")]
    NotHex(KeyPosition),
    /// The text given to [`HmacSealer::from_hex_keys`] holds no key at all.
    #[error("request-state key list: no key given")]
    NoKey,
}

impl From<KeyTooShort> for KeyError {
    fn from(_: KeyTooShort) -> Self {
        Self::TooShort(KeyPosition::Current)
    }
}

/// HMAC-SHA-256 over the payload: `base64url(payload) "." base64url(tag)`, sealed under the current key
/// and opened under the current key or any previous one.
///
/// It protects integrity only: the client can read the payload (the core's envelope — method,
/// parameter digest, expiry, the keys of the input requests — and the host's state, base64). Put
/// nothing secret in a state, or give an AEAD [`StateSealer`] of your own. No key is ever printed:
/// `Debug` shows how many keys are listed, and a [`KeyError`] says only where a faulty key stands.
///
/// # One key across N instances
///
/// Stateless instances behind a load balancer need no affinity: a retry may reach any instance, and
/// each opens what any other sealed as long as they list the same keys. Draw one key of at least 32
/// bytes from a cryptographically secure random source, hand the same bytes to every instance (a
/// secret store, an environment variable, a file), and build each instance's sealer from them:
///
/// ```
/// use mcp_kernel_router::sealing::{HmacSealer, StateSealer};
///
/// let key = [7u8; 32]; // in production: the host's own random bytes, the same on every instance
/// let instance_a = HmacSealer::new(&key)?;
/// let instance_b = HmacSealer::new(&key)?;
/// let sealed = instance_a.seal(b"state");
/// assert_eq!(instance_b.open(&sealed).as_deref(), Some(&b"state"[..]));
/// # Ok::<(), mcp_kernel_router::sealing::KeyTooShort>(())
/// ```
///
/// # Rotating the key
///
/// [`HmacSealer::with_keys`] takes the current key, which seals, and up to seven previous keys, which
/// only open. Rotating from `old` to `new` on a fleet takes three rollouts; each must have reached every
/// instance before the next begins:
///
/// 1. **Add** `new` as a previous key everywhere: `with_keys(old, [new])`. Every instance still seals
///    with `old`, so nothing in flight changes; instances already rolled out would also accept `new`.
/// 2. **Promote** `new` everywhere: `with_keys(new, [old])`. Instances rolled out seal with `new`; the
///    ones not yet rolled out list `new` from step 1 and accept those states, and every instance still
///    accepts `old`. No retry in flight fails. (Skipping step 1 is what would fail them: an instance
///    that knows only `old` refuses a state sealed with `new`.)
/// 3. **Retire** `old` once the last state sealed under it has expired: wait the state lifetime
///    ([`crate::ServerBuilder::request_state_ttl`], [`crate::sealing::DEFAULT_REQUEST_STATE_TTL`] = ten minutes
///    by default), plus the clock skew between instances, after step 2 reached the last instance; then
///    deploy `HmacSealer::new(new)`. A state is sealed again under the current key on every round, and
///    its expiry never moves later than the first round's, so by then every state in flight is sealed
///    under `new`. A client still holding a state sealed under `old` (it had expired anyway) is refused
///    as if it were tampered with: the same -32602 "requestState failed verification for this request",
///    and it starts the request again without a state.
///
/// With [`HmacSealer::from_hex_keys`] the three rollouts are edits of one list, current key first:
/// `"OLD NEW"`, then `"NEW OLD"`, then `"NEW"`. After a key leaks, do not wait: deploy the new key
/// alone everywhere at once; retries in flight (and, during that rollout, states sealed by instances
/// on the other key) are refused as tampered, and their clients start over.
///
/// # Threat model
///
/// Anyone who holds a listed key — current or previous — can forge a state every instance listing it
/// accepts: a previous key is as strong as the current one until it is retired, so retire it as soon
/// as step 3 allows. A state is bound by the core to its method, parameters and expiry (a forged or
/// changed one is refused before dispatch), but it is not bound to a principal, nor single-use: that
/// is the host's. Opening costs at most one HMAC per listed key (at most [`HmacSealer::MAX_KEYS`]),
/// each tag compared in constant time; the current key is tried first, so a state sealed under it costs
/// one. Which position matched is all the timing can tell, and the sender of a valid state knows it.
///
/// # Format
///
/// The sealed format is the one of 0.3, `base64url(payload).base64url(tag)`, with no key id: a state
/// sealed by a 0.3 instance opens on an upgraded one listing the same key, and a 0.3 instance opens
/// what an upgraded one seals under its key, so a version upgrade can roll out like a rotation. The
/// cost of having no key id is the one HMAC per listed key above, bounded by the list's length.
#[derive(Clone)]
pub struct HmacSealer {
    /// The key states are sealed under, and tried first.
    current: Hmac<Sha256>,
    /// The keys states are also opened under, in the order given.
    previous: Box<[Hmac<Sha256>]>,
}

/// The longest sealed string [`HmacSealer::open`] decodes; anything longer is refused unread.
const MAX_SEALED_LEN: usize = 64 * 1024;
/// The length of an HMAC-SHA-256 tag.
const TAG_LEN: usize = 32;

impl HmacSealer {
    /// The shortest key accepted: 32 bytes, the output size of SHA-256.
    pub const MIN_KEY_LEN: usize = 32;
    /// The most keys a sealer lists: the current key and at most seven previous ones.
    pub const MAX_KEYS: usize = 8;

    /// A sealer keyed with `key` (at least 32 bytes) alone.
    pub fn new(key: &[u8]) -> Result<Self, KeyTooShort> {
        Ok(Self { current: mac(key).ok_or(KeyTooShort)?, previous: Box::default() })
    }

    /// A sealer that seals under `current` and opens what was sealed under `current` or any of
    /// `previous` (tried in that order); see "Rotating the key" above.
    ///
    /// Refused: more than [`Self::MAX_KEYS`] keys in all, a key shorter than [`Self::MIN_KEY_LEN`]
    /// bytes, a key listed twice.
    ///
    /// ```
    /// use mcp_kernel_router::sealing::{HmacSealer, KeyError, KeyPosition, StateSealer};
    ///
    /// let (old, new) = ([1u8; 32], [2u8; 32]);
    /// let before = HmacSealer::new(&old)?;
    /// let promoted = HmacSealer::with_keys(&new, [&old])?;
    /// assert!(promoted.open(&before.seal(b"state")).is_some());
    ///
    /// let retired = HmacSealer::new(&new)?;
    /// assert!(retired.open(&before.seal(b"state")).is_none());
    ///
    /// assert_eq!(
    ///     HmacSealer::with_keys(&new, [&old[..], &[3u8; 16][..]]).unwrap_err(),
    ///     KeyError::TooShort(KeyPosition::Previous(1))
    /// );
    /// # Ok::<(), KeyError>(())
    /// ```
    pub fn with_keys(
        current: &[u8],
        previous: impl IntoIterator<Item = impl AsRef<[u8]>>,
    ) -> Result<Self, KeyError> {
        let previous = bounded(previous, HmacSealer::MAX_KEYS - 1)?;
        let listed: Vec<&[u8]> = std::iter::once(current).chain(previous.iter().map(AsRef::as_ref)).collect();
        if let Some(short) = listed.iter().position(|key| key.len() < Self::MIN_KEY_LEN) {
            return Err(KeyError::TooShort(position(short)));
        }
        for (index, key) in listed.iter().enumerate() {
            if let Some(first) = listed[..index].iter().position(|earlier| earlier == key) {
                return Err(KeyError::Repeated(position(index), position(first)));
            }
        }
        let mac_at = |index: usize| mac(listed[index]).ok_or(KeyError::TooShort(position(index)));
        Ok(Self { current: mac_at(0)?, previous: (1..listed.len()).map(mac_at).collect::<Result<_, _>>()? })
    }

    /// A sealer from a list of hex-encoded keys, the current key first, then the previous ones,
    /// separated by ASCII whitespace or commas: the shape of one environment variable or of a file with
    /// one key per line. The rules of [`Self::with_keys`] apply, and a key that is not an even number
    /// of hex digits is refused ([`KeyError::NotHex`]); the error never holds the text.
    ///
    /// ```
    /// use mcp_kernel_router::sealing::{HmacSealer, KeyError, StateSealer};
    ///
    /// let (old, new) = ("11".repeat(32), "22".repeat(32));
    /// // What a host reads from its environment or a file, e.g. `std::env::var("STATE_KEYS")`.
    /// let before = HmacSealer::from_hex_keys(&old)?;
    /// let promoted = HmacSealer::from_hex_keys(&format!("{new}\n{old}\n"))?;
    /// assert!(promoted.open(&before.seal(b"state")).is_some());
    /// assert_eq!(HmacSealer::from_hex_keys(" \n").unwrap_err(), KeyError::NoKey);
    /// # Ok::<(), KeyError>(())
    /// ```
    pub fn from_hex_keys(text: &str) -> Result<Self, KeyError> {
        let items = text.split(|c: char| c == ',' || c.is_ascii_whitespace()).filter(|item| !item.is_empty());
        let keys = bounded(items, HmacSealer::MAX_KEYS)?;
        let keys = keys
            .iter()
            .enumerate()
            .map(|(index, item)| hex(item).ok_or(KeyError::NotHex(position(index))))
            .collect::<Result<Vec<_>, _>>()?;
        let (current, previous) = keys.split_first().ok_or(KeyError::NoKey)?;
        Self::with_keys(current, previous)
    }
}

/// A MAC keyed with `key`, or `None` for a key shorter than [`HmacSealer::MIN_KEY_LEN`].
fn mac(key: &[u8]) -> Option<Hmac<Sha256>> {
    if key.len() < HmacSealer::MIN_KEY_LEN {
        return None;
    }
    Hmac::<Sha256>::new_from_slice(key).ok()
}

/// The items of a key list, at most `limit` of them: one more is [`KeyError::TooMany`], and the items
/// past it are never read.
fn bounded<T>(items: impl IntoIterator<Item = T>, limit: usize) -> Result<Vec<T>, KeyError> {
    let mut kept = Vec::new();
    for item in items {
        if kept.len() == limit {
            return Err(KeyError::TooMany);
        }
        kept.push(item);
    }
    Ok(kept)
}

/// The position of the `index`-th key of a list whose first key is the current one.
fn position(index: usize) -> KeyPosition {
    match index {
        0 => KeyPosition::Current,
        n => KeyPosition::Previous(n - 1),
    }
}

/// The bytes of an even number of hex digits (either case).
fn hex(text: &str) -> Option<Vec<u8>> {
    let digit = |byte: u8| char::from(byte).to_digit(16);
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks_exact(2).map(|pair| u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()).collect()
}

impl std::fmt::Debug for HmacSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HmacSealer {{ keys: {}, .. }}", 1 + self.previous.len())
    }
}

impl StateSealer for HmacSealer {
    fn seal(&self, payload: &[u8]) -> String {
        let tag = self.current.clone().chain_update(payload).finalize().into_bytes();
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(tag))
    }

    fn open(&self, sealed: &str) -> Option<Vec<u8>> {
        if sealed.len() > MAX_SEALED_LEN {
            return None;
        }
        let (payload, tag) = sealed.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // A tag of another length (a truncated one) is refused before any MAC is computed.
        if tag.len() != TAG_LEN {
            return None;
        }
        // One MAC per listed key at most, each compared with the tag in constant time.
        let verifies = |key: &Hmac<Sha256>| {
            #[cfg(test)]
            tests::count_mac();
            key.clone().chain_update(&payload).verify_slice(&tag).is_ok()
        };
        std::iter::once(&self.current).chain(self.previous.iter()).any(verifies).then_some(payload)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// How many MACs `open` computed on this thread.
        static MACS: Cell<usize> = const { Cell::new(0) };
    }

    /// Counts one MAC computed by `open`.
    pub(super) fn count_mac() {
        MACS.with(|macs| macs.set(macs.get() + 1));
    }

    /// What `sealer.open(sealed)` returns, and how many MACs it took.
    fn open_counting(sealer: &HmacSealer, sealed: &str) -> (Option<Vec<u8>>, usize) {
        MACS.with(|macs| macs.set(0));
        let opened = sealer.open(sealed);
        (opened, MACS.with(Cell::get))
    }

    fn key(byte: u8) -> [u8; 32] {
        [byte; 32]
    }

    fn sealer(byte: u8) -> HmacSealer {
        HmacSealer::new(&key(byte)).unwrap()
    }

    fn hex_of(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn what_is_sealed_opens_and_nothing_else_does() {
        let s = sealer(7);
        let sealed = s.seal(b"payload");
        assert_eq!(s.open(&sealed).as_deref(), Some(&b"payload"[..]));
        assert_eq!(s.open(&format!("{sealed}-TAMPERED")), None);
        let mut flipped = sealed.clone().into_bytes();
        flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
        assert_eq!(s.open(&String::from_utf8(flipped).unwrap()), None);
        assert_eq!(sealer(8).open(&sealed), None);
        let (payload, tag) = sealed.split_once('.').unwrap();
        assert_eq!(s.open(&format!("{payload}.{}", &tag[..tag.len() - 2])), None);
        assert_eq!(s.open(payload), None);
        assert_eq!(s.open(""), None);
    }

    #[test]
    fn keys_shorter_than_32_bytes_are_refused() {
        assert_eq!(HmacSealer::new(&[1; 31]).unwrap_err(), KeyTooShort);
        assert!(HmacSealer::new(&[1; 64]).is_ok());
        assert_eq!(format!("{:?}", sealer(9)), "HmacSealer { keys: 1, .. }");
    }

    #[test]
    fn oversized_sealed_strings_are_refused_unread() {
        assert_eq!(sealer(1).open(&"A".repeat(MAX_SEALED_LEN + 1)), None);
    }

    #[test]
    fn the_sealed_format_of_0_3_is_kept() {
        // HMAC-SHA-256 under [7; 32] over "payload", computed apart from this crate.
        let sealed_by_0_3 = "cGF5bG9hZA.Ptsv8pmbZgoaLIZZ1ldFr7JNe7WSSFUYh0D8_9bejxs";
        assert_eq!(sealer(7).seal(b"payload"), sealed_by_0_3);
        let rotated = HmacSealer::with_keys(&key(8), [key(7)]).unwrap();
        assert_eq!(rotated.open(sealed_by_0_3).as_deref(), Some(&b"payload"[..]));
    }

    #[test]
    fn seals_under_the_current_key_only() {
        let rotated = HmacSealer::with_keys(&key(2), [key(1)]).unwrap();
        let sealed = rotated.seal(b"p");
        assert_eq!(sealer(2).open(&sealed).as_deref(), Some(&b"p"[..]));
        assert_eq!(sealer(1).open(&sealed), None);
        assert_eq!(sealed, sealer(2).seal(b"p"));
    }

    #[test]
    fn opens_under_the_current_key_or_any_previous_key_in_any_order() {
        for rotated in [
            HmacSealer::with_keys(&key(3), [key(1), key(2)]).unwrap(),
            HmacSealer::with_keys(&key(3), [key(2), key(1)]).unwrap(),
        ] {
            for byte in [1, 2, 3] {
                assert_eq!(rotated.open(&sealer(byte).seal(b"p")).as_deref(), Some(&b"p"[..]), "{byte}");
            }
            assert_eq!(rotated.open(&sealer(4).seal(b"p")), None);
        }
        let no_previous = HmacSealer::with_keys(&key(3), std::iter::empty::<&[u8]>()).unwrap();
        assert_eq!(no_previous.open(&sealer(3).seal(b"p")).as_deref(), Some(&b"p"[..]));
        assert_eq!(no_previous.open(&sealer(1).seal(b"p")), None);
    }

    #[test]
    fn refuses_a_state_sealed_under_a_retired_key() {
        let sealed = sealer(1).seal(b"p");
        assert!(HmacSealer::with_keys(&key(2), [key(1)]).unwrap().open(&sealed).is_some());
        assert_eq!(sealer(2).open(&sealed), None);
        assert_eq!(HmacSealer::with_keys(&key(2), [key(3)]).unwrap().open(&sealed), None);
    }

    #[test]
    fn opening_costs_at_most_one_mac_per_listed_key_the_current_key_first() {
        let previous: Vec<[u8; 32]> = (1..8).map(key).collect();
        let full = HmacSealer::with_keys(&key(8), &previous).unwrap();
        assert_eq!(open_counting(&full, &sealer(8).seal(b"p")), (Some(b"p".to_vec()), 1));
        assert_eq!(open_counting(&full, &sealer(1).seal(b"p")), (Some(b"p".to_vec()), 2));
        assert_eq!(open_counting(&full, &sealer(7).seal(b"p")), (Some(b"p".to_vec()), 8));
        assert_eq!(open_counting(&full, &sealer(9).seal(b"p")), (None, 8));
        let (payload, tag) =
            sealer(8).seal(b"p").split_once('.').map(|(p, t)| (p.to_owned(), t.to_owned())).unwrap();
        assert_eq!(open_counting(&full, &format!("{payload}.{}", &tag[..tag.len() - 2])), (None, 0));
        assert_eq!(open_counting(&full, "not a sealed state"), (None, 0));
    }

    #[test]
    fn at_most_eight_keys_are_listed_and_a_longer_list_is_not_read_to_its_end() {
        let previous: Vec<[u8; 32]> = (1..8).map(key).collect();
        assert!(HmacSealer::with_keys(&key(8), &previous).is_ok());
        let previous: Vec<[u8; 32]> = (1..9).map(key).collect();
        assert_eq!(HmacSealer::with_keys(&key(9), &previous).unwrap_err(), KeyError::TooMany);
        let endless = (0u8..).map(key);
        assert_eq!(HmacSealer::with_keys(&key(255), endless).unwrap_err(), KeyError::TooMany);
    }

    #[test]
    fn every_listed_key_is_at_least_32_bytes_and_the_short_one_is_named() {
        let short = [5u8; 31];
        assert_eq!(
            HmacSealer::with_keys(&short, [key(1)]).unwrap_err(),
            KeyError::TooShort(KeyPosition::Current)
        );
        assert_eq!(
            HmacSealer::with_keys(&key(1), [&key(2)[..], &key(3), &short]).unwrap_err(),
            KeyError::TooShort(KeyPosition::Previous(2))
        );
        assert_eq!(KeyError::from(KeyTooShort), KeyError::TooShort(KeyPosition::Current));
    }

    #[test]
    fn a_key_listed_twice_is_refused() {
        assert_eq!(
            HmacSealer::with_keys(&key(1), [key(2), key(1)]).unwrap_err(),
            KeyError::Repeated(KeyPosition::Previous(1), KeyPosition::Current)
        );
        assert_eq!(
            HmacSealer::with_keys(&key(1), [key(2), key(3), key(2)]).unwrap_err(),
            KeyError::Repeated(KeyPosition::Previous(2), KeyPosition::Previous(0))
        );
    }

    #[test]
    fn hex_key_lists_name_the_current_key_first_then_the_previous_ones() {
        let (one, two) = (hex_of(&key(1)), hex_of(&key(2)));
        let promoted = HmacSealer::from_hex_keys(&format!("  {two},\n{}\n", one.to_uppercase())).unwrap();
        assert_eq!(promoted.seal(b"p"), sealer(2).seal(b"p"));
        assert!(promoted.open(&sealer(1).seal(b"p")).is_some());
        assert_eq!(format!("{promoted:?}"), "HmacSealer { keys: 2, .. }");
        let retired = HmacSealer::from_hex_keys(&two).unwrap();
        assert_eq!(retired.open(&sealer(1).seal(b"p")), None);
    }

    #[test]
    fn hex_key_lists_are_checked_like_byte_key_lists() {
        let one = hex_of(&key(1));
        let not_hex = KeyError::NotHex(KeyPosition::Previous(0));
        assert_eq!(HmacSealer::from_hex_keys(&format!("{one} {}zz", &one[2..])).unwrap_err(), not_hex);
        assert_eq!(HmacSealer::from_hex_keys(&format!("{one} {}0", one)).unwrap_err(), not_hex);
        assert_eq!(HmacSealer::from_hex_keys(&format!("{one} ÿÿ")).unwrap_err(), not_hex);
        assert_eq!(HmacSealer::from_hex_keys("").unwrap_err(), KeyError::NoKey);
        assert_eq!(HmacSealer::from_hex_keys(" ,\n").unwrap_err(), KeyError::NoKey);
        assert_eq!(
            HmacSealer::from_hex_keys(&"ab".repeat(31)).unwrap_err(),
            KeyError::TooShort(KeyPosition::Current)
        );
        assert_eq!(
            HmacSealer::from_hex_keys(&format!("{one},{one}")).unwrap_err().to_string(),
            "request-state key list: previous key 0 repeats the current key"
        );
        let nine: Vec<String> = (1..10).map(|b| hex_of(&key(b))).collect();
        assert_eq!(HmacSealer::from_hex_keys(&nine.join(" ")).unwrap_err(), KeyError::TooMany);
        assert!(HmacSealer::from_hex_keys(&nine[..8].join(" ")).is_ok());
    }

    #[test]
    fn errors_and_debug_never_show_a_key() {
        let secret = "5ec2e7".repeat(11);
        let errors = [
            HmacSealer::from_hex_keys(&format!("{secret}x")).unwrap_err(),
            HmacSealer::from_hex_keys(&secret[..40]).unwrap_err(),
            HmacSealer::from_hex_keys(&format!("{secret} {secret}")).unwrap_err(),
        ];
        for error in errors {
            for shown in [error.to_string(), format!("{error:?}")] {
                assert!(!shown.contains("5ec2e7"), "{shown}");
            }
        }
        let sealer = HmacSealer::from_hex_keys(&secret).unwrap();
        assert_eq!(format!("{sealer:?}"), "HmacSealer { keys: 1, .. }");
        assert_eq!(format!("{sealer:#?}"), "HmacSealer { keys: 1, .. }");
    }
}
