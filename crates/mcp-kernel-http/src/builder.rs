//! The typestate builder: a service cannot be built until the host has chosen its allowed origins and
//! its `authorize` hook. "Any origin" and "everyone" are choices to spell out, never defaults.
//!
//! ```
//! use mcp_kernel_http::{AllowedOrigins, McpHttp};
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! let service = McpHttp::builder(server)
//!     .allowed_origins(AllowedOrigins::list(["http://localhost:4000"]))
//!     .authorize(|_parts| Ok(()))
//!     .build();
//! # let _ = service;
//! ```
//!
//! Without `authorize`, it does not compile:
//!
//! ```compile_fail
//! use mcp_kernel_http::{AllowedOrigins, McpHttp};
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! let service = McpHttp::builder(server).allowed_origins(AllowedOrigins::any()).build();
//! ```
//!
//! Nor without `allowed_origins`:
//!
//! ```compile_fail
//! use mcp_kernel_http::McpHttp;
//! # let server = mcp_kernel_router::Server::builder(mcp_kernel_router::Listing::default()).build().unwrap();
//! let service = McpHttp::builder(server).authorize(|_| Ok(())).build();
//! ```

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::request::Parts;
use mcp_kernel_router::Server;
use mcp_kernel_wire::ProtocolVersion;

use crate::budget::{BodyBudget, DEFAULT_BODY_BYTES_IN_FLIGHT};
use crate::hooks::{AuthorizeBodyFn, AuthorizeFn, Refused};
use crate::legacy::{LegacyClients, legacy_revisions};
use crate::origin::AllowedOrigins;
use crate::service::{McpService, Shared};

/// The largest body admitted: 1 MiB. An MCP request is one JSON message; a larger one is refused (413).
pub const MAX_BODY_BYTES: usize = 1_048_576;

/// The default whole-body deadline: 15 s, which a cap-sized body meets at about 68 KiB/s.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(15);

/// Entry point of the HTTP transport: `McpHttp::builder(server)`.
#[derive(Debug)]
pub struct McpHttp;

impl McpHttp {
    /// Starts building the service for `server`. It serves `2026-07-28` only, unless `legacy_clients`.
    pub fn builder(server: Server) -> Builder<NoOrigins, NoAuthorize> {
        Builder {
            server,
            origins: NoOrigins,
            authorize: NoAuthorize,
            authorize_body: None,
            legacy: LegacyClients::Refused,
            read_timeout: DEFAULT_READ_TIMEOUT,
            max_body_bytes: MAX_BODY_BYTES,
            body_bytes_in_flight: DEFAULT_BODY_BYTES_IN_FLIGHT,
        }
    }
}

/// Typestate: `allowed_origins` has not been given yet.
#[derive(Debug)]
pub struct NoOrigins;

/// Typestate: `authorize` has not been given yet.
#[derive(Debug)]
pub struct NoAuthorize;

/// Typestate: `authorize` has been given.
pub struct Authorize(AuthorizeFn);

impl std::fmt::Debug for Authorize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authorize(..)")
    }
}

/// Builds an [`McpService`]; see [`McpHttp::builder`].
pub struct Builder<O, A> {
    server: Server,
    origins: O,
    authorize: A,
    authorize_body: Option<AuthorizeBodyFn>,
    legacy: LegacyClients,
    read_timeout: Duration,
    max_body_bytes: usize,
    body_bytes_in_flight: usize,
}

impl<O: std::fmt::Debug, A: std::fmt::Debug> std::fmt::Debug for Builder<O, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("origins", &self.origins)
            .field("authorize", &self.authorize)
            .field("legacy_clients", &self.legacy)
            .field("read_timeout", &self.read_timeout)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("body_bytes_in_flight", &self.body_bytes_in_flight)
            .finish_non_exhaustive()
    }
}

impl<A> Builder<NoOrigins, A> {
    /// The `Origin` values admitted (required): `AllowedOrigins::list([...])` or `AllowedOrigins::any()`.
    pub fn allowed_origins(self, origins: AllowedOrigins) -> Builder<AllowedOrigins, A> {
        Builder {
            server: self.server,
            origins,
            authorize: self.authorize,
            authorize_body: self.authorize_body,
            legacy: self.legacy,
            read_timeout: self.read_timeout,
            max_body_bytes: self.max_body_bytes,
            body_bytes_in_flight: self.body_bytes_in_flight,
        }
    }
}

impl<O> Builder<O, NoAuthorize> {
    /// The pre-read hook (required): it sees the request's parts and never its body. To admit every
    /// caller, say so: `.authorize(|_| Ok(()))`.
    pub fn authorize<F>(self, hook: F) -> Builder<O, Authorize>
    where
        F: Fn(&Parts) -> Result<(), Refused> + Send + Sync + 'static,
    {
        Builder {
            server: self.server,
            origins: self.origins,
            authorize: Authorize(Arc::new(hook)),
            authorize_body: self.authorize_body,
            legacy: self.legacy,
            read_timeout: self.read_timeout,
            max_body_bytes: self.max_body_bytes,
            body_bytes_in_flight: self.body_bytes_in_flight,
        }
    }
}

impl<O, A> Builder<O, A> {
    /// The optional post-read hook: the parts and the body exactly as received, before decoding.
    pub fn authorize_body<F>(mut self, hook: F) -> Self
    where
        F: Fn(&Parts, &Bytes) -> Result<(), Refused> + Send + Sync + 'static,
    {
        self.authorize_body = Some(Arc::new(hook));
        self
    }

    /// Whether MCP `2025-11-25` clients are also served (default [`LegacyClients::Refused`]);
    /// [`LegacyClients::Stateless`] serves them on the same endpoint, without sessions.
    pub fn legacy_clients(mut self, legacy: LegacyClients) -> Self {
        self.legacy = legacy;
        self
    }

    /// The whole-body deadline (default 15 s); a body not complete by then is answered 408.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Lowers the body cap below [`MAX_BODY_BYTES`] (a larger value is clamped to it).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes.min(MAX_BODY_BYTES);
        self
    }

    /// The bytes of request bodies held at once across the service (default
    /// [`DEFAULT_BODY_BYTES_IN_FLIGHT`], 64 MiB; never below the body cap). Each request reserves its
    /// declared `Content-Length` (the cap when it declares none) before its body is read and keeps it
    /// until its answer is ready; one that does not fit is refused 503 with `Retry-After: 1`, unread.
    pub fn max_body_bytes_in_flight(mut self, bytes: usize) -> Self {
        self.body_bytes_in_flight = bytes;
        self
    }
}

impl Builder<AllowedOrigins, Authorize> {
    /// The service.
    pub fn build(self) -> McpService {
        // Over HTTP there is no era probe: the stateless revision alone is advertised and served to
        // modern requests; legacy ones, when served, get a server that knows only the legacy revision.
        let legacy = match self.legacy {
            LegacyClients::Refused => None,
            LegacyClients::Stateless => {
                Some(self.server.restricted_to(legacy_revisions()).unwrap_or_else(|_| self.server.clone()))
            }
        };
        let server = self.server.restricted_to([ProtocolVersion::V2026_07_28]).unwrap_or(self.server);
        McpService::new(Shared {
            server,
            legacy,
            origins: self.origins,
            authorize: self.authorize.0,
            authorize_body: self.authorize_body,
            read_timeout: self.read_timeout,
            max_body_bytes: self.max_body_bytes,
            budget: BodyBudget::new(self.body_bytes_in_flight.max(self.max_body_bytes)),
        })
    }
}
