//! The connectome graph model (docs/connectome.md §A–B, [CK-1]…[CK-3]): nodes, edges, identities, the graph
//! and its exports.
//!
//! - **Nodes ([CB-1])** are built only by [`Node::new`] (or [`Node::from_identity`]) from an [`Identity`];
//!   the id is never a counter and never supplied by hand.
//! - **Edges ([CB-2])** are built by [`Edge::new`], which takes **no sign**: every edge starts with
//!   [`Sign::Unset`]. `sign` is a public field that the *consumer* may assign before rebuilding the graph;
//!   this crate never constructs any other [`Sign`] value ([CA-6], [CK-1]).
//! - **Graphs ([CB-3])** are built by [`Graph::new`], which checks nodes then edges, refuses duplicate ids,
//!   duplicate edge keys and dangling endpoints in that order, and stores nodes sorted by raw id and edges
//!   by raw key.
//! - **Canonical bytes (§C)** come from the `connectome-canonical` writer through
//!   [`Graph::to_canonical`], [`Graph::to_canonical_bytes`] and [`Graph::hash_hex`].
//! - **Diff (§F)**: [`Diff::run`] puts every edge label of a declared and an observed graph in one of
//!   four classes, counts the ten coverage numbers and writes the [CB-7] record.
//! - **Reading back (§R)**: [`read::read_export`], [`read::read_sidecar`], [`read::read_timing`] read
//!   the exports strictly (exactly their canonical bytes); [`read::verify_export`] and
//!   [`read::verify_record`] re-hash held bytes and say whether they are canonical.
//! - **Federation (§M)**: [`Federation`] and [`merge`] combine the observed exports of several instances
//!   of one system, with per-edge instance provenance, summed counts and kept maxima ([`Timings`]).
//! - **Effective connectivity (§W)**: [`Effective::build`] lays the observed counts and times onto the
//!   declared graph as one canonical, hashed export.
//! - **Non-canonical exports ([CB-8])**: [`Graph::to_dot`] and [`Graph::to_graphml`]; never hashed.
//!
//! # Identity scheme ([CA-13], [CK-2])
//!
//! [`Identity::id`] is the only function that derives an id. Its components are, in order, the server,
//! the tag, then the rest of the identity; each component is escaped (`%` → `%25`, then `/` → `%2F`) and
//! the components are joined with `/`. No NFC is applied here; ids are compared and hashed as bytes and
//! never parsed back.
//!
//! A **Rust path stands where an Elixir module stood**: a module node `{server, my_crate::tools}` has the
//! id `srv/module/my_crate::tools`. Rust has no arity, so the **function-level** (level `mfa`) id is a new
//! scheme: `<server>/module/<path>/<fn>`, e.g. `srv/module/my_crate::tools/run` for `my_crate::tools::run`
//! — the module path and the function name are separate components, so a function id always has one more
//! component than its module's id. A crate stands where an OTP application stood: a boundary group read
//! from a crate is `srv/boundary/application/<crate>`; a host-declared boundary rooted at a module is
//! `srv/boundary/boundary_module/<path>`.
//!
//! | identity | level | id |
//! |--|--|--|
//! | `Server { "srv" }` | server | `srv/server` |
//! | `Tool { "srv", "écho" }` | server | `srv/tool/écho` |
//! | `Resource { "srv", "r://a" }` | server | `srv/resource/r:%2F%2Fa` |
//! | `Prompt { "a/b", "p%" }` | server | `a%2Fb/prompt/p%25` |
//! | `Process { "srv", "worker" }` | server | `srv/process/worker` |
//! | `Module { "srv", "my_crate::tools" }` | module | `srv/module/my_crate::tools` |
//! | `Fn { "srv", "my_crate::tools", "run" }` | mfa | `srv/module/my_crate::tools/run` |
//! | `Boundary { "srv", Application, "my_crate" }` | boundary | `srv/boundary/application/my_crate` |
//! | `Boundary { "srv", BoundaryModule, "my_crate::api" }` | boundary | `srv/boundary/boundary_module/my_crate::api` |
//!
//! Boundary identities have node kind `module` ([CA-4]).
//!
//! [CA-4]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CA-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CA-13]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-7]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CB-8]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-1]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
//! [CK-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
#![forbid(unsafe_code)]

pub mod declared;
pub mod diff;
pub mod effective;
pub mod error;
pub mod export;
pub mod facts;
pub mod federation;
pub mod graph;
pub mod identity;
pub mod reach;
pub mod read;
pub mod timing;

pub use declared::{
    CatalogFault, CatalogSection, Declared, DeclaredBound, DeclaredBuilder, DeclaredCatalog, DeclaredError,
    DeclaredLevel, DeclaredTool, FactsFault, UnreadableEntry,
};
pub use diff::{Classes, Coverage, Diff, DiffError, Label, SideError, SignChange};
pub use effective::{Effective, EffectiveClass, EffectiveEdge, EffectiveError, EffectiveNode};
pub use error::{GraphError, IdentityFault};
pub use facts::{CallEdge, CallFacts, DynamicSite, FACTS_FORMAT, FactsBound, FactsError};
pub use federation::{Federation, FederationError, merge};
pub use graph::{Edge, EdgeKey, Graph, Node};
pub use identity::{GroupSource, Identity, escape_component};
pub use reach::{
    DEFAULT_MAX_EDGES, DominanceOptions, Path, PathOptions, ReachError, all_paths, dominates, mandatory_pass,
    reachable, reachable_without,
};
pub use read::{
    ReadError, read_export, read_observed, read_sidecar, read_timing, verify_export, verify_record,
};
pub use timing::{MeasureError, Timing, Timings};

/// Re-exported vocabulary of the canonical model ([CA-2]…[CA-5], [CK-3]).
///
/// [CA-2]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CA-5]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
/// [CK-3]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub use connectome_canonical::{
    Algorithm, EdgeKind, Integer, Labels, Level, NodeKind, Provenance, SCHEMA_VERSION, Uncanonical, Value,
    Weight,
};

/// The edge sign slot ([CA-6]): this crate only ever constructs [`Sign::Unset`] (the default, set by
/// [`Edge::new`]); `Allow`, `Deny`, `Hold` and `Ungoverned` are assigned by the consumer to the public
/// [`Edge::sign`] field, and the graph is then rebuilt with [`Graph::new`].
///
/// [CA-6]: https://docs.rs/mcp-kernel/latest/mcp_kernel/manual/connectome/index.html
pub use connectome_canonical::Sign;

/// This crate's README (its page on the registry), compiled as doctests so that its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
