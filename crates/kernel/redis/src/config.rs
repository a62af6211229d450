//! Where Redis is and how it is used: [`RedisConfig`], read from a URL and refined by its builder.
//!
//! Threat: **credentials in logs and errors**. A Redis password may come in the URL or from the
//! environment; it is kept only in the connection information handed to the client, [`RedisConfig`]'s
//! `Debug` shows `<redacted>` in its place, and every error text this crate makes — a refused URL, a
//! failed connection, a failed command — goes through [`Redactor`], which removes the password (and
//! the URL's user information) wherever it would appear.

use std::sync::Arc;
use std::time::Duration;

use redis::{Client, ConnectionAddr, IntoConnectionInfo};

/// The key prefix used when none is set.
pub const DEFAULT_KEY_PREFIX: &str = "mcp-kernel";
/// How long a connection attempt may take, by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a command may wait for its answer, by default.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a running task's lease lasts without renewal, by default.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);
/// The first pause before a reconnection, by default.
pub const DEFAULT_BACKOFF_MIN: Duration = Duration::from_millis(100);
/// The longest pause between reconnections, by default.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(5);
/// How many changes a local subscriber may fall behind before its feed ends, by default (as the
/// in-process hub).
pub const DEFAULT_HUB_CAPACITY: usize = mcp_kernel_router::notify::DEFAULT_HUB_CAPACITY;

/// The URL schemes accepted: TCP, TCP with TLS, and a unix socket (two spellings).
const SCHEMES: &[&str] = &["redis", "rediss", "redis+unix", "unix"];

/// A URL or setting that cannot be used. The text never holds the URL's password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The URL's scheme is none of `redis://`, `rediss://`, `redis+unix://`, `unix://`.
    #[error("unsupported Redis URL scheme {0:?} (redis://, rediss://, redis+unix:// or unix://)")]
    UnsupportedScheme(String),
    /// The URL does not parse (the reason, without the URL).
    #[error("the Redis URL is not valid: {0}")]
    InvalidUrl(String),
    /// A `rediss://` URL, with the crate built without its `tls` feature.
    #[error("a rediss:// URL needs the `tls` feature of mcp-kernel-redis")]
    TlsNotEnabled,
}

/// Removes secrets from a text before it is logged or kept in an error.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    secrets: Arc<[String]>,
}

impl Redactor {
    fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        // The longest first, so that a secret holding another is removed whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Self { secrets: secrets.into() }
    }

    /// `text` with every secret replaced by `<redacted>`.
    pub(crate) fn clean(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in self.secrets.iter() {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "<redacted>");
            }
        }
        text
    }

    fn with(&self, secret: &str) -> Self {
        Self::new(self.secrets.iter().cloned().chain(std::iter::once(secret.to_owned())))
    }
}

/// Where Redis is and how this crate uses it. Built by [`RedisConfig::from_url`], then refined.
#[derive(Clone)]
pub struct RedisConfig {
    /// The client: where Redis is and the credentials (it opens nothing until asked).
    pub(crate) client: Client,
    pub(crate) redactor: Redactor,
    pub(crate) key_prefix: String,
    pub(crate) connect_timeout: Duration,
    pub(crate) response_timeout: Duration,
    pub(crate) lease: Duration,
    pub(crate) backoff: (Duration, Duration),
    pub(crate) hub_capacity: usize,
    /// Environment variables named for credentials and not set (warned about at start).
    pub(crate) unset_env: Vec<String>,
}

impl std::fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let info = self.client.get_connection_info();
        let settings = info.redis_settings();
        f.debug_struct("RedisConfig")
            .field("address", &info.addr().to_string())
            .field("tls", &self.is_tls())
            .field("db", &settings.db())
            .field("username", &settings.username())
            .field("password", &settings.password().map(|_| "<redacted>"))
            .field("key_prefix", &self.key_prefix)
            .field("connect_timeout", &self.connect_timeout)
            .field("response_timeout", &self.response_timeout)
            .field("lease", &self.lease)
            .field("reconnect_backoff", &self.backoff)
            .field("hub_capacity", &self.hub_capacity)
            .finish()
    }
}

impl RedisConfig {
    /// A configuration for the Redis at `url`: `redis://[user[:password]@]host[:port][/db]`,
    /// `rediss://…` (TLS, the system's root certificates), `redis+unix:///path/to/socket` or
    /// `unix:///path/to/socket` (`?db=N&user=U&pass=P`). The error never holds the password.
    pub fn from_url(url: &str) -> Result<Self, ConfigError> {
        let redactor = Redactor::new(url_secrets(url));
        let scheme = url.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
        match scheme.as_deref() {
            Some(scheme) if SCHEMES.contains(&scheme) => {
                if scheme == "rediss" && !cfg!(feature = "tls") {
                    return Err(ConfigError::TlsNotEnabled);
                }
            }
            Some(scheme) => return Err(ConfigError::UnsupportedScheme(redactor.clean(scheme))),
            None => return Err(ConfigError::InvalidUrl("no scheme (redis://host:port)".into())),
        }
        let client = url
            .into_connection_info()
            .and_then(Client::open)
            .map_err(|error| ConfigError::InvalidUrl(redactor.clean(&error.to_string())))?;
        let redactor = match client.get_connection_info().redis_settings().password() {
            Some(password) => redactor.with(password),
            None => redactor,
        };
        let mut config = Self {
            client,
            redactor,
            key_prefix: DEFAULT_KEY_PREFIX.to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            lease: DEFAULT_LEASE,
            backoff: (DEFAULT_BACKOFF_MIN, DEFAULT_BACKOFF_MAX),
            hub_capacity: DEFAULT_HUB_CAPACITY,
            unset_env: Vec::new(),
        };
        // The subscription is a RESP2 pub/sub connection: a `?protocol=resp3` is not followed.
        config.edit_settings(|settings| settings.set_protocol(redis::ProtocolVersion::RESP2));
        Ok(config)
    }

    /// The prefix of every key and channel (default `"mcp-kernel"`): servers with different prefixes
    /// share one Redis without seeing each other's tasks or changes.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = prefix.into();
        self
    }

    /// The password from the environment variable `var`, read now; it overrides the URL's. An unset
    /// variable leaves the URL's password (and is warned about, by name, at start).
    pub fn password_from_env(mut self, var: &str) -> Self {
        match std::env::var(var) {
            Ok(password) if !password.is_empty() => {
                self.redactor = self.redactor.with(&password);
                self.edit_settings(|settings| settings.set_password(&password));
            }
            _ => self.unset_env.push(var.to_owned()),
        }
        self
    }

    /// The user name (Redis ACL) from the environment variable `var`, read now; it overrides the
    /// URL's. An unset variable leaves the URL's.
    pub fn username_from_env(mut self, var: &str) -> Self {
        match std::env::var(var) {
            Ok(username) if !username.is_empty() => {
                self.edit_settings(|settings| settings.set_username(&username));
            }
            _ => self.unset_env.push(var.to_owned()),
        }
        self
    }

    /// How long one connection attempt may take (default 2 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a command may wait for its answer (default 1 s): past it the request that needed
    /// Redis is refused as retryable, and the connection is replaced.
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a running task's lease lasts without renewal (default 10 s; renewed every third of
    /// it): a task whose instance stopped is failed by the next read after its lease lapsed.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// The pauses between reconnection attempts: `min` first, doubling up to `max` (default 100 ms
    /// to 5 s).
    pub fn reconnect_backoff(mut self, min: Duration, max: Duration) -> Self {
        let min = min.max(Duration::from_millis(1));
        self.backoff = (min, max.max(min));
        self
    }

    /// How many changes a local subscriber may fall behind before its feed ends (default 256, at
    /// least 1).
    pub fn hub_capacity(mut self, capacity: usize) -> Self {
        self.hub_capacity = capacity.max(1);
        self
    }

    /// Whether the connection uses TLS (`rediss://`).
    pub fn is_tls(&self) -> bool {
        matches!(self.client.get_connection_info().addr(), ConnectionAddr::TcpTls { .. })
    }

    /// Replaces the handshake settings (credentials) by what `edit` makes of them.
    fn edit_settings(&mut self, edit: impl FnOnce(redis::RedisConnectionInfo) -> redis::RedisConnectionInfo) {
        let info = self.client.get_connection_info().clone();
        let settings = edit(info.redis_settings().clone());
        // Opening a client from connection information only wraps it: it cannot fail.
        if let Ok(client) = Client::open(info.set_redis_settings(settings)) {
            self.client = client;
        }
    }
}

/// What in a URL may be secret before it is parsed: its user information (`user:password`, each
/// part, raw and percent-decoded) and a `pass=` query value.
fn url_secrets(url: &str) -> Vec<String> {
    let mut secrets = Vec::new();
    if let Some((_, rest)) = url.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            secrets.push(userinfo.to_owned());
            if let Some((_, password)) = userinfo.split_once(':') {
                secrets.push(password.to_owned());
                secrets.push(percent_decoded(password));
            }
        }
    }
    if let Some((_, query)) = url.split_once('?') {
        for pair in query.split(['&', '#']) {
            if let Some(password) = pair.strip_prefix("pass=") {
                secrets.push(password.to_owned());
                secrets.push(percent_decoded(password));
            }
        }
    }
    secrets
}

/// `text` with its `%XX` escapes decoded (an escape that is not one is kept as written).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_schemes_parse_and_others_are_refused() {
        assert!(!RedisConfig::from_url("redis://127.0.0.1:6379/2").unwrap().is_tls());
        assert!(RedisConfig::from_url("rediss://cache.example:6380").unwrap().is_tls());
        assert!(RedisConfig::from_url("redis+unix:///run/redis.sock").is_ok());
        assert!(RedisConfig::from_url("unix:///run/redis.sock?db=1").is_ok());
        assert_eq!(
            RedisConfig::from_url("http://h").unwrap_err(),
            ConfigError::UnsupportedScheme("http".into())
        );
        assert!(matches!(RedisConfig::from_url("127.0.0.1:6379"), Err(ConfigError::InvalidUrl(_))));
    }

    #[test]
    fn the_password_never_shows_in_debug_nor_in_a_refused_url() {
        let config = RedisConfig::from_url("redis://alice:pa%24%24word-1@127.0.0.1:6379/0").unwrap();
        let shown = format!("{config:?}");
        assert!(shown.contains("<redacted>") && shown.contains("alice"), "{shown}");
        assert!(!shown.contains("pa$$word-1") && !shown.contains("pa%24%24word-1"), "{shown}");
        for bad in [
            "redis://alice:hunter22@127.0.0.1:6379/notanumber",
            "redis://alice:hunter22@0.0.0.0:6379",
            "redis://alice:hunter22@127.0.0.1:6379/?protocol=hunter22",
            "unix:///run/redis.sock?pass=hunter22&db=x",
            "hunter22://alice:hunter22@h",
        ] {
            let error = RedisConfig::from_url(bad).unwrap_err();
            for text in [error.to_string(), format!("{error:?}")] {
                assert!(!text.contains("hunter22"), "{bad}: {text}");
            }
        }
    }

    #[test]
    fn a_password_of_any_spelling_never_shows_in_a_refused_url_nor_in_debug() {
        let secret = "Hunter2-Zq";
        for url in [
            format!("redis://u:{secret}/x@127.0.0.1:6379"),
            format!("redis://u:{secret}#x@127.0.0.1:6379"),
            format!("redis://u:{secret}?x@127.0.0.1:6379"),
            format!("redis://u:{secret}%FF@127.0.0.1:6379"),
            format!("redis://u:{secret}%@127.0.0.1:6379/0"),
            format!("redis://u:{secret}@@127.0.0.1:6379/db"),
            format!("redis://{secret}@127.0.0.1:99999"),
            format!("redis://:{secret}@[::1/0"),
            format!("redis://:{secret}@127.0.0.1:6379/0?protocol={secret}"),
            format!("rediss://:{secret}@127.0.0.1:6379#{secret}"),
            format!("unix:///run/r.sock?user=u&pass={secret}&db=no"),
            format!("redis+unix://relative?pass={secret}"),
            format!("unix:///run/r.sock?pass=a+{secret}&protocol=x"),
            format!("redis://u:{}@127.0.0.1:6379/notadb", secret.replace('-', "%2D")),
            format!("{secret}:{secret}@127.0.0.1"),
            format!("REDIS://:{secret}@0.0.0.0"),
        ] {
            let shown = match RedisConfig::from_url(&url) {
                Ok(config) => format!("{config:?}"),
                Err(error) => format!("{error} {error:?}"),
            };
            assert!(!shown.contains(secret), "{url}: {shown}");
        }
    }

    #[test]
    fn a_redactor_removes_every_secret_and_the_decoded_password() {
        let redactor = Redactor::new(url_secrets("redis://u:s%40cret@h"));
        assert_eq!(
            redactor.clean("auth s@cret failed for u:s%40cret"),
            "auth <redacted> failed for <redacted>"
        );
    }

    #[test]
    fn the_builder_bounds_what_would_make_no_sense() {
        let config = RedisConfig::from_url("redis://h")
            .unwrap()
            .hub_capacity(0)
            .reconnect_backoff(Duration::from_secs(2), Duration::from_millis(1))
            .lease(Duration::ZERO);
        assert_eq!(config.hub_capacity, 1);
        assert_eq!(config.backoff, (Duration::from_secs(2), Duration::from_secs(2)));
        assert_eq!(config.lease, Duration::from_millis(30));
    }
}
