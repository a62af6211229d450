//! Admission: the refusal layers that read only the request's head, before any hook runs and before
//! a byte of its body is read — which names the endpoint answers to, which origins may call it, and
//! what a browser page is granted, and the path when the host named one (steps 1 to 1c of
//! [`McpService`](crate::McpService)'s table).
//!
//! Threat: DNS rebinding and cross-origin pages. A page on an attacker's name re-pointed at a local
//! server, or a page on another origin, makes a visitor's browser call the endpoint with whatever the
//! browser holds. What the browser cannot hide is the name it connected to (`Host`, `:authority`) and
//! the page's `Origin`; both are checked here first, from two lists the host chooses, and the CORS
//! grant is derived from the same origin list, so the check and the grant cannot disagree.
//!
//! | module | guards | refusal |
//! |---|---|---|
//! | `host_header.rs` | the HTTP `Host` header (`:authority` on HTTP/2) against [`AllowedHosts`](crate::AllowedHosts) — the name in the request, not the host application | 421, or 400 when missing, repeated, malformed or disagreeing |
//! | `origin.rs` | every `Origin` value against [`AllowedOrigins`](crate::AllowedOrigins) | 403 |
//! | `path.rs` | the request's path against [`Builder::path`](crate::Builder::path), when given, once the name and origin have passed (step 1b: routing); with a protected resource, its metadata document answered first (step 0a) | 404, no content |
//! | `cors.rs` | the CORS preflight and the grant every later answer carries, for a listed origin only | none: an origin not listed gets no grant |
//!
//! The method and framing checks that follow (steps 2 and 3) read nothing but the head either, and
//! live with the pipeline in `service.rs`.

pub(crate) mod cors;
pub(crate) mod host_header;
pub(crate) mod origin;
pub(crate) mod path;
