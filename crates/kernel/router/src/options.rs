//! Server options, as the builder sets them ([`ServerBuilder::server_info`](crate::ServerBuilder::server_info),
//! [`ServerBuilder::page_size`](crate::ServerBuilder::page_size), ...) and [`Server::options`](crate::Server::options)
//! reads them: identity, served revisions, cache hints and page size, their defaults, and
//! [`host_identity!`](crate::host_identity).

pub use crate::host_identity;

use std::num::NonZeroUsize;

use mcp_kernel_wire::ProtocolVersion;
use mcp_kernel_wire::types::CacheScope;

/// The server name advertised in `serverInfo` unless the host chooses its own.
pub const DEFAULT_SERVER_NAME: &str = "mcp-kernel";

/// This package's version: advertised in `serverInfo` unless the host gives its own
/// ([`crate::ServerBuilder::server_version`], [`crate::host_identity!`]).
pub const PACKAGE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The page size of the paginated lists unless the host chooses its own.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// The cache hints (`ttlMs`, `cacheScope`) one primitive's results carry.
///
/// The default is `0` / `"private"`: immediately stale and never shared across authorization contexts.
/// `"public"` would be a disclosure decision only the host can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHints {
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub scope: CacheScope,
}

impl Default for CacheHints {
    fn default() -> Self {
        Self { ttl_ms: 0, scope: CacheScope::Private }
    }
}

/// Everything about a server that is not the catalog or the host's functions.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerOptions {
    pub(crate) server_name: String,
    pub(crate) server_version: String,
    pub(crate) supported_versions: Vec<ProtocolVersion>,
    pub(crate) tools_cache: CacheHints,
    pub(crate) resources_cache: CacheHints,
    pub(crate) prompts_cache: CacheHints,
    pub(crate) page_size: NonZeroUsize,
    pub(crate) defer_header_faults: bool,
    /// Not API: reads try every template in turn (`fuzzing::linear_template_scan`).
    #[cfg(feature = "fuzzing")]
    pub(crate) linear_template_scan: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            server_name: DEFAULT_SERVER_NAME.to_owned(),
            server_version: PACKAGE_VERSION.to_owned(),
            supported_versions: ProtocolVersion::ALL.to_vec(),
            tools_cache: CacheHints::default(),
            resources_cache: CacheHints::default(),
            prompts_cache: CacheHints::default(),
            page_size: NonZeroUsize::new(DEFAULT_PAGE_SIZE).unwrap_or(NonZeroUsize::MIN),
            defer_header_faults: false,
            #[cfg(feature = "fuzzing")]
            linear_template_scan: false,
        }
    }
}

impl ServerOptions {
    /// The advertised server name.
    pub fn server_name(&self) -> &str {
        &self.server_name
    }

    /// The advertised server version.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// The served revisions, in advertising order.
    pub fn supported_versions(&self) -> &[ProtocolVersion] {
        &self.supported_versions
    }

    /// The page size of the paginated lists.
    pub fn page_size(&self) -> usize {
        self.page_size.get()
    }
}

/// A host's name and version for `serverInfo`; [`crate::host_identity!`] reads them from the host
/// crate's manifest at the host's compile time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostIdentity {
    /// The advertised name.
    pub name: String,
    /// The advertised version.
    pub version: String,
}

impl HostIdentity {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self { name: name.into(), version: version.into() }
    }
}

/// The calling crate's `CARGO_PKG_NAME` and `CARGO_PKG_VERSION` as a [`HostIdentity`], read when the
/// host compiles: `Server::builder(listing).server_info(host_identity!())`.
#[macro_export]
macro_rules! host_identity {
    () => {
        $crate::options::HostIdentity::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
    };
}
