//! Wire types of mcp-kernel: JSON-RPC 2.0, every MCP `2026-07-28` / `2025-11-25` message the server reads
//! or writes, the error objects, and the one bounded JSON reader both transports use.
//!
//! This crate does no I/O and depends on no async runtime.
#![forbid(unsafe_code)]

pub mod encoded;
pub mod error;
pub mod jsonrpc;
pub mod message;
pub mod reader;
pub mod trace;
pub mod types;
pub mod version;

pub use encoded::Encoded;
pub use error::{ErrorObject, code};
pub use jsonrpc::{JSONRPC_VERSION, Payload, Pieces, Response};
pub use message::{Envelope, RequestMeta};
pub use reader::{MAX_DEPTH, ReadError, read_envelope, read_message};
pub use types::method::Method;
pub use version::ProtocolVersion;

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
