//! The sealed `requestState` envelope: what the core binds a host's state to, and the checks made on a
//! retry before the host sees anything.
//!
//! Threat: a state that verifies can still be replayed — later, on another method, or with other
//! parameters (MCP [S-50]). Inside the seal the core writes a format version, the method, a SHA-256
//! digest of the request's salient parameters (`tools/call`: name and arguments; `resources/read`:
//! uri; `prompts/get`: name and arguments), an expiry, the keys of the input requests the retry answers
//! (with their methods, so each response is checked against the right shape), and the host's bytes. A
//! retry whose state does not open, is bound to another request, or has expired is refused before
//! dispatch with a fixed message that repeats nothing of the state. The principal and single use are
//! not bound here: the package knows no principal, and keeps nothing between requests.
//!
//! [S-50]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::sealing::sealer::StateSealer;

/// How long a sealed `requestState` stays valid unless the host chooses otherwise: ten minutes.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// The clock the expiry of a sealed state is read from (injectable for tests).
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> SystemTime;
}

impl<F> Clock for F
where
    F: Fn() -> SystemTime + Send + Sync + 'static,
{
    fn now(&self) -> SystemTime {
        self()
    }
}

/// The envelope's format version.
const VERSION: u8 = 1;

/// The host's sealer, the lifetime of what it seals, and the clock: present only when the host opted in.
#[derive(Clone)]
pub(crate) struct Sealing {
    pub(crate) sealer: Arc<dyn StateSealer>,
    pub(crate) ttl: Duration,
    pub(crate) clock: Arc<dyn Clock>,
}

/// The request a state belongs to: its method and a digest of its salient parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    method: &'static str,
    digest: String,
}

impl Binding {
    fn of(method: &'static str, parts: &[&[u8]]) -> Self {
        let mut hash = Sha256::new();
        hash.update(method.as_bytes());
        for part in parts {
            // Each part is length-prefixed, so no two different splits hash alike.
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part);
        }
        Self { method, digest: URL_SAFE_NO_PAD.encode(hash.finalize()) }
    }

    /// A `tools/call` of `name` with `arguments` (absent arguments are `{}`).
    pub(crate) fn tool(name: &str, arguments: &Value) -> Self {
        Self::of("tools/call", &[name.as_bytes(), &canonical(arguments)])
    }

    /// A `resources/read` of `uri`.
    pub(crate) fn resource(uri: &str) -> Self {
        Self::of("resources/read", &[uri.as_bytes()])
    }

    /// A `prompts/get` of `name` with `arguments` (absent arguments are `{}`).
    pub(crate) fn prompt(name: &str, arguments: &Value) -> Self {
        Self::of("prompts/get", &[name.as_bytes(), &canonical(arguments)])
    }
}

/// JSON with every object's keys sorted, so a client that reorders keys on the retry still matches.
fn canonical(value: &Value) -> Vec<u8> {
    fn write(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                out.push(b'{');
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(Value::from(key.as_str()).to_string().as_bytes());
                    out.push(b':');
                    write(item, out);
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(item, out);
                }
                out.push(b']');
            }
            scalar => out.extend_from_slice(scalar.to_string().as_bytes()),
        }
    }
    let mut out = Vec::new();
    write(value, &mut out);
    out
}

/// What is sealed. Short field names: it travels twice per round.
#[derive(Serialize, Deserialize)]
struct Envelope {
    v: u8,
    m: String,
    d: String,
    /// Expiry, in milliseconds since the Unix epoch.
    e: u64,
    /// The keys of the input requests, with their methods.
    k: BTreeMap<String, String>,
    /// The host's state, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    s: Option<String>,
}

/// Why a retry's state is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateFault {
    /// It does not open, is malformed inside, or is bound to another request.
    Invalid,
    /// It opened and matched, but its expiry has passed.
    Expired,
    /// The host's sealer or clock panicked.
    HostPanicked,
    /// The sealer sealed a state it cannot open again (e.g. larger than it accepts back): sending it
    /// would fail every retry and blame the client.
    Unopenable,
}

/// A verified state: the keys the previous round asked for and the host's bytes.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) keys: BTreeMap<String, String>,
    pub(crate) state: Option<Vec<u8>>,
    /// When the state expires (ms since the epoch); a state sealed again from it never outlives this.
    pub(crate) expires_ms: u64,
}

/// Runs host code (the sealer, the clock), catching a panic.
fn host<T>(f: impl FnOnce() -> T) -> Result<T, StateFault> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|_| StateFault::HostPanicked)
}

impl Sealing {
    fn now_ms(&self) -> Result<u64, StateFault> {
        let now = host(|| self.clock.now())?;
        let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
        Ok(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    }

    /// Seals the host's state with its binding, expiry and the keys asked for. The expiry is the TTL
    /// from now, but never later than `not_after` (the expiry of the state this round was opened from),
    /// so a client cannot keep a state alive by retrying.
    pub(crate) fn seal(
        &self,
        binding: &Binding,
        keys: BTreeMap<String, String>,
        state: Option<&[u8]>,
        not_after: Option<u64>,
    ) -> Result<String, StateFault> {
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let expires = self.now_ms()?.saturating_add(ttl);
        let envelope = Envelope {
            v: VERSION,
            m: binding.method.to_owned(),
            d: binding.digest.clone(),
            e: not_after.map_or(expires, |limit| expires.min(limit)),
            k: keys,
            s: state.map(|bytes| STANDARD.encode(bytes)),
        };
        let payload = serde_json::to_vec(&envelope).map_err(|_| StateFault::Invalid)?;
        let sealed = host(|| self.sealer.seal(&payload))?;
        match host(|| self.sealer.open(&sealed))? {
            Some(opened) if opened == payload => Ok(sealed),
            _ => Err(StateFault::Unopenable),
        }
    }

    /// Opens a retry's state and checks it belongs to this request and has not expired.
    pub(crate) fn open(&self, binding: &Binding, sealed: &str) -> Result<Opened, StateFault> {
        let payload = host(|| self.sealer.open(sealed))?.ok_or(StateFault::Invalid)?;
        let envelope: Envelope = serde_json::from_slice(&payload).map_err(|_| StateFault::Invalid)?;
        if envelope.v != VERSION || envelope.m != binding.method || envelope.d != binding.digest {
            return Err(StateFault::Invalid);
        }
        if self.now_ms()? > envelope.e {
            return Err(StateFault::Expired);
        }
        let state = match envelope.s {
            None => None,
            Some(text) => Some(STANDARD.decode(text).map_err(|_| StateFault::Invalid)?),
        };
        Ok(Opened { keys: envelope.k, state, expires_ms: envelope.e })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bindings_ignore_key_order_and_tell_requests_apart() {
        let a = Binding::tool("t", &json!({"x": 1, "y": {"b": [1, 2], "a": "s"}}));
        let b = Binding::tool("t", &json!({"y": {"a": "s", "b": [1, 2]}, "x": 1}));
        assert_eq!(a, b);
        assert_ne!(a, Binding::tool("u", &json!({"x": 1, "y": {"b": [1, 2], "a": "s"}})));
        assert_ne!(a, Binding::tool("t", &json!({"x": 2, "y": {"b": [1, 2], "a": "s"}})));
        assert_ne!(Binding::prompt("t", &json!({})), Binding::tool("t", &json!({})));
        assert_ne!(Binding::resource("ab"), Binding::resource("a"));
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let bytes = canonical(&json!({"b": [{"d": 1, "c": null}], "a": "\"q\""}));
        assert_eq!(String::from_utf8(bytes).unwrap(), r#"{"a":"\"q\"","b":[{"c":null,"d":1}]}"#);
    }
}
