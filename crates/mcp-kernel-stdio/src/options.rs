//! The stdio transport's bounds.

/// The longest line (or legacy frame body) admitted, in bytes, a trailing `\r` included (D-27).
pub const MAX_LINE_BYTES: usize = 1_048_576;

/// How many requests are served at once unless the host chooses otherwise.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// The most requests [`StdioOptions::max_in_flight`] admits (the runtime's semaphore bound).
const MAX_IN_FLIGHT_CEILING: usize = tokio::sync::Semaphore::MAX_PERMITS;

/// The bounds of one stdio session: `StdioOptions::default().max_in_flight(8)`.
#[derive(Clone, Debug)]
pub struct StdioOptions {
    pub(crate) max_line_bytes: usize,
    pub(crate) max_in_flight: usize,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self { max_line_bytes: MAX_LINE_BYTES, max_in_flight: DEFAULT_MAX_IN_FLIGHT }
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
    }
}
