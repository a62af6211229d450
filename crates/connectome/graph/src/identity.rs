//! Structural identities and the one id function ([CA-13], [CK-2]); see the crate docs for the scheme.
//!
//! [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html

use connectome_canonical::{Level, NodeKind};

/// Where a boundary group comes from ([CA-10]).
///
/// [CA-10]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupSource {
    /// A crate, standing where an OTP application stood; written `application`.
    Application,
    /// The root module (a Rust path) of a host-declared boundary; written `boundary_module`.
    BoundaryModule,
}

impl GroupSource {
    /// The name written in the id.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupSource::Application => "application",
            GroupSource::BoundaryModule => "boundary_module",
        }
    }
}

/// The structural identity of a node ([CA-13], [CK-2]); never a counter.
///
/// [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CK-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Identity {
    /// A composed MCP server.
    Server {
        /// The server name.
        server: String,
    },
    /// A catalog tool of `server`.
    Tool {
        /// The server name.
        server: String,
        /// The tool name.
        name: String,
    },
    /// A catalog resource of `server`.
    Resource {
        /// The server name.
        server: String,
        /// The resource URI.
        uri: String,
    },
    /// A catalog prompt of `server`.
    Prompt {
        /// The server name.
        server: String,
        /// The prompt name.
        name: String,
    },
    /// A named process (task or actor) of `server`.
    Process {
        /// The server name.
        server: String,
        /// The registered name.
        name: String,
    },
    /// A module, named by its Rust path (`my_crate::tools`).
    Module {
        /// The server name.
        server: String,
        /// The module's Rust path.
        path: String,
    },
    /// A function: its module's Rust path and its name (level `mfa`; Rust has no arity).
    Fn {
        /// The server name.
        server: String,
        /// The enclosing module's Rust path.
        path: String,
        /// The function name.
        name: String,
    },
    /// A boundary group (level `boundary`, kind `module`).
    Boundary {
        /// The server name.
        server: String,
        /// Where the group comes from.
        source: GroupSource,
        /// The crate name or the boundary's root module path.
        name: String,
    },
}

/// Escapes one id component: `%` → `%25`, then `/` → `%2F` ([CA-13]).
///
/// [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub fn escape_component(component: &str) -> String {
    component.replace('%', "%25").replace('/', "%2F")
}

impl Identity {
    /// The server component.
    pub fn server(&self) -> &str {
        match self {
            Identity::Server { server }
            | Identity::Tool { server, .. }
            | Identity::Resource { server, .. }
            | Identity::Prompt { server, .. }
            | Identity::Process { server, .. }
            | Identity::Module { server, .. }
            | Identity::Fn { server, .. }
            | Identity::Boundary { server, .. } => server,
        }
    }

    /// The tag component written after the server.
    pub fn tag(&self) -> &'static str {
        match self {
            Identity::Server { .. } => "server",
            Identity::Tool { .. } => "tool",
            Identity::Resource { .. } => "resource",
            Identity::Prompt { .. } => "prompt",
            Identity::Process { .. } => "process",
            Identity::Module { .. } | Identity::Fn { .. } => "module",
            Identity::Boundary { .. } => "boundary",
        }
    }

    /// The node kind this identity requires (a boundary requires `module`).
    pub fn kind(&self) -> NodeKind {
        match self {
            Identity::Server { .. } => NodeKind::Server,
            Identity::Tool { .. } => NodeKind::Tool,
            Identity::Resource { .. } => NodeKind::Resource,
            Identity::Prompt { .. } => NodeKind::Prompt,
            Identity::Process { .. } => NodeKind::Process,
            Identity::Module { .. } | Identity::Fn { .. } | Identity::Boundary { .. } => NodeKind::Module,
        }
    }

    /// The level this identity requires (function ⇔ `mfa`, module ⇔ `module`, boundary ⇔ `boundary`).
    pub fn level(&self) -> Level {
        match self {
            Identity::Fn { .. } => Level::Mfa,
            Identity::Module { .. } => Level::Module,
            Identity::Boundary { .. } => Level::Boundary,
            _ => Level::Server,
        }
    }

    /// The id ([CA-13]): the only function that derives one.
    ///
    /// [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
    pub fn id(&self) -> String {
        let rest: Vec<&str> = match self {
            Identity::Server { .. } => vec![],
            Identity::Tool { name, .. } | Identity::Prompt { name, .. } | Identity::Process { name, .. } => {
                vec![name]
            }
            Identity::Resource { uri, .. } => vec![uri],
            Identity::Module { path, .. } => vec![path],
            Identity::Fn { path, name, .. } => vec![path, name],
            Identity::Boundary { source, name, .. } => vec![source.as_str(), name],
        };
        let mut id = escape_component(self.server());
        for component in std::iter::once(self.tag()).chain(rest) {
            id.push('/');
            id.push_str(&escape_component(component));
        }
        id
    }
}
