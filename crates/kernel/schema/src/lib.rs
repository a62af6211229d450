//! Tool-argument validation for MCP servers.
//!
//! Each tool's input schema is [`compile`]d **once**, when the server is built, into a
//! [`CompiledSchema`]: a JSON Schema draft 2020-12 validator, the declared top-level
//! argument keys, and the `x-mcp-header` parameters. Every `tools/call` is then checked with
//! [`CompiledSchema::validate`], which answers with a short, bounded [`Violation`] reason.
//!
//! # Threat model
//!
//! The schema comes from the host (trusted, but possibly mistaken); the arguments come from
//! the client (untrusted). Compile-time refusal exists so that **a schema the server cannot
//! enforce is never advertised**: a tool whose schema fails to compile never reaches
//! `tools/list`, rather than being served with a check that silently does less than it says.
//! Specifically:
//!
//! * **Remote references** (`$ref`, `$dynamicRef`, a custom `$schema` meta-schema) are refused
//!   ([`SchemaError::RemoteReference`]). Resolving them would make the server open network
//!   connections or read files named by a document (SSRF, local file disclosure), and the
//!   enforced rules would depend on whatever that URL served at startup. The retriever
//!   installed here refuses every retrieval; only references inside the document itself
//!   (and the draft 2020-12 meta-schemas `jsonschema` bundles) resolve.
//! * **Regexes** run on the linear-time `regex` engine. A pattern it cannot run —
//!   backreferences or look-around, which need a backtracking engine — is refused at compile
//!   time ([`SchemaError::UnsupportedPattern`]) instead of being matched by an engine an
//!   attacker can drive into exponential time (ReDoS).
//! * **Other dialects** are refused ([`SchemaError::UnsupportedDialect`]); the MCP
//!   specification makes 2020-12 the default and requires an error for an unsupported
//!   dialect. Schemas that are not valid 2020-12 are refused ([`SchemaError::Invalid`]).
//! * **`x-mcp-header`** annotations (MCP 2026-07-28) are checked for token syntax,
//!   case-insensitive uniqueness, type and placement ([`SchemaError::HeaderAnnotation`]);
//!   see [`HeaderParam`].
//!
//! `format` is an annotation only (the 2020-12 default): it is never asserted.
//!
//! # Bounds
//!
//! The MCP specification says validators SHOULD bound the depth and time of validation.
//! Time: every keyword is linear in the instance except regex matching, which the `regex`
//! engine keeps linear too. Depth: the instance comes from the bounded JSON reader upstream
//! (nesting limited to 64), so validation recursion is bounded by it and by the host's schema.
//! Reasons never quote the caller's values and are at most [`MAX_REASON_LEN`] bytes.
//!
//! Declared keys are `Arc<str>`s taken from the host schema at compile time;
//! [`CompiledSchema::select_declared`] looks each one up in the caller's map, so no key
//! string is ever allocated from caller input.
#![forbid(unsafe_code)]

mod compile;
mod dialect;
mod error;
mod header;
mod keys;
mod prompt;
mod violation;
mod walk;

pub use compile::{CompiledSchema, compile, compile_deferring_header_faults};
pub use error::SchemaError;
pub use header::{HeaderParam, HeaderParamKind};
pub use prompt::{PromptArg, default_input_schema, prompt_argument_schema};
pub use violation::{MAX_REASON_LEN, Violation};

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
