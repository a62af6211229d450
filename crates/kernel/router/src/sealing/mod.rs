//! Sealing multi-round-trip request state (MCP [S-48] to [S-50], opted in with
//! [`ServerBuilder::request_state_sealer`](crate::ServerBuilder::request_state_sealer)): the host's
//! [`StateSealer`], the [`HmacSealer`] this package ships and its key errors, and the sealed
//! `requestState` envelope a retry is checked against before the host sees anything, with its
//! [`Clock`] and lifetime ([`DEFAULT_REQUEST_STATE_TTL`]). It guards against a client that forges,
//! replays or moves a state between requests.
//!
//! [S-48]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html
//! [S-50]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/mcp_rules/index.html

pub(crate) mod sealer;
pub(crate) mod state;

pub use sealer::{HmacSealer, KeyError, KeyPosition, KeyTooShort, StateSealer};
pub use state::{Clock, DEFAULT_REQUEST_STATE_TTL};
