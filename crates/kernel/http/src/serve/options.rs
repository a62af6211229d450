//! The bounds of [`serve_with`](super::serve_with): how many connections, how many HTTP/2 streams on
//! each, and how long a connection may hold the server without doing its part.
//!
//! Every bound has a default chosen for one process serving MCP clients directly; each is a knob
//! because a host behind a proxy, or with unusual clients, knows better. What each bound costs in
//! memory is written beside it, so that a host can add them up (`docs/performance.md` has the
//! measured figures).

use std::time::Duration;

use crate::client::AddressPrefixes;

/// How long [`serve`](super::serve) waits for open connections to finish once shutdown is asked (its
/// drain, [`serve_with`](super::serve_with)), before it cuts them and returns.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The largest read buffer an HTTP/1.1 connection keeps (hyper's default is about 400 KiB, held for
/// the connection's life; a request body streams through it in pieces of this size), and the most
/// response bytes hyper queues before it writes them out (hyper's `max_buf_size` bounds both).
pub const HTTP1_READ_BUFFER: usize = 64 * 1024;

/// The HTTP/2 receive window, per connection and per stream: the request bytes a client may send
/// before the server has read them — the protocol's own initial window (RFC 9113 §6.9.2), where
/// hyper's default is 1 MiB. Bytes inside the window wait in the transport's buffers, outside the body
/// budget (while an `authorize_async` hook decides, for instance): at this size an HTTP/2 connection
/// holds no more of them than an HTTP/1.1 one holds in [`HTTP1_READ_BUFFER`]. The window reopens as
/// the service reads, so a 1 MiB body takes about sixteen round trips of window updates.
pub const HTTP2_RECEIVE_WINDOW: u32 = 65_535;

/// The deadline from accepting a connection to the whole head of its first request: the protocol
/// decision (the 24-byte HTTP/2 preface, or the start of an HTTP/1.1 request) and the request's
/// headers share it. A connection that has not delivered a request head by then is closed.
pub const FIRST_BYTES_TIMEOUT: Duration = Duration::from_secs(15);

/// The time an HTTP/1.1 client has to send each later request's head on a kept-alive connection
/// (it is also how long such a connection may sit idle between requests).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);

/// How often an idle HTTP/2 connection is pinged; a peer that does not answer within the same time
/// is disconnected.
pub const HTTP2_KEEP_ALIVE: Duration = Duration::from_secs(30);

/// How many connections are served at once by default. Past it, a newcomer from a client holding
/// fewer connections than the biggest holder takes one of that holder's; any other newcomer is closed
/// at accept, or waits in the listen backlog while 256 connections are already on their way out.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4_096;

/// How many connections one client (its address prefix, [`ServeOptions::client_prefixes`]) may hold
/// at once by default; one more is closed at accept.
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 512;

/// How many requests one HTTP/2 connection may have open at once by default.
///
/// hyper's own default is 200. An MCP client has a handful of calls in flight, rarely more than a
/// dozen; each open stream may hold a request body of up to the cap (1 MiB) while it is read, so 200
/// streams let one connection claim 200 MiB. Sixteen leaves any real client room and bounds one
/// connection to 16 MiB of bodies (and the whole server to the body budget of
/// [`Builder::max_body_bytes_in_flight`](crate::Builder::max_body_bytes_in_flight)).
pub const DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS: u32 = 16;

/// How long a connection with no open request is kept by default (HTTP/2 pings do not count).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a response may wait on the client by default: the waits of one response add up (the time
/// each part of it — a piece of at most 16 KiB over HTTP/2, a data frame whole over HTTP/1.1 — waits
/// for the transport to take it, whether a socket does not drain or an HTTP/2 flow-control window stays
/// shut or is trickled open), and so does each write to the socket
/// that cannot proceed. Past it the response is abandoned and its connection closed. A 1 MiB answer meets
/// 30 s at about 35 KiB/s; a long SSE stream read promptly waits almost never.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The bounds of [`serve_with`](super::serve_with):
/// `ServeOptions::new().max_connections(1_000).idle_timeout(Duration::from_secs(20))`.
///
/// | bound | default | what it costs when reached |
/// |---|---|---|
/// | [`max_connections`](Self::max_connections) | 4,096 | about 25 KiB per held connection (24.6 KiB measured, `docs/performance.md`), up to 64 KiB more while a body streams through hyper's buffer; when all are held, the biggest holder gives one up to a smaller client, with at most 1 in 16 more (256) open while on their way out |
/// | [`max_connections_per_peer`](Self::max_connections_per_peer) | 512 | the same, per client address prefix |
/// | [`client_prefixes`](Self::client_prefixes) | IPv4 `/32`, IPv6 `/64` | which addresses count as one client for the two bounds above |
/// | [`http2_max_concurrent_streams`](Self::http2_max_concurrent_streams) | 16 | one request (and its body) per stream |
/// | [`first_bytes_timeout`](Self::first_bytes_timeout) | 15 s | a connection that says nothing useful holds its slot this long |
/// | [`header_read_timeout`](Self::header_read_timeout) | 15 s | the same, for each later HTTP/1.1 head |
/// | [`idle_timeout`](Self::idle_timeout) | 60 s | a connection with nothing open holds its slot this long |
/// | [`write_timeout`](Self::write_timeout) | 30 s | a response the client will not take holds its buffers this long |
/// | [`shutdown_grace`](Self::shutdown_grace) | 30 s | how long the drain waits for open requests before it cuts them |
///
/// Request bodies are bounded separately, across the whole service, by
/// [`Builder::max_body_bytes_in_flight`](crate::Builder::max_body_bytes_in_flight).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    pub(crate) max_connections: usize,
    pub(crate) max_connections_per_peer: usize,
    pub(crate) client_prefixes: AddressPrefixes,
    pub(crate) http2_max_concurrent_streams: u32,
    pub(crate) first_bytes_timeout: Duration,
    pub(crate) header_read_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) write_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_peer: DEFAULT_MAX_CONNECTIONS_PER_PEER,
            client_prefixes: AddressPrefixes::default(),
            http2_max_concurrent_streams: DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
            first_bytes_timeout: FIRST_BYTES_TIMEOUT,
            header_read_timeout: HEADER_READ_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            write_timeout: WRITE_TIMEOUT,
            shutdown_grace: SHUTDOWN_GRACE,
        }
    }
}

/// The most connections [`ServeOptions::max_connections`] admits (the semaphore's own bound).
const MAX_CONNECTIONS_CEILING: usize = tokio::sync::Semaphore::MAX_PERMITS;

/// The shortest deadline admitted: a zero deadline would close every connection at once.
const MIN_DEADLINE: Duration = Duration::from_millis(1);

impl ServeOptions {
    /// The defaults (see the table above).
    pub fn new() -> Self {
        Self::default()
    }

    /// How many connections are served at once (at least 1). When all are held, a new connection from a
    /// client holding fewer connections than the client holding the most is admitted, and that client's
    /// longest-idle connection (else its oldest) is told to close: `GOAWAY` over HTTP/2, closed if idle
    /// over HTTP/1.1, else after its request with `connection: close`. A new connection whose client
    /// holds as many as the biggest holder, or more, is closed at accept. Connections told to close
    /// stay open until they end, at most `max(1, connections / 16)` at once; past that, new
    /// connections wait in the listen backlog until one ends.
    ///
    /// Each connection is a file descriptor: keep `connections + connections / 16` below the process's
    /// limit (`ulimit -n`, often 1,024 by default), or accepting fails first (logged once a second,
    /// retried).
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.clamp(1, MAX_CONNECTIONS_CEILING);
        self
    }

    /// How many connections one client — per client address prefix ([`client_prefixes`](Self::client_prefixes)):
    /// an IPv4 address, an IPv6 `/64`, by default — may hold (at least 1), those told to close counted
    /// until they end; one more is closed as soon as it is accepted. Behind a proxy every connection
    /// comes from the proxy: raise this to `max_connections` there.
    pub fn max_connections_per_peer(mut self, connections: usize) -> Self {
        self.max_connections_per_peer = connections.max(1);
        self
    }

    /// Which peer addresses count as one client for [`max_connections_per_peer`](Self::max_connections_per_peer)
    /// and for who gives a connection up when all are held (default: an IPv4 address whole, an IPv6
    /// address to its `/64`). `serve` puts each connection's [`ClientNetwork`](crate::ClientNetwork) in
    /// every request's extensions, beside [`PeerAddr`](crate::PeerAddr).
    pub fn client_prefixes(mut self, prefixes: AddressPrefixes) -> Self {
        self.client_prefixes = prefixes;
        self
    }

    /// How many requests one HTTP/2 connection may have open at once (at least 1), advertised in its
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`.
    pub fn http2_max_concurrent_streams(mut self, streams: u32) -> Self {
        self.http2_max_concurrent_streams = streams.max(1);
        self
    }

    /// The deadline from accept to the whole head of the first request (at least 1 ms).
    pub fn first_bytes_timeout(mut self, timeout: Duration) -> Self {
        self.first_bytes_timeout = timeout.max(MIN_DEADLINE);
        self
    }

    /// The time each later HTTP/1.1 request head may take, idle time before it included (at least 1 ms).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout.max(MIN_DEADLINE);
        self
    }

    /// How long a connection with no open request is kept (at least 1 ms); HTTP/2 pings do not reset it.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout.max(MIN_DEADLINE);
        self
    }

    /// How long a response may wait on the client in all (see [`WRITE_TIMEOUT`]), before it is
    /// abandoned and its connection closed (at least 1 ms).
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout.max(MIN_DEADLINE);
        self
    }

    /// How long the drain may take (default [`SHUTDOWN_GRACE`], 30 s), counted from the moment the
    /// shutdown future completes. Within it: new connections are refused, the requests already read
    /// are answered (SSE streams to their end), idle HTTP/2 connections get `GOAWAY`, idle HTTP/1.1
    /// ones are left to their peer or their idle limit, and `serve` returns as soon as the last
    /// connection has closed. At its end, whatever still runs is cut (connections
    /// dropped without a response, handlers' futures dropped) and `serve` returns `Ok`.
    ///
    /// Set it a few seconds below the time the orchestrator waits between `SIGTERM` and `SIGKILL`
    /// (Kubernetes' `terminationGracePeriodSeconds` is 30 s by default, the same as this default, and
    /// counts a `preStop` hook's time too), so that the process exits on its own, with its logs
    /// flushed, rather than being killed mid-drain. Zero cuts everything at once.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_constants() {
        let options = ServeOptions::default();
        assert_eq!(options.max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(options.max_connections_per_peer, DEFAULT_MAX_CONNECTIONS_PER_PEER);
        assert_eq!(options.client_prefixes, AddressPrefixes::new(32, 64));
        assert_eq!(options.http2_max_concurrent_streams, DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS);
        assert_eq!(options.first_bytes_timeout, FIRST_BYTES_TIMEOUT);
        assert_eq!(options.idle_timeout, IDLE_TIMEOUT);
        assert_eq!(options.write_timeout, WRITE_TIMEOUT);
    }

    #[test]
    fn zero_bounds_are_raised_to_the_smallest_that_serves() {
        let options = ServeOptions::new()
            .max_connections(0)
            .max_connections_per_peer(0)
            .http2_max_concurrent_streams(0)
            .idle_timeout(Duration::ZERO)
            .write_timeout(Duration::ZERO)
            .first_bytes_timeout(Duration::ZERO);
        assert_eq!(options.max_connections, 1);
        assert_eq!(options.max_connections_per_peer, 1);
        assert_eq!(options.http2_max_concurrent_streams, 1);
        assert_eq!(options.idle_timeout, MIN_DEADLINE);
        assert_eq!(options.write_timeout, MIN_DEADLINE);
        assert_eq!(options.first_bytes_timeout, MIN_DEADLINE);
    }
}
