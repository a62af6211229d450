//! The stdio transport's bounds, and what it attaches to every request of a session.

use mcp_kernel_router::Extensions;

/// The longest line (or legacy frame body) admitted, in bytes, a trailing `\r` included (D-27).
pub const MAX_LINE_BYTES: usize = 1_048_576;

/// How many requests are served at once unless the host chooses otherwise.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// The most requests [`StdioOptions::max_in_flight`] admits (the runtime's semaphore bound).
const MAX_IN_FLIGHT_CEILING: usize = tokio::sync::Semaphore::MAX_PERMITS;

/// The bounds of one stdio session, and the extensions attached to each of its requests:
/// `StdioOptions::default().max_in_flight(8).principal(Caller::local())`.
///
/// Whoever writes to stdin runs with the host's privileges (see the crate's threat model), so there
/// is no one to authenticate: the host says who the session's caller is when it starts serving, and
/// the host's code reads it as `RequestContext::principal::<P>()`, as it would over HTTP.
#[derive(Clone, Debug)]
pub struct StdioOptions {
    pub(crate) max_line_bytes: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) extensions: Extensions,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: MAX_LINE_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            extensions: Extensions::new(),
        }
    }
}

impl StdioOptions {
    /// The defaults: [`MAX_LINE_BYTES`] and [`DEFAULT_MAX_IN_FLIGHT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The longest line or frame body admitted, in bytes (default [`MAX_LINE_BYTES`]).
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// How many requests are served at once; reading pauses while that many are (default 64, at least 1).
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.clamp(1, MAX_IN_FLIGHT_CEILING);
        self
    }

    /// Attaches `extensions` to every request of the session (replacing those attached before): the
    /// host reads them from `RequestContext::extensions`.
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Attaches `principal` to every request of the session, beside the extensions already attached
    /// (replacing a value of the same type): the host reads it as `RequestContext::principal::<P>()`.
    pub fn principal<P: Clone + Send + Sync + 'static>(mut self, principal: P) -> Self {
        self.extensions.insert(principal);
        self
    }

    /// The extensions attached to every request (set by [`StdioOptions::extensions`] and
    /// [`StdioOptions::principal`]).
    pub fn get_extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The longest line or frame body admitted, in bytes (set by [`StdioOptions::max_line_bytes`]).
    pub fn get_max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// How many requests are served at once (set by [`StdioOptions::max_in_flight`]).
    pub fn get_max_in_flight(&self) -> usize {
        self.max_in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_setters() {
        let options = StdioOptions::default();
        assert_eq!(options.get_max_line_bytes(), MAX_LINE_BYTES);
        assert_eq!(options.get_max_in_flight(), DEFAULT_MAX_IN_FLIGHT);
        let options = StdioOptions::new().max_line_bytes(10).max_in_flight(0);
        assert_eq!(options.get_max_line_bytes(), 10);
        assert_eq!(options.get_max_in_flight(), 1, "zero would never admit a request");
        assert!(options.get_extensions().is_empty());
    }

    #[test]
    fn principal_adds_to_the_extensions_and_extensions_replaces_them() {
        let mut first = Extensions::new();
        first.insert(1_u8);
        let options = StdioOptions::new().extensions(first).principal("alice");
        assert_eq!(options.get_extensions().get::<u8>(), Some(&1));
        assert_eq!(options.get_extensions().get::<&str>(), Some(&"alice"));
        let options = options.extensions(Extensions::new());
        assert!(options.get_extensions().is_empty());
    }
}
