//! Authorization as an OAuth resource server: the host's hooks and the refusals they answer with, the
//! bearer token they read, and the protected resource every challenge points at (steps 4 and 7 of
//! [`McpService`](crate::McpService)'s table, and the metadata document beside the endpoint).
//!
//! Threats: an unauthenticated caller costing the server a body read (the `authorize` hooks see the
//! request's head only, by their type); a refused client that is not told how to sign in; a token read
//! where the specifications forbid it (the query string) or from one of two credentials; a token issued
//! for another resource replayed here (token passthrough); a hook's reason, or its panic, reaching the
//! caller. The package verifies no token and holds no key: the host's hook decides, with these parts.
//!
//! | module | what lives there |
//! |---|---|
//! | `hooks.rs` | the hook types, [`Refused`](crate::Refused), and how a hook's answer, panic or lateness is handled |
//! | `bearer.rs` | [`bearer_token`](crate::bearer_token): exactly one `Authorization: Bearer` credential (RFC 6750 §2.1) |
//! | `protected_resource.rs` | [`ProtectedResource`](crate::ProtectedResource): the OAuth protected resource (RFC 9728) — not an MCP resource — its metadata document and its audience check |
//! | `metadata.rs` | [`MetadataService`](crate::MetadataService): the service answering that document at its well-known URL |
//!
//! A refusal's status and `WWW-Authenticate` challenge (RFC 6750 §3) are rendered with every other
//! refusal, in `response/challenge.rs`: the answers' shapes sit below every concern folder, this one
//! included, so that no folder depends on one that depends back on it.

pub(crate) mod bearer;
pub(crate) mod hooks;
pub(crate) mod metadata;
pub(crate) mod protected_resource;
