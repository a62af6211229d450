//! Protocol revisions and the reserved `_meta` keys.

use std::fmt;

/// The stateless revision.
pub const MODERN: &str = "2026-07-28";
/// The legacy, session-shaped revision.
pub const LEGACY: &str = "2025-11-25";

/// `_meta` key naming the request's protocol revision.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the client's self-reported identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key carrying the server's identity on results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of a per-request log level (deprecated feature).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key tagging every message of a `subscriptions/listen` stream with the listen request's id.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The tasks extension's identifier (SEP-2663): a key of `capabilities.extensions` on both sides.
pub const EXTENSION_TASKS: &str = "io.modelcontextprotocol/tasks";

/// A protocol revision this package serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// `2026-07-28`: stateless, `_meta` on every request.
    V2026_07_28,
    /// `2025-11-25`: `initialize`, sessions on HTTP, no `resultType`.
    V2025_11_25,
}

impl ProtocolVersion {
    /// Every revision, newest first.
    pub const ALL: [ProtocolVersion; 2] = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];

    /// The revision's date string.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2026_07_28 => MODERN,
            ProtocolVersion::V2025_11_25 => LEGACY,
        }
    }

    /// Parses a revision string; `None` for any revision this package does not serve.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            MODERN => Some(ProtocolVersion::V2026_07_28),
            LEGACY => Some(ProtocolVersion::V2025_11_25),
            _ => None,
        }
    }

    /// True for the stateless revision.
    pub const fn is_modern(self) -> bool {
        matches!(self, ProtocolVersion::V2026_07_28)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_only_the_two_served_revisions() {
        assert_eq!(ProtocolVersion::parse("2026-07-28"), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(ProtocolVersion::parse("2025-11-25"), Some(ProtocolVersion::V2025_11_25));
        assert_eq!(ProtocolVersion::parse("2024-11-05"), None);
        assert_eq!(ProtocolVersion::parse(""), None);
    }
}
